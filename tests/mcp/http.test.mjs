// Streamable HTTP only (msp-mcp --listen): session ids, status codes for bad requests,
// Origin and protocol-version checks, limits and timeouts, a client that goes away, many
// clients at once, a unix socket. The SDK client runs over HTTP in the other files when
// MSP_MCP_TRANSPORT=http; here requests are made by hand (fetch, node:net, node:http).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { skipReason, finishAll, spawnHttpServer, stopProcess, instanceOf, containersOf,
         waitFor, LATEST, text, runSync, tmpStateDir, MSP_MCP, MSP, AS_USER } from "./lib.mjs";

const skip = skipReason();
after(finishAll);

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize",
               params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: "http-test", version: "0" } } };

async function post(url, body, headers = {}) {
        const res = await fetch(url, { method: "POST", headers: { ...JSON_HEADERS, ...headers },
                                       body: typeof body === "string" ? body : JSON.stringify(body) });
        return { status: res.status, headers: res.headers, text: await res.text() };
}

// initialize + notifications/initialized: the session id.
async function session(url, headers = {}) {
        const r = await post(url, INIT, headers);
        assert.equal(r.status, 200, r.text);
        const sid = r.headers.get("mcp-session-id");
        assert.ok(sid, "Mcp-Session-Id on the initialize response");
        const n = await post(url, { jsonrpc: "2.0", method: "notifications/initialized" },
                             { "mcp-session-id": sid, ...headers });
        assert.equal(n.status, 202);
        return sid;
}

const ping = (id = 2) => ({ jsonrpc: "2.0", id, method: "ping" });

// SSE: the events of a text (id, event, data; comments as { comment }).
function parseEvents(textBody) {
        return textBody.split("\n\n").filter(Boolean).map((block) => {
                const e = {};
                for (const line of block.split("\n")) {
                        const m = /^([^:]*): ?(.*)$/.exec(line);
                        if (!m) continue;
                        if (m[1] === "") e.comment = m[2];
                        else e[m[1]] = m[2];
                }
                return e;
        });
}

// An open SSE response read as it comes: next(pred, ms) waits for an event pred takes.
function sseReader(res) {
        const reader = res.body.getReader();
        const dec = new TextDecoder();
        let buf = "", ended = false;
        const events = [];
        const pump = (async () => {
                for (;;) {
                        const { value, done } = await reader.read().catch(() => ({ done: true }));
                        if (done) { ended = true; return; }
                        buf += dec.decode(value, { stream: true });
                        const cut = buf.lastIndexOf("\n\n");
                        if (cut >= 0) {
                                events.push(...parseEvents(buf.slice(0, cut + 2)));
                                buf = buf.slice(cut + 2);
                        }
                }
        })();
        return {
                events, pump,
                ended: () => ended,
                next: async (what, pred, ms = 15_000) => {
                        let found;
                        await waitFor(what, () => (found = events.find(pred)) !== undefined, ms, 20);
                        return found;
                },
                cancel: () => reader.cancel().catch(() => {}),
        };
}

test("session ids: issued at initialize, required after, unknown 404, DELETE ends", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer();
        const a = await session(s.url), b = await session(s.url);
        assert.match(a, /^[\x21-\x7e]{32,}$/, "visible ASCII, 128 bits of randomness as hex");
        assert.notEqual(a, b);
        const ok = await post(s.url, ping(), { "mcp-session-id": a });
        assert.equal(ok.status, 200);
        assert.equal(ok.headers.get("content-type"), "application/json");
        assert.deepEqual(JSON.parse(ok.text), { jsonrpc: "2.0", id: 2, result: {} });

        const missing = await post(s.url, ping());
        assert.equal(missing.status, 400);
        assert.match(JSON.parse(missing.text).error.message, /Mcp-Session-Id/);
        assert.equal((await post(s.url, ping(), { "mcp-session-id": "0".repeat(32) })).status, 404);

        const del = await fetch(s.url, { method: "DELETE", headers: { "mcp-session-id": a } });
        assert.equal(del.status, 204);
        assert.equal((await post(s.url, ping(), { "mcp-session-id": a })).status, 404, "a deleted session is gone");
        assert.equal((await post(s.url, ping(), { "mcp-session-id": b })).status, 200, "the other one is not");
        assert.equal((await fetch(s.url, { method: "DELETE" })).status, 400);
        assert.equal((await fetch(s.url, { method: "PUT" })).status, 405);
        assert.equal((await post(s.url.replace(/\/mcp$/, "/other"), ping())).status, 404);

        // A failed initialize keeps no session.
        const bad = await post(s.url, { jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
        assert.equal(bad.status, 200);
        assert.ok(JSON.parse(bad.text).error);
        assert.equal(bad.headers.get("mcp-session-id"), null);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
});

test("Origin: a foreign one is refused (403), local pages and --allow-origin are not", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer({ args: ["--allow-origin", "https://app.example,https://b.example:8443"] });
        assert.equal((await post(s.url, INIT, { origin: "http://evil.example" })).status, 403);
        assert.equal((await post(s.url, INIT, { origin: "http://localhost.evil.example" })).status, 403);
        assert.equal((await post(s.url, INIT, { origin: "https://app.example.evil" })).status, 403);
        for (const origin of ["http://localhost:5173", "http://127.0.0.1", "http://[::1]:3000",
                              "https://app.example", "https://b.example:8443"])
                await session(s.url, { origin });
        await stopProcess(s.proc);
});

test("MCP-Protocol-Version: an unknown one is 400, a known one passes", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer();
        const sid = await session(s.url);
        const bad = await post(s.url, ping(), { "mcp-session-id": sid, "mcp-protocol-version": "1999-01-01" });
        assert.equal(bad.status, 400);
        assert.match(JSON.parse(bad.text).error.message, /MCP-Protocol-Version/);
        for (const v of ["2025-11-25", "2025-06-18", "2025-03-26"])
                assert.equal((await post(s.url, ping(), { "mcp-session-id": sid, "mcp-protocol-version": v })).status, 200);
        await stopProcess(s.proc);
});

