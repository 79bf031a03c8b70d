// Live sessions: a session is one running sandbox. What a call leaves running in the
// background is there for the next call, /tmp is the sandbox's, a call returns when its own
// program exits, its timeout kills its own process group only, and session_close, expiry and
// a dead sandbox behave (docs/MCP.md, "Sessions and workspaces"). Every case with msp and
// with runc (plain OCI bundles).
//
// Processes are found by a marker in their argv: /tmp/<marker>-<name> is a symlink to sleep,
// so its command line names the marker, inside the sandbox and in the host's /proc alike.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
        startServer, skipReason, finishAll, call, runCode, text, assertOk, waitFor,
        containersOf, cgroupsOf, AS_USER, MSP,
} from "./lib.mjs";

const skip = skipReason();
const RUNC = ["/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"].find((p) => fs.existsSync(p));

after(finishAll);

let serial = 0;
function marker() {
        return `mlive${process.pid}x${++serial}x${Math.random().toString(36).slice(2, 8)}`;
}

// sh: links /tmp/<m>-<name> to sleep for every name, so that `/tmp/<m>-<name> N` is a sleep
// whose command line names the marker.
function links(m, ...names) {
        return names.map((n) => `ln -sf "$(command -v sleep)" /tmp/${m}-${n}`).join("; ") + "; ";
}

// sh: prints the command line of every process in the sandbox that names the marker (the
// marker is an argument of the function here, never in a command line of its own).
const PROCS_FN = `procs() { for f in /proc/[0-9]*/cmdline; do c=$(tr '\\0' ' ' < "$f" 2>/dev/null) || continue; case "$c" in *"$1"*) echo "$c";; esac; done; }; `;

// Host processes whose command line names the marker: "pid: cmdline".
function hostProcs(m) {
        const found = [];
        for (const pid of fs.readdirSync("/proc")) {
                if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
                let cmd;
                try { cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "); } catch { continue; }
                if (cmd.includes(m)) found.push(`${pid}: ${cmd.trim()}`);
        }
        return found;
}

// The host pid of the process whose pid namespace is ns ("pid:[N]") and which is its pid 1.
function hostInitOf(ns) {
        for (const pid of fs.readdirSync("/proc")) {
                if (!/^\d+$/.test(pid)) continue;
                try {
                        if (fs.readlinkSync(`/proc/${pid}/ns/pid`) !== ns) continue;
                        const nspid = /^NSpid:\s*(.*)$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))[1].trim().split(/\s+/);
                        if (nspid[nspid.length - 1] === "1") return Number(pid);
                } catch { /* gone */ }
        }
        return null;
}

