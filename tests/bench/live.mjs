// msp-mcp live sessions: a call in a session's running sandbox against a fresh sandbox per
// call, the python kernel, pause and resume, and msp-mcp's memory with many idle sessions.
// tests/bench/mcp.sh --live runs it (as root).
//
//   node tests/bench/live.mjs --msp-mcp PATH --msp PATH [--runc PATH] [--runs N]
//                             [--pauses N] [--sessions N] [--kernels yes|no] [--json FILE]
//
// Latency: one msp-mcp per runtime (msp, and runc when given), both up at once on stdio,
// each with one live session whose python kernel is started (`x = 0`). After 10 warm-up
// calls of each kind, --runs rounds; in each, on each server (which goes first
// alternating), four calls timed from writing the request to reading its answer (20 ms
// apart, so that a fresh sandbox's deletion does not fall into the next call): sh
// `echo hi` fresh (no session: a sandbox of its own) and in the session, python
// `print(1)` fresh and `x += 1` in the session's kernel, fresh and live alternating which
// goes first. Pause: --pauses rounds per server of a call in the running session, then
// session_pause and a call on the paused session (the call thaws it), then session_pause,
// session_resume and a call; each timed. Without session_pause on the server the sandbox's
// cgroup freezer is written directly instead (freeze, then thaw + a call) and the output
// says so. Memory: a third msp-mcp (msp) with --sessions idle live sessions (each one sh
// call made), its VmRSS/VmHWM apart from the sandboxes' (their cgroups' charge and the
// proportional set size of their processes) and from the per-session runtime processes
// outside them; then the same after one python kernel started in each (--kernels no skips
// that). Every answer is checked (no isError, the expected stdout).
import fs from "node:fs";
import os from "node:os";
import { die, options, status, stdioServer, summary, timed } from "./mcp-client.mjs";

const opt = options({ runs: 200, pauses: 50, sessions: 50, kernels: "yes" }, ["runs", "pauses", "sessions"]);
if (!opt.mspMcp || !opt.msp) die("--msp-mcp and --msp are required");
const load = () => os.loadavg().map((x) => x.toFixed(2)).join(" ");

async function call(srv, name, args, expect) {
        const r = await srv.request("tools/call", { name, arguments: args });
        const sc = r.result?.structuredContent;
        if (!sc || r.result.isError || (expect !== undefined && sc.stdout !== expect))
                die(`${name} ${JSON.stringify(args).slice(0, 200)}: unexpected answer ${JSON.stringify(r).slice(0, 600)} ${srv.log()}`);
        return sc;
}
const run = (srv, language, code, expect, sid) =>
        call(srv, "run_code", sid ? { language, code, session_id: sid } : { language, code }, expect);

// The calls of a latency round: [key, f(server)].
const KINDS = [
        ["sh_fresh", (s) => run(s, "sh", "echo hi", "hi\n")],
        ["sh_live", (s) => run(s, "sh", "echo hi", "hi\n", s.sid)],
        ["py_fresh", (s) => run(s, "python", "print(1)", "1\n")],
        ["py_kernel", (s) => run(s, "python", "x += 1", "", s.sid)],
];

// ---- processes and cgroups, from /proc ----

function children(pid) {
        const out = [];
        for (const d of fs.readdirSync("/proc")) {
                if (!/^\d+$/.test(d)) continue;
                try {
                        const st = fs.readFileSync(`/proc/${d}/stat`, "utf8");
                        if (Number(st.slice(st.lastIndexOf(")") + 2).split(" ")[1]) === pid) out.push(Number(d));
                } catch {}
        }
        return out;
}

function pssKib(pid) {
        try {
                const m = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+) kB/m);
                return m ? Number(m[1]) : 0;
        } catch { return 0; }
}

// The memory cgroup directory of pid (v1's memory controller, else the unified one).
function memCgroup(pid) {
        const lines = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8").trim().split("\n").map((l) => l.split(":"));
        const v1 = lines.find((l) => l[1].split(",").includes("memory"));
        if (v1) return { dir: `/sys/fs/cgroup/memory${v1[2]}`, file: "memory.usage_in_bytes" };
        const v2 = lines.find((l) => l[0] === "0");
        const base = fs.existsSync("/sys/fs/cgroup/unified/cgroup.controllers") ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";
        return { dir: `${base}${v2[2]}`, file: "memory.current" };
}

