// What the msp-mcp benchmarks share: msp-mcp over stdio or Streamable HTTP with a minimal
// client (no SDK: the numbers are msp-mcp's, not a client library's schema validation),
// its memory from /proc, percentiles, the run_code workload of mcp.sh (fresh runs, and runs
// in a live session). Used by mcp.mjs,
// mcp-ab.mjs, http.mjs and mcp-rootless.mjs.
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

export function die(msg) {
        console.error(`bench: ${msg}`);
        process.exit(1);
}

// State dirs still there at exit (a failed run): removed, once their server is gone.
const stateDirs = new Set();
process.on("exit", () => {
        for (const d of stateDirs) fs.rmSync(d, { recursive: true, force: true });
});

const INIT = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } };

function check(language, code, expect, r, log) {
        const sc = r.result?.structuredContent;
        if (!sc || r.result.isError || sc.stdout !== expect)
                die(`${language} ${JSON.stringify(code)}: unexpected answer ${JSON.stringify(r).slice(0, 600)} ${log()}`);
}

// Where the servers' state dirs go: $MSP_BENCH_STATE_BASE, else /dev/shm when it is a tmpfs
// (msp-mcp's default /run/msp-mcp is on a tmpfs wherever systemd mounts /run), else the
// temporary directory. On an ext4 without a journal, as this machine's root, every file
// created looks for a free inode past the recently deleted ones, which a run's few files
// then pay for (docs/PERFORMANCE.md, "State on tmpfs").
export function stateBase() {
        if (process.env.MSP_BENCH_STATE_BASE) return process.env.MSP_BENCH_STATE_BASE;
        try {
                if (fs.statfsSync("/dev/shm").type === 0x01021994) return "/dev/shm";
        } catch {}
        return os.tmpdir();
}

// start(mspMcp, args, how): msp-mcp with its own --state-dir (how.stateDir, which msp-mcp
// makes, or a temporary one under stateBase()), under how.wrap (a command line msp-mcp's follows, e.g. one
// that runs it as another user and execs it: the child's pid stays msp-mcp's); stderr's
// tail kept.
function start(mspMcp, args, { wrap = [], stateDir = fs.mkdtempSync(path.join(stateBase(), "msp-mcp-bench-")) } = {}) {
        stateDirs.add(stateDir);
        const argv = [...wrap, mspMcp, "--state-dir", stateDir, ...args];
        const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env } });
        let log = "";
        const listeners = [];
        child.stderr.on("data", (b) => {
                log = (log + b).slice(-4096);
                for (const f of listeners) f(log);
        });
        const exited = new Promise((r) => child.once("exit", (code, sig) => r(code ?? sig)));
        child.stdin.on("error", () => {});
        return {
                child, stateDir, exited, log: () => log,
                onLog: (f) => listeners.push(f),
                async stop(how) {
                        if (how === "eof") child.stdin.end();
                        else child.kill("SIGTERM");
                        const code = await exited;
                        fs.rmSync(stateDir, { recursive: true, force: true });
                        stateDirs.delete(stateDir);
                        return code;
                },
        };
}

// One stdio connection; calls may be concurrent (matched by id). how: as start()'s.
export function stdioServer(mspMcp, args = [], how = {}) {
        const s = start(mspMcp, args, how);
        const waiting = new Map();
        let next = 1;
        s.exited.then((code) => {
                for (const [, w] of waiting) w.reject(new Error(`msp-mcp exited (${code}): ${s.log()}`));
        });
        readline.createInterface({ input: s.child.stdout }).on("line", (l) => {
                const m = JSON.parse(l);
                if (m.id !== undefined && waiting.has(m.id)) {
                        waiting.get(m.id).resolve(m);
                        waiting.delete(m.id);
                }
        });
        const request = (method, params) => new Promise((resolve, reject) => {
                const id = next++;
                waiting.set(id, { resolve, reject });
                s.child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
        });
        return {
                child: s.child, log: s.log, request,
                async init() {
                        const r = await request("initialize", INIT);
                        if (!r.result) die(`initialize failed: ${JSON.stringify(r)} ${s.log()}`);
                        s.child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
                        await request("ping");
                },
                // extra: more run_code arguments (session_id).
                async run(language, code, expect, extra = {}) {
                        const r = await request("tools/call", { name: "run_code", arguments: { language, code, ...extra } });
                        check(language, code, expect, r, s.log);
                },
                // A tool's structuredContent; a tool error stops the benchmark.
                async tool(name, args) {
                        const r = await request("tools/call", { name, arguments: args });
                        if (!r.result || r.result.isError) die(`${name}: ${JSON.stringify(r).slice(0, 600)} ${s.log()}`);
                        return r.result.structuredContent;
                },
                close: () => s.stop("eof"),
        };
}

