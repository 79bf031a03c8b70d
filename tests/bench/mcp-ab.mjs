// Interleaved A/B of two msp-mcp builds, each with its own msp: the workload of mcp.mjs
// (run_code latency and throughput over one stdio connection) on both, in one run.
// tests/bench/mcp.sh --ab runs it.
//
//   node tests/bench/mcp-ab.mjs --a-msp-mcp PATH --a-msp PATH --b-msp-mcp PATH --b-msp PATH
//                               [--a-label TEXT] [--b-label TEXT] [--runs N] [--calls N]
//                               [--callers N] [--rounds N] [--json FILE]
//
// Both servers are started at once (each its own temporary --state-dir, --runtime its own
// msp) and stay up. Then --rounds (4) rounds; in each, one build and then the other runs
// mcp.mjs's workload: --runs (200) sequential sh `echo hi` calls, then python `print(1)`
// calls, each after 10 warm-up calls, then --calls (200) sh calls from --callers (4)
// callers. Which build goes first alternates per round (A B, B A, A B, ...), so that a
// change of the machine's load falls on both alike. Printed per build: p50 and p95 of
// every round's calls together, the mean runs/s of the rounds, idle RSS; the ratio B/A;
// and the spread between rounds, (largest - smallest) / median of the per-round figures:
// a B/A closer to 1 than that, or one whose rounds fall on both sides of 1, is noise. Every answer is checked (exit 0, the expected
// stdout): a wrong answer fails the benchmark; a slower build does not.
import fs from "node:fs";
import os from "node:os";
import { die, options, runCodeWorkload, status, stdioServer, summary } from "./mcp-client.mjs";

const opt = options({ runs: 200, calls: 200, callers: 4, rounds: 4 }, ["runs", "calls", "callers", "rounds"]);
for (const k of ["aMspMcp", "aMsp", "bMspMcp", "bMsp"])
        if (!opt[k]) die("--a-msp-mcp, --a-msp, --b-msp-mcp and --b-msp are required");
if (!(opt.rounds >= 2)) die("--rounds must be at least 2: the spread between rounds is the noise");
const builds = {
        A: { label: opt.aLabel ?? opt.aMspMcp, mspMcp: opt.aMspMcp, msp: opt.aMsp },
        B: { label: opt.bLabel ?? opt.bMspMcp, mspMcp: opt.bMspMcp, msp: opt.bMsp },
};
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(" ");

const loadBefore = load();
const servers = {};
for (const [k, b] of Object.entries(builds)) servers[k] = stdioServer(b.mspMcp, ["--runtime", b.msp]);
await Promise.all(Object.values(servers).map((s) => s.init()));
const idle = { A: status(servers.A.child.pid), B: status(servers.B.child.pid) };

const rounds = [];
for (let r = 0; r < opt.rounds; r++) {
        const order = r % 2 ? ["B", "A"] : ["A", "B"];
        const x = { order: order.join(" ") };
        for (const k of order) x[k] = await runCodeWorkload(servers[k], opt);
        rounds.push(x);
}
const after = { A: status(servers.A.child.pid), B: status(servers.B.child.pid) };
const codes = [await servers.A.close(), await servers.B.close()];
if (codes.some((c) => c !== 0)) die(`an msp-mcp exited ${codes.join(", ")}`);
const loadAfter = load();

// Each measure: its value per build over the whole run, per round, and which way is better.
const median = (v) => {
        const s = [...v].sort((a, b) => a - b), h = s.length >> 1;
        return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
};
const measures = [
        { name: "sh `echo hi` p50 [ms]", lang: "sh", p: "p50" },
        { name: "sh `echo hi` p95 [ms]", lang: "sh", p: "p95" },
        { name: "python `print(1)` p50 [ms]", lang: "python", p: "p50" },
        { name: "python `print(1)` p95 [ms]", lang: "python", p: "p95" },
].map((m) => ({
        name: m.name, lower: true,
        all: (k) => summary(rounds.flatMap((r) => r[k][m.lang]))[m.p],
        round: (r, k) => summary(r[k][m.lang])[m.p],
}));
measures.push({
        name: `runs/s (${opt.callers} callers)`, lower: false,
        all: (k) => rounds.reduce((a, r) => a + r[k].throughput.per_s, 0) / rounds.length,
        round: (r, k) => r[k].throughput.per_s,
});
const spread = (m, k) => {
        const v = rounds.map((r) => m.round(r, k));
        return (Math.max(...v) - Math.min(...v)) / median(v);
};