test("malformed requests: batch, bad JSON, wrong content type, oversized body and headers", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer({ args: ["--max-message-bytes", "4096"] });
        const sid = await session(s.url);
        const h = { "mcp-session-id": sid };
        const batch = await post(s.url, [ping(2), ping(3)], h);
        assert.equal(batch.status, 400);
        assert.equal(JSON.parse(batch.text).error.code, -32600);
        const parse = await post(s.url, "{\"jsonrpc\":", h);
        assert.equal(parse.status, 400);
        assert.equal(JSON.parse(parse.text).error.code, -32700);
        assert.equal((await post(s.url, JSON.stringify(ping()), { ...h, "content-type": "text/plain" })).status, 415);
        const big = await post(s.url, { ...ping(), params: { pad: "x".repeat(8192) } }, h);
        assert.equal(big.status, 413);
        assert.equal(JSON.parse(big.text).error.code, -32600);
        // Headers beyond the connection's memory: refused, never served.
        const huge = await post(s.url, ping(), { ...h, "x-pad": "y".repeat(100_000) }).catch(() => ({ status: "closed" }));
        assert.ok(huge.status === "closed" || huge.status >= 400, `huge headers: ${huge.status}`);
        // A chunked body over the limit.
        const chunked = await new Promise((resolve, reject) => {
                const u = new URL(s.url);
                const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST",
                                           headers: { ...JSON_HEADERS, ...h } }, (res) => {
                        res.resume();
                        res.on("end", () => resolve(res.statusCode));
                });
                req.on("error", reject);
                for (let i = 0; i < 8; i++) req.write("x".repeat(1024));
                req.end();
        });
        assert.equal(chunked, 413);
        // Still serving.
        assert.equal((await post(s.url, ping(), h)).status, 200);
        await stopProcess(s.proc);
});

// A socket that stays open until the server closes it; resolves with the ms it took.
function closedWithin(url, send, limitMs) {
        const u = new URL(url);
        return new Promise((resolve, reject) => {
                const t0 = Date.now();
                const sock = net.connect(Number(u.port), u.hostname, () => { if (send) sock.write(send); });
                sock.on("data", () => {});
                sock.on("error", () => {});
                const t = setTimeout(() => { sock.destroy(); reject(new Error(`still open after ${limitMs} ms`)); }, limitMs);
                sock.on("close", () => { clearTimeout(t); resolve(Date.now() - t0); });
        });
}

test("slow and idle clients are disconnected after --http-timeout", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer({ args: ["--http-timeout", "1"] });
        const u = new URL(s.url);
        // Slowloris: a request line and one header, then nothing.
        const slow = closedWithin(s.url, `POST /mcp HTTP/1.1\r\nHost: ${u.host}\r\n`, 15_000);
        // Idle: connected, nothing sent.
        const idle = closedWithin(s.url, null, 15_000);
        // A body promised and never sent.
        const body = closedWithin(s.url, `POST /mcp HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`, 15_000);
        for (const ms of await Promise.all([slow, idle, body])) assert.ok(ms >= 900, `closed after ${ms} ms`);
        // Meanwhile and after, others are served.
        await session(s.url);
        await stopProcess(s.proc);
});

test("sessions unused for --http-session-idle end", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer({ args: ["--http-session-idle", "1"] });
        const sid = await session(s.url);
        // Asking would keep it alive: the server's log says when it ends.
        await waitFor("the idle session to end", () => /ended: idle/.test(s.log()), 15_000, 100);
        assert.equal((await post(s.url, ping(), { "mcp-session-id": sid })).status, 404);
        await stopProcess(s.proc);
});

test("a call answers JSON, or SSE when it streams progress", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer();
        const sid = await session(s.url);
        const h = { "mcp-session-id": sid };
        const plain = await post(s.url, { jsonrpc: "2.0", id: 5, method: "tools/call",
                                          params: { name: "run_code", arguments: { language: "sh", code: "echo plain" } } }, h);
        assert.equal(plain.headers.get("content-type"), "application/json");
        assert.equal(JSON.parse(plain.text).result.structuredContent.stdout, "plain\n");
        const streamed = await post(s.url, { jsonrpc: "2.0", id: 6, method: "tools/call",
                                             params: { _meta: { progressToken: "p" }, name: "run_code",
                                                       arguments: { language: "sh", code: "echo one; sleep 0.5; echo two" } } }, h);
        assert.equal(streamed.headers.get("content-type"), "text/event-stream");
        const all = parseEvents(streamed.text);
        assert.deepEqual(all[0], { id: all[0].id, data: "" }, "a priming event: an id, empty data");
        assert.equal(new Set(all.map((e) => e.id)).size, all.length, "every event has its own id");
        const events = all.slice(1).map((e) => JSON.parse(e.data));
        assert.ok(events.length >= 2, streamed.text);
        assert.equal(events.at(-1).id, 6, "the response ends the stream");
        assert.equal(events.at(-1).result.structuredContent.stdout, "one\ntwo\n");
        for (const e of events.slice(0, -1)) {
                assert.equal(e.method, "notifications/progress");
                assert.equal(e.params.progressToken, "p");
        }
        // A 2025-06-18 client gets no priming event (empty data): every event carries a message.
        const old = await post(s.url, { ...INIT, params: { ...INIT.params, protocolVersion: "2025-06-18" } });
        const oh = { "mcp-session-id": old.headers.get("mcp-session-id"), "mcp-protocol-version": "2025-06-18" };
        assert.equal((await post(s.url, { jsonrpc: "2.0", method: "notifications/initialized" }, oh)).status, 202);
        const older = await post(s.url, { jsonrpc: "2.0", id: 7, method: "tools/call",
                                          params: { _meta: { progressToken: "p" }, name: "run_code",
                                                    arguments: { language: "sh", code: "echo one" } } }, oh);
        assert.equal(older.headers.get("content-type"), "text/event-stream");
        const oe = parseEvents(older.text);
        assert.ok(oe.length >= 2 && oe.every((e) => e.id && e.data), older.text);
        assert.equal(JSON.parse(oe.at(-1).data).id, 7);
        await stopProcess(s.proc);
});