// msp-mcp --listen 127.0.0.1:0; resolves when it logged its URL.
export async function httpServer(mspMcp, args = []) {
        const s = start(mspMcp, ["--listen", "127.0.0.1:0", ...args]);
        const port = await new Promise((resolve, reject) => {
                const t = setTimeout(() => reject(new Error(`msp-mcp did not listen within 60 s: ${s.log()}`)), 60_000);
                const look = (log) => {
                        const m = log.match(/listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/);
                        if (m) { clearTimeout(t); resolve(Number(m[1])); }
                };
                s.onLog(look);
                s.exited.then((c) => reject(new Error(`msp-mcp exited (${c}): ${s.log()}`)));
        });
        return { child: s.child, log: s.log, port, client: () => httpClient(port, s.log), close: () => s.stop("term") };
}

// One HTTP client: its own MCP session on its own kept-alive connection.
function httpClient(port, log) {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        let sid = null;
        let next = 1;
        const post = (msg) => new Promise((resolve, reject) => {
                const body = JSON.stringify(msg);
                const headers = { "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                                  "Content-Length": Buffer.byteLength(body) };
                if (sid) headers["Mcp-Session-Id"] = sid;
                const req = http.request({ host: "127.0.0.1", port, path: "/mcp", method: "POST", agent, headers }, (res) => {
                        const chunks = [];
                        res.on("data", (c) => chunks.push(c));
                        res.on("end", () => {
                                if (res.headers["mcp-session-id"]) sid = res.headers["mcp-session-id"];
                                const text = Buffer.concat(chunks).toString();
                                if (res.statusCode === 202) return resolve(null);
                                if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode}: ${text.slice(0, 300)} ${log()}`));
                                resolve(JSON.parse(text));
                        });
                });
                req.on("error", reject);
                req.end(body);
        });
        const request = (method, params) => post({ jsonrpc: "2.0", id: next++, method, params });
        return {
                request,
                async init() {
                        const r = await request("initialize", INIT);
                        if (!r?.result || !sid) die(`initialize over HTTP failed: ${JSON.stringify(r)} ${log()}`);
                        await post({ jsonrpc: "2.0", method: "notifications/initialized" });
                },
                async run(language, code, expect) {
                        const r = await request("tools/call", { name: "run_code", arguments: { language, code } });
                        check(language, code, expect, r, log);
                },
                close: () => agent.destroy(),
        };
}

// f's wall time in ms.
export async function timed(f) {
        const t0 = process.hrtime.bigint();
        await f();
        return Number(process.hrtime.bigint() - t0) / 1e6;
}

// The calls of mcp.sh's latency and throughput figures: [language, code, expected stdout].
export const SH_HI = ["sh", "echo hi", "hi\n"];
export const PY_ONE = ["python", "print(1)", "1\n"];

// runs sequential calls of [language, code, expect] after 10 warm-up calls: each call's
// time in ms, from writing the request to reading its answer. extra: as srv.run's.
export async function latency(srv, runs, [language, code, expect], extra = {}) {
        for (let i = 0; i < 10; i++) await srv.run(language, code, expect, extra);
        const t = [];
        for (let i = 0; i < runs; i++) t.push(await timed(() => srv.run(language, code, expect, extra)));
        return t;
}

// The same latency in one live session (its sandbox already running: the program is
// started by its pid 1), the session made before and closed after.
export async function sessionLatency(srv, runs, call) {
        const { session_id } = await srv.tool("session_create", {});
        const t = await latency(srv, runs, call, { session_id });
        await srv.tool("session_close", { session_id });
        return t;
}

// calls sh `echo hi` calls from callers concurrent callers on one connection, each sending
// its next call when its previous answer arrives.
export async function throughput(srv, calls, callers) {
        let left = calls;
        const ms = await timed(() => Promise.all(Array.from({ length: callers }, async () => {
                while (left-- > 0) await srv.run(...SH_HI);
        })));
        return { seconds: ms / 1000, per_s: calls / (ms / 1000) };
}

// mcp.sh's workload on one server: the sh, then the python latency, then the throughput;
// the latencies as every sample in ms.
export async function runCodeWorkload(srv, { runs, calls, callers }) {
        const sh = await latency(srv, runs, SH_HI);
        const python = await latency(srv, runs, PY_ONE);
        return { sh, python, throughput: await throughput(srv, calls, callers) };
}

export function status(pid) {
        const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
        const kb = (k) => Number((s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, "m")) ?? [0, NaN])[1]);
        return { hwm: kb("VmHWM"), rss: kb("VmRSS"), anon: kb("RssAnon"), file: kb("RssFile") };
}

export function pct(sorted, p) {
        return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function summary(t) {
        const s = [...t].sort((a, b) => a - b);
        return { p50: pct(s, 50), p95: pct(s, 95), min: s[0], max: s[s.length - 1] };
}

// Options --name value; the names in `numeric` are numbers.
export function options(defaults, numeric) {
        const opt = { ...defaults };
        for (let i = 2; i < process.argv.length; i++) {
                const k = process.argv[i].replace(/^--/, "");
                const v = process.argv[++i];
                if (v === undefined) die(`--${k} needs a value`);
                opt[k.replace(/-(.)/g, (_, c) => c.toUpperCase())] = numeric.includes(k) ? Number(v) : v;
        }
        return opt;
}