const f = (x, w = 8) => x.toFixed(1).padStart(w);
const pc = (x) => `${(x * 100).toFixed(0)}%`;
console.log(`msp-mcp A/B, ${new Date().toISOString().slice(0, 10)}, kernel ${os.release()}, ${os.cpus().length} CPUs`);
for (const [k, b] of Object.entries(builds)) console.log(`  ${k}: ${b.label}`);
console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadAfter} after`);
console.log(`${opt.rounds} rounds, which build goes first alternating (A B, B A, ...); per round and build: ` +
            `${opt.runs} sequential sh \`echo hi\` calls, then ${opt.runs} python \`print(1)\` (each after 10 warm-up calls), ` +
            `then ${opt.calls} sh calls from ${opt.callers} callers; one stdio connection per build, both servers up throughout`);
console.log("");
console.log("round  build   sh p50 / p95 [ms]   python p50 / p95 [ms]   runs/s");
rounds.forEach((r, i) => {
        for (const k of r.order.split(" ")) {
                const sh = summary(r[k].sh), py = summary(r[k].python);
                console.log(`${String(i + 1).padStart(5)}  ${k.padEnd(5)} ${f(sh.p50)} / ${f(sh.p95)}    ${f(py.p50)} / ${f(py.p95)}    ${f(r[k].throughput.per_s)}`);
        }
});
console.log("");
console.log(`${"measure".padEnd(28)} ${"A".padStart(8)} ${"B".padStart(8)}      B/A   spread A / B   reading`);
const verdicts = [];
for (const m of measures) {
        const a = m.all("A"), b = m.all("B"), ratio = b / a;
        const noise = Math.max(spread(m, "A"), spread(m, "B"));
        const perRound = rounds.map((r) => m.round(r, "B") / m.round(r, "A"));
        const oneSide = perRound.every((x) => x > 1) || perRound.every((x) => x < 1);
        const better = m.lower ? ratio < 1 : ratio > 1;
        // With fewer than 4 rounds every round on one side is too likely by chance to read.
        const verdict = opt.rounds < 4 ? "-" :
                Math.abs(ratio - 1) <= noise || !oneSide ? "within noise" : better ? "B better" : "B worse";
        verdicts.push({ measure: m.name, a, b, ratio, spread_a: spread(m, "A"), spread_b: spread(m, "B"), verdict });
        console.log(`${m.name.padEnd(28)} ${f(a)} ${f(b)} ${ratio.toFixed(3).padStart(8)}   ${`${pc(spread(m, "A"))} / ${pc(spread(m, "B"))}`.padEnd(14)} ${verdict}`);
}
console.log(`${"idle RSS, peak [KiB]".padEnd(28)} ${String(idle.A.hwm).padStart(8)} ${String(idle.B.hwm).padStart(8)} ${(idle.B.hwm / idle.A.hwm).toFixed(3).padStart(8)}   (after the runs: ${after.A.hwm} / ${after.B.hwm})`);
console.log("");
console.log("spread: (largest - smallest) / median of a build's per-round figures, the run-to-run noise of this");
console.log("run. A B/A that differs from 1 by less than the larger spread is noise, not a difference between the");
console.log("builds; so is one whose rounds disagree (B/A above 1 in one round, below in another). \"B better\" and");
console.log("\"B worse\" are said only when neither holds; on a loaded machine run it again before reading more into it.");
if (opt.rounds < 4) console.log(`With ${opt.rounds} rounds no reading is given (too few for the rounds' agreement to mean anything).`);
if (opt.json)
        fs.writeFileSync(opt.json, JSON.stringify({ options: opt, builds, load: [loadBefore, loadAfter], idle_kib: idle,
                                                    after_kib: after, figures: verdicts, rounds_ms: rounds }, null, 2));