test("a client that disconnects mid-run cancels the run", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer();
        const sid = await session(s.url);
        const inst = instanceOf(s.stateDir, s.proc.pid);
        assert.ok(inst);
        const ac = new AbortController();
        const p = fetch(s.url, { method: "POST", signal: ac.signal, headers: { ...JSON_HEADERS, "mcp-session-id": sid },
                                 body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call",
                                                        params: { name: "run_code", arguments: { language: "sh", code: "sleep 40", timeout_ms: 50_000 } } }) });
        p.catch(() => {});
        await waitFor("the run's container", () => containersOf(s.stateDir, inst).length === 1, 30_000);
        const t0 = Date.now();
        ac.abort();
        await waitFor("the run's container to go", () => containersOf(s.stateDir, inst).length === 0, 15_000);
        assert.ok(Date.now() - t0 < 15_000);
        assert.match(s.log(), /went away: its call is cancelled/);
        // The session lives on.
        assert.equal((await post(s.url, ping(), { "mcp-session-id": sid })).status, 200);
        await stopProcess(s.proc);
});

const getStream = (url, headers = {}) =>
        fetch(url, { method: "GET", headers: { accept: "text/event-stream", ...headers } });
const seqOf = (id) => Number(id.split("-")[1]);
const streamCall = (id, code) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call",
                                                  params: { _meta: { progressToken: "p" }, name: "run_code",
                                                            arguments: { language: "sh", code } } });

test("GET opens the session's stream: 400/404/406, one per session (409), keepalives, no message of a waiting call; DELETE and SIGTERM end it", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer({ args: ["--http-timeout", "2"] });
        const sid = await session(s.url);
        const h = { "mcp-session-id": sid };
        assert.equal((await getStream(s.url)).status, 400, "no Mcp-Session-Id");
        assert.equal((await getStream(s.url, { "mcp-session-id": "0".repeat(32) })).status, 404);
        assert.equal((await getStream(s.url, { ...h, accept: "application/json" })).status, 406);
        const res = await getStream(s.url, h);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("content-type"), "text/event-stream");
        const r = sseReader(res);
        assert.equal((await r.next("the priming event", (e) => e.id !== undefined)).data, "");
        const second = await getStream(s.url, h);
        assert.equal(second.status, 409, "one GET stream per session");
        await second.text();
        // Past --http-timeout (2 s) the quiet stream lives on: a comment every second.
        await r.next("a keepalive comment", (e) => e.comment === "keepalive", 10_000);
        await new Promise((resolve) => setTimeout(resolve, 2500));
        assert.ok(!r.ended(), "a quiet GET stream is not cut by --http-timeout");
        // A log message while a call waits belongs to that call: on its stream, before its
        // response, not on the GET stream.
        assert.equal((await post(s.url, { jsonrpc: "2.0", id: 3, method: "logging/setLevel", params: { level: "debug" } }, h)).status, 200);
        const call = await post(s.url, { jsonrpc: "2.0", id: 4, method: "tools/call",
                                         params: { name: "run_code", arguments: { language: "sh", code: "echo hi" } } }, h);
        assert.equal(call.headers.get("content-type"), "text/event-stream");
        const callMsgs = parseEvents(call.text).filter((e) => e.data).map((e) => JSON.parse(e.data));
        assert.ok(callMsgs.some((m) => m.method === "notifications/message" && /run_code sh started/.test(m.params.data)), call.text);
        assert.equal(callMsgs.at(-1).id, 4);
        assert.deepEqual(r.events.filter((e) => e.data), [], "nothing of the call on the GET stream");
        const ids = r.events.filter((e) => e.id).map((e) => e.id);
        assert.equal(new Set(ids).size, ids.length, "event ids are unique");
        assert.equal((await fetch(s.url, { method: "DELETE", headers: h })).status, 204);
        await waitFor("DELETE to end the GET stream", () => r.ended(), 10_000);

        // SIGTERM: the GET streams end at once (they do not hold the drain).
        const r2 = sseReader(await getStream(s.url, { "mcp-session-id": await session(s.url) }));
        await r2.next("the priming event", (e) => e.id !== undefined);
        const t0 = Date.now();
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        await waitFor("SIGTERM to end the GET stream", () => r2.ended(), 10_000);
        assert.ok(Date.now() - t0 < 10_000, `stopped ${Date.now() - t0} ms after SIGTERM`);
});

test("a broken call stream resumes with Last-Event-ID: every event after it, then the response; unknown ids 400", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer();
        const sid = await session(s.url);
        const h = { "mcp-session-id": sid };
        const ac = new AbortController();
        // The last sleep: progress goes out at most every 250 ms and none after the run ends,
        // so "three" gets its own notification only if the run outlives it.
        const res = await fetch(s.url, { method: "POST", signal: ac.signal, headers: { ...JSON_HEADERS, ...h },
                                         body: streamCall(6, "echo one; sleep 1; echo two; sleep 1; echo three; sleep 1") });
        assert.equal(res.headers.get("content-type"), "text/event-stream");
        const r = sseReader(res);
        const first = await r.next("the first progress", (e) => /one/.test(e.data ?? ""));
        ac.abort();
        await waitFor("the server to see the connection go", () => /SSE stream \d+ lost its connection/.test(s.log()), 10_000);
        const stream = first.id.split("-")[0];
        for (const bad of ["99-1", "x", `${stream}-999999`, `-${stream}-1`]) {
                const b = await getStream(s.url, { ...h, "last-event-id": bad });
                assert.equal(b.status, 400, bad);
                assert.match(JSON.parse(await b.text()).error.message, /Last-Event-ID/);
        }
        const resumed = await getStream(s.url, { ...h, "last-event-id": first.id });
        assert.equal(resumed.status, 200);
        const r2 = sseReader(resumed);
        await waitFor("the resumed stream to end", () => r2.ended(), 30_000);
        const got = r2.events.filter((e) => e.id);
        assert.deepEqual(got.map((e) => e.id), got.map((_, i) => `${stream}-${seqOf(first.id) + 1 + i}`),
                         "the events right after Last-Event-ID, none missing, none twice");
        const msgs = got.map((e) => JSON.parse(e.data));
        assert.equal(msgs.at(-1).id, 6, "the response ends the resumed stream");
        assert.equal(msgs.at(-1).result.structuredContent.stdout, "one\ntwo\nthree\n");
        assert.ok(msgs.slice(0, -1).some((m) => m.method === "notifications/progress" && /three/.test(m.params.message)),
                  "progress sent while no connection was there is delivered");
        assert.match(s.log(), /SSE stream \d+ resumed after/);
        // Delivered to the end, the stream is gone.
        assert.equal((await getStream(s.url, { ...h, "last-event-id": got.at(-1).id })).status, 400);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
});

