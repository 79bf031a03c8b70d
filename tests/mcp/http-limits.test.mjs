// Streamable HTTP only (msp-mcp --listen): what a client that does not authenticate, or
// a tenant, can hold. Slow request heads are cut at --http-head-timeout, one address has
// --http-max-per-address connections, the probes answer on --probe-listen while the main
// port is full, a tenant has its quota of MCP sessions. Raw sockets (node:net) for the
// slow clients, fetch and the SDK for the others.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { skipReason, finishAll, spawnHttpServer, stopProcess, waitFor, LATEST } from "./lib.mjs";

const skip = skipReason();
after(finishAll);

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize",
               params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: "http-limits", version: "0" } } };
const ping = { jsonrpc: "2.0", id: 2, method: "ping" };
const bearer = (t) => ({ authorization: `Bearer ${t}` });
const TOKEN_A = "tok-alice-0123456789abcdef", TOKEN_B = "tok-bob-0123456789abcdef";

async function post(url, body, headers = {}) {
        const res = await fetch(url, { method: "POST", headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) });
        return { status: res.status, headers: res.headers, text: await res.text() };
}

// initialize + notifications/initialized: the session id.
async function session(url, headers = {}) {
        const r = await post(url, INIT, headers);
        assert.equal(r.status, 200, r.text);
        const sid = r.headers.get("mcp-session-id");
        assert.ok(sid);
        assert.equal((await post(url, { jsonrpc: "2.0", method: "notifications/initialized" },
                                 { "mcp-session-id": sid, ...headers })).status, 202);
        return sid;
}

function tokenFile(lines) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-tokens-"));
        const file = path.join(dir, "tokens");
        fs.writeFileSync(file, lines.join("\n") + "\n", { mode: 0o600 });
        return { file, dir };
}

// A raw connection from `from` (a loopback address) that sends `head` at once, then
// `trickle` one byte every stepMs: closed() resolves with the ms from connect to the
// server's close, or rejects after limitMs.
function slowClient(url, { from = "127.0.0.1", head = "", trickle = "", stepMs = 100 } = {}) {
        const u = new URL(url);
        const t0 = Date.now();
        let timer = null, got = "";
        const sock = net.connect({ host: u.hostname, port: Number(u.port), localAddress: from }, () => {
                if (head) sock.write(head);
                let i = 0;
                timer = setInterval(() => { if (i < trickle.length && !sock.destroyed) sock.write(trickle[i++]); }, stepMs);
        });
        sock.on("data", (b) => { got += b.toString(); });
        sock.on("error", () => {});
        const gone = new Promise((resolve) => sock.on("close", () => { clearInterval(timer); resolve(Date.now() - t0); }));
        return {
                sock, received: () => got,
                open: () => !sock.destroyed,
                closed: (limitMs) => Promise.race([gone, new Promise((_, reject) => setTimeout(
                        () => reject(new Error(`still open after ${limitMs} ms`)), limitMs).unref())]),
                destroy: () => sock.destroy(),
        };
}

const headerBytes = (n) => "X-Slow: " + "a".repeat(n);

