// Soak: 1,000 run_code calls with mixed outcomes (ok, error exit, timeout, OOM kill,
// cancel, huge output) through one msp-mcp, four at a time, then checks that nothing grew
// or leaked: msp-mcp's open fds and RSS against a baseline taken after a warm-up, no
// container, run cgroup, mount or state dir of a run left while the server still runs, and
// the run logs within the byte budget. The order of outcomes is random; MCP_SOAK_SEED=N
// replays one (the seed is printed), MCP_SOAK_CALLS=N sets the count.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { MSP_MCP, startServer, skipReason, finishAll, runCode, containersOf, cgroupsOf, waitFor, text } from "./lib.mjs";

const skip = skipReason();
// Under the sanitizer pass (an ASan msp-mcp) runs are ~3 times slower and ASan's
// quarantine holds freed memory on purpose: fewer calls, and no RSS bound (LeakSanitizer
// checks the heap when the server exits).
const ASAN = !!MSP_MCP && spawnSync("ldd", [MSP_MCP], { encoding: "utf8" }).stdout?.includes("libasan");
const CALLS = Number(process.env.MCP_SOAK_CALLS ?? (ASAN ? 300 : 1000));
const SEED = Number(process.env.MCP_SOAK_SEED ?? Date.now() % 1_000_000);
const HUGE = 4 << 20;                   // bytes a "huge" run writes to stdout
const OUTPUT_LIMIT = 128 << 10;         // the server's default --output-limit
const LOG_KEEP = 32;                    // its default --run-log-keep
let srv;

before(async () => {
        if (skip) return;
        srv = await startServer();
});
after(finishAll);

// A small deterministic generator (mulberry32) so that a seed replays the same order.
function rng(seed) {
        let a = seed >>> 0;
        return () => {
                a = (a + 0x6d2b79f5) >>> 0;
                let t = a;
                t = Math.imul(t ^ (t >>> 15), t | 1);
                t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
                return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
        };
}

// Outcome shares per 1,000 calls: mostly short runs, the slow kinds few and short.
const MIX = [["ok", 700], ["error", 150], ["huge", 50], ["cancel", 50], ["timeout", 30], ["oom", 20]];

function plan(n, rand) {
        const kinds = [];
        for (const [k, per] of MIX)
                for (let i = 0; i < Math.round((per * n) / 1000); i++) kinds.push(k);
        while (kinds.length < n) kinds.push("ok");
        kinds.length = n;
        for (let i = kinds.length - 1; i > 0; i--) {
                const j = Math.floor(rand() * (i + 1));
                [kinds[i], kinds[j]] = [kinds[j], kinds[i]];
        }
        return kinds;
}

// One call of the given kind, with its expected outcome checked.
async function one(kind, i, rand) {
        const what = `call ${i} (${kind})`;
        switch (kind) {
        case "ok": {
                const res = await runCode(srv, "sh", `echo ok ${i}`);
                assert.ok(!res.isError, `${what}: ${text(res).slice(0, 500)}`);
                assert.equal(res.structuredContent.stdout, `ok ${i}\n`, what);
                return;
        }
        case "error": {
                const res = await runCode(srv, "sh", `echo failing ${i} >&2; exit 3`);
                assert.equal(res.isError, true, what);
                assert.equal(res.structuredContent.exit_code, 3, what);
                assert.equal(res.structuredContent.stderr, `failing ${i}\n`, what);
                return;
        }
        case "huge": {
                const res = await runCode(srv, "sh", `head -c ${HUGE} /dev/zero | tr '\\0' x`);
                const out = res.structuredContent;
                assert.ok(!res.isError, `${what}: ${text(res).slice(0, 500)}`);
                assert.equal(out.truncated, true, what);
                assert.ok(out.stdout.length <= OUTPUT_LIMIT, `${what}: ${out.stdout.length} bytes kept`);
                return;
        }
        case "timeout": {
                const res = await runCode(srv, "sh", "while :; do :; done", { timeout_ms: 200 });
                assert.equal(res.isError, true, what);
                assert.equal(res.structuredContent.timed_out, true, what);
                return;
        }
        case "oom": {
                // A shell variable that doubles until the 16 MiB cgroup kills it.
                const res = await runCode(srv, "sh", "x=x; while :; do x=$x$x; done",
                                          { memory_mb: 16, timeout_ms: 20_000 });
                assert.equal(res.isError, true, what);
                assert.equal(res.structuredContent.oom_killed, true, `${what}: ${JSON.stringify(res.structuredContent).slice(0, 300)}`);
                return;
        }
        case "cancel": {
                // Cancelled while queued, starting or running (0-60 ms in): never answered.
                const ac = new AbortController();
                const p = runCode(srv, "sh", "sleep 30", { timeout_ms: 50_000 }, { signal: ac.signal });
                setTimeout(() => ac.abort("soak cancel"), Math.floor(rand() * 60));
                await assert.rejects(p, undefined, what);
                return;
        }
        }
}