function freezer(pid) {
        const lines = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8").trim().split("\n").map((l) => l.split(":"));
        const v1 = lines.find((l) => l[1].split(",").includes("freezer"));
        if (v1 && v1[2] !== "/") return { file: `/sys/fs/cgroup/freezer${v1[2]}/freezer.state`, on: "FROZEN", off: "THAWED" };
        const v2 = lines.find((l) => l[0] === "0");
        const base = fs.existsSync("/sys/fs/cgroup/unified/cgroup.controllers") ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";
        return { file: `${base}${v2[2]}/cgroup.freeze`, on: "1", off: "0" };
}

// CPU time so far, ns: of every thread of pid (schedstat), of a cgroup (its processes and
// their children: cpuacct.usage on v1, cpu.stat's usage_usec on v2).
function cpuNs(pid) {
        let ns = 0;
        for (const t of fs.readdirSync(`/proc/${pid}/task`))
                try { ns += Number(fs.readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0]); } catch {}
        return ns;
}

function cgroupCpuNs(pid) {
        const lines = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8").trim().split("\n").map((l) => l.split(":"));
        const v1 = lines.find((l) => l[1].split(",").includes("cpuacct"));
        if (v1 && v1[2] !== "/") return Number(fs.readFileSync(`/sys/fs/cgroup/cpuacct${v1[2]}/cpuacct.usage`, "utf8"));
        const v2 = lines.find((l) => l[0] === "0");
        const base = fs.existsSync("/sys/fs/cgroup/unified/cgroup.controllers") ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";
        const m = fs.readFileSync(`${base}${v2[2]}/cpu.stat`, "utf8").match(/^usage_usec (\d+)/m);
        return m ? Number(m[1]) * 1000 : NaN;
}

// msp-mcp's children are the runtime processes that run a sandbox (one per live session,
// which stays until the sandbox ends) and short-lived helpers; a runtime process's child
// is its sandbox's pid 1.
function sandboxes(serverPid) {
        const out = [];
        for (const rt of children(serverPid))
                for (const init of children(rt)) {
                        try { out.push({ runtime: rt, init, cg: memCgroup(init) }); } catch {}
                }
        return out;
}

function memory(serverPid) {
        const boxes = sandboxes(serverPid);
        let charged = 0, pss = 0, procs = 0;
        for (const b of boxes) {
                charged += Number(fs.readFileSync(`${b.cg.dir}/${b.cg.file}`, "utf8"));
                for (const p of fs.readFileSync(`${b.cg.dir}/cgroup.procs`, "utf8").split("\n").filter(Boolean)) {
                        pss += pssKib(Number(p));
                        procs++;
                }
        }
        const runtimePss = boxes.reduce((a, b) => a + pssKib(b.runtime), 0);
        return { server: status(serverPid), server_pss_kib: pssKib(serverPid), sandboxes: boxes.length,
                 sandbox_charged_kib: Math.round(charged / 1024), sandbox_pss_kib: pss, sandbox_procs: procs,
                 runtime_procs_pss_kib: runtimePss };
}

// ---- latency and pause ----

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function server(name, runtime) {
        const srv = stdioServer(opt.mspMcp, ["--runtime", runtime]);
        await srv.init();
        const tools = (await srv.request("tools/list", {})).result.tools.map((t) => t.name);
        srv.name = name;
        srv.hasPause = tools.includes("session_pause") && tools.includes("session_resume");
        const t = {};
        t.session_create = await timed(async () => { srv.sid = (await call(srv, "session_create", {})).session_id; });
        t.first_call = await timed(() => run(srv, "sh", "echo hi", "hi\n", srv.sid));
        t.kernel_start = await timed(() => run(srv, "python", "x = 0", "", srv.sid));
        srv.startup = t;
        return srv;
}

// After each timed call: a fresh call's answer goes out before its sandbox is deleted
// (msp-mcp spawns the runtime's delete after the response), which then competes with the
// next call for the two cores; without the pause, a live call after a fresh one took 3x
// its time back to back.
const SETTLE_MS = 20;

async function latency(servers) {
        for (const s of servers)
                for (let i = 0; i < 10; i++)
                        for (const [, f] of KINDS) await f(s);
        const t = Object.fromEntries(servers.map((s) => [s.name, Object.fromEntries(KINDS.map(([k]) => [k, []]))]));
        for (let i = 0; i < opt.runs; i++) {
                const order = i % 2 ? [...servers].reverse() : servers;
                for (const s of order) {
                        // fresh, live, fresh, live; then live, fresh, live, fresh
                        const kinds = i % 4 < 2 ? KINDS : [KINDS[1], KINDS[0], KINDS[3], KINDS[2]];
                        for (const [k, f] of kinds) {
                                t[s.name][k].push(await timed(() => f(s)));
                                await sleep(SETTLE_MS);
                        }
                }
        }
        return t;
}

