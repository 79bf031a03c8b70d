// A session's node runs: cells of one REPL per session (one global context), so what a
// call declares, defines or requires is there for the next; the last expression's value
// comes back, a thrown error's stack and the context lives on, a call's env stays; a timeout kills the REPL and
// the next call gets a new one; fresh runs a process of its own; sessions do not share.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, skipReason, finishAll, call, runCode, text, assertOk, AS_USER } from "./lib.mjs";

let skip = skipReason();
let srv;

before(async () => {
        if (skip) return;
        srv = await startServer();
        const languages = (await srv.client.listTools()).tools.find((t) => t.name === "run_code").inputSchema.properties.language.enum;
        if (!languages.includes("node")) skip = "no node in the sandboxes' root";
});
after(finishAll);

async function newSession() {
        return assertOk(await call(srv, "session_create", {}), srv, "session_create").session_id;
}

const node = (code, extra) => runCode(srv, "node", code, extra);

test("a session's node calls share one context: variables, functions, modules, values, errors", { timeout: 120_000 }, async (t) => {
        if (skip) return t.skip(skip);
        const session_id = await newSession();
        const first = assertOk(await node("let n = 41; function inc(x) { return x + 1; }\nconst fs = require('fs');\nconsole.log('first'); inc(n)", { session_id }), srv, "first");
        assert.equal(first.stdout, "first\n");
        assert.equal(first.value, "42");
        assert.equal(first.kernel, "started");
        assert.match(text(await node("n", { session_id })), /--- value ---\n41\n/);
        const second = assertOk(await node("process.stderr.write('err\\n'); [inc(n), typeof fs.readFileSync]", { session_id }), srv, "second");
        assert.equal(second.value, "[ 42, 'function' ]");
        assert.equal(second.stderr, "err\n");
        assert.equal(second.kernel, undefined);
        // undefined is no value; a Promise is awaited, top-level await too.
        assert.equal(assertOk(await node("globalThis.kept = 7; undefined", { session_id }), srv).value, undefined);
        assert.equal(assertOk(await node("Promise.resolve(kept * 6)", { session_id }), srv).value, "42");
        assert.equal(assertOk(await node("await new Promise((r) => setTimeout(() => r('later'), 10))", { session_id }), srv).value, "'later'");
        // A call's env is set in process.env, and stays.
        assert.equal(assertOk(await node("process.env.GREETING", { session_id, env: { GREETING: "hi" } }), srv).value, "'hi'");
        assert.equal(assertOk(await node("process.env.GREETING", { session_id }), srv).value, "'hi'");
        // An exception: its stack, and the context lives on.
        const raised = await node("function boom() { throw new Error('bang'); }\nboom()", { session_id });
        assert.equal(raised.isError, true, text(raised));
        assert.equal(raised.structuredContent.traceback, true);
        assert.match(raised.structuredContent.stderr, /Error: bang\n\s+at boom \(cell\d+\.js:1:/);
        assert.doesNotMatch(raised.structuredContent.stderr, /node-repl\.js|node:vm/);
        assert.equal(assertOk(await node("inc(n) + kept", { session_id }), srv, "after the error").value, "49");
        // stdin and args are a process's: only with fresh, which does not see the context.
        for (const extra of [{ stdin: "x" }, { args: ["a"] }]) {
                const refused = await node("1", { session_id, ...extra });
                assert.equal(refused.isError, true, text(refused));
                assert.match(text(refused), /"fresh": true/);
        }
        const fresh = assertOk(await node("console.log(typeof n, typeof inc, process.argv.slice(2).join(','))", { session_id, fresh: true, args: ["a"] }), srv, "fresh");
        assert.equal(fresh.stdout, "undefined undefined a\n");
        assert.equal(fresh.kernel, undefined);
        // Another session has a context of its own.
        const other = await newSession();
        assert.equal(assertOk(await node("typeof n", { session_id: other }), srv).value, "'undefined'");
        assertOk(await call(srv, "session_close", { session_id: other }), srv);
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("a node cell past its timeout: the REPL is killed and restarted, the next call works without its state", { timeout: 120_000 }, async (t) => {
        if (skip) return t.skip(skip);
        const session_id = await newSession();
        assertOk(await node("var before = 1; console.log('ready')", { session_id }), srv);
        const stuck = await node("console.log('looping'); while (true) {}", { session_id, timeout_ms: 500 });
        const s = stuck.structuredContent;
        assert.equal(s.timed_out, true, text(stuck));
        assert.equal(s.kernel, "killed and restarted");
        assert.equal(s.stdout, "looping\n");
        const next = assertOk(await node("typeof before", { session_id }), srv, "after the timeout");
        assert.equal(next.value, "'undefined'");
        assert.equal(assertOk(await node("var again = 2; again * 21", { session_id }), srv).value, "42");
        // A REPL that exits: the cell says so, the next starts another.
        const exited = await node("process.exit(3)", { session_id });
        assert.match(exited.structuredContent.kernel, /^died: it exited with code 3/, text(exited));
        const after = assertOk(await node("typeof again", { session_id }), srv, "after the exit");
        assert.equal(after.value, "'undefined'");
        assert.equal(after.kernel, "started");
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("a node cell beyond memory_mb: oom_killed, the REPL's death said, the next call works", { timeout: 120_000 }, async (t) => {
        if (skip) return t.skip(skip);
        if (AS_USER) return t.skip("as a user on this host: no cgroup, memory_mb is RLIMIT_DATA (no OOM kill)");
        const session_id = assertOk(await call(srv, "session_create", { memory_mb: 128 }), srv, "session_create").session_id;
        assert.equal(assertOk(await node("1 + 1", { session_id }), srv, "before").value, "2");
        const hog = await node("const kept = []; for (;;) kept.push(Buffer.alloc(16 << 20, 1))", { session_id });
        const h = hog.structuredContent;
        assert.equal(hog.isError, true, text(hog));
        assert.equal(h.oom_killed, true, JSON.stringify(h));
        assert.match(h.kernel, /^died: /, JSON.stringify(h));
        const next = assertOk(await node("2 + 2", { session_id }), srv, "after");
        assert.equal(next.value, "4");
        assert.equal(next.kernel, "started");
        assertOk(await call(srv, "session_close", { session_id }), srv);
});