test("a call stream not resumed within --http-timeout: its run is cancelled, the GET stream says so", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer({ args: ["--http-timeout", "2"] });
        const sid = await session(s.url);
        const inst = instanceOf(s.stateDir, s.proc.pid);
        assert.equal((await post(s.url, { jsonrpc: "2.0", id: 3, method: "logging/setLevel", params: { level: "notice" } },
                                 { "mcp-session-id": sid })).status, 200);
        const g = sseReader(await getStream(s.url, { "mcp-session-id": sid }));
        const ac = new AbortController();
        const res = await fetch(s.url, { method: "POST", signal: ac.signal, headers: { ...JSON_HEADERS, "mcp-session-id": sid },
                                         body: streamCall(7, "echo started; sleep 40") });
        await sseReader(res).next("the first progress", (e) => /started/.test(e.data ?? ""));
        ac.abort();
        await waitFor("the server to see the connection go", () => /SSE stream \d+ lost its connection/.test(s.log()), 10_000);
        assert.equal(containersOf(s.stateDir, inst).length, 1, "the run goes on while the client may resume");
        await waitFor("the run's container to go", () => containersOf(s.stateDir, inst).length === 0, 15_000);
        assert.match(s.log(), /SSE stream \d+ not resumed within --http-timeout: its call is cancelled/);
        // The client hears it on its GET stream: a message of no request still waiting.
        const m = await g.next("the cancellation on the GET stream", (e) => /not resumed/.test(e.data ?? ""));
        assert.equal(JSON.parse(m.data).method, "notifications/message");
        assert.equal((await post(s.url, ping(), { "mcp-session-id": sid })).status, 200, "the session lives on");
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
});

test("the SDK client resumes a call stream the network broke (GET with Last-Event-ID) and gets its result", { skip, timeout: 60_000 }, async () => {
        const s = await spawnHttpServer();
        let broken = false;
        // The first call stream breaks after its first progress event, as a network would.
        const breaking = async (url, init) => {
                const res = await fetch(url, init);
                if (broken || init?.method !== "POST" || res.headers.get("content-type") !== "text/event-stream")
                        return res;
                broken = true;
                const reader = res.body.getReader();
                let seen = "", cut = false;
                const body = new ReadableStream({
                        async pull(ctl) {
                                if (cut) {
                                        await reader.cancel();
                                        ctl.error(new TypeError("network connection lost"));
                                        return;
                                }
                                const { value, done } = await reader.read();
                                if (done) return ctl.close();
                                seen += new TextDecoder().decode(value);
                                cut = /notifications\/progress/.test(seen);
                                ctl.enqueue(value);
                        },
                });
                return new Response(body, { status: res.status, headers: res.headers });
        };
        const transport = new StreamableHTTPClientTransport(new URL(s.url), {
                fetch: breaking,
                reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 1000,
                                       reconnectionDelayGrowFactor: 1.5, maxRetries: 3 } });
        const client = new Client({ name: "resume", version: "0" }, { capabilities: {} });
        await client.connect(transport);
        const progress = [];
        // The last sleep: "three" gets a progress notification before the run ends (as above).
        const r = await client.callTool({ name: "run_code", arguments: { language: "sh", code: "echo one; sleep 1; echo two; sleep 1; echo three; sleep 1" } },
                                        undefined, { timeout: 60_000, onprogress: (n) => progress.push(n.message ?? "") });
        assert.ok(broken, "the call streamed and its stream broke");
        assert.equal(r.structuredContent.stdout, "one\ntwo\nthree\n", text(r));
        assert.match(s.log(), /SSE stream \d+ resumed after/);
        assert.ok(progress.some((m) => /three/.test(m)), `progress after the break arrives: ${JSON.stringify(progress)}`);
        await client.close();
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
});

test("50 SDK clients at once, each its own session; no fd of msp-mcp left after", { skip, timeout: 180_000 }, async () => {
        const s = await spawnHttpServer({ args: ["--max-queue", "64"] });
        const fds = () => fs.readdirSync(`/proc/${s.proc.pid}/fd`).length;
        await session(s.url);   // the first session and run set up what stays (caches)
        const before = fds();
        const N = 50;
        const t0 = Date.now();
        const clients = await Promise.all(Array.from({ length: N }, async (_, i) => {
                const transport = new StreamableHTTPClientTransport(new URL(s.url));
                const client = new Client({ name: `c${i}`, version: "0" }, { capabilities: {} });
                await client.connect(transport);
                return { client, transport };
        }));
        assert.equal(new Set(clients.map((c) => c.transport.sessionId)).size, N, "distinct sessions");
        const results = await Promise.all(clients.map(({ client }, i) =>
                client.callTool({ name: "run_code", arguments: { language: "sh", code: `echo client-${i}` } },
                                undefined, { timeout: 120_000 })));
        results.forEach((r, i) => assert.equal(r.structuredContent?.stdout, `client-${i}\n`, text(r)));
        assert.ok(Date.now() - t0 < 120_000, `${N} clients took ${Date.now() - t0} ms`);
        await Promise.all(clients.map(({ client, transport }) => transport.terminateSession().then(() => client.close())));
        // The clients' connections close on their side first: bounded wait for ours.
        await waitFor("msp-mcp's fds back to their count before the clients", () => fds() <= before, 15_000, 100);
        assert.equal(containersOf(s.stateDir, instanceOf(s.stateDir, s.proc.pid)).length, 0);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
});

