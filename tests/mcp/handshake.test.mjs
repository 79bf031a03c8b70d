// Handshake: the SDK's initialize, version negotiation and fallback over raw stdio, fields
// gated by the negotiated version, JSON-RPC errors, ping, EOF.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { LATEST, VERSIONS, TRANSPORT, startServer, rawServer, skipReason, finishAll } from "./lib.mjs";

const skip = skipReason();
after(finishAll);

test("the SDK client connects: serverInfo, capabilities, instructions, ping", { skip, timeout: 60_000 }, async () => {
        const srv = await startServer();
        const c = srv.client;
        const info = c.getServerVersion();
        assert.equal(info.name, "msp-mcp");
        assert.match(info.version, /^\d+\.\d+/);
        const caps = c.getServerCapabilities();
        assert.ok(caps.tools, "tools capability");
        assert.equal(caps.tools.listChanged ?? false, false);
        assert.ok(caps.resources, "resources capability");
        assert.ok(caps.logging, "logging capability");
        assert.equal(typeof c.getInstructions(), "string");
        assert.deepEqual(await c.ping(), {});
        await c.setLoggingLevel("debug");
        const { code, signal } = await srv.close();
        assert.equal(signal, null);
        assert.equal(code, 0, "msp-mcp exits 0 when the client closes stdin");
});

test("an unknown version (2099-01-01) gets the latest, 2025-11-25", { skip, timeout: 60_000 }, async () => {
        const r = rawServer();
        const res = await r.initialize("2099-01-01");
        assert.equal(res.jsonrpc, "2.0");
        assert.equal(res.result.protocolVersion, LATEST);
        assert.equal(res.result.serverInfo.name, "msp-mcp");
        assert.deepEqual((await r.request("ping")).result, {});
        assert.equal((await r.close()).code, 0);
});

for (const v of VERSIONS) {
        test(`version ${v} is echoed; fields gated by it`, { skip, timeout: 90_000 }, async () => {
                const r = rawServer();
                const init = await r.initialize(v);
                assert.equal(init.result.protocolVersion, v);
                const list = await r.request("tools/list", {});
                const tools = list.result.tools;
                assert.ok(tools.length > 0);
                const modern = v >= "2025-06-18";
                for (const t of tools) {
                        assert.equal("outputSchema" in t, modern, `${t.name}: outputSchema under ${v}`);
                        assert.equal("title" in t, modern, `${t.name}: title under ${v}`);
                        assert.equal("annotations" in t, v !== "2024-11-05", `${t.name}: annotations under ${v}`);
                }
                const call = await r.request("tools/call", {
                        name: "run_code", arguments: { language: "sh", code: "echo gated" },
                });
                assert.ok(call.result, JSON.stringify(call).slice(0, 500));
                assert.equal(call.result.isError ?? false, false, JSON.stringify(call.result).slice(0, 1000));
                assert.equal("structuredContent" in call.result, modern, `structuredContent under ${v}`);
                assert.match(call.result.content.filter((c) => c.type === "text").map((c) => c.text).join(""), /gated/);
                for (const c of call.result.content)
                        if (!modern) assert.notEqual(c.type, "resource_link", `resource_link under ${v}`);
                assert.equal((await r.close()).code, 0);
        });
}

test("JSON-RPC errors: before initialize, parse error, batch, unknown method, notifications", { skip, timeout: 60_000 }, async () => {
        const r = rawServer();
        // Only ping is answered before initialize.
        assert.deepEqual((await r.request("ping", undefined, "p0")).result, {});
        const early = await r.request("tools/list", {}, 100);
        assert.equal(early.error?.code, -32600, JSON.stringify(early));

        await r.initialize();
        let n = r.lines.length;
        r.send("{not json");
        const parse = JSON.parse(await r.lineAfter(n));
        assert.equal(parse.error.code, -32700);
        assert.equal(parse.id, null);

        n = r.lines.length;
        r.send([{ jsonrpc: "2.0", id: 7, method: "ping" }, { jsonrpc: "2.0", id: 8, method: "ping" }]);
        const batch = JSON.parse(await r.lineAfter(n));
        assert.ok(!Array.isArray(batch), "a batch gets one error, not an array of answers");
        assert.equal(batch.error.code, -32600);

        const unknown = await r.request("no/such/method", {});
        assert.equal(unknown.error.code, -32601);

        // An unknown notification is ignored (no answer): the next answer is the ping's.
        n = r.lines.length;
        r.send({ jsonrpc: "2.0", method: "notifications/whatever", params: {} });
        const pong = await r.request("ping", undefined, "after-notification");
        assert.deepEqual(pong.result, {});
        assert.equal(JSON.parse(r.lines[n]).id, "after-notification");

        // A string id is echoed as a string.
        assert.equal((await r.request("ping", undefined, "abc")).id, "abc");

        // A line over --max-message-bytes (16 MiB) is refused and skipped; the server goes on.
        n = r.lines.length;
        r.send(JSON.stringify({ jsonrpc: "2.0", id: "big", method: "ping", params: { pad: "x".repeat(17 << 20) } }));
        const big = JSON.parse(await r.lineAfter(n));
        assert.equal(big.error.code, -32600, JSON.stringify(big).slice(0, 300));
        assert.deepEqual((await r.request("ping", undefined, "after-big")).result, {});

        // Every line written is exactly one JSON object.
        for (const l of r.lines) assert.equal(typeof JSON.parse(l), "object");
        assert.equal((await r.close()).code, 0);
});

// A tool call too large to parse fails at once with the request's own id (the SDK writes
// the id last, so the server finds it at the line's end), not at the client's timeout.
test("an oversized request fails at once through the SDK, not at its timeout", { skip, timeout: 60_000 }, async () => {
        const srv = await startServer({ args: ["--max-message-bytes", "65536"] });
        const started = Date.now();
        const err = await srv.client.callTool({ name: "run_code", arguments: { language: "sh", code: "#" + "x".repeat(200_000) } },
                                              undefined, { timeout: 20_000 }).then(() => null, (e) => e);
        assert.ok(err, "the call is refused");
        assert.notEqual(err.code, -32001, `timed out instead of an answer: ${err}`);
        if (TRANSPORT === "stdio") assert.equal(err.code, -32600, String(err));
        assert.match(String(err), /too large|413/, String(err));
        assert.ok(Date.now() - started < 15_000, `answered after ${Date.now() - started} ms`);
        assert.deepEqual(await srv.client.ping(), {});
        await srv.close();
});

test("SIGTERM: msp-mcp cleans up and exits 0", { skip, timeout: 60_000 }, async () => {
        const r = rawServer();
        await r.initialize();
        r.child.kill("SIGTERM");
        const { code, signal } = await r.exited;
        assert.equal(signal, null);
        assert.equal(code, 0);
});

test("nothing left behind: containers, cgroups, mounts, dirs, processes", { skip, timeout: 60_000 }, finishAll);