// Every directory below the instance's cgroups (in every hierarchy), by path.
function cgroupTree(inst) {
        const out = [];
        const walk = (d) => {
                let ents = [];
                try { ents = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
                for (const e of ents) if (e.isDirectory()) { out.push(path.join(d, e.name)); walk(path.join(d, e.name)); }
        };
        for (const c of cgroupsOf(inst)) walk(c);
        return out;
}

function mountsMentioning(pid, words) {
        let lines = [];
        try { lines = fs.readFileSync(`/proc/${pid}/mountinfo`, "utf8").split("\n"); } catch { return []; }
        return lines.filter((l) => words.some((w) => l.includes(w)));
}

// One server per runtime, started by its first test; every case's sessions are closed by
// the case, and by the file's after() when a case failed halfway.
const servers = new Map();      // runtime name -> { srv, open: Set of session ids }
after(async () => {
        for (const { srv, open } of servers.values()) {
                for (const id of open) await call(srv, "session_close", { session_id: id }).catch(() => {});
                await srv.close().catch(() => {});
        }
        await finishAll();
});

for (const [name, runtime] of [["msp", MSP], ["runc", RUNC]]) {
        const skipRt = skip || (runtime ? false : `${name} not installed`);
        let srv;
        let open;
        const live = (what, opts, fn) => test(`${what} (${name})`, { timeout: 60_000, skip: skipRt, ...opts }, async (t) => {
                if (!servers.has(name)) servers.set(name, { srv: await startServer({ runtime }), open: new Set() });
                ({ srv, open } = servers.get(name));
                await fn(t);
        });
        async function session(args = {}) {
                const s = assertOk(await call(srv, "session_create", args), srv, "session_create");
                open.add(s.session_id);
                return s.session_id;
        }
        async function close(id) {
                const res = assertOk(await call(srv, "session_close", { session_id: id }), srv, "session_close");
                open.delete(id);
                return res;
        }
        async function sh(id, code, extra = {}) {
                return runCode(srv, "sh", code, { session_id: id, ...extra });
        }
        async function shOk(id, code, extra = {}, what = code) {
                return assertOk(await sh(id, code, extra), srv, what);
        }
        // The marker's processes as the sandbox sees them.
        async function inside(id, m) {
                const out = (await shOk(id, `${PROCS_FN}procs ${m}`, {}, `listing ${m}`)).stdout;
                return out.split("\n").filter(Boolean);
        }
        // What identifies the sandbox a call runs in.
        async function identity(id) {
                const out = (await shOk(id, "readlink /proc/self/ns/pid; tr '\\0' ' ' < /proc/1/cmdline; echo; hostname; cut -d' ' -f22 /proc/1/stat", {}, "identity")).stdout;
                const [ns, init, host, start] = out.split("\n");
                return { ns, init, host, start };
        }

        live("background processes (&, nohup, setsid) and /tmp carry over to the next call, in the same sandbox", {}, async () => {
                const id = await session();
                const m = marker();
                const first = await identity(id);
                assert.match(first.ns, /^pid:\[\d+\]$/);
                assert.match(first.init, /init --serve/, `pid 1 is the init: ${first.init}`);
                const t0 = Date.now();
                const c1 = await shOk(id, links(m, "bg", "nohup", "setsid") +
                        `/tmp/${m}-bg 300 & nohup /tmp/${m}-nohup 300 & setsid /tmp/${m}-setsid 300 & echo kept-in-tmp > /tmp/${m}.txt; echo started`);
                assert.match(c1.stdout, /started\n$/);
                assert.ok(Date.now() - t0 < 20_000, `call 1 took ${Date.now() - t0} ms with children holding its pipes`);
                const seen = await waitFor("the three background sleeps inside", async () => {
                        const p = await inside(id, m);
                        return ["bg", "nohup", "setsid"].every((n) => p.some((c) => c.includes(`${m}-${n} 300`))) && p;
                }, 10_000, 100);
                assert.equal(seen.length, 3, seen.join("\n"));
                assert.equal(hostProcs(m).length, 3, `on the host: ${hostProcs(m).join("\n")}`);
                assert.equal((await shOk(id, `cat /tmp/${m}.txt`)).stdout, "kept-in-tmp\n");
                assert.deepEqual(await identity(id), first, "every call of a session runs in the same sandbox");
                await close(id);
        });

        live("a call returns when its program exits, though a background child keeps its stdout open", {}, async () => {
                const id = await session();
                const m = marker();
                const t0 = Date.now();
                const res = await shOk(id, links(m, "holder") + `/tmp/${m}-holder 30 & echo done`);
                const took = Date.now() - t0;
                assert.equal(res.stdout, "done\n");
                assert.ok(took < 10_000, `the call took ${took} ms (duration_ms ${res.duration_ms})`);
                assert.ok(res.duration_ms < 10_000, `duration_ms ${res.duration_ms}`);
                assert.equal((await inside(id, m)).length, 1, "the holder still runs");
                await close(id);
        });

        live("timeout_ms kills the run's process group; a setsid process of an earlier call survives; the session stays usable", {}, async () => {
                const id = await session();
                const m = marker();
                await shOk(id, links(m, "keep", "grp") + `setsid /tmp/${m}-keep 300 >/dev/null 2>&1 &`);
                await waitFor("the setsid sleep", async () => (await inside(id, m)).length === 1, 10_000, 100);
                const t0 = Date.now();
                const to = await sh(id, `/tmp/${m}-grp 100 & wait`, { timeout_ms: 1000 });
                assert.equal(to.structuredContent?.timed_out, true, `${text(to)}\n${srv.log().slice(-2000)}`);
                assert.ok(Date.now() - t0 < 15_000, `the timed-out call took ${Date.now() - t0} ms`);
                await waitFor("the timed-out run's group to be gone", async () =>
                        !(await inside(id, m)).some((c) => c.includes(`${m}-grp`)), 10_000, 100);
                const left = await inside(id, m);
                assert.deepEqual(left.map((c) => c.trim()), [`/tmp/${m}-keep 300`], "the setsid process survives");
                assert.deepEqual(hostProcs(m).map((l) => l.replace(/^\d+: /, "")), [`/tmp/${m}-keep 300`]);
                assert.equal((await shOk(id, "echo still usable")).stdout, "still usable\n");
                await close(id);
        });

        live("session_close leaves nothing: forked, double-forked, TERM-ignoring processes, the container, its cgroups, its mounts", {}, async (t) => {
                const inst = srv.instance();
                const containersBefore = new Set(containersOf(srv.stateDir, inst));
                const id = await session();
                const m = marker();
                // Its sandbox may still be starting when session_create answers; a call waits for it.
                await shOk(id, "true");
                const sandbox = containersOf(srv.stateDir, inst).filter((c) => !containersBefore.has(c));
                assert.equal(sandbox.length, 1, `one container for the session: ${sandbox}`);
                await shOk(id, links(m, "a", "b", "c") +
                        `sh -c 'trap "" TERM; (trap "" TERM; /tmp/${m}-a 1000 &); /tmp/${m}-b 1000; : ${m}' & ` +
                        `setsid sh -c 'trap "" TERM HUP; /tmp/${m}-c 1000; : ${m}' >/dev/null 2>&1 & echo ok`);
                await waitFor("the session's five processes on the host", () => hostProcs(m).length === 5, 10_000, 50);
                const cgBefore = cgroupTree(inst).filter((d) => d.includes(sandbox[0]));
                const mountWords = [id, sandbox[0]];
                const mountsBefore = mountsMentioning(srv.pid, mountWords);
                t.diagnostic(`before session_close: ${cgBefore.length} cgroup dirs and ${mountsBefore.length} mounts of the session in the server's namespace`);
                await close(id);
                // Killed and deleted before session_close answers: no wait here.
                assert.deepEqual(hostProcs(m), [], "no process of the session after session_close");
                assert.deepEqual(containersOf(srv.stateDir, inst).filter((c) => c === sandbox[0]), [], "its container is deleted");
                assert.deepEqual(cgroupTree(inst).filter((d) => d.includes(sandbox[0])), [],
                                 `its cgroups are removed (there were: ${cgBefore.join(", ") || "none"})`);
                assert.deepEqual(mountsMentioning(srv.pid, mountWords), [],
                                 `no mount of it in the server's namespace (there were ${mountsBefore.length})`);
                assert.deepEqual(mountsMentioning(process.pid, mountWords), [], "no mount of it on the host");
                assert.ok(!fs.existsSync(path.join(srv.stateDir, "sessions", id)), "its session dir is removed");
                const gone = await sh(id, "true");
                assert.equal(gone.isError, true);
                assert.match(text(gone), /no such session/);
        });

        // Rootless runc on a host without a cgroup for the user: `runc kill --all` fails (no
        // cgroup to list the processes from), and the server retries it for ~12 s before
        // `delete --force`, not serving meanwhile.
        live("session_close answers within 5 s, and the server answers others meanwhile", {}, async () => {
                const id = await session();
                const m = marker();
                await shOk(id, links(m, "s") + `/tmp/${m}-s 1000 &`);
                const t0 = Date.now();
                let pinged = null;
                const closing = close(id);
                const ping = srv.client.ping().then(() => { pinged = Date.now() - t0; });
                await closing;
                const took = Date.now() - t0;
                await ping;
                assert.ok(took < 5000, `session_close took ${took} ms`);
                assert.ok(pinged < 5000, `a ping sent with session_close was answered after ${pinged} ms`);
                assert.deepEqual(hostProcs(m), []);
        });

        live("expiry kills the background processes", {}, async () => {
                const inst = srv.instance();
                const containersBefore = new Set(containersOf(srv.stateDir, inst));
                const id = await session({ ttl_s: 2 });
                const m = marker();
                await shOk(id, links(m, "x", "y") + `/tmp/${m}-x 1000 & setsid /tmp/${m}-y 1000 >/dev/null 2>&1 &`);
                const sandbox = containersOf(srv.stateDir, inst).filter((c) => !containersBefore.has(c));
                assert.equal(sandbox.length, 1, `one container for the session: ${sandbox}`);
                await waitFor("its processes on the host", () => hostProcs(m).length === 2, 10_000, 50);
                await waitFor("the session to expire", async () =>
                        !assertOk(await call(srv, "session_list", {}), srv).sessions.some((x) => x.session_id === id), 15_000, 100);
                open.delete(id);
                await waitFor(`its processes to be gone (left: ${hostProcs(m).join("; ")})`, () => hostProcs(m).length === 0, 10_000, 50);
                await waitFor("its container to be deleted", () =>
                        !containersOf(srv.stateDir, inst).some((c) => sandbox.includes(c)), 10_000, 50);
        });

        live("two sessions see neither each other's processes nor files (/tmp, /workspace), nor share a pid namespace", {}, async () => {
                const a = await session(), b = await session();
                const ma = marker(), mb = marker();
                for (const [id, m] of [[a, ma], [b, mb]])
                        await shOk(id, links(m, "p") + `/tmp/${m}-p 300 & echo s > /tmp/${m}.secret; echo s > /workspace/${m}.secret`);
                await waitFor("both sleeps", () => hostProcs(ma).length === 1 && hostProcs(mb).length === 1, 10_000, 50);
                for (const [id, mine, other] of [[a, ma, mb], [b, mb, ma]]) {
                        assert.equal((await inside(id, mine)).length, 1, "its own process");
                        assert.deepEqual(await inside(id, other), [], "not the other session's process");
                        const ls = (await shOk(id, "ls -a /tmp /workspace")).stdout;
                        assert.ok(ls.includes(`${mine}.secret`), ls);
                        assert.ok(!ls.includes(other), `the other session's files in ${ls}`);
                        const peek = await sh(id, `cat /tmp/${other}.secret /workspace/${other}.secret`);
                        assert.notEqual(peek.structuredContent.exit_code, 0);
                }
                const [ia, ib] = [await identity(a), await identity(b)];
                assert.notEqual(ia.ns, ib.ns, "each session its own pid namespace");
                await close(a);
                await close(b);
        });

        live("a sandbox whose pid 1 is killed from the host: the session still answers and its next call works in a new sandbox", {}, async () => {
                const id = await session();
                await shOk(id, "echo kept > /workspace/w.txt; echo old > /tmp/sandbox.txt");
                const before = await identity(id);
                const init = hostInitOf(before.ns);
                assert.ok(init, `the host pid of the sandbox's pid 1 (${before.ns})`);
                process.kill(init, "SIGKILL");
                await waitFor("the init to be gone", () => {
                        try { return fs.readlinkSync(`/proc/${init}/ns/pid`) !== before.ns; } catch { return true; }
                }, 10_000, 50);
                // The session answers; the next call may report the loss, the one after runs.
                const listed = assertOk(await call(srv, "session_list", {}), srv).sessions;
                assert.ok(listed.some((x) => x.session_id === id), "the session is still listed");
                let res, after;
                await waitFor("a call that works after the sandbox died", async () => {
                        res = await sh(id, "cat /workspace/w.txt; cat /tmp/sandbox.txt 2>/dev/null || echo new");
                        return !res.isError;
                }, 20_000, 200).catch(() => assert.fail(`no working call after pid 1 died: ${text(res)}\n${srv.log().slice(-2000)}`));
                // The workspace survives its sandbox; /tmp was the old sandbox's.
                assert.equal(res.structuredContent.stdout, "kept\nnew\n");
                after = await identity(id);
                assert.match(after.init, /init --serve/);
                assert.notDeepEqual(after, before, "a new sandbox (its pid 1 started anew)");
                await close(id);
        });

        const noOom = AS_USER ? "as a user on this host: no cgroup, memory_mb is RLIMIT_DATA (no OOM kill)" : false;
        const HOG = "a = []\nwhile True:\n    a.append(b'x' * (1 << 20))";
        live("a program beyond memory_mb is OOM-killed; the session still answers and its next call works", { skip: skipRt || noOom }, async (t) => {
                const id = await session({ memory_mb: 64 });
                const before = await identity(id);
                assertOk(await call(srv, "write_file", { session_id: id, path: "hog.py", content: HOG }), srv, "write_file");
                const hog = await sh(id, "python3 hog.py", { timeout_ms: 30_000 });
                assert.equal(hog.isError, true, JSON.stringify(hog.structuredContent));
                assert.equal(hog.structuredContent?.timed_out, false, text(hog));
                assert.equal(hog.structuredContent?.oom_killed, true, `${text(hog)}\n${srv.log().slice(-2000)}`);
                let res;
                await waitFor("a call that works after the OOM kill", async () => !(res = await sh(id, "echo alive; readlink /proc/self/ns/pid; cut -d' ' -f22 /proc/1/stat")).isError, 20_000, 200)
                        .catch(() => assert.fail(`no working call after the OOM kill: ${text(res)}\n${srv.log().slice(-2000)}`));
                assert.match(res.structuredContent.stdout, /^alive\n/);
                // Whether pid 1 survived or was started again, both hold.
                const [, ns, start] = res.structuredContent.stdout.split("\n");
                t.diagnostic(`after the OOM kill the sandbox is ${ns === before.ns && start === before.start ? "the same" : "a new one"}`);
                await close(id);
        });

        // python in a session runs as a cell of the session's Jupyter kernel.
        live("a python cell beyond memory_mb: the answer says it was OOM-killed; the next cell works", {
                skip: skipRt || noOom,
        }, async () => {
                const id = await session({ memory_mb: 64 });
                assertOk(await runCode(srv, "python", "x = 41", { session_id: id }), srv, "a first cell");
                const hog = await runCode(srv, "python", HOG, { session_id: id, timeout_ms: 30_000 });
                try {
                        assert.equal(hog.isError, true, JSON.stringify(hog.structuredContent));
                        assert.equal(hog.structuredContent?.timed_out, false, JSON.stringify(hog.structuredContent));
                        let res;
                        await waitFor("a cell that works after the OOM kill", async () =>
                                !(res = await runCode(srv, "python", "print('alive')", { session_id: id })).isError, 20_000, 200)
                                .catch(() => assert.fail(`no working cell after the OOM kill: ${JSON.stringify(res?.structuredContent ?? text(res))}`));
                        assert.equal(res.structuredContent.stdout, "alive\n");
                        // One line: meson's TAP reader loses a TODO's YAML block at a blank line.
                        assert.ok(hog.structuredContent?.oom_killed === true, `not oom_killed: ${JSON.stringify(hog.structuredContent)}`);
                } finally {
                        await close(id);
                }
        });
}