test("a request head trickled byte by byte is cut at --http-head-timeout, its slot freed; an unauthenticated request answered at once, its body unread", { skip, timeout: 60_000 }, async () => {
        const t = tokenFile([`${TOKEN_A} alice`]);
        // --http-timeout is the idle bound: a byte every 100 ms never reaches it.
        const s = await spawnHttpServer({ args: ["--auth-tokens", t.file, "--http-head-timeout", "1", "--http-timeout", "30",
                                                 "--http-max-connections", "3"] });
        const u = new URL(s.url);
        // Every slot taken by a client sending a header byte every 100 ms.
        const slow = [0, 1, 2].map(() => slowClient(s.url, { head: `GET /healthz HTTP/1.1\r\nHost: ${u.host}\r\n`, trickle: headerBytes(1000) }));
        for (const ms of await Promise.all(slow.map((c) => c.closed(8_000))))
                assert.ok(ms >= 900 && ms < 8_000, `closed after ${ms} ms`);
        // The slots are free again.
        assert.equal((await fetch(s.url.replace(/\/mcp$/, "/healthz"))).status, 200);

        // A kept-alive connection (after a request answered once authenticated): its next
        // head has the same bound, from the previous request's end.
        const init = JSON.stringify(INIT);
        const initHead = `POST /mcp HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\n` +
                         `Accept: application/json, text/event-stream\r\nAuthorization: Bearer ${TOKEN_A}\r\n` +
                         `Content-Length: ${init.length}\r\n\r\n`;
        const keep = slowClient(s.url, { head: initHead + init, trickle: `GET /healthz HTTP/1.1\r\n${headerBytes(1000)}`, stepMs: 100 });
        await waitFor("the first response", () => /^HTTP\/1.1 200/.test(keep.received()), 5_000);
        const kept = await keep.closed(8_000);
        assert.ok(kept >= 900, `closed after ${kept} ms`);
        assert.doesNotMatch(keep.received(), /connection: close/i, "kept alive after the first response");

        // Unauthenticated: answered 401 at once, its body never read, its connection closed.
        const unauth = slowClient(s.url, { head: `POST /mcp HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`,
                                           trickle: "x".repeat(1000) });
        assert.ok((await unauth.closed(8_000)) < 8_000);
        assert.match(unauth.received(), /^HTTP\/1.1 401/);

        // An authenticated request's body may take longer (the idle bound applies to it).
        const authed = slowClient(s.url, { head: initHead, trickle: init, stepMs: 2000 / init.length });
        await waitFor("the initialize response", () => /^HTTP\/1.1 200/.test(authed.received()), 15_000);
        assert.match(authed.received(), /mcp-session-id: [0-9a-f]{32}/i);
        authed.destroy();
        assert.match(s.log(), /HTTP connection from 127\.0\.0\.1 closed: no authenticated request within --http-head-timeout \(1 s\)/);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(t.dir, { recursive: true, force: true });
});

test("slow connections from one address: --http-max-per-address bounds them; /healthz and another client's initialize answer; --probe-listen answers with the port full", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer({ args: ["--http-max-per-address", "3", "--http-max-connections", "6",
                                                 "--http-head-timeout", "30", "--probe-listen", "127.0.0.1:0"] });
        const probe = /probes on (\S+)/.exec(s.log())[1];
        const u = new URL(s.url);
        const slowFrom = (from) => slowClient(s.url, { from, head: `GET /mcp HTTP/1.1\r\nHost: ${u.host}\r\n`, trickle: headerBytes(5000), stepMs: 200 });
        const held = [];
        for (let i = 0; i < 3; i++) held.push(slowFrom("127.0.0.2"));
        await waitFor("three connections of 127.0.0.2 accepted", () => held.every((c) => c.sock.readyState === "open"), 5_000);
        // The fourth from that address is closed at once.
        const over = slowFrom("127.0.0.2");
        assert.ok((await over.closed(5_000)) < 5_000);
        assert.ok(held.every((c) => c.open()), "the first three stay");

        assert.equal((await fetch(s.url.replace(/\/mcp$/, "/healthz"))).status, 200, "another address is served");

        // The port full (3 + 3 from two addresses): a seventh connection waits in the
        // listening socket's backlog, unanswered; the probe port answers.
        for (let i = 0; i < 3; i++) held.push(slowFrom("127.0.0.3"));
        await waitFor("six connections held", () => held.every((c) => c.sock.readyState === "open"), 5_000);
        const waiting = slowClient(s.url, { from: "127.0.0.4", head: `GET /healthz HTTP/1.1\r\nHost: ${u.host}\r\n\r\n` });
        assert.equal((await fetch(`${probe}/healthz`)).status, 200);
        assert.equal(await (await fetch(`${probe}/readyz`)).text(), "ready\n");
        assert.equal((await fetch(`${probe}/mcp`, { method: "POST", headers: JSON_HEADERS, body: JSON.stringify(INIT) })).status, 404);
        assert.equal(waiting.received(), "", "the main port is full");
        assert.ok(held.every((c) => c.open()));
        // A slot freed: the waiting connection is served.
        held.pop().destroy();
        await waitFor("the waiting request's answer", () => /^HTTP\/1.1 200/.test(waiting.received()), 5_000);
        waiting.destroy();
        while (held.length > 3) held.pop().destroy();

        // While 127.0.0.2 holds its three, an SDK client initializes and calls.
        const client = new Client({ name: "other", version: "0" }, { capabilities: {} });
        const transport = new StreamableHTTPClientTransport(new URL(s.url));
        await client.connect(transport);
        assert.deepEqual(await client.ping(), {});
        await transport.terminateSession();
        await client.close();
        assert.ok(held.every((c) => c.open()));
        for (const c of held) c.destroy();
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
});