// CPU per live call: --runs / 2 calls of a kind back to back; the CPU time msp-mcp, the
// session's sandbox (pid 1, the program or the kernel) and this client used, per call.
async function cpu(s) {
        const box = sandboxes(s.child.pid)[0];
        const out = {};
        for (const [k, f] of KINDS.filter(([k]) => k.endsWith("live") || k.endsWith("kernel"))) {
                const n = Math.max(10, Math.floor(opt.runs / 2));
                const a = { server: cpuNs(s.child.pid), box: cgroupCpuNs(box.init), client: process.cpuUsage() };
                const wall = [];
                for (let i = 0; i < n; i++) wall.push(await timed(() => f(s)));
                const c = process.cpuUsage(a.client);
                out[k] = { calls: n, wall_p50_ms: summary(wall).p50,
                           server_us: (cpuNs(s.child.pid) - a.server) / n / 1000,
                           sandbox_us: (cgroupCpuNs(box.init) - a.box) / n / 1000,
                           client_us: (c.user + c.system) / n };
        }
        return out;
}

const sh = (s) => run(s, "sh", "echo hi", "hi\n", s.sid);

async function pauses(s) {
        const t = { running: [], pause: [], call_paused: [], resume: [], call_resumed: [] };
        if (s.hasPause) {
                const pause = () => call(s, "session_pause", { session_id: s.sid });
                for (let i = 0; i < opt.pauses; i++) {
                        t.running.push(await timed(() => sh(s)));
                        t.pause.push(await timed(pause));
                        await sleep(5);
                        t.call_paused.push(await timed(() => sh(s)));
                        await pause();
                        await sleep(5);
                        t.resume.push(await timed(() => call(s, "session_resume", { session_id: s.sid })));
                        t.call_resumed.push(await timed(() => sh(s)));
                }
                return { how: "session_pause / session_resume", t };
        }
        // No pause tools: the sandbox's freezer written here, as the engine would.
        const box = sandboxes(s.child.pid).find((b) => b.init);
        const fz = freezer(box.init);
        for (let i = 0; i < opt.pauses; i++) {
                t.running.push(await timed(() => sh(s)));
                t.pause.push(await timed(async () => fs.writeFileSync(fz.file, fz.on)));
                await sleep(5);
                t.resume.push(await timed(async () => fs.writeFileSync(fz.file, fz.off)));
                t.call_resumed.push(await timed(() => sh(s)));
        }
        return { how: `no session_pause on this server: ${fz.file} written directly`, t };
}

// ---- many idle sessions ----

async function manySessions() {
        const srv = stdioServer(opt.mspMcp, ["--runtime", opt.msp, "--max-sessions", String(opt.sessions + 2)]);
        await srv.init();
        const pid = srv.child.pid;
        const out = { idle: memory(pid) };
        const sids = [];
        const tCreate = await timed(async () => {
                for (let i = 0; i < opt.sessions; i++) {
                        const sid = (await call(srv, "session_create", {})).session_id;
                        await run(srv, "sh", "echo hi", "hi\n", sid);
                        sids.push(sid);
                }
        });
        await sleep(500);
        out.sessions = memory(pid);
        out.create_ms_each = tCreate / opt.sessions;
        const listed = (await call(srv, "session_list", {})).sessions;
        if (listed.some((x) => x.memory_bytes !== undefined))
                out.session_list_memory_kib = Math.round(listed.reduce((a, x) => a + (x.memory_bytes ?? 0), 0) / 1024);
        if (opt.kernels !== "no") {
                let next = 0;
                const tK = await timed(() => Promise.all([0, 1].map(async () => {
                        while (next < sids.length) await run(srv, "python", "x = 0", "", sids[next++]);
                })));
                await sleep(500);
                out.kernels = memory(pid);
                out.kernel_start_ms_each = tK / sids.length;
        }
        const code = await srv.close();
        if (code !== 0) die(`msp-mcp (sessions) exited ${code}`);
        return out;
}

// ---- the run ----