test("--listen unix:PATH serves the same endpoint", { skip, timeout: 60_000 }, async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-sock-"));
        const sock = path.join(dir, "mcp.sock");
        const s = await spawnHttpServer({ listen: `unix:${sock}` });
        const res = await new Promise((resolve, reject) => {
                const req = http.request({ socketPath: sock, path: "/mcp", method: "POST", headers: JSON_HEADERS }, (r) => {
                        let b = "";
                        r.on("data", (d) => { b += d; });
                        r.on("end", () => resolve({ status: r.statusCode, sid: r.headers["mcp-session-id"], body: b }));
                });
                req.on("error", reject);
                req.end(JSON.stringify(INIT));
        });
        assert.equal(res.status, 200, res.body);
        assert.ok(res.sid);
        assert.equal(JSON.parse(res.body).result.protocolVersion, LATEST);
        await stopProcess(s.proc);
        assert.ok(!fs.existsSync(sock), "the socket is removed at exit");
        fs.rmSync(dir, { recursive: true, force: true });
});

// A token file the test writes: the server reads it at start and on SIGHUP.
function tokenFile(lines) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-tokens-"));
        const file = path.join(dir, "tokens");
        fs.writeFileSync(file, lines.join("\n") + "\n", { mode: 0o600 });
        return { file, dir, write: (l) => fs.writeFileSync(file, l.join("\n") + "\n") };
}

const TOKEN_A = "tok-alice-0123456789abcdef", TOKEN_B = "tok-bob-0123456789abcdef#x";
const bearer = (t) => ({ authorization: `Bearer ${t}` });

test("--auth-tokens: 401 with a Bearer challenge, tenants do not see each other's sessions, SIGHUP reloads", { skip, timeout: 60_000 }, async () => {
        const t = tokenFile(["# tenants", `${TOKEN_A} alice concurrent_runs=2 sessions=4`, "",
                             `${TOKEN_B}   bob # a comment`]);
        const s = await spawnHttpServer({ args: ["--auth-tokens", t.file] });
        assert.match(s.log(), /bearer tokens/);
        const none = await post(s.url, INIT);
        assert.equal(none.status, 401);
        assert.equal(none.headers.get("www-authenticate"), 'Bearer realm="msp-mcp"');
        const wrong = await post(s.url, INIT, bearer("tok-alice-0123456789abcdeX"));
        assert.equal(wrong.status, 401);
        assert.match(wrong.headers.get("www-authenticate"), /error="invalid_token"/);
        assert.equal((await post(s.url, INIT, { authorization: `Basic ${TOKEN_A}` })).status, 401);
        assert.equal((await fetch(s.url, { method: "DELETE", headers: { "mcp-session-id": "x" } })).status, 401);

        const a = await session(s.url, bearer(TOKEN_A));
        const b = await session(s.url, bearer(TOKEN_B));
        assert.equal((await post(s.url, ping(), { "mcp-session-id": a, ...bearer(TOKEN_A) })).status, 200);
        // Another tenant's session is "not found", for requests and for DELETE.
        assert.equal((await post(s.url, ping(), { "mcp-session-id": a, ...bearer(TOKEN_B) })).status, 404);
        assert.equal((await fetch(s.url, { method: "DELETE", headers: { "mcp-session-id": a, ...bearer(TOKEN_B) } })).status, 404);
        assert.equal((await post(s.url, ping(), { "mcp-session-id": a, ...bearer(TOKEN_A) })).status, 200);
        // A session needs the token on every request.
        assert.equal((await post(s.url, ping(), { "mcp-session-id": b })).status, 401);

        // The SDK client with a token.
        const transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: bearer(TOKEN_B) } });
        const client = new Client({ name: "sdk-token", version: "0" }, { capabilities: {} });
        await client.connect(transport);
        const r = await client.callTool({ name: "run_code", arguments: { language: "sh", code: "echo with-token" } });
        assert.equal(r.structuredContent.stdout, "with-token\n");
        await client.close();

        // SIGHUP: alice's token revoked, carol's added; a broken file keeps the tokens.
        const TOKEN_C = "tok-carol-0123456789abcdef";
        t.write([`${TOKEN_B} bob`, `${TOKEN_C} carol`]);
        s.proc.kill("SIGHUP");
        await waitFor("the reload", () => /tokens reloaded from .*: 2/.test(s.log()), 10_000);
        assert.equal((await post(s.url, ping(), { "mcp-session-id": a, ...bearer(TOKEN_A) })).status, 401);
        await session(s.url, bearer(TOKEN_C));
        t.write(["short carol"]);
        s.proc.kill("SIGHUP");
        await waitFor("the refused reload", () => /tokens not reloaded, the old ones stay: .*:1: the token must be/.test(s.log()), 10_000);
        assert.equal((await post(s.url, ping(), { "mcp-session-id": b, ...bearer(TOKEN_B) })).status, 200);
        assert.ok(!s.log().includes("tok-"), "no token in the log");
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(t.dir, { recursive: true, force: true });
});

test("no authentication only on loopback; bad token files are refused naming the line", { skip, timeout: 60_000 }, async () => {
        const stateDir = tmpStateDir();
        const run = (args) => runSync(MSP_MCP, ["--state-dir", stateDir, "--runtime", MSP, ...args]);
        const open = run(["--listen", "0.0.0.0:0"]);
        assert.equal(open.status, 1);
        assert.match(open.stderr, /--listen 0\.0\.0\.0:0 is not a loopback address or a unix socket: name --auth-tokens FILE/);
        const check = run(["--check", "--listen", "127.0.0.1:0"]);
        assert.match(check.stdout, /warning\s+http auth\s+--listen 127\.0\.0\.1:0 without --auth-tokens/);
        for (const [lines, why] of [[["onlyonefield-0123456789"], /:1: expected TOKEN TENANT/],
                                    [["# c", "short alice"], /:2: the token must be 16 to 4096/],
                                    [[`${TOKEN_A} al/ice`], /:1: tenant "al\/ice"/],
                                    [[`${TOKEN_A} alice cpus=3`], /:1: "cpus=3": expected concurrent_runs=N/],
                                    [[`${TOKEN_A} alice`, `${TOKEN_A} bob`], /:2: the same token as an earlier line/],
                                    [[`${TOKEN_A} alice sessions=1`, `${TOKEN_B} alice sessions=2`], /:2: tenant alice has another value for a quota/],
                                    [[`${TOKEN_A} alice sessions=0`], /:1: sessions: expected a number above 0/],
                                    [["# nothing"], /no token in the file/]]) {
                const t = tokenFile(lines);
                const r = run(["--listen", "127.0.0.1:0", "--auth-tokens", t.file]);
                assert.equal(r.status, 1, r.stderr);
                assert.match(r.stderr, why);
                assert.ok(!r.stderr.includes("0123456789"), "the token is never printed");
                // --check says the same (once: it probes the whole host).
                if (why.source.includes("earlier line")) {
                        const c = run(["--check", "--listen", "127.0.0.1:0", "--auth-tokens", t.file]);
                        assert.match(c.stdout, why);
                }
                fs.rmSync(t.dir, { recursive: true, force: true });
        }
        // A server that refused to start left nothing behind.
        assert.deepEqual(fs.readdirSync(stateDir).filter((n) => n.startsWith("inst-")), []);
        fs.rmSync(stateDir, { recursive: true, force: true });
});

