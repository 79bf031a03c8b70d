// Sessions: persistence across calls, the file tools, confinement of paths, expiry, close.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startServer, skipReason, finishAll, call, runCode, text, assertOk, waitFor } from "./lib.mjs";

const skip = skipReason();
let srv;

before(async () => {
        if (skip) return;
        srv = await startServer();
});
after(finishAll);

async function newSession(args = {}) {
        const res = await call(srv, "session_create", args);
        const s = assertOk(res, srv, "session_create");
        assert.match(s.session_id, /^[A-Za-z0-9_-]{8,}$/);
        return s;
}

test("session_create → run, write in call 1, read in call 2; session_list; session_close", { skip, timeout: 90_000 }, async () => {
        const s = await newSession();
        assert.equal(s.network, false);
        assert.equal(s.rootfs, "host");
        assert.ok(Date.parse(s.expires_at) > Date.now(), s.expires_at);
        assert.ok(s.limits && typeof s.limits === "object");
        const id = s.session_id;

        const w = await runCode(srv, "sh", "echo persisted > state.txt; mkdir -p sub; echo deep > sub/d.txt; pwd", { session_id: id });
        assert.equal(assertOk(w, srv).stdout, "/workspace\n");
        assert.equal(w.structuredContent.session_id, id);
        const r = await runCode(srv, "python", "print(open('/workspace/state.txt').read().strip(), open('sub/d.txt').read().strip())", { session_id: id });
        assert.equal(assertOk(r, srv).stdout, "persisted deep\n");

        const list = assertOk(await call(srv, "session_list", {}), srv).sessions;
        const mine = list.find((x) => x.session_id === id);
        assert.ok(mine, JSON.stringify(list));
        assert.equal(mine.runs, 2);
        assert.equal(mine.busy, false);

        const closed = assertOk(await call(srv, "session_close", { session_id: id }), srv);
        assert.deepEqual(closed, { session_id: id, closed: true });
        const gone = await runCode(srv, "sh", "cat state.txt", { session_id: id });
        assert.equal(gone.isError, true);
        assert.match(text(gone), /session/);
        assert.ok(!fs.existsSync(path.join(srv.stateDir, "sessions", id)), "the session dir is removed");
        assert.ok(!assertOk(await call(srv, "session_list", {}), srv).sessions.some((x) => x.session_id === id));
        // Closing twice is a tool error naming the session.
        const twice = await call(srv, "session_close", { session_id: id });
        assert.equal(twice.isError, true);
});