const loadBefore = load();
const servers = [await server("msp", opt.msp)];
if (opt.runc) {
        try { servers.push(await server("runc", opt.runc)); } catch (e) { console.error(`bench: runc: ${e}`); }
}
const lat = await latency(servers);
const cpus = {};
for (const s of servers) cpus[s.name] = await cpu(s);
const pause = {};
for (const s of servers) pause[s.name] = await pauses(s);
const idleOne = Object.fromEntries(servers.map((s) => [s.name, memory(s.child.pid)]));
for (const s of servers) {
        const code = await s.close();
        if (code !== 0) die(`${s.name}: msp-mcp exited ${code}`);
}
const loadMid = load();
const many = opt.sessions > 0 ? await manySessions() : null;
const loadAfter = load();

// ---- the report ----

const sum = Object.fromEntries(Object.entries(lat).map(([n, ks]) => [n, Object.fromEntries(Object.entries(ks).map(([k, v]) => [k, summary(v)]))]));
const psum = Object.fromEntries(Object.entries(pause).map(([n, p]) => [n, Object.fromEntries(Object.entries(p.t).filter(([, v]) => v.length).map(([k, v]) => [k, summary(v)]))]));
const f = (x, w = 7) => (x === undefined ? "-" : x.toFixed(2)).padStart(w);
const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;
console.log(`msp-mcp live sessions, ${new Date().toISOString().slice(0, 16)}Z, kernel ${os.release()}, ${os.cpus().length} CPUs`);
console.log(`load average (1, 5, 15 min): ${loadBefore} before, ${loadMid} after the latencies, ${loadAfter} at the end`);
console.log(`latency: ${opt.runs} rounds after 10 warm-up calls of each; servers and fresh/live order alternating, ${SETTLE_MS} ms after each call; p50 / p95 [ms]`);
console.log("");
console.log("runtime   sh fresh          sh live          python fresh      kernel x += 1    | fresh/live sh  python");
for (const s of servers) {
        const m = sum[s.name];
        console.log(`${s.name.padEnd(9)} ${f(m.sh_fresh.p50)} / ${f(m.sh_fresh.p95)}  ${f(m.sh_live.p50)} / ${f(m.sh_live.p95)}  ${f(m.py_fresh.p50)} / ${f(m.py_fresh.p95)}  ${f(m.py_kernel.p50)} / ${f(m.py_kernel.p95)}  | ${f(m.sh_fresh.p50 / m.sh_live.p50, 8)}x ${f(m.py_fresh.p50 / m.py_kernel.p50, 7)}x`);
}
if (servers.length > 1)
        console.log(`runc / msp p50: sh fresh ${f(sum.runc.sh_fresh.p50 / sum.msp.sh_fresh.p50, 4)}x, sh live ${f(sum.runc.sh_live.p50 / sum.msp.sh_live.p50, 4)}x, python fresh ${f(sum.runc.py_fresh.p50 / sum.msp.py_fresh.p50, 4)}x, kernel ${f(sum.runc.py_kernel.p50 / sum.msp.py_kernel.p50, 4)}x`);
console.log("");
console.log(`CPU per live call (${Math.max(10, Math.floor(opt.runs / 2))} calls back to back) [µs]: msp-mcp, the sandbox (pid 1 + program or kernel), this client; wall p50 [ms]`);
for (const s of servers)
        for (const [k, c] of Object.entries(cpus[s.name]))
                console.log(`  ${s.name.padEnd(6)} ${(k === "sh_live" ? "sh live" : "kernel x += 1").padEnd(14)} ${f(c.server_us, 8)} ${f(c.sandbox_us, 9)} ${f(c.client_us, 8)}   ${f(c.wall_p50_ms)}`);
console.log("");
console.log("start-up (once per server) [ms]: session_create, its first call (waits for the sandbox), the kernel's start (first cell)");
for (const s of servers)
        console.log(`  ${s.name.padEnd(6)} ${f(s.startup.session_create)} ${f(s.startup.first_call)} ${f(s.startup.kernel_start, 9)}`);