test("tenants: another tenant's sandbox sessions and run logs are not found", { skip, timeout: 120_000 }, async () => {
        const t = tokenFile([`${TOKEN_A} alice`, `${TOKEN_B} bob`]);
        const s = await spawnHttpServer({ args: ["--auth-tokens", t.file] });
        const connect = async (token) => {
                const transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: bearer(token) } });
                const client = new Client({ name: "tenant", version: "0" }, { capabilities: {} });
                await client.connect(transport);
                return client;
        };
        const tool = (c, name, args) => c.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
        const alice = await connect(TOKEN_A), alice2 = await connect(TOKEN_A), bob = await connect(TOKEN_B);

        const created = await tool(alice, "session_create", {});
        const sid = created.structuredContent.session_id;
        assert.ok(sid, text(created));
        assert.ok(!(await tool(alice, "write_file", { session_id: sid, path: "secret.txt", content: "alice's" })).isError);
        const run = await tool(alice, "run_code", { language: "sh", code: "cat secret.txt", session_id: sid });
        assert.equal(run.structuredContent.stdout, "alice's");
        const rid = run.structuredContent.run_id;

        // Bob: not found, whatever the way in.
        const notFound = /no such session/;
        for (const [name, args] of [["run_code", { language: "sh", code: "cat secret.txt", session_id: sid }],
                                    ["read_file", { session_id: sid, path: "secret.txt" }],
                                    ["write_file", { session_id: sid, path: "x", content: "y" }],
                                    ["list_files", { session_id: sid }],
                                    ["session_pause", { session_id: sid }],
                                    ["session_resume", { session_id: sid }],
                                    ["process_list", { session_id: sid }],
                                    ["process_output", { session_id: sid, process_id: "p-00000000" }],
                                    ["process_kill", { session_id: sid, process_id: "p-00000000" }],
                                    ["session_close", { session_id: sid }]]) {
                const r = await tool(bob, name, args);
                assert.ok(r.isError, `${name} by another tenant: ${text(r)}`);
                assert.match(text(r), notFound, name);
        }
        assert.deepEqual((await tool(bob, "session_list", {})).structuredContent.sessions, []);
        const bobResources = (await bob.listResources()).resources.map((r) => r.uri);
        assert.ok(!bobResources.some((u) => u.includes(sid) || u.includes(rid)), bobResources.join(" "));
        for (const uri of [`sandbox://sessions/${sid}/files/secret.txt`, `sandbox://sessions/${sid}/files/`,
                           `sandbox://runs/${rid}/stdout`])
                await assert.rejects(bob.readResource({ uri }), /-32002|not found/i, uri);

        // Alice, from this and from another HTTP session of hers.
        assert.deepEqual((await tool(alice2, "session_list", {})).structuredContent.sessions.map((x) => x.session_id), [sid]);
        assert.equal((await tool(alice2, "read_file", { session_id: sid, path: "secret.txt" })).structuredContent.content, "alice's");
        assert.equal((await alice.readResource({ uri: `sandbox://runs/${rid}/stdout` })).contents[0].text, "alice's");
        assert.ok(!(await tool(alice2, "session_close", { session_id: sid })).isError);
        for (const c of [alice, alice2, bob]) await c.close();
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(t.dir, { recursive: true, force: true });
});

test("tenant quotas: sessions, runs at once, runs per minute; other tenants unaffected", { skip, timeout: 120_000 }, async () => {
        const t = tokenFile([`${TOKEN_A} alice sessions=1 concurrent_runs=1`,
                             `tok-alice-second-0123456789 alice runs_per_minute=3`, `${TOKEN_B} bob`]);
        const s = await spawnHttpServer({ args: ["--auth-tokens", t.file] });
        const connect = async (token) => {
                const transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: bearer(token) } });
                const client = new Client({ name: "quota", version: "0" }, { capabilities: {} });
                await client.connect(transport);
                return client;
        };
        const tool = (c, name, args) => c.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
        const alice = await connect(TOKEN_A), alice2 = await connect("tok-alice-second-0123456789"), bob = await connect(TOKEN_B);

        assert.ok(!(await tool(alice, "session_create", {})).isError);
        const second = await tool(alice2, "session_create", {});
        assert.ok(second.isError);
        assert.match(text(second), /tenant alice has its quota of 1 live sessions/);
        assert.ok(!(await tool(bob, "session_create", {})).isError, "bob has no quota");

        // One run at once for alice, over all her HTTP sessions; bob runs meanwhile.
        let started = false;
        const long = alice.callTool({ name: "run_code", arguments: { language: "sh", code: "echo started; sleep 3" } }, undefined,
                                    { timeout: 60_000, onprogress: (n) => { if (/started/.test(n.message ?? "")) started = true; } });
        await waitFor("alice's first run", () => started, 30_000);
        const busy = await tool(alice2, "run_code", { language: "sh", code: "true" });
        assert.ok(busy.isError);
        assert.match(text(busy), /tenant alice has its quota of 1 runs at once/);
        assert.equal((await tool(bob, "run_code", { language: "sh", code: "echo bob" })).structuredContent.stdout, "bob\n");
        assert.ok(!(await long).isError);

        // Three runs a minute: the long one counted, two more pass, the next is refused.
        for (let i = 0; i < 2; i++) assert.ok(!(await tool(alice, "run_code", { language: "sh", code: "true" })).isError, `run ${i}`);
        const over = await tool(alice2, "run_code", { language: "sh", code: "true" });
        assert.ok(over.isError);
        assert.match(text(over), /tenant alice has its quota of 3 runs per minute; retry in \d+ s/);
        assert.ok(!(await tool(bob, "run_code", { language: "sh", code: "true" })).isError);
        for (const c of [alice, alice2, bob]) await c.close();
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(t.dir, { recursive: true, force: true });
});

