// Server options and the less common paths: --allow-network sessions, logging/setLevel
// with notifications/message, the run queue (--max-concurrent, --max-queue), closing a
// busy session.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { startServer, skipReason, finishAll, call, runCode, text, assertOk, waitFor,
         hostAddress } from "./lib.mjs";

const skip = skipReason();
after(finishAll);

// A listener on all of the host's addresses; resolves to { port, connections(), close() }.
async function hostListener() {
        let n = 0;
        const server = net.createServer((s) => { n++; s.on("error", () => {}); s.end("hello\n"); });
        await new Promise((r) => server.listen(0, "0.0.0.0", r));
        return { port: server.address().port, connections: () => n, close: () => server.close() };
}

const connectCode = (addr, port) => [
        "import socket",
        "try:",
        `    c = socket.create_connection(("${addr}", ${port}), timeout=3)`,
        "    print('got', c.recv(6).decode().strip())",
        "except OSError as e:",
        "    print('refused', e.errno)",
].join("\n");

test("--allow-network: a network session reaches the host, a plain one does not; openWorldHint", { skip, timeout: 90_000 }, async (t) => {
        const addr = hostAddress();
        if (!addr) return t.skip("the host has no non-loopback IPv4 address to try");
        const srv = await startServer({ args: ["--allow-network"] });
        const l = await hostListener();
        try {
                const { tools } = await srv.client.listTools();
                const hint = Object.fromEntries(tools.map((x) => [x.name, x.annotations.openWorldHint]));
                assert.equal(hint.run_code, true, "run_code may reach the network");
                assert.equal(hint.session_create, true);
                assert.equal(hint.read_file, false);

                const netSession = assertOk(await call(srv, "session_create", { network: true }), srv);
                assert.equal(netSession.network, true);
                const on = await runCode(srv, "python", connectCode(addr, l.port), { session_id: netSession.session_id });
                assert.equal(assertOk(on, srv).stdout, "got hello\n");
                assert.equal(l.connections(), 1);

                const plain = assertOk(await call(srv, "session_create", {}), srv);
                assert.equal(plain.network, false);
                const off = await runCode(srv, "python", connectCode(addr, l.port), { session_id: plain.session_id });
                assert.match(assertOk(off, srv).stdout, /^refused \d+\n$/);
                const fresh = await runCode(srv, "python", connectCode(addr, l.port));
                assert.match(assertOk(fresh, srv).stdout, /^refused \d+\n$/);
                assert.equal(l.connections(), 1, "only the network session connected");
        } finally {
                l.close();
        }
        assert.equal((await srv.close()).code, 0);
});

