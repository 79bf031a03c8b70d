// port_expose: a server a session's program runs inside its sandbox, reached from outside it
// (stdio: a loopback listener with a token URL; HTTP: a path of msp-mcp's own listener), a
// WebSocket-style upgrade through it, 502 for a port nothing listens on, the URL refused once
// the session is closed, and a session without network still without it.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startServer, spawnHttpServer, stopProcess, skipReason, finishAll, call, runCode, text,
         assertOk, TRANSPORT } from "./lib.mjs";

const skip = skipReason();
const RUNC = ["/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"].find((p) => fs.existsSync(p));
let srv;

before(async () => {
        if (skip) return;
        srv = await startServer();
});
after(async () => {
        if (srv) await srv.close();
        await finishAll();
});

// A bounded wait, inside the sandbox, until something listens on port.
const waitListening = (port) => `
for i in $(seq 100); do
  /usr/bin/python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", ${port}), 0.2)' 2>/dev/null && exit 0
  sleep 0.1
done
echo "nothing listens on ${port}" >&2; exit 1`;

// A server in the sandbox that answers any request with 101 and then echoes every byte.
const ECHO_SERVER = `
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8002)); s.listen(8)
while True:
    c, _ = s.accept()
    head = b""
    while b"\\r\\n\\r\\n" not in head:
        b = c.recv(4096)
        if not b: break
        head += b
    rest = head.split(b"\\r\\n\\r\\n", 1)[1] if b"\\r\\n\\r\\n" in head else b""
    c.sendall(b"HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: echo\\r\\nConnection: Upgrade\\r\\n\\r\\n" + rest)
    while True:
        b = c.recv(4096)
        if not b: break
        c.sendall(b)
    c.close()
`;

async function get(url, headers = {}) {
        const r = await fetch(url, { headers, signal: AbortSignal.timeout(20_000) });
        return { status: r.status, body: await r.text() };
}

// A raw node http request with Upgrade: echo; resolves with what came back for "ping".
function upgradeEcho(url, headers = {}) {
        return new Promise((resolve, reject) => {
                const req = http.request(url, { headers: { Connection: "Upgrade", Upgrade: "echo", ...headers } });
                const t = setTimeout(() => { req.destroy(); reject(new Error("no upgrade in 20 s")); }, 20_000);
                req.on("upgrade", (res, socket, head) => {
                        let got = head.toString();
                        const done = () => { clearTimeout(t); socket.destroy(); resolve({ status: res.statusCode, got }); };
                        socket.on("data", (b) => { got += b.toString(); if (got.includes("ping")) done(); });
                        socket.on("error", reject);
                        socket.write("ping");
                });
                req.on("response", (res) => { clearTimeout(t); res.resume(); resolve({ status: res.statusCode, got: "" }); });
                req.on("error", (e) => { clearTimeout(t); reject(e); });
                req.end();
        });
}

async function sessionWithServer(s = srv) {
        const sid = assertOk(await call(s, "session_create", {}), s, "session_create").session_id;
        const r = await runCode(s, "sh", `cd /workspace && echo hello-port > hello.txt &&
setsid nohup /usr/bin/python3 -m http.server 8000 --bind 127.0.0.1 >/tmp/http.log 2>&1 < /dev/null &
${waitListening(8000)}`, { session_id: sid });
        assert.equal(assertOk(r, s, "start http.server").exit_code, 0, r.structuredContent?.stderr);
        return sid;
}

test("port_expose: GET through the URL, the same URL again, refusals, an upgrade, 502, closed", { skip, timeout: 180_000 }, async () => {
        const sid = await sessionWithServer();
        const exposed = assertOk(await call(srv, "port_expose", { session_id: sid, port: 8000 }), srv, "port_expose");
        assert.equal(exposed.port, 8000);
        assert.equal(exposed.session_id, sid);
        if (TRANSPORT === "http")
                assert.equal(exposed.url, `${srv.url.replace(/\/mcp$/, "")}/sessions/${sid}/ports/8000/`);
        else
                assert.match(exposed.url, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{32}\/$/);
        const url = exposed.url;

        const listing = await get(url);
        assert.equal(listing.status, 200, listing.body);
        assert.match(listing.body, /hello\.txt/);
        const file = await get(url + "hello.txt?x=1");
        assert.equal(file.status, 200);
        assert.equal(file.body, "hello-port\n");
        // A request with a body reaches the port (http.server has no POST: its 501 comes back).
        const post = await fetch(url, { method: "POST", body: "0123456789", signal: AbortSignal.timeout(20_000) });
        assert.equal(post.status, 501);
        await post.text();
        const again = assertOk(await call(srv, "port_expose", { session_id: sid, port: 8000 }), srv);
        assert.equal(again.url, url);
        const listed = assertOk(await call(srv, "session_list", {}), srv).sessions.find((x) => x.session_id === sid);
        assert.deepEqual(listed.ports, [8000]);

        if (TRANSPORT === "stdio") {
                const u = new URL(url);
                assert.equal((await get(`${u.origin}/hello.txt`)).status, 404, "without the token");
                assert.equal((await get(`${u.origin}/${"0".repeat(32)}/hello.txt`)).status, 404, "a wrong token");
        }

        // Nothing listens on 8001: 502.
        const none = assertOk(await call(srv, "port_expose", { session_id: sid, port: 8001 }), srv);
        assert.equal((await get(none.url)).status, 502);

        // An upgrade is relayed raw both ways.
        const echo = await runCode(srv, "sh", `cat > /tmp/echo.py <<'EOF'
${ECHO_SERVER}
EOF
setsid nohup /usr/bin/python3 /tmp/echo.py >/tmp/echo.log 2>&1 < /dev/null &
${waitListening(8002)}`, { session_id: sid });
        assert.equal(assertOk(echo, srv, "echo server").exit_code, 0, echo.structuredContent?.stderr);
        const ws = assertOk(await call(srv, "port_expose", { session_id: sid, port: 8002 }), srv);
        const up = await upgradeEcho(ws.url + "chat");
        assert.equal(up.status, 101);
        assert.match(up.got, /ping/);

        // Arguments: a port out of range, another session.
        const bad = await call(srv, "port_expose", { session_id: sid, port: 70000 });
        assert.equal(bad.isError, true);
        assert.match(text(bad), /port/);
        const unknown = await call(srv, "port_expose", { session_id: "s-0000000000000000", port: 8000 });
        assert.equal(unknown.isError, true);
        assert.match(text(unknown), /no such session/);

        // The session closes: its URLs refuse.
        assertOk(await call(srv, "session_close", { session_id: sid }), srv);
        if (TRANSPORT === "stdio")
                await assert.rejects(get(url), /fetch failed/);
        else
                assert.equal((await get(url)).status, 404);
});