// The value of one sample line of a Prometheus exposition (0 when absent).
function sample(textBody, name) {
        const line = textBody.split("\n").find((l) => l.startsWith(name + " "));
        return line ? Number(line.slice(name.length + 1)) : 0;
}

test("/healthz, /readyz and /metrics (runs by language and outcome, durations, statuses, tenants)", { skip, timeout: 120_000 }, async () => {
        const t = tokenFile([`${TOKEN_A} alice`]);
        const s = await spawnHttpServer({ args: ["--auth-tokens", t.file] });
        const base = s.url.replace(/\/mcp$/, "");
        const get = async (p, headers = {}) => {
                const r = await fetch(base + p, { headers });
                return { status: r.status, type: r.headers.get("content-type"), text: await r.text() };
        };
        assert.deepEqual(await get("/healthz"), { status: 200, type: "text/plain", text: "ok\n" });
        assert.deepEqual(await get("/readyz"), { status: 200, type: "text/plain", text: "ready\n" });
        assert.equal((await get("/metrics")).status, 401, "/metrics needs a token like /mcp");
        assert.equal((await post(base + "/healthz", ping())).status, 404);

        const sid = await session(s.url, bearer(TOKEN_A));
        const h = { "mcp-session-id": sid, ...bearer(TOKEN_A) };
        const call = (code, extra = {}) => post(s.url, { jsonrpc: "2.0", id: 7, method: "tools/call",
                                                         params: { name: "run_code", arguments: { language: "sh", code, ...extra } } }, h);
        assert.equal((await call("true")).status, 200);
        assert.equal((await call("exit 3")).status, 200);
        assert.equal((await call("sleep 10", { timeout_ms: 300 })).status, 200);
        // A cancelled one: the client goes away.
        const inst = instanceOf(s.stateDir, s.proc.pid);
        // The timed-out run's container may still be going: the next one is the only one.
        await waitFor("no container", () => containersOf(s.stateDir, inst).length === 0, 15_000);
        const ac = new AbortController();
        fetch(s.url, { method: "POST", signal: ac.signal, headers: { ...JSON_HEADERS, ...h },
                       body: JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/call",
                                              params: { name: "run_code", arguments: { language: "sh", code: "sleep 30" } } }) }).catch(() => {});
        await waitFor("the run's container", () => containersOf(s.stateDir, inst).length === 1, 30_000);
        ac.abort();
        await waitFor("the cancelled run to be counted", async () =>
                sample((await get("/metrics", bearer(TOKEN_A))).text, 'msp_mcp_runs_total{language="sh",outcome="cancelled"}') === 1, 15_000, 100);

        // The cancelled sandbox is torn down after the cancel: running drops to 0 then.
        await waitFor("no run in flight", async () =>
                sample((await get("/metrics", bearer(TOKEN_A))).text, "msp_mcp_runs_running") === 0, 15_000, 100);
        const m = await get("/metrics", bearer(TOKEN_A));
        assert.equal(m.status, 200);
        assert.equal(m.type, "text/plain; version=0.0.4");
        for (const [o, n] of [["ok", 1], ["error", 1], ["timeout", 1], ["oom", 0], ["cancelled", 1]]) {
                assert.equal(sample(m.text, `msp_mcp_runs_total{language="sh",outcome="${o}"}`), n, o);
                assert.equal(sample(m.text, `msp_mcp_tenant_runs_total{tenant="alice",outcome="${o}"}`), n, o);
        }
        assert.equal(sample(m.text, "msp_mcp_run_duration_seconds_count"), 3, "cancelled runs have no duration");
        assert.equal(sample(m.text, 'msp_mcp_run_duration_seconds_bucket{le="+Inf"}'), 3);
        assert.ok(sample(m.text, 'msp_mcp_run_duration_seconds_bucket{le="0.1"}') <= 3);
        assert.ok(sample(m.text, 'msp_mcp_http_responses_total{code="401"}') >= 1);
        assert.ok(sample(m.text, 'msp_mcp_http_responses_total{code="200"}') >= 5);
        assert.equal(sample(m.text, "msp_mcp_http_sessions"), 1);
        assert.equal(sample(m.text, "msp_mcp_runs_running"), 0);
        assert.equal(sample(m.text, "msp_mcp_runs_queued"), 0);
        assert.match(m.text, /# TYPE msp_mcp_run_duration_seconds histogram/);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(t.dir, { recursive: true, force: true });
});

test("/metrics: a run the OOM killer ends is counted with outcome oom", { skip: skip || (AS_USER && "run by a user msp-mcp has no memory cgroup: RLIMIT_DATA refuses the allocation, nothing is OOM-killed"), timeout: 120_000 }, async () => {
        const s = await spawnHttpServer();
        const sid = await session(s.url);
        // b"x" * n writes every page (as in limits.test.mjs).
        const r = await post(s.url, { jsonrpc: "2.0", id: 3, method: "tools/call",
                                      params: { name: "run_code", arguments: { language: "python", memory_mb: 32, timeout_ms: 30_000,
                                                                               code: "a = []\nwhile True:\n    a.append(b'x' * (1 << 20))" } } },
                             { "mcp-session-id": sid });
        assert.equal(r.status, 200);
        const out = JSON.parse(r.text).result.structuredContent;
        assert.equal(out.oom_killed, true, r.text);
        const m = await (await fetch(s.url.replace(/\/mcp$/, "/metrics"))).text();
        for (const [o, n] of [["oom", 1], ["ok", 0], ["error", 0], ["timeout", 0], ["cancelled", 0]])
                assert.equal(sample(m, `msp_mcp_runs_total{language="python",outcome="${o}"}`), n, o);
        assert.equal(sample(m, 'msp_mcp_tenant_runs_total{tenant="",outcome="oom"}'), 1);
        assert.equal(sample(m, "msp_mcp_run_duration_seconds_count"), 1, "an OOM-killed run has a duration");
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
});

