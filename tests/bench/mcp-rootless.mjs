// msp-mcp started by an ordinary user against msp-mcp started by root, measured side by side
// in one run. tests/bench/mcp.sh --rootless runs it (as root).
//
//   node tests/bench/mcp-rootless.mjs --msp-mcp PATH --msp PATH --user-xdg DIR [--runs N]
//                                     [--calls N] [--callers N] [--rounds N] [--json FILE]
//
// Two servers at once on stdio, both with --runtime --msp (the same binaries, which the
// user must be able to run): one as root with a temporary --state-dir, one as the user of
// tests/helper/test-user.sh with XDG_RUNTIME_DIR=--user-xdg (a 0700 directory the user
// owns) and its state dir in it, as an MCP client starts it. Latency: --runs calls of sh
// `echo hi` on each, alternating (root, user, user, root, ...) so that a change of the
// machine's load falls on both alike, after 10 warm-up calls each. Throughput: --rounds
// rounds, each --calls calls of sh `echo hi` from --callers (4) callers on one server,
// then on the other, which goes first alternating per round. Every answer is checked
// (exit 0, the expected stdout).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { die, options, status, stdioServer, summary } from "./mcp-client.mjs";

const opt = options({ runs: 200, calls: 200, callers: 4, rounds: 3 }, ["runs", "calls", "callers", "rounds"]);
if (!opt.mspMcp || !opt.msp || !opt.userXdg) die("--msp-mcp, --msp and --user-xdg are required");
const args = ["--runtime", opt.msp];
const hi = (c) => c.run("sh", "echo hi", "hi\n");
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(" ");
const testUser = new URL("../helper/test-user.sh", import.meta.url).pathname;

async function timed(f) {
        const t0 = process.hrtime.bigint();
        await f();
        return Number(process.hrtime.bigint() - t0) / 1e6;
}

async function throughput(srv) {
        let left = opt.calls;
        const ms = await timed(() => Promise.all(Array.from({ length: opt.callers }, async () => {
                while (left-- > 0) await hi(srv);
        })));
        return opt.calls / (ms / 1000);
}

const loadBefore = load();
const servers = {
        root: stdioServer(opt.mspMcp, args),
        // test-user.sh run: a login's environment (HOME, a default PATH), no capability;
        // it and env exec, so the child's pid is msp-mcp's.
        user: stdioServer(opt.mspMcp, args, {
                wrap: [testUser, "run", "env", `XDG_RUNTIME_DIR=${opt.userXdg}`],
                stateDir: path.join(opt.userXdg, "msp-mcp"),
        }),
};
await Promise.all(Object.values(servers).map((s) => s.init()));
const idle = { root: status(servers.root.child.pid), user: status(servers.user.child.pid) };

for (let i = 0; i < 10; i++) { await hi(servers.root); await hi(servers.user); }
const t = { root: [], user: [] };
for (let i = 0; i < opt.runs; i++)
        for (const k of i % 2 ? ["user", "root"] : ["root", "user"])
                t[k].push(await timed(() => hi(servers[k])));
const lat = { root: summary(t.root), user: summary(t.user) };

const rounds = [];
for (let r = 0; r < opt.rounds; r++) {
        const x = {};
        for (const k of r % 2 ? ["user", "root"] : ["root", "user"]) x[k] = await throughput(servers[k]);
        rounds.push(x);
}
const codes = [await servers.root.close(), await servers.user.close()];
if (codes.some((c) => c !== 0)) die(`an msp-mcp exited ${codes.join(", ")}`);
const loadAfter = load();

const mean = (k) => rounds.reduce((a, r) => a + r[k], 0) / rounds.length;
const f = (x) => x.toFixed(1).padStart(7);
console.log(`msp-mcp run by a user and by root, ${new Date().toISOString().slice(0, 10)}, kernel ${os.release()}, ${os.cpus().length} CPUs`);
console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAfter} after`);
console.log(`latency: ${opt.runs} sh \`echo hi\` calls each, alternating; throughput: ${opt.rounds} rounds of ${opt.calls} calls from ${opt.callers} callers, alternating which goes first`);
console.log("");
console.log("server            sh echo hi p50/p95 [ms]   runs/s (each round)        mean    idle RSS (peak) [KiB]");
for (const k of ["root", "user"])
        console.log(`${(k === "root" ? "root" : "user (rootless)").padEnd(17)} ${f(lat[k].p50)} / ${f(lat[k].p95)}        ${rounds.map((r) => r[k].toFixed(1)).join(", ").padEnd(24)} ${f(mean(k))}    ${idle[k].rss} (${idle[k].hwm})`);
console.log("");
const p50 = lat.user.p50 / lat.root.p50;
const tp = mean("user") / mean("root");
console.log(`ratios user / root: sh p50 ${p50.toFixed(3)}, p95 ${(lat.user.p95 / lat.root.p95).toFixed(3)}, runs/s ${tp.toFixed(3)}`);
const goal = (what, value, ok) => console.log(`  ${what.padEnd(48)} ${value.padEnd(26)} ${ok ? "HOLDS" : "MISSED"}`);
console.log("");
console.log("goals (issue 14):");
goal("user's sh p50 within 10% of root's", `${lat.user.p50.toFixed(2)} vs ${lat.root.p50.toFixed(2)} ms`, p50 <= 1.1);
goal(`user's runs/s (${opt.callers} callers) at least 90% of root's`, `${mean("user").toFixed(1)} vs ${mean("root").toFixed(1)}`, tp >= 0.9);
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ options: opt, load: [loadBefore, loadAfter], latency: lat, rounds, idle_kib: idle,
                                                          samples_ms: t }, null, 2));
