// msp-mcp over Streamable HTTP against stdio, measured side by side in one run.
// tests/bench/mcp.sh --http runs it.
//
//   node tests/bench/http.mjs --msp-mcp PATH --msp PATH [--runs N] [--pings N] [--calls N]
//                             [--clients N] [--callers N] [--rounds N] [--sessions N]
//                             [--json FILE]
//
// Two servers at once, one on stdio and one on --listen 127.0.0.1:0, both with --runtime
// --msp. Latency: --runs calls of sh `echo hi` on each, alternating (stdio, HTTP, HTTP,
// stdio, ...) so that a change of the machine's load falls on both alike, after 10 warm-up
// calls each; then --pings (1000) `ping` requests the same way: the transport's own cost
// without a sandbox's, which on a loaded machine varies by more than the 1 ms goal.
// Throughput: --rounds rounds, each --calls calls of sh `echo hi` from --callers (4)
// callers on the stdio connection and from --clients (16) HTTP clients (each its own MCP
// session on its own kept-alive connection, made before the clock starts), which of the
// two goes first alternating. Memory: a third server, on HTTP, with --sessions (100)
// clients that initialize and then stay idle, each keeping its connection: VmRSS and
// VmHWM of msp-mcp, with their anonymous and file-backed parts. Every answer is checked
// (exit 0, the expected stdout).
import fs from "node:fs";
import os from "node:os";
import { die, httpServer, options, status, stdioServer, summary } from "./mcp-client.mjs";

const opt = options({ runs: 200, pings: 1000, calls: 200, clients: 16, callers: 4, rounds: 3, sessions: 100 },
                    ["runs", "pings", "calls", "clients", "callers", "rounds", "sessions"]);
if (!opt.mspMcp || !opt.msp) die("--msp-mcp and --msp are required");
const args = ["--runtime", opt.msp];
const hi = (c) => c.run("sh", "echo hi", "hi\n");
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(" ");

async function timed(f) {
        const t0 = process.hrtime.bigint();
        await f();
        return Number(process.hrtime.bigint() - t0) / 1e6;
}

// n calls of f on each transport, alternating, after 10 warm-up calls each.
async function latency(stdio, web, n, f) {
        for (let i = 0; i < 10; i++) { await f(stdio); await f(web); }
        const t = { stdio: [], http: [] };
        for (let i = 0; i < n; i++) {
                const order = i % 2 ? [["http", web], ["stdio", stdio]] : [["stdio", stdio], ["http", web]];
                for (const [k, c] of order) t[k].push(await timed(() => f(c)));
        }
        return { stdio: summary(t.stdio), http: summary(t.http) };
}

async function throughput(callers) {
        let left = opt.calls;
        const ms = await timed(() => Promise.all(callers.map(async (c) => {
                while (left-- > 0) await hi(c);
        })));
        return opt.calls / (ms / 1000);
}

const loadBefore = load();
const stdio = stdioServer(opt.mspMcp, args);
await stdio.init();
const web = await httpServer(opt.mspMcp, args);
const one = web.client();
await one.init();
const lat = await latency(stdio, one, opt.runs, hi);
const ping = await latency(stdio, one, opt.pings, (c) => c.request("ping"));

const clients = Array.from({ length: opt.clients }, () => web.client());
await Promise.all(clients.map((c) => c.init()));
const rounds = [];
// Which goes first alternates: a load that drifts within a round hits both alike.
for (let r = 0; r < opt.rounds; r++) {
        const x = {};
        for (const k of r % 2 ? ["http", "stdio"] : ["stdio", "http"])
                x[k] = await throughput(k === "http" ? clients : Array(opt.callers).fill(stdio));
        rounds.push(x);
}
const afterLoad = status(web.child.pid);
for (const c of [one, ...clients]) c.close();
const codes = [await stdio.close(), await web.close()];

const idle = await httpServer(opt.mspMcp, args);
const before = status(idle.child.pid);
const sessions = Array.from({ length: opt.sessions }, () => idle.client());
for (const c of sessions) await c.init();
const withSessions = status(idle.child.pid);
for (const c of sessions) c.close();
codes.push(await idle.close());
if (codes.some((c) => c !== 0)) die(`an msp-mcp exited ${codes.join(", ")}`);
const loadAfter = load();

const mean = (k) => rounds.reduce((a, r) => a + r[k], 0) / rounds.length;
const f = (x) => x.toFixed(1).padStart(7);
console.log(`msp-mcp over HTTP and stdio, ${new Date().toISOString().slice(0, 10)}, kernel ${os.release()}, ${os.cpus().length} CPUs, load average ${loadBefore} before, ${loadAfter} after`);
console.log(`latency: ${opt.runs} sh \`echo hi\` calls each, alternating; throughput: ${opt.rounds} rounds of ${opt.calls} calls; memory: ${opt.sessions} idle HTTP sessions`);
console.log("");
const g = (x) => x.toFixed(3).padStart(7);
console.log("transport                  sh echo hi p50/p95 [ms]   ping p50/p95 [ms]     runs/s (each round)");
console.log(`stdio, ${String(opt.callers).padEnd(2)} callers          ${f(lat.stdio.p50)} / ${f(lat.stdio.p95)}        ${g(ping.stdio.p50)} / ${g(ping.stdio.p95)}     ${rounds.map((r) => r.stdio.toFixed(1)).join(", ")}`);
console.log(`HTTP, ${String(opt.clients).padEnd(2)} clients           ${f(lat.http.p50)} / ${f(lat.http.p95)}        ${g(ping.http.p50)} / ${g(ping.http.p95)}     ${rounds.map((r) => r.http.toFixed(1)).join(", ")}`);
console.log("");
const kib = (m) => `${m.rss} KiB (peak ${m.hwm}; anonymous ${m.anon}, files ${m.file})`;
console.log(`msp-mcp on HTTP, RSS: after start ${kib(before)}`);
console.log(`                      with ${opt.sessions} idle sessions ${kib(withSessions)}`);
console.log(`                      after the runs above ${kib(afterLoad)}`);
const goal = (what, value, ok) => console.log(`  ${what.padEnd(56)} ${value.padEnd(22)} ${ok ? "HOLDS" : "MISSED"}`);
console.log("");
console.log("goals (issue 16):");
const d = lat.http.p50 - lat.stdio.p50;
goal("sh p50 over HTTP within 1 ms of stdio's", `${d >= 0 ? "+" : ""}${d.toFixed(2)} ms`, d <= 1);
const dp = ping.http.p50 - ping.stdio.p50;
console.log(`  (the transport alone, ping p50 HTTP - stdio: ${dp >= 0 ? "+" : ""}${dp.toFixed(3)} ms)`);
goal(`runs/s, ${opt.clients} HTTP clients >= ${opt.callers} stdio callers (mean)`, `${mean("http").toFixed(1)} vs ${mean("stdio").toFixed(1)}`, mean("http") >= mean("stdio"));
goal(`RSS with ${opt.sessions} idle HTTP sessions < 16 MiB (VmHWM)`, `${withSessions.hwm} KiB`, withSessions.hwm < 16384);
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ options: opt, load: [loadBefore, loadAfter], latency: lat, ping, rounds,
                                                          rss_kib: { start: before, sessions: withSessions, after_load: afterLoad } }, null, 2));