test("logging/setLevel: debug brings notifications/message about runs, error silences them", { skip, timeout: 60_000 }, async () => {
        const srv = await startServer();
        const logs = [];
        srv.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
        await srv.client.setLoggingLevel("debug");
        assertOk(await runCode(srv, "sh", "true"), srv);
        await waitFor("a debug message about the run", () => logs.some((m) => m.level === "debug"), 10_000);
        for (const m of logs) {
                assert.ok(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"].includes(m.level));
                assert.ok("data" in m);
        }
        await srv.client.setLoggingLevel("error");
        const n = logs.length;
        assertOk(await runCode(srv, "sh", "true"), srv);
        // The run's debug message would precede its result on the same stream.
        assert.deepEqual(await srv.client.ping(), {});
        assert.equal(logs.length, n, `messages below "error" after setLevel error: ${JSON.stringify(logs.slice(n))}`);
        // An unknown level is refused as invalid params.
        await assert.rejects(srv.client.setLoggingLevel("loud"), (e) => e.code === -32602);
        assert.equal((await srv.close()).code, 0);
});

test("the queue: --max-concurrent 1 --max-queue 1 runs one, queues one, refuses the third", { skip, timeout: 90_000 }, async () => {
        const srv = await startServer({ args: ["--max-concurrent", "1", "--max-queue", "1"] });
        let started = false;
        // Long enough that a is still running when c arrives, even on a loaded machine.
        const a = runCode(srv, "sh", "echo started; sleep 5; echo a", {}, {
                onprogress: (p) => { if (/started/.test(p.message ?? "")) started = true; },
        });
        await waitFor("the first run to start", () => started, 30_000);
        const b = runCode(srv, "sh", "echo b");
        // b is queued once the server has read it; a ping after it proves that.
        assert.deepEqual(await srv.client.ping(), {});
        const c = await runCode(srv, "sh", "echo c");
        assert.equal(c.isError, true, JSON.stringify(c).slice(0, 400));
        assert.match(text(c), /busy|queue/i);
        assert.equal(assertOk(await a, srv).stdout, "started\na\n");
        assert.equal(assertOk(await b, srv).stdout, "b\n");
        assert.equal((await srv.close()).code, 0);
});

test("a queued call that is cancelled never runs", { skip, timeout: 90_000 }, async () => {
        const srv = await startServer({ args: ["--max-concurrent", "1"] });
        let started = false;
        const a = runCode(srv, "sh", "echo started; sleep 2; echo a", {}, {
                onprogress: (p) => { if (/started/.test(p.message ?? "")) started = true; },
        });
        await waitFor("the first run to start", () => started, 30_000);
        const ac = new AbortController();
        const b = runCode(srv, "sh", "echo b", {}, { signal: ac.signal });
        assert.deepEqual(await srv.client.ping(), {});  // b is queued behind a
        ac.abort("not needed");
        await assert.rejects(b);
        const ra = assertOk(await a, srv);
        // Runs start in order: had b stayed queued, it would run before c.
        const rc = assertOk(await runCode(srv, "sh", "echo c"), srv);
        const runs = new Set((await srv.client.listResources()).resources
                .map((r) => r.uri.match(/^sandbox:\/\/runs\/([^/]+)\//)?.[1]).filter(Boolean));
        assert.deepEqual([...runs].sort(), [ra.run_id, rc.run_id].sort(), "only a and c ran");
        assert.equal((await srv.close()).code, 0);
});

// A run's workspace (ws/<id>, a tmpfs) and bundle (b/<id>) are made when it leaves the
// queue: queued calls hold none, and a cancelled queued call leaves none behind.
test("queued calls hold no workspace or bundle: one of each with --max-concurrent 1", { skip, timeout: 90_000 }, async () => {
        const srv = await startServer({ args: ["--max-concurrent", "1"] });
        // Through /proc/PID/root: b/ is a tmpfs in msp-mcp's own mount namespace.
        const name = srv.instance();
        const inst = path.join(`/proc/${name.split("-")[1]}/root`, srv.stateDir, name);
        const count = (d) => fs.readdirSync(path.join(inst, d)).filter((n) => n.startsWith("r-")).length;
        let started = false;
        const a = runCode(srv, "sh", "echo started; sleep 3; echo a", {}, {
                onprogress: (p) => { if (/started/.test(p.message ?? "")) started = true; },
        });
        await waitFor("the first run to start", () => started, 30_000);
        const ac = new AbortController();
        const cancelled = runCode(srv, "sh", "echo x", {}, { signal: ac.signal });
        const queued = [1, 2, 3, 4].map((i) => runCode(srv, "sh", `echo q${i}`));
        assert.deepEqual(await srv.client.ping(), {});  // the five are queued behind a
        assert.deepEqual([count("b"), count("ws")], [1, 1], "only the running call's bundle and workspace");
        ac.abort("not needed");
        await assert.rejects(cancelled);
        assert.deepEqual(await srv.client.ping(), {});
        assert.deepEqual([count("b"), count("ws")], [1, 1], "the cancelled call made nothing");
        assert.equal(assertOk(await a, srv).stdout, "started\na\n");
        const out = (await Promise.all(queued)).map((r) => assertOk(r, srv).stdout);
        assert.deepEqual(out, ["q1\n", "q2\n", "q3\n", "q4\n"]);
        assert.equal((await srv.close()).code, 0);
});

test("session_close on a busy session kills its run (answered with isError) and closes it", { skip, timeout: 60_000 }, async () => {
        const srv = await startServer();
        const s = assertOk(await call(srv, "session_create", {}), srv);
        let started = false;
        const run = runCode(srv, "sh", "echo started; sleep 30", { session_id: s.session_id }, {
                onprogress: (p) => { if (/started/.test(p.message ?? "")) started = true; },
        });
        await waitFor("the session's run to start", () => started, 30_000);
        const t0 = Date.now();
        const closed = assertOk(await call(srv, "session_close", { session_id: s.session_id }), srv);
        assert.equal(closed.closed, true);
        const res = await run;
        assert.equal(res.isError, true);
        assert.ok(Date.now() - t0 < 10_000, "the run was killed, not waited for");
        const list = assertOk(await call(srv, "session_list", {}), srv).sessions;
        assert.ok(!list.some((x) => x.session_id === s.session_id));
        assert.equal((await srv.close()).code, 0);
});

test("nothing left behind: containers, cgroups, mounts, dirs, processes", { skip, timeout: 60_000 }, finishAll);
