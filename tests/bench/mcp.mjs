// msp-mcp benchmark: latency and throughput of run_code over one stdio connection, with msp
// and with runc side by side, and the idle RSS of msp-mcp. tests/bench/mcp.sh runs it.
//
//   node tests/bench/mcp.mjs --msp-mcp PATH --msp PATH [--runc PATH] [--runs N]
//                            [--calls N] [--callers N] [--json FILE]
//
// The client is a minimal JSON-lines client (no SDK): the numbers are msp-mcp's, not a
// client library's schema validation. Latency: --runs sequential calls each of sh `echo hi`
// and python `print(1)` after 10 warm-up calls, and as many of sh `echo hi` in one live
// session (a running sandbox whose pid 1 starts each call's program); throughput: --calls
// calls of sh `echo hi` from --callers concurrent callers on the same connection. Every result is checked (exit
// 0, the expected stdout): a wrong answer fails the benchmark.
import fs from "node:fs";
import os from "node:os";
import { SH_HI, die, options, runCodeWorkload, sessionLatency, status, stdioServer, summary } from "./mcp-client.mjs";

const opt = options({ runs: 200, calls: 200, callers: 4 }, ["runs", "calls", "callers"]);
if (!opt.mspMcp || !opt.msp) die("--msp-mcp and --msp are required");

async function measure(name, runtime) {
        const srv = stdioServer(opt.mspMcp, ["--runtime", runtime]);
        await srv.init();
        const idle = status(srv.child.pid);
        const w = await runCodeWorkload(srv, opt);
        const live = await sessionLatency(srv, opt.runs, SH_HI);
        const after = status(srv.child.pid);
        const code = await srv.close();
        if (code !== 0) die(`${name}: msp-mcp exited ${code}`);
        return { name, runtime, idle_kib: idle, after_kib: after, sh: summary(w.sh), python: summary(w.python),
                 sh_session: summary(live), throughput: w.throughput };
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
console.log(`one stdio connection; latency: ${opt.runs} sequential calls after 10 warm-up (fresh runs, then sh in one live session); throughput: ${opt.calls} calls of sh \`echo hi\` from ${opt.callers} callers`);
console.log("");
console.log("runtime   sh echo hi p50/p95 [ms]   python print(1) p50/p95 [ms]   sh in a session p50/p95 [ms]   runs/s (4 callers)   msp-mcp RSS idle/after [KiB]");
for (const r of results) {
        if (r.error) { console.log(`${r.name.padEnd(9)} failed: ${r.error.slice(0, 300)}`); continue; }
        console.log(`${r.name.padEnd(9)} ${f(r.sh.p50)} / ${f(r.sh.p95)}          ${f(r.python.p50)} / ${f(r.python.p95)}            ${f(r.sh_session.p50)} / ${f(r.sh_session.p95)}            ${f(r.throughput.per_s)}             ${r.idle_kib.rss} (peak ${r.idle_kib.hwm}) / ${r.after_kib.rss} (peak ${r.after_kib.hwm})`);
}
const m = results[0];
const goal = (what, value, ok) => console.log(`  ${what.padEnd(52)} ${value.padEnd(16)} ${ok ? "HOLDS" : "MISSED"}`);
console.log("");
console.log("goals (issue 7, with msp):");
goal("sh `echo hi` p50 < 15 ms end to end", `${m.sh.p50.toFixed(1)} ms`, m.sh.p50 < 15);
goal(`>= 100 runs/s with ${opt.callers} callers`, `${m.throughput.per_s.toFixed(1)} runs/s`, m.throughput.per_s >= 100);
goal("msp-mcp idle RSS < 4 MiB (VmHWM after initialize)", `${m.idle_kib.hwm} KiB`, m.idle_kib.hwm < 4096);
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ options: opt, results }, null, 2));
