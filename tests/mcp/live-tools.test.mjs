// The tools of a session's running sandbox: run_code's background and fresh, the background
// processes (process_list, process_output with offsets and skipped bytes, process_kill,
// their output as resources), session_pause and session_resume (a paused sandbox uses no
// CPU, a call thaws it), session_list's state, and the idle pause (--session-idle-pause).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startServer, skipReason, finishAll, call, runCode, text, assertOk, waitFor, cgroupsOf, AS_USER } from "./lib.mjs";

const skip = skipReason();
let srv;

before(async () => {
        if (skip) return;
        srv = await startServer();
});
after(finishAll);

async function newSession(s = srv) {
        return assertOk(await call(s, "session_create", {}), s, "session_create").session_id;
}

async function stateOf(s, session_id) {
        const list = assertOk(await call(s, "session_list", {}), s, "session_list").sessions;
        const mine = list.find((x) => x.session_id === session_id);
        assert.ok(mine, JSON.stringify(list));
        return mine;
}

async function processOf(session_id, process_id) {
        const l = assertOk(await call(srv, "process_list", { session_id }), srv, "process_list");
        return l.processes.find((p) => p.process_id === process_id);
}

// The CPU time the server's sandboxes used so far, from the host's view of its instance
// cgroup (every sandbox's is below it): v2 cpu.stat usage_usec, v1 cpuacct.usage (ns).
// null when there is none (a user's server without a delegated cgroup).
function instanceCpu(s) {
        for (const dir of cgroupsOf(s.instance())) {
                try {
                        const m = /^usage_usec (\d+)$/m.exec(fs.readFileSync(path.join(dir, "cpu.stat"), "utf8"));
                        if (m) return BigInt(m[1]) * 1000n;
                } catch { /* not this hierarchy */ }
                try { return BigInt(fs.readFileSync(path.join(dir, "cpuacct.usage"), "utf8").trim()); } catch { /* not this one */ }
        }
        return null;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test("fresh and background need a session_id; a kernel's run takes stdin and args only with fresh", { skip, timeout: 120_000 }, async () => {
        for (const arg of ["fresh", "background"]) {
                const r = await runCode(srv, "sh", "echo hi", { [arg]: true });
                assert.equal(r.isError, true, text(r));
                assert.match(text(r), new RegExp(`^${arg}: only with session_id`), text(r));
        }
        const bad = await runCode(srv, "sh", "echo hi", { fresh: "yes" });
        assert.equal(bad.isError, true);
        assert.match(text(bad), /fresh: expected true or false/);
        // In a session, fresh runs as a process of its own and takes stdin and args.
        const session_id = await newSession();
        const r = assertOk(await runCode(srv, "sh", "cat; echo \"$1\"", { session_id, fresh: true, stdin: "in\n", args: ["arg"] }), srv, "fresh");
        assert.equal(r.stdout, "in\narg\n");
        // A language the session runs in a kernel: its value and the kernel's note; stdin
        // and args only with fresh.
        const languages = (await srv.client.listTools()).tools.find((t) => t.name === "run_code").inputSchema.properties.language.enum;
        const cell = languages.includes("python") ? await runCode(srv, "python", "x = 41\nx + 1", { session_id }) : null;
        if (cell?.structuredContent?.kernel) {
                const c = assertOk(cell, srv, "a kernel cell");
                assert.equal(c.value, "42");
                assert.equal(c.kernel, "started");
                assert.match(text(cell), /--- value ---\n42\n/);
                assert.match(text(cell), /; kernel: started/);
                for (const extra of [{ stdin: "x" }, { args: ["a"] }]) {
                        const refused = await runCode(srv, "python", "print(1)", { session_id, ...extra });
                        assert.equal(refused.isError, true);
                        assert.match(text(refused), new RegExp(`^${Object.keys(extra)[0]}: a python run in a session is evaluated in the session's kernel.*"fresh": true`));
                }
                const fresh = assertOk(await runCode(srv, "python", "import sys; print(sys.stdin.read(), sys.argv[1:])", { session_id, fresh: true, stdin: "in", args: ["a"] }), srv);
                assert.equal(fresh.stdout, "in ['a']\n");
                assert.equal(fresh.kernel, undefined);
                const raised = await runCode(srv, "python", "1/0", { session_id });
                assert.equal(raised.isError, true);
                assert.equal(raised.structuredContent.traceback, true);
                assert.match(raised.structuredContent.stderr, /ZeroDivisionError/);
                assert.match(text(raised), /^the cell raised an exception/);
        }
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("background: process_id at once, process_list, process_output with offsets and skipped, process_kill, resources", { skip, timeout: 120_000 }, async () => {
        const session_id = await newSession();
        const started = await runCode(srv, "sh", "i=0; while [ $i -lt 5 ]; do echo line$i; i=$((i+1)); done; echo oops >&2; exec sleep 600",
                                      { session_id, background: true });
        const b = assertOk(started, srv, "background run_code");
        assert.match(b.process_id, /^p-[0-9a-f]{8}$/);
        assert.equal(b.exit_code, null);
        assert.match(text(started), /started in the background as process p-/);
        const pid = b.process_id;

        await waitFor("the background output", async () => (await processOf(session_id, pid))?.stdout_bytes === 30, 10_000, 50);
        const p = await processOf(session_id, pid);
        assert.equal(p.running, true);
        assert.equal(p.language, "sh");
        assert.equal(p.exit_code, null);
        assert.ok(p.pid > 0 && Date.parse(p.started_at) > 0, JSON.stringify(p));

        const all = assertOk(await call(srv, "process_output", { session_id, process_id: pid }), srv, "process_output");
        assert.deepEqual({ text: all.text, offset: all.offset, next: all.next_offset, skipped: all.skipped, running: all.running, stream: all.stream },
                         { text: "line0\nline1\nline2\nline3\nline4\n", offset: 0, next: 30, skipped: 0, running: true, stream: "stdout" });
        const part = assertOk(await call(srv, "process_output", { session_id, process_id: pid, offset: 6, max_bytes: 6 }), srv);
        assert.equal(part.text, "line1\n");
        assert.equal(part.next_offset, 12);
        const end = assertOk(await call(srv, "process_output", { session_id, process_id: pid, offset: 30 }), srv);
        assert.equal(end.text, "");
        assert.equal(end.next_offset, 30);
        await waitFor("stderr", async () => (await processOf(session_id, pid))?.stderr_bytes === 5, 10_000, 50);
        const err = assertOk(await call(srv, "process_output", { session_id, process_id: pid, stream: "stderr" }), srv);
        assert.equal(err.text, "oops\n");
        // A character cut by max_bytes comes whole with the next read.
        const utf = assertOk(await runCode(srv, "sh", "printf 'a\\303\\251b'; exec sleep 600", { session_id, background: true }), srv);
        await waitFor("4 bytes", async () => (await processOf(session_id, utf.process_id))?.stdout_bytes === 4, 10_000, 50);
        const half = assertOk(await call(srv, "process_output", { session_id, process_id: utf.process_id, max_bytes: 2 }), srv);
        assert.deepEqual([half.text, half.next_offset], ["a", 1]);
        const rest = assertOk(await call(srv, "process_output", { session_id, process_id: utf.process_id, offset: 1 }), srv);
        assert.deepEqual([rest.text, rest.next_offset], ["éb", 4]);
        assertOk(await call(srv, "process_kill", { session_id, process_id: utf.process_id }), srv);
        await waitFor("the printf's exit", async () => (await processOf(session_id, utf.process_id))?.running === false, 10_000, 50);
        for (const [args, re] of [[{ max_bytes: 0 }, /max_bytes: 0 is below the minimum 1/],
                                  [{ max_bytes: 2 * 1024 * 1024 }, /max_bytes: .* above the maximum 1048576/],
                                  [{ stream: "both" }, /stream: "both" is not one of stdout, stderr/]]) {
                const r = await call(srv, "process_output", { session_id, process_id: pid, ...args });
                assert.equal(r.isError, true);
                assert.match(text(r), re);
        }
        const unknown = await call(srv, "process_output", { session_id, process_id: "p-00000000" });
        assert.equal(unknown.isError, true);
        assert.match(text(unknown), /process_id: "p-00000000" is not a process of session/);

        // The kept output is a resource, listed with the session's.
        const { resources } = await srv.client.listResources();
        const uri = `sandbox://sessions/${session_id}/processes/${pid}/stdout`;
        assert.ok(resources.some((r) => r.uri === uri), JSON.stringify(resources.map((r) => r.uri)));
        assert.equal((await srv.client.readResource({ uri })).contents[0].text, "line0\nline1\nline2\nline3\nline4\n");
        assert.equal((await srv.client.readResource({ uri: uri.replace(/stdout$/, "stderr") })).contents[0].text, "oops\n");

        // More than the 1 MiB kept: the oldest bytes are skipped.
        const big = assertOk(await runCode(srv, "sh", "head -c 3000000 /dev/zero | tr '\\0' a; echo; exec sleep 600",
                                           { session_id, background: true }), srv, "big background");
        await waitFor("3000001 bytes written", async () => (await processOf(session_id, big.process_id))?.stdout_bytes === 3000001, 20_000, 50);
        const tail = assertOk(await call(srv, "process_output", { session_id, process_id: big.process_id, offset: 0, max_bytes: 10 }), srv);
        assert.equal(tail.skipped, 3000001 - 1048576);
        assert.equal(tail.offset, 3000001 - 1048576);
        assert.equal(tail.text, "aaaaaaaaaa");
        assert.equal(tail.next_offset, tail.offset + 10);
        assert.equal(tail.total_bytes, 3000001);
        const whole = assertOk(await call(srv, "process_output", { session_id, process_id: big.process_id, offset: tail.next_offset, max_bytes: 1048576 }), srv);
        assert.equal(whole.skipped, 0);
        assert.equal(whole.next_offset, 3000001);
        assert.equal(whole.text.length, 1048576 - 10);
        assert.ok(whole.text.endsWith("a\n"));

        const list = assertOk(await call(srv, "session_list", {}), srv).sessions.find((s) => s.session_id === session_id);
        assert.equal(list.background, 2);      // the one printf left was killed
        assert.equal(list.state, "running");

        // process_kill: a bad signal is refused; TERM is sent; an exited process is forgotten.
        const bad = await call(srv, "process_kill", { session_id, process_id: pid, signal: "NOPE" });
        assert.equal(bad.isError, true);
        assert.match(text(bad), /signal: expected a signal name/);
        const killed = assertOk(await call(srv, "process_kill", { session_id, process_id: pid, signal: "TERM" }), srv, "process_kill");
        assert.deepEqual(killed, { session_id, process_id: pid, signal: "SIGTERM", signaled: true, removed: false });
        await waitFor("the process's exit", async () => (await processOf(session_id, pid))?.running === false, 10_000, 50);
        const gone = await processOf(session_id, pid);
        assert.equal(gone.signal, "SIGTERM");
        assert.equal(gone.exit_code, null);
        // Its output stays readable until it is forgotten.
        assert.equal(assertOk(await call(srv, "process_output", { session_id, process_id: pid }), srv).running, false);
        const removed = assertOk(await call(srv, "process_kill", { session_id, process_id: pid }), srv);
        assert.equal(removed.removed, true);
        assert.equal(await processOf(session_id, pid), undefined);
        assertOk(await call(srv, "process_kill", { session_id, process_id: big.process_id, signal: 9 }), srv);
        await waitFor("the big one's exit", async () => (await processOf(session_id, big.process_id))?.running === false, 10_000, 50);
        assert.equal((await processOf(session_id, big.process_id)).signal, "SIGKILL");
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("session_pause: paused in session_list, no CPU used while paused, a call thaws it", { skip, timeout: 120_000 }, async () => {
        const session_id = await newSession();
        const loop = assertOk(await runCode(srv, "sh", "while :; do :; done", { session_id, background: true }), srv, "busy loop");
        const paused = await call(srv, "session_pause", { session_id });
        if (paused.isError) {
                // Only a server without a cgroup freezer may refuse, and it says why.
                assert.ok(AS_USER, text(paused));
                assert.match(text(paused), /session_pause: .*freezer/);
                assertOk(await call(srv, "session_close", { session_id }), srv);
                return;
        }
        assert.deepEqual(assertOk(paused, srv), { session_id, state: "paused" });
        assert.equal((await stateOf(srv, session_id)).state, "paused");
        const again = await call(srv, "session_pause", { session_id });
        assert.equal(again.isError, true);
        assert.match(text(again), /session_pause: .*already paused/);

        const cpu0 = instanceCpu(srv);
        if (cpu0 !== null) {
                // The freezer may take a moment to stop everything: flat over 300 ms, within 5 s.
                await waitFor("no CPU used over 300 ms while paused", async () => {
                        const a = instanceCpu(srv);
                        await sleep(300);
                        return instanceCpu(srv) === a;
                }, 5000, 0);
                // And it was really running before: resumed, the loop burns CPU again.
                assert.deepEqual(assertOk(await call(srv, "session_resume", { session_id }), srv), { session_id, state: "running" });
                const a = instanceCpu(srv);
                await sleep(300);
                assert.ok(instanceCpu(srv) > a, "the loop runs again after session_resume");
                assertOk(await call(srv, "session_pause", { session_id }), srv);
        }

        // A call on a paused session thaws it and runs.
        const r = assertOk(await runCode(srv, "sh", "echo thawed", { session_id }), srv, "run_code on a paused session");
        assert.equal(r.stdout, "thawed\n");
        assert.equal((await stateOf(srv, session_id)).state, "running");
        const notPaused = await call(srv, "session_resume", { session_id });
        assert.equal(notPaused.isError, true);
        assert.match(text(notPaused), /session_resume: .*not paused/);
        const s = await stateOf(srv, session_id);
        assert.ok(s.processes >= 2 && s.memory_bytes > 0, JSON.stringify(s));
        assertOk(await call(srv, "process_kill", { session_id, process_id: loop.process_id }), srv);
        assertOk(await call(srv, "session_close", { session_id }), srv);
        const closed = await call(srv, "session_pause", { session_id });
        assert.equal(closed.isError, true);
        assert.match(text(closed), /session_id: ".*": no such session/);
});

test("--session-idle-pause 1: an idle session is paused, a busy one is not; a call thaws it", { skip, timeout: 120_000 }, async () => {
        const idle = await startServer({ args: ["--session-idle-pause", "1"] });
        try {
                const quiet = await newSession(idle);
                const busy = await newSession(idle);
                // A first call waits for the sandbox to be up (its cgroup made).
                assertOk(await runCode(idle, "sh", "true", { session_id: quiet }), idle, "first call");
                assertOk(await runCode(idle, "sh", "while :; do :; done", { session_id: busy, background: true }), idle, "busy loop");
                const probe = await call(idle, "session_pause", { session_id: quiet });
                if (probe.isError) {
                        assert.ok(AS_USER, text(probe));       // no freezer: never paused
                        return;
                }
                assertOk(await call(idle, "session_resume", { session_id: quiet }), idle);
                await waitFor("the idle session paused", async () => (await stateOf(idle, quiet)).state === "paused", 10_000, 100);
                assert.equal((await stateOf(idle, busy)).state, "running", "a session using CPU is not paused");
                const r = assertOk(await runCode(idle, "sh", "echo back", { session_id: quiet }), idle, "run_code after the idle pause");
                assert.equal(r.stdout, "back\n");
                assert.equal((await stateOf(idle, quiet)).state, "running");
                // Idle again, paused again.
                await waitFor("paused again", async () => (await stateOf(idle, quiet)).state === "paused", 10_000, 100);
        } finally {
                await idle.close();
        }
});