test("write_file / read_file / list_files, seen by the sandboxed code and back", { skip, timeout: 90_000 }, async () => {
        const { session_id } = await newSession();
        const w = assertOk(await call(srv, "write_file", { session_id, path: "src/hello.py", content: "print('from write_file')\n" }), srv);
        assert.equal(w.bytes, 25);
        assert.equal(w.path, "src/hello.py");
        const bin = Buffer.from([0, 1, 2, 250, 251, 252]);
        assertOk(await call(srv, "write_file", { session_id, path: "/workspace/data.bin", content: bin.toString("base64"), encoding: "base64" }), srv);
        assertOk(await call(srv, "write_file", { session_id, path: "run.sh", content: "#!/bin/sh\necho exec ok\n", executable: true }), srv);

        const r = await runCode(srv, "sh", "python3 src/hello.py; od -An -tu1 data.bin | tr -s ' '; ./run.sh; echo made-inside > out.txt", { session_id });
        assert.equal(assertOk(r, srv).stdout, "from write_file\n 0 1 2 250 251 252\nexec ok\n");

        const back = assertOk(await call(srv, "read_file", { session_id, path: "out.txt" }), srv);
        assert.equal(back.content, "made-inside\n");
        assert.equal(back.encoding, "utf8");
        assert.equal(back.size, 12);
        assert.equal(back.truncated, false);
        const b64 = assertOk(await call(srv, "read_file", { session_id, path: "data.bin", encoding: "base64" }), srv);
        assert.deepEqual(Buffer.from(b64.content, "base64"), bin);
        const part = assertOk(await call(srv, "read_file", { session_id, path: "out.txt", max_bytes: 4 }), srv);
        assert.equal(part.content, "made");
        assert.equal(part.truncated, true);
        assert.equal(part.size, 12);

        const ls = assertOk(await call(srv, "list_files", { session_id }), srv);
        const names = Object.fromEntries(ls.entries.map((e) => [e.name, e]));
        for (const n of ["src", "data.bin", "run.sh", "out.txt"]) assert.ok(names[n], `${n} in ${JSON.stringify(ls.entries)}`);
        assert.equal(names.src.type, "dir");
        assert.equal(names["data.bin"].type, "file");
        assert.equal(names["data.bin"].size, 6);
        const sub = assertOk(await call(srv, "list_files", { session_id, path: "src" }), srv);
        assert.deepEqual(sub.entries.map((e) => e.name), ["hello.py"]);

        const missing = await call(srv, "read_file", { session_id, path: "nope.txt" });
        assert.equal(missing.isError, true);
        assert.match(text(missing), /nope\.txt/);

        // The session's files are resources too.
        const { resources } = await srv.client.listResources();
        assert.ok(resources.some((x) => x.uri.startsWith(`sandbox://sessions/${session_id}/`)),
                  JSON.stringify(resources.map((x) => x.uri)));
        const rr = await srv.client.readResource({ uri: `sandbox://sessions/${session_id}/files/out.txt` });
        assert.equal(rr.contents[0].text, "made-inside\n");
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("path escapes in the file tools are refused: '..', absolute paths, symlinks made inside", { skip, timeout: 90_000 }, async () => {
        const { session_id } = await newSession();
        const hostPasswd = fs.readFileSync("/etc/passwd", "utf8");
        const marker = `msp-mcp-escape-${process.pid}-${Date.now()}`;

        // The sandboxed code plants symlinks to the host's /etc.
        const plant = await runCode(srv, "sh", "ln -s /etc etc-link; ln -s ../../../../../../etc/passwd pw; ln -s /etc/passwd abs-pw; mkdir d; ln -s ../.. d/up; ls -l", { session_id });
        assertOk(plant, srv, "planting symlinks");

        const reads = ["../etc/passwd", "../../../../../../etc/passwd", "/etc/passwd", "/workspace/../etc/passwd",
                       "etc-link/passwd", "pw", "abs-pw", "d/up/etc/passwd", "d/up/../../etc/passwd"];
        for (const p of reads) {
                const res = await call(srv, "read_file", { session_id, path: p });
                const leaked = !res.isError && res.structuredContent?.content === hostPasswd;
                assert.ok(!leaked, `read_file ${p} returned the host's /etc/passwd`);
                assert.ok(!(res.structuredContent?.content ?? "").includes("root:x:0:0"), `read_file ${p}: ${text(res).slice(0, 200)}`);
                if (p.startsWith("..") || p.includes("/../")) assert.equal(res.isError, true, `read_file ${p} is refused`);
        }
        for (const p of ["../" + marker, "etc-link/" + marker, "d/up/" + marker, "/etc/" + marker, "../../../../../../tmp/" + marker]) {
                await call(srv, "write_file", { session_id, path: p, content: "x" });
                assert.ok(!fs.existsSync("/etc/" + marker), `write_file ${p} reached the host's /etc`);
                assert.ok(!fs.existsSync("/tmp/" + marker), `write_file ${p} reached the host's /tmp`);
                assert.ok(!fs.existsSync(path.join(srv.stateDir, "sessions", marker)), `write_file ${p} left the workspace`);
        }
        for (const p of ["..", "../..", "etc-link", "d/up"]) {
                const res = await call(srv, "list_files", { session_id, path: p });
                const names = (res.structuredContent?.entries ?? []).map((e) => e.name);
                assert.ok(!names.includes("passwd") && !names.includes("sessions") && !names.includes("shadow"),
                          `list_files ${p} listed outside the workspace: ${names}`);
        }
        // Inside, the sandbox's own /etc is what the link points at, never the host's files.
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("size caps: a write over the cap is refused, read_file max_bytes is bounded", { skip, timeout: 60_000 }, async () => {
        const { session_id } = await newSession();
        // Over the 8 MiB cap of one write, under the 16 MiB of one JSON-RPC message.
        const big = "x".repeat(10 * 1024 * 1024);
        const res = await call(srv, "write_file", { session_id, path: "big", content: big });
        assert.equal(res.isError, true, "a 10 MiB write_file is refused");
        assert.match(text(res), /content|size|bytes|big/i);
        assert.deepEqual(await srv.client.ping(), {});
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("expiry: a session with a short ttl is gone, its dir removed", { skip, timeout: 60_000 }, async () => {
        const s = await newSession({ ttl_s: 1 });
        const dir = path.join(srv.stateDir, "sessions", s.session_id);
        assert.ok(fs.existsSync(dir), `${dir} exists while the session lives`);
        assertOk(await call(srv, "write_file", { session_id: s.session_id, path: "f", content: "y" }), srv);
        await waitFor("the session to expire", async () =>
                !assertOk(await call(srv, "session_list", {}), srv).sessions.some((x) => x.session_id === s.session_id), 20_000, 250);
        const res = await runCode(srv, "sh", "cat f", { session_id: s.session_id });
        assert.equal(res.isError, true);
        // one accurate message, naming the session once
        assert.match(text(res), /no such session/);
        assert.equal(text(res).match(/no such session/g).length, 1, text(res));
        assert.ok(text(res).includes(s.session_id), text(res));
        // and an id no session ever had
        const never = await runCode(srv, "sh", "true", { session_id: s.session_id.replace(/.$/, (c) => c === "0" ? "1" : "0") });
        assert.equal(never.isError, true);
        assert.equal(text(never).match(/no such session/g)?.length, 1, text(never));
        await waitFor(`${dir} to be removed`, () => !fs.existsSync(dir), 10_000, 100);
});

test("cancelling a run in a session keeps the session and its files; the session is free again", { skip, timeout: 60_000 }, async () => {
        const { session_id } = await newSession();
        assertOk(await call(srv, "write_file", { session_id, path: "keep.txt", content: "kept\n" }), srv);
        const ac = new AbortController();
        let started = false;
        const p = runCode(srv, "sh", "echo started; sleep 30", { session_id },
                          { signal: ac.signal, onprogress: (n) => { if (/started/.test(n.message ?? "")) started = true; } });
        await waitFor("the session's run to start", () => started, 30_000);
        ac.abort("cancel in a session");
        await assert.rejects(p);
        await waitFor("the session to be free", async () =>
                assertOk(await call(srv, "session_list", {}), srv).sessions.find((x) => x.session_id === session_id)?.busy === false, 10_000, 50);
        const r = await runCode(srv, "sh", "cat keep.txt", { session_id });
        assert.equal(assertOk(r, srv).stdout, "kept\n");
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("network in a session is refused without --allow-network", { skip, timeout: 30_000 }, async () => {
        const res = await call(srv, "session_create", { network: true });
        assert.equal(res.isError, true);
        assert.match(text(res), /network/);
});

test("a session's limits apply to its runs", { skip, timeout: 60_000 }, async () => {
        const s = await newSession({ timeout_ms: 500 });
        const res = await runCode(srv, "sh", "while :; do :; done", { session_id: s.session_id });
        assert.equal(res.structuredContent.timed_out, true);
        assertOk(await call(srv, "session_close", { session_id: s.session_id }), srv);
});

test("the server exits 0 on EOF and leaves nothing behind", { skip, timeout: 60_000 }, async () => {
        const { code, signal } = await srv.close();
        assert.equal(signal, null);
        assert.equal(code, 0);
        await finishAll();
});