// Opens the session's GET stream and waits for its response: the session is in use.
async function openStream(url, sid, headers) {
        const ac = new AbortController();
        const res = await fetch(url, { headers: { accept: "text/event-stream", "mcp-session-id": sid, ...headers }, signal: ac.signal });
        assert.equal(res.status, 200);
        return () => ac.abort();
}

test("a tenant at its quota of MCP sessions: its idle one gives way, with all in use 429; other tenants unaffected; unauthenticated initializes hold none", { skip, timeout: 60_000 }, async () => {
        const t = tokenFile([`${TOKEN_A} alice mcp_sessions=2 concurrent_runs=1 sessions=1 runs_per_minute=1`, `${TOKEN_B} bob`]);
        const s = await spawnHttpServer({ args: ["--auth-tokens", t.file] });
        const A = bearer(TOKEN_A), B = bearer(TOKEN_B);
        const metric = async () => {
                const m = await (await fetch(s.url.replace(/\/mcp$/, "/metrics"), { headers: B })).text();
                return Number(/^msp_mcp_http_sessions (\d+)$/m.exec(m)[1]);
        };

        // Unauthenticated initializes: 401, no session id, no session.
        for (const h of [{}, bearer("tok-nobody-0123456789abcdef"), { authorization: `Basic ${TOKEN_A}` }]) {
                const r = await post(s.url, INIT, h);
                assert.equal(r.status, 401);
                assert.equal(r.headers.get("mcp-session-id"), null);
        }
        assert.equal(await metric(), 0);

        // a1 in use (its GET stream open), a2 idle: a third session ends a2.
        const a1 = await session(s.url, A);
        const closeA1 = await openStream(s.url, a1, A);
        const a2 = await session(s.url, A);
        const a3 = await session(s.url, A);
        assert.equal((await post(s.url, ping, { "mcp-session-id": a2, ...A })).status, 404, "the idle one gave way");
        assert.equal((await post(s.url, ping, { "mcp-session-id": a1, ...A })).status, 200);
        await waitFor("the log line", () => /ended: its tenant is at its quota of MCP sessions/.test(s.log()), 5_000);

        // Both in use: the next is refused, naming the tenant and the quota.
        const closeA3 = await openStream(s.url, a3, A);
        const refused = await post(s.url, INIT, A);
        assert.equal(refused.status, 429);
        assert.equal(refused.headers.get("mcp-session-id"), null);
        const e = JSON.parse(refused.text);
        assert.equal(e.id, 1);
        assert.equal(e.error.code, -32000);
        assert.match(e.error.message, /tenant alice has its quota of 2 MCP sessions, each with a request or stream open/);
        const sdk = new Client({ name: "alice-sdk", version: "0" }, { capabilities: {} });
        await assert.rejects(sdk.connect(new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: A } })),
                            (err) => err.code === 429 && /quota of 2 MCP sessions/.test(err.message));

        // Bob creates sessions meanwhile (the SDK client among them).
        await session(s.url, B);
        const bob = new Client({ name: "bob-sdk", version: "0" }, { capabilities: {} });
        await bob.connect(new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: B } }));
        assert.deepEqual(await bob.ping(), {});
        await bob.close();
        // DELETE frees alice's slot.
        assert.equal((await fetch(s.url, { method: "DELETE", headers: { "mcp-session-id": a3, ...A } })).status, 204);
        await session(s.url, A);
        closeA1();
        closeA3();
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(t.dir, { recursive: true, force: true });
});

test("--http-tenant-sessions: the quota of tenants whose token line names none; bad values refused", { skip, timeout: 60_000 }, async () => {
        const t = tokenFile([`${TOKEN_A} alice`, `${TOKEN_B} bob mcp_sessions=2`]);
        const s = await spawnHttpServer({ args: ["--auth-tokens", t.file, "--http-tenant-sessions", "1"] });
        const A = bearer(TOKEN_A), B = bearer(TOKEN_B);
        const a = await session(s.url, A);
        const close = await openStream(s.url, a, A);
        assert.equal((await post(s.url, INIT, A)).status, 429);
        const b1 = await session(s.url, B);
        const closeB = await openStream(s.url, b1, B);
        await session(s.url, B);
        close();
        closeB();
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });

        fs.writeFileSync(t.file, `${TOKEN_A} alice mcp_sessions=0\n`);
        const bad = await spawnHttpServer({ args: ["--auth-tokens", t.file] }).then(() => null, (err) => err);
        assert.match(String(bad), /:1: mcp_sessions: expected a number above 0/);
        fs.rmSync(t.dir, { recursive: true, force: true });
});
