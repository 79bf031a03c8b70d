// notifications/resources/list_changed: announced in the capabilities, sent when a run's log
// becomes a resource and when a sandbox session is created or its files change, one per
// burst, and only to the clients that see the change (HTTP: the MCP session whose run it
// was; a sandbox session's tenant).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { startServer, spawnHttpServer, stopProcess, skipReason, finishAll, call, runCode, assertOk,
         waitFor, TRANSPORT } from "./lib.mjs";

const skip = skipReason();
let srv;

// Counts client's list_changed notifications; at(n) waits (bounded) until n have come.
function counter(client) {
        const c = { n: 0 };
        client.setNotificationHandler(ResourceListChangedNotificationSchema, () => { c.n++; });
        c.at = (n, what) => waitFor(`${what}: list_changed notification ${n} (have ${c.n})`, () => c.n >= n, 20_000);
        return c;
}

before(async () => {
        if (skip) return;
        srv = await startServer();
});
after(finishAll);

test("capabilities: resources.listChanged is true; tools and prompts lists never change", { skip }, () => {
        const caps = srv.client.getServerCapabilities();
        assert.equal(caps.resources.listChanged, true);
        assert.equal(caps.tools.listChanged, false);
        assert.equal(caps.prompts, undefined);
});

test("session_create and a session run that writes a file announce list_changed; the list then has the new resource", { skip, timeout: 120_000 }, async () => {
        const seen = counter(srv.client);
        const s = assertOk(await call(srv, "session_create", {}), srv, "session_create");
        await seen.at(1, "session_create");
        let { resources } = await srv.client.listResources();
        assert.ok(resources.some((r) => r.uri === `sandbox://sessions/${s.session_id}/files/`),
                  JSON.stringify(resources));

        const run = assertOk(await runCode(srv, "sh", "echo made > new.txt", { session_id: s.session_id }), srv);
        await seen.at(2, "a session run");
        ({ resources } = await srv.client.listResources());
        assert.ok(resources.some((r) => r.uri === `sandbox://runs/${run.run_id}/stdout`), JSON.stringify(resources));
        const dir = await srv.client.readResource({ uri: `sandbox://sessions/${s.session_id}/files/` });
        assert.ok(JSON.parse(dir.contents[0].text).entries.some((e) => e.name === "new.txt"), dir.contents[0].text);

        assertOk(await call(srv, "write_file", { session_id: s.session_id, path: "w.txt", content: "x" }), srv);
        await seen.at(3, "write_file");
        assertOk(await call(srv, "session_close", { session_id: s.session_id }), srv);
        await seen.at(4, "session_close");
        ({ resources } = await srv.client.listResources());
        assert.ok(!resources.some((r) => r.uri.startsWith(`sandbox://sessions/${s.session_id}/`)), JSON.stringify(resources));
});

test("a session that expires announces list_changed; the list then lacks it", { skip, timeout: 60_000 }, async () => {
        const seen = counter(srv.client);
        const s = assertOk(await call(srv, "session_create", { ttl_s: 1 }), srv, "session_create");
        await seen.at(1, "session_create");
        await seen.at(2, "the session's expiry");
        const { resources } = await srv.client.listResources();
        assert.ok(!resources.some((r) => r.uri.startsWith(`sandbox://sessions/${s.session_id}/`)), JSON.stringify(resources));
});

test("a burst (one run writing many files in a session, its log a new resource) sends one notification", { skip, timeout: 120_000 }, async () => {
        const seen = counter(srv.client);
        const s = assertOk(await call(srv, "session_create", {}), srv, "session_create");
        await seen.at(1, "session_create");
        assertOk(await runCode(srv, "sh", "for i in $(seq 1 50); do echo $i > f$i.txt; done", { session_id: s.session_id }), srv);
        await seen.at(2, "the run");
        await srv.client.ping();
        // A marker change: its notice comes after any the burst would have added (one stream,
        // in order), so the count is exact once it is in.
        assertOk(await call(srv, "session_close", { session_id: s.session_id }), srv);
        await seen.at(3, "session_close (the marker)");
        assert.equal(seen.n, 3, "the burst sent more than one notification");
});

const TOKEN_A = "tok-alice-lc-0123456789abcdef", TOKEN_B = "tok-bob-lc-0123456789abcdef";

test("HTTP: only the clients that see a change hear of it (run logs: that MCP session; sandbox sessions: that tenant)",
     { skip: skip || (TRANSPORT !== "http" && "HTTP only: a stdio server has one client"), timeout: 120_000 }, async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-lc-"));
        const tokens = path.join(dir, "tokens");
        fs.writeFileSync(tokens, `${TOKEN_A} alice\n${TOKEN_B} bob\n`, { mode: 0o600 });
        const s = await spawnHttpServer({ args: ["--auth-tokens", tokens] });
        const clients = [];
        try {
                const connect = async (token) => {
                        const transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
                        const client = new Client({ name: "lc", version: "0" }, { capabilities: {} });
                        await client.connect(transport);
                        clients.push(client);
                        return { client, seen: counter(client), log: () => s.log() };
                };
                const alice = await connect(TOKEN_A), alice2 = await connect(TOKEN_A), bob = await connect(TOKEN_B);

                // A sandbox session: alice's MCP sessions list it, bob's does not.
                const sid = assertOk(await call(alice, "session_create", {}), alice, "session_create").session_id;
                await alice.seen.at(1, "alice, session_create");
                await alice2.seen.at(1, "alice2, alice's session_create");
                // A run's log: only the MCP session that ran it lists it.
                assertOk(await runCode(alice, "sh", "true"), alice);
                await alice.seen.at(2, "alice, her run");
                // Markers: each client's own change comes after anything wrongly sent before it.
                assertOk(await runCode(alice2, "sh", "true"), alice2);
                await alice2.seen.at(2, "alice2, her own run");
                assertOk(await runCode(bob, "sh", "true"), bob);
                await bob.seen.at(1, "bob, his own run");
                assert.equal(alice2.seen.n, 2, "alice2 heard of alice's run log");
                assert.equal(bob.seen.n, 1, "bob heard of alice's session or run");
                assert.equal(alice.seen.n, 2, "alice heard of alice2's or bob's run");
                const { resources } = await bob.client.listResources();
                assert.ok(!resources.some((r) => r.uri.includes(sid)), JSON.stringify(resources));
        } finally {
                for (const c of clients) await c.close().catch(() => {});
                await stopProcess(s.proc);
                fs.rmSync(dir, { recursive: true, force: true });
        }
});