test("port_expose leaves a session without network without it", { skip, timeout: 120_000 }, async () => {
        const sid = await sessionWithServer();
        assertOk(await call(srv, "port_expose", { session_id: sid, port: 8000 }), srv);
        const r = await runCode(srv, "python", `
import socket
for addr in (("1.1.1.1", 80), ("8.8.8.8", 53)):
    try:
        socket.create_connection(addr, 2)
        print("reached", addr)
    except OSError as e:
        print("blocked")
`, { session_id: sid });
        assert.equal(assertOk(r, srv).stdout, "blocked\nblocked\n");
        assertOk(await call(srv, "session_close", { session_id: sid }), srv);
});

test("an expired session's URL refuses", { skip, timeout: 120_000 }, async () => {
        const sid = assertOk(await call(srv, "session_create", { ttl_s: 4 }), srv).session_id;
        const r = await runCode(srv, "sh", `setsid nohup /usr/bin/python3 -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 < /dev/null &
${waitListening(8000)}`, { session_id: sid });
        assert.equal(assertOk(r, srv).exit_code, 0);
        const { url } = assertOk(await call(srv, "port_expose", { session_id: sid, port: 8000 }), srv);
        assert.equal((await get(url)).status, 200);
        const end = Date.now() + 30_000;
        for (;;) {
                const gone = await get(url).then((x) => x.status === 404, () => true);
                if (gone) break;
                assert.ok(Date.now() < end, "the URL still answers 30 s after the session's ttl");
                await new Promise((res) => setTimeout(res, 250));
        }
});

test("port_expose with runc as the runtime", { skip: skip || (!RUNC && "runc not installed"), timeout: 120_000 }, async () => {
        const s = await startServer({ runtime: RUNC });
        try {
                const sid = await sessionWithServer(s);
                const { url } = assertOk(await call(s, "port_expose", { session_id: sid, port: 8000 }), s);
                assert.equal((await get(url + "hello.txt")).body, "hello-port\n");
                assertOk(await call(s, "session_close", { session_id: sid }), s);
        } finally {
                await s.close();
        }
});

test("a session with a network allowlist cannot expose ports, and says why", { skip, timeout: 120_000 }, async () => {
        const s = await startServer({ args: ["--network-allow", "example.test:80"] });
        try {
                const sid = assertOk(await call(s, "session_create", { network: { allow: ["example.test:80"] } }), s).session_id;
                const r = await call(s, "port_expose", { session_id: sid, port: 8000 });
                assert.equal(r.isError, true);
                assert.match(text(r), /network allowlist/);
                assertOk(await call(s, "session_close", { session_id: sid }), s);
        } finally {
                await s.close();
        }
});

test("HTTP: the port's path needs the MCP endpoint's token and the owning tenant", { skip: skip || (TRANSPORT !== "http" && "HTTP only"), timeout: 180_000 }, async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-tokens-"));
        const file = path.join(dir, "tokens");
        const A = "tok-alice-ports-0123456789", B = "tok-bob-ports-0123456789";
        fs.writeFileSync(file, `${A} alice\n${B} bob\n`, { mode: 0o600 });
        const s = await spawnHttpServer({ args: ["--auth-tokens", file] });
        const auth = (t) => ({ authorization: `Bearer ${t}` });
        const transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: auth(A) } });
        const client = new Client({ name: "ports", version: "0" }, { capabilities: {} });
        await client.connect(transport);
        const alice = { client, log: s.log };
        try {
                const sid = await sessionWithServer(alice);
                const { url } = assertOk(await call(alice, "port_expose", { session_id: sid, port: 8000 }), alice);
                assert.equal((await get(url + "hello.txt", auth(A))).body, "hello-port\n");
                assert.equal((await get(url + "hello.txt")).status, 401, "without a token");
                assert.equal((await get(url + "hello.txt", auth("nope"))).status, 401, "an unknown token");
                assert.equal((await get(url + "hello.txt", auth(B))).status, 404, "another tenant");
                const other = new URL(url.replace("/ports/8000/", "/ports/8003/"));
                assert.equal((await get(other, auth(A))).status, 404, "a port not exposed");
                assertOk(await call(alice, "session_close", { session_id: sid }), alice);
                assert.equal((await get(url, auth(A))).status, 404, "closed");
        } finally {
                await client.close();
                assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
                fs.rmSync(dir, { recursive: true, force: true });
        }
});