function fdCount(pid) {
        return fs.readdirSync(`/proc/${pid}/fd`).length;
}

function rssKiB(pid) {
        const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
        return m ? Number(m[1]) : 0;
}

function mountCount(stateDir) {
        return fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").filter((l) => l.includes(stateDir)).length;
}

// The run cgroups below the instance's cgroup, in every hierarchy.
function runCgroups(inst) {
        return cgroupsOf(inst).flatMap((cg) =>
                fs.readdirSync(cg, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => path.join(cg, e.name)));
}

function dirBytes(dir) {
        let total = 0, files = 0;
        let names = [];
        try { names = fs.readdirSync(dir); } catch { return { total, files }; }
        for (const n of names) {
                try { total += fs.statSync(path.join(dir, n)).size; files++; } catch { /* dropped meanwhile */ }
        }
        return { total, files };
}

// Everything of the runs is gone: no container, run cgroup, extra mount; fds back down.
async function quiesced(inst, base) {
        await waitFor("no container of a run left", () => containersOf(srv.stateDir, inst).length === 0, 20_000);
        await waitFor("no run cgroup left", () => runCgroups(inst).length === 0, 20_000);
        await waitFor("no mount of a run left", () => mountCount(srv.stateDir) <= base.mounts, 20_000);
        let fds = 0;
        try {
                await waitFor("msp-mcp's fds back to the baseline", () => (fds = fdCount(srv.pid)) <= base.fds, 20_000);
        } catch {
                assert.fail(`msp-mcp has ${fds} fds open after the soak, ${base.fds} before: ` +
                            fs.readdirSync(`/proc/${srv.pid}/fd`).map((f) => {
                                    try { return fs.readlinkSync(`/proc/${srv.pid}/fd/${f}`); } catch { return "?"; }
                            }).join(", "));
        }
}

test(`soak: ${CALLS} run_code calls with mixed outcomes leak nothing`, { skip, timeout: 600_000 }, async () => {
        console.log(`# soak seed ${SEED} (MCP_SOAK_SEED=${SEED} replays it), ${CALLS} calls`);
        const rand = rng(SEED);
        const inst = srv.instance();
        assert.ok(inst, "instance dir");
        const logs = path.join(srv.stateDir, inst, "logs");
        // Free space of the state dir's filesystem now (the server took its budget at start,
        // when at least this much was free): the budget is a quarter of it, at most 512 MiB.
        const st = fs.statfsSync(srv.stateDir);
        const budget = Math.min(512 << 20, Math.floor((Number(st.bavail) * Number(st.bsize)) / 4));

        // Warm-up: one call of each kind, so that lazily made state (the skeleton, caches,
        // the log ring's files) is in the baseline.
        for (const [k] of MIX) await one(k, -1, rand);
        const base = { fds: 0, rss: 0, mounts: mountCount(srv.stateDir) };
        await quiesced(inst, { fds: Infinity, mounts: base.mounts });
        base.fds = fdCount(srv.pid);
        base.rss = rssKiB(srv.pid);

        const kinds = plan(CALLS, rand);
        const counts = {};
        let next = 0, maxLog = 0;
        const t0 = Date.now();
        async function worker() {
                while (next < kinds.length) {
                        const i = next++;
                        await one(kinds[i], i, rand);
                        counts[kinds[i]] = (counts[kinds[i]] ?? 0) + 1;
                        if (i % 50 === 0) maxLog = Math.max(maxLog, dirBytes(logs).total);
                }
        }
        await Promise.all([worker(), worker(), worker(), worker()]);
        const took = Date.now() - t0;
        console.log(`# ${JSON.stringify(counts)} in ${took} ms`);

        await quiesced(inst, base);
        const rss = rssKiB(srv.pid);
        console.log(`# msp-mcp fds ${base.fds} -> ${fdCount(srv.pid)}, RSS ${base.rss} -> ${rss} KiB, logs at most ${maxLog} bytes`);
        // Bounded growth: allocator slack, not per-call state (4 KiB a call would be 4 MiB).
        if (!ASAN)
                assert.ok(rss - base.rss < 8 << 10, `msp-mcp's RSS grew from ${base.rss} to ${rss} KiB over ${CALLS} calls`);
        const end = dirBytes(logs);
        assert.ok(end.files <= 2 * LOG_KEEP, `${end.files} log files kept, at most ${2 * LOG_KEEP}`);
        assert.ok(Math.max(maxLog, end.total) <= budget, `logs took ${Math.max(maxLog, end.total)} bytes, budget ${budget}`);
        // The server still answers.
        assert.deepEqual(await srv.client.ping(), {});
});