console.log("");
console.log(`pause/resume, ${opt.pauses} rounds, p50 / p95 [ms]:`);
for (const s of servers) {
        const p = psum[s.name];
        console.log(`  ${s.name} (${pause[s.name].how}):`);
        const line = (k, what) => p[k] && console.log(`    ${what.padEnd(44)} ${f(p[k].p50)} / ${f(p[k].p95)}`);
        line("running", "sh call, session running");
        line("pause", pause[s.name].how.startsWith("session") ? "session_pause" : "freeze (write)");
        line("call_paused", "sh call on the paused session (it thaws)");
        line("resume", pause[s.name].how.startsWith("session") ? "session_resume" : "thaw (write)");
        line("call_resumed", "sh call just after the resume");
        if (p.call_paused) console.log(`    ${"first call's extra latency when paused".padEnd(44)} ${f(p.call_paused.p50 - p.running.p50)}`);
}
console.log("");
console.log("memory, one live session with its kernel (msp-mcp VmRSS; sandbox cgroup charge; sandbox processes' PSS; runtime process PSS):");
for (const s of servers) {
        const m = idleOne[s.name];
        console.log(`  ${s.name.padEnd(6)} ${m.server.rss} KiB (peak ${m.server.hwm}); ${mib(m.sandbox_charged_kib)}; ${mib(m.sandbox_pss_kib)} in ${m.sandbox_procs} processes; ${mib(m.runtime_procs_pss_kib)}`);
}
if (many) {
        const row = (what, m) => console.log(`  ${what.padEnd(34)} ${String(m.server.rss).padStart(6)} KiB (anon ${m.server.anon}, peak ${m.server.hwm})  ${String(m.sandboxes).padStart(3)}  ${mib(m.sandbox_charged_kib).padStart(10)}  ${mib(m.sandbox_pss_kib).padStart(10)} (${m.sandbox_procs})  ${mib(m.runtime_procs_pss_kib).padStart(9)}`);
        console.log("");
        console.log(`memory, msp-mcp (msp) with ${opt.sessions} idle live sessions:`);
        console.log(`  ${"".padEnd(34)} msp-mcp VmRSS                         boxes cgroups     PSS (processes)   runtime procs PSS`);
        row("after initialize", many.idle);
        row(`${opt.sessions} sessions, one sh call each`, many.sessions);
        if (many.kernels) row("and a python kernel in each", many.kernels);
        console.log(`  session_create + first call: ${many.create_ms_each.toFixed(1)} ms each${many.kernel_start_ms_each ? `; kernel start: ${many.kernel_start_ms_each.toFixed(0)} ms each (2 at a time)` : ""}`);
        if (many.session_list_memory_kib !== undefined) console.log(`  session_list memory_bytes sum: ${mib(many.session_list_memory_kib)}`);
        if (many.kernels) console.log(`  the kernels' share: ${mib(many.kernels.sandbox_charged_kib - many.sessions.sandbox_charged_kib)} charged, ${mib(many.kernels.sandbox_pss_kib - many.sessions.sandbox_pss_kib)} PSS (${((many.kernels.sandbox_pss_kib - many.sessions.sandbox_pss_kib) / opt.sessions / 1024).toFixed(1)} MiB each)`);
}

const m = sum.msp, pm = psum.msp;
const goal = (what, value, ok) => console.log(`  ${what.padEnd(56)} ${value.padEnd(22)} ${ok === undefined ? "NOT MEASURED" : ok ? "HOLDS" : "MISSED"}`);
console.log("");
console.log("goals (with msp):");
goal("sh `echo hi` in a live session p50 <= 2 ms", `${m.sh_live.p50.toFixed(2)} ms`, m.sh_live.p50 <= 2);
goal("python kernel `x += 1` p50 <= 3 ms", `${m.py_kernel.p50.toFixed(2)} ms`, m.py_kernel.p50 <= 3);
if (pm.call_paused) {
        goal("session_resume p50 <= 5 ms", `${pm.resume.p50.toFixed(2)} ms`, pm.resume.p50 <= 5);
        const extra = pm.call_paused.p50 - pm.running.p50;
        goal("a paused session's first call: extra p50 <= 5 ms", `${extra.toFixed(2)} ms`, extra <= 5);
} else {
        goal("resume <= 5 ms (thaw written directly + next call)", `${pm.resume.p50.toFixed(2)} ms`, pm.resume.p50 <= 5);
}
if (many) goal(`msp-mcp VmRSS with ${opt.sessions} idle live sessions < 16 MiB`, `${many.sessions.server.rss} KiB`, many.sessions.server.rss < 16384);
if (many?.kernels) goal("  ... and a python kernel in each", `${many.kernels.server.rss} KiB`, many.kernels.server.rss < 16384);
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify({ options: opt, load: [loadBefore, loadMid, loadAfter], latency: sum, cpu: cpus, pause: psum,
                                                          startup: Object.fromEntries(servers.map((s) => [s.name, s.startup])),
                                                          memory_one: idleOne, memory_many: many, samples_ms: lat, pause_samples_ms: pause }, null, 2));