test("/readyz is 503 while the run queue is full", { skip, timeout: 120_000 }, async () => {
        const s = await spawnHttpServer({ args: ["--max-concurrent", "1", "--max-queue", "1"] });
        const ready = async () => (await fetch(s.url.replace(/\/mcp$/, "/readyz"))).status;
        assert.equal(await ready(), 200);
        const sid = await session(s.url);
        const ac = new AbortController();
        for (const id of [1, 2])
                fetch(s.url, { method: "POST", signal: ac.signal, headers: { ...JSON_HEADERS, "mcp-session-id": sid },
                               body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call",
                                                      params: { name: "run_code", arguments: { language: "sh", code: "sleep 30" } } }) }).catch(() => {});
        await waitFor("a full queue", async () => (await ready()) === 503, 30_000, 100);
        ac.abort();
        await waitFor("room again", async () => (await ready()) === 200, 30_000, 100);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
});

test("SIGTERM drains: no new connections, open calls finish within --drain-timeout, exit 0", { skip, timeout: 120_000 }, async () => {
        const callBody = (id, code) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call",
                                                         params: { name: "run_code", arguments: { language: "sh", code } } });
        for (const [code, bound, answered] of [["echo started; sleep 2; echo done", "30", true],
                                               ["sleep 60", "1", false]]) {
                const s = await spawnHttpServer({ args: ["--drain-timeout", bound] });
                const sid = await session(s.url);
                const inst = instanceOf(s.stateDir, s.proc.pid);
                const pending = fetch(s.url, { method: "POST", headers: { ...JSON_HEADERS, "mcp-session-id": sid },
                                               body: callBody(5, code) })
                        .then(async (r) => ({ status: r.status, text: await r.text() }), (e) => ({ error: e }));
                await waitFor("the run's container", () => containersOf(s.stateDir, inst).length === 1, 30_000);
                const exited = new Promise((r) => s.proc.once("exit", (c, sig) => r({ code: c, signal: sig, at: Date.now() })));
                const t0 = Date.now();
                s.proc.kill("SIGTERM");
                await waitFor("draining", () => /draining: 1 HTTP requests open/.test(s.log()), 10_000);
                // A new connection is refused; a request on a kept-alive one gets 503.
                const u = new URL(s.url);
                const refused = await new Promise((resolve) => {
                        const c = net.connect(Number(u.port), u.hostname);
                        c.on("connect", () => { c.destroy(); resolve(false); });
                        c.on("error", (e) => resolve(e.code === "ECONNREFUSED"));
                });
                assert.ok(refused, "no new connection while draining");
                const late = await fetch(s.url, { method: "POST", headers: JSON_HEADERS, body: JSON.stringify(INIT) })
                        .then((r) => r.status, () => "refused");
                assert.ok(late === 503 || late === "refused", `a request while draining: ${late}`);
                const res = await pending;
                const end = await exited;
                assert.deepEqual([end.code, end.signal], [0, null], s.log());
                if (answered) {
                        assert.equal(res.status, 200);
                        assert.equal(JSON.parse(res.text).result.structuredContent.stdout, "started\ndone\n");
                } else {
                        assert.ok(res.error || res.status !== 200 || !JSON.parse(res.text).result, "no result past the bound");
                        assert.ok(end.at - t0 < 15_000, `stopped ${end.at - t0} ms after SIGTERM`);
                        assert.match(s.log(), /still open after --drain-timeout/);
                }
        }
});

test("--tls-cert/--tls-key: HTTPS on the same endpoint; plain HTTP to it fails; bad files refused", { skip, timeout: 60_000 }, async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-tls-"));
        const key = path.join(dir, "key.pem"), cert = path.join(dir, "cert.pem");
        const gen = runSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                        "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                                        "-addext", "subjectAltName=IP:127.0.0.1"]);
        assert.equal(gen.status, 0, `openssl (contrib/install-deps.sh test installs it): ${gen.stderr}`);
        const s = await spawnHttpServer({ args: ["--tls-cert", cert, "--tls-key", key] });
        assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
        const u = new URL(s.url);
        const res = await new Promise((resolve, reject) => {
                const req = https.request({ host: u.hostname, port: u.port, path: "/mcp", method: "POST", headers: JSON_HEADERS,
                                            ca: fs.readFileSync(cert) }, (r) => {
                        const tls = r.socket.getProtocol();
                        let b = "";
                        r.on("data", (d) => { b += d; });
                        r.on("end", () => resolve({ status: r.statusCode, sid: r.headers["mcp-session-id"], body: b,
                                                    tls }));
                });
                req.on("error", reject);
                req.end(JSON.stringify(INIT));
        });
        assert.equal(res.status, 200, res.body);
        assert.ok(res.sid);
        assert.match(res.tls ?? "", /^TLSv1\.[23]$/);
        const plain = await fetch(`http://${u.host}/mcp`, { method: "POST", headers: JSON_HEADERS, body: JSON.stringify(INIT),
                                                          signal: AbortSignal.timeout(20_000) })
                .then((r) => r.status, () => "failed");
        assert.notEqual(plain, 200, "plain HTTP is not served on the TLS port");
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });

        const stateDir = tmpStateDir();
        const run = (args) => runSync(MSP_MCP, ["--state-dir", stateDir, "--runtime", MSP, "--listen", "127.0.0.1:0", ...args]);
        const only = run(["--tls-cert", cert]);
        assert.equal(only.status, 1);
        assert.match(only.stderr, /--tls-cert and --tls-key go together: --tls-key is missing/);
        const notPem = run(["--tls-cert", cert, "--tls-key", "/etc/hostname"]);
        assert.equal(notPem.status, 1);
        assert.match(notPem.stderr, /--tls-key \/etc\/hostname: not PEM/);
        fs.rmSync(stateDir, { recursive: true, force: true });
        fs.rmSync(dir, { recursive: true, force: true });
});
