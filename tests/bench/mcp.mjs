// msp-mcp benchmark: latency and throughput of run_code over one stdio connection, with msp
// and with runc side by side, and the idle RSS of msp-mcp. tests/bench/mcp.sh runs it.
//
//   node tests/bench/mcp.mjs --msp-mcp PATH --msp PATH [--runc PATH] [--runs N]
//                            [--calls N] [--callers N] [--json FILE]
//
// The client is a minimal JSON-lines client (no SDK): the numbers are msp-mcp's, not a
// client library's schema validation. Latency: --runs sequential calls each of sh `echo hi`
// and python `print(1)` after 10 warm-up calls; throughput: --calls calls of sh `echo hi`
// from --callers concurrent callers on the same connection. Every result is checked (exit
// 0, the expected stdout): a wrong answer fails the benchmark.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

const opt = { runs: 200, calls: 200, callers: 4 };
for (let i = 2; i < process.argv.length; i++) {
        const k = process.argv[i].replace(/^--/, "");
        const v = process.argv[++i];
        if (v === undefined) die(`--${k} needs a value`);
        opt[k.replace(/-(.)/g, (_, c) => c.toUpperCase())] = ["runs", "calls", "callers"].includes(k) ? Number(v) : v;
}
if (!opt.mspMcp || !opt.msp) die("--msp-mcp and --msp are required");

function die(msg) {
        console.error(`bench: ${msg}`);
        process.exit(1);
}

// State dirs still there at exit (a failed run): removed, once their server is gone.
const stateDirs = new Set();
process.on("exit", () => {
        for (const d of stateDirs) fs.rmSync(d, { recursive: true, force: true });
});

function server(runtime) {
        const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-bench-"));
        stateDirs.add(stateDir);
        const child = spawn(opt.mspMcp, ["--state-dir", stateDir, "--runtime", runtime],
                            { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env } });
        let log = "";
        child.stderr.on("data", (b) => { log = (log + b).slice(-4096); });
        const waiting = new Map();
        let next = 1;
        const exited = new Promise((r) => child.once("exit", (code, sig) => {
                for (const [, w] of waiting) w.reject(new Error(`msp-mcp exited (${code ?? sig}): ${log}`));
                r(code);
        }));
        child.stdin.on("error", () => {});
        readline.createInterface({ input: child.stdout }).on("line", (l) => {
                const m = JSON.parse(l);
                if (m.id !== undefined && waiting.has(m.id)) {
                        waiting.get(m.id).resolve(m);
                        waiting.delete(m.id);
                }
        });
        const request = (method, params) => new Promise((resolve, reject) => {
                const id = next++;
                waiting.set(id, { resolve, reject });
                child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
        });
        return {
                child, stateDir, request, log: () => log,
                async init() {
                        const r = await request("initialize", { protocolVersion: "2025-11-25", capabilities: {},
                                                                clientInfo: { name: "bench", version: "0" } });
                        if (!r.result) die(`initialize failed: ${JSON.stringify(r)} ${log}`);
                        child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
                        await request("ping");
                },
                async run(language, code, expect) {
                        const r = await request("tools/call", { name: "run_code", arguments: { language, code } });
                        const sc = r.result?.structuredContent;
                        if (!sc || r.result.isError || sc.stdout !== expect)
                                die(`${language} ${JSON.stringify(code)}: unexpected answer ${JSON.stringify(r).slice(0, 600)} ${log}`);
                },
                async close() {
                        child.stdin.end();
                        const code = await exited;
                        fs.rmSync(stateDir, { recursive: true, force: true });
                        stateDirs.delete(stateDir);
                        return code;
                },
        };
}

function status(pid) {
        const s = fs.readFileSync(`/proc/${pid}/status`, "utf8");
        const kb = (k) => Number((s.match(new RegExp(`^${k}:\\s+(\\d+) kB`, "m")) ?? [0, NaN])[1]);
        return { hwm: kb("VmHWM"), rss: kb("VmRSS") };
}

function pct(sorted, p) {
        return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function latency(srv, language, code, expect) {
        for (let i = 0; i < 10; i++) await srv.run(language, code, expect);
        const t = [];
        for (let i = 0; i < opt.runs; i++) {
                const t0 = process.hrtime.bigint();
                await srv.run(language, code, expect);
                t.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
        t.sort((a, b) => a - b);
        return { p50: pct(t, 50), p95: pct(t, 95), min: t[0], max: t[t.length - 1] };
}

async function throughput(srv) {
        let left = opt.calls;
        const t0 = process.hrtime.bigint();
        await Promise.all(Array.from({ length: opt.callers }, async () => {
                while (left-- > 0) await srv.run("sh", "echo hi", "hi\n");
        }));
        const s = Number(process.hrtime.bigint() - t0) / 1e9;
        return { seconds: s, per_s: opt.calls / s };
}

async function measure(name, runtime) {
        const srv = server(runtime);
        await srv.init();
        const idle = status(srv.child.pid);
        const sh = await latency(srv, "sh", "echo hi", "hi\n");
        const py = await latency(srv, "python", "print(1)", "1\n");
        const tp = await throughput(srv);
        const after = status(srv.child.pid);
        const code = await srv.close();
        if (code !== 0) die(`${name}: msp-mcp exited ${code}`);
        return { name, runtime, idle_kib: idle, after_kib: after, sh, python: py, throughput: tp };
}

const results = [await measure("msp", opt.msp)];
if (opt.runc) {
        try {
                results.push(await measure("runc", opt.runc));
        } catch (e) {
                results.push({ name: "runc", error: String(e) });
        }
}

const f = (x) => x.toFixed(1).padStart(7);
console.log(`msp-mcp benchmark, ${new Date().toISOString().slice(0, 10)}, kernel ${os.release()}, ${os.cpus().length} CPUs, load average at the end ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
console.log(`one stdio connection; latency: ${opt.runs} sequential calls after 10 warm-up; throughput: ${opt.calls} calls of sh \`echo hi\` from ${opt.callers} callers`);
console.log("");
console.log("runtime   sh echo hi p50/p95 [ms]   python print(1) p50/p95 [ms]   runs/s (4 callers)   msp-mcp RSS idle/after [KiB]");
for (const r of results) {
        if (r.error) { console.log(`${r.name.padEnd(9)} failed: ${r.error.slice(0, 300)}`); continue; }
        console.log(`${r.name.padEnd(9)} ${f(r.sh.p50)} / ${f(r.sh.p95)}          ${f(r.python.p50)} / ${f(r.python.p95)}            ${f(r.throughput.per_s)}             ${r.idle_kib.rss} (peak ${r.idle_kib.hwm}) / ${r.after_kib.rss} (peak ${r.after_kib.hwm})`);
}
const m = results[0];
const goal = (what, value, ok) => console.log(`  ${what.padEnd(52)} ${value.padEnd(16)} ${ok ? "HOLDS" : "MISSED"}`);
console.log("");
console.log("goals (issue 7, with msp):");
goal("sh `echo hi` p50 < 15 ms end to end", `${m.sh.p50.toFixed(1)} ms`, m.sh.p50 < 15);
goal(`>= 100 runs/s with ${opt.callers} callers`, `${m.throughput.per_s.toFixed(1)} runs/s`, m.throughput.per_s >= 100);
goal("msp-mcp idle RSS < 4 MiB (VmHWM after initialize)", `${m.idle_kib.hwm} KiB`, m.idle_kib.hwm < 4096);
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ options: opt, results }, null, 2));
