// tools/list: the schemas every picky client accepts; unknown tools; bad arguments.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import fs from "node:fs";
import { startServer, skipReason, finishAll, call, text, runCode, assertOk, waitFor } from "./lib.mjs";

const skip = skipReason();
let srv, tools;

before(async () => {
        if (skip) return;
        srv = await startServer();
        tools = (await srv.client.listTools()).tools;
});
after(finishAll);

const EXPECTED = ["run_code", "session_create", "session_list", "session_close",
                  "write_file", "read_file", "list_files", "session_pause", "session_resume",
                  "process_list", "process_output", "process_kill", "port_expose"];

// Walk a JSON schema: every array has items, every object closes its properties.
function checkSchema(schema, where, problems) {
        if (!schema || typeof schema !== "object") return;
        const types = [].concat(schema.type ?? []);
        if (types.includes("array") && !schema.items) problems.push(`${where}: array without items`);
        if (types.includes("object") && schema.properties && schema.additionalProperties !== false &&
            !where.includes("outputSchema"))
                problems.push(`${where}: object without additionalProperties:false`);
        for (const [k, v] of Object.entries(schema.properties ?? {})) checkSchema(v, `${where}.${k}`, problems);
        if (schema.items) checkSchema(schema.items, `${where}[]`, problems);
        if (schema.additionalProperties && typeof schema.additionalProperties === "object")
                checkSchema(schema.additionalProperties, `${where}{}`, problems);
        for (const k of ["anyOf", "oneOf", "allOf"])
                for (const [i, s] of (schema[k] ?? []).entries()) checkSchema(s, `${where}/${k}${i}`, problems);
}

test("tools/list names every tool once, with valid names", { skip }, () => {
        const names = tools.map((t) => t.name);
        assert.deepEqual([...names].sort(), [...EXPECTED].sort());
        for (const n of names) assert.match(n, /^[A-Za-z0-9_.-]{1,128}$/);
});

test("every schema: object input, additionalProperties:false, items on every array, outputSchema, annotations", { skip }, () => {
        const problems = [];
        for (const t of tools) {
                assert.equal(t.inputSchema.type, "object", t.name);
                assert.equal(t.inputSchema.additionalProperties, false, `${t.name}: inputSchema.additionalProperties`);
                checkSchema(t.inputSchema, `${t.name}.inputSchema`, problems);
                assert.ok(t.outputSchema, `${t.name}: outputSchema`);
                assert.equal(t.outputSchema.type, "object", `${t.name}: outputSchema.type`);
                checkSchema(t.outputSchema, `${t.name}.outputSchema`, problems);
                assert.equal(typeof t.description, "string", `${t.name}: description`);
                assert.ok(t.description.length > 10, `${t.name}: description`);
                assert.ok(t.annotations, `${t.name}: annotations`);
                for (const h of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"])
                        if (h in t.annotations) assert.equal(typeof t.annotations[h], "boolean", `${t.name}.${h}`);
                for (const r of t.inputSchema.required ?? [])
                        assert.ok(r in t.inputSchema.properties, `${t.name}: required ${r} is a property`);
        }
        assert.deepEqual(problems, []);
        const ro = Object.fromEntries(tools.map((t) => [t.name, t.annotations.readOnlyHint ?? false]));
        assert.equal(ro.session_list, true, "session_list is read-only");
        assert.equal(ro.read_file, true, "read_file is read-only");
        assert.equal(ro.list_files, true, "list_files is read-only");
        assert.equal(ro.run_code, false);
});

test("run_code: required language and code, the language enum has sh and python, files/args/env typed", { skip }, () => {
        const rc = tools.find((t) => t.name === "run_code");
        const p = rc.inputSchema.properties;
        assert.deepEqual([...rc.inputSchema.required].sort(), ["code", "language"]);
        const langs = p.language.enum;
        assert.ok(Array.isArray(langs), "language has an enum");
        assert.ok(langs.includes("sh"), `sh in ${langs}`);
        assert.ok(langs.includes("python"), `python in ${langs}`);
        assert.equal(new Set(langs).size, langs.length, "no duplicates");
        assert.equal(p.files.type, "array");
        assert.equal(p.files.items.type, "object");
        assert.deepEqual([...p.files.items.required].sort(), ["content", "path"]);
        assert.equal(p.args.items.type, "string");
        assert.equal(p.env.type, "object");
        assert.equal(p.timeout_ms.type, "integer");
        assert.ok(p.timeout_ms.maximum >= 1000, "timeout_ms has a maximum");
        for (const k of ["stdin", "session_id", "memory_mb", "pids", "cpus"]) assert.ok(p[k], `run_code.${k}`);
        for (const k of ["exit_code", "stdout", "stderr", "timed_out", "oom_killed", "truncated", "duration_ms"])
                assert.ok(rc.outputSchema.properties[k], `outputSchema.${k}`);
});

test("an unknown tool is a protocol error (-32602), not a tool result", { skip }, async () => {
        await assert.rejects(call(srv, "no_such_tool", {}), (e) => {
                assert.ok(e instanceof McpError, String(e));
                assert.equal(e.code, -32602);
                assert.match(e.message, /no_such_tool/);
                return true;
        });
        // The server is fine afterwards.
        assert.deepEqual(await srv.client.ping(), {});
});

// Each bad argument set: the field the error text must name.
const BAD = [
        ["missing language", { code: "echo" }, /language/],
        ["missing code", { language: "sh" }, /code/],
        ["language not offered", { language: "cobol-85", code: "x" }, /language/],
        ["language of the wrong type", { language: 7, code: "x" }, /language/],
        ["unknown property", { language: "sh", code: "true", frobnicate: 1 }, /frobnicate/],
        ["timeout_ms below the minimum", { language: "sh", code: "true", timeout_ms: 1 }, /timeout_ms/],
        ["timeout_ms above the maximum", { language: "sh", code: "true", timeout_ms: 1e12 }, /timeout_ms/],
        ["timeout_ms not an integer", { language: "sh", code: "true", timeout_ms: "soon" }, /timeout_ms/],
        ["memory_mb above the maximum", { language: "sh", code: "true", memory_mb: 1 << 30 }, /memory_mb/],
        ["pids above the maximum", { language: "sh", code: "true", pids: 1 << 30 }, /pids/],
        ["args not strings", { language: "sh", code: "true", args: [1, 2] }, /args/],
        ["env value not a string", { language: "sh", code: "true", env: { A: 1 } }, /env/],
        ["files without content", { language: "sh", code: "true", files: [{ path: "a" }] }, /content|files/],
        ["files path escaping", { language: "sh", code: "true", files: [{ path: "../x", content: "" }] }, /files|path|\.\./],
        ["unknown session", { language: "sh", code: "true", session_id: "s-does-not-exist" }, /session/],
        // Every input has a size limit.
        ["code over 1 MiB", { language: "sh", code: "#".repeat((1 << 20) + 1) }, /code/],
        ["stdin over 1 MiB", { language: "sh", code: "true", stdin: "x".repeat((1 << 20) + 1) }, /stdin/],
        ["more than 64 files", { language: "sh", code: "true", files: Array.from({ length: 65 }, (_, i) => ({ path: `f${i}`, content: "" })) }, /files/],
        ["more than 256 args", { language: "sh", code: "true", args: Array.from({ length: 257 }, () => "a") }, /args/],
        ["more than 128 env", { language: "sh", code: "true", env: Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`V${i}`, "x"])) }, /env/],
];

for (const [what, args, field] of BAD) {
        test(`bad arguments → isError naming the field: ${what}`, { skip }, async () => {
                const res = await call(srv, "run_code", args);
                assert.equal(res.isError, true, `${what}: ${JSON.stringify(res).slice(0, 500)}`);
                assert.match(text(res), field);
        });
}

test("bad arguments to the other tools → isError naming the field", { skip }, async () => {
        const cases = [
                ["read_file", {}, /session_id/],
                ["read_file", { session_id: "s-nope", path: "a" }, /session/],
                ["write_file", { session_id: "s-nope", path: "a" }, /content/],
                ["session_close", {}, /session_id/],
                ["session_create", { ttl_s: -1 }, /ttl_s/],
                ["session_create", { network: "yes" }, /network/],
                ["session_list", { extra: true }, /extra/],
        ];
        for (const [tool, args, field] of cases) {
                const res = await call(srv, tool, args);
                assert.equal(res.isError, true, `${tool} ${JSON.stringify(args)}: ${JSON.stringify(res).slice(0, 400)}`);
                assert.match(text(res), field, `${tool} ${JSON.stringify(args)}`);
        }
});

test("arguments of the wrong JSON type as a whole are refused, the server stays up", { skip }, async () => {
        // The SDK only sends objects; a raw null arguments goes through the low-level request.
        const { CallToolResultSchema } = await import("@modelcontextprotocol/sdk/types.js");
        let res;
        try {
                res = await srv.client.request({ method: "tools/call", params: { name: "run_code", arguments: null } },
                                               CallToolResultSchema);
                assert.equal(res.isError, true);
        } catch (e) {
                assert.ok(e instanceof McpError, String(e));
                assert.equal(e.code, -32602);
        }
        assert.deepEqual(await srv.client.ping(), {});
});

test("the descriptions and the instructions say what persists: a session's running sandbox, nothing of a fresh call", { skip }, () => {
        const desc = Object.fromEntries(tools.map((t) => [t.name, t.description]));
        for (const [where, s] of [["run_code", desc.run_code], ["instructions", srv.client.getInstructions()]]) {
                assert.match(s, /without session_id .* keeps nothing/i, `${where}: ${s}`);
                assert.match(s, /files \(\/workspace, (also )?HOME,? (and )?\/tmp\)/, `${where}: ${s}`);
                assert.match(s, /background/, `${where}: ${s}`);
        }
        assert.match(desc.run_code, /timeout_ms ends this call's own processes only/, desc.run_code);
        assert.match(desc.session_create, /one sandbox that keeps running/, desc.session_create);
        assert.match(desc.session_create, /closing it ends everything it runs/, desc.session_create);
        const sid = tools.find((t) => t.name === "run_code").inputSchema.properties.session_id.description;
        assert.match(sid, /carry over between its calls/, sid);
});

// Host processes whose command line is exactly `sleep SECONDS` (the marker below).
function sleepers(seconds) {
        const want = `sleep\0${seconds}\0`;
        return fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
                try { return fs.readFileSync(`/proc/${p}/cmdline`, "utf8") === want; } catch { return false; }
        });
}

test("what the descriptions say holds: a session is one running sandbox until closed, a fresh call keeps nothing", { skip, timeout: 120_000 }, async () => {
        // A number of seconds no other test sleeps: the marker of this test's background process.
        const marker = String(900_000 + Math.floor(Math.random() * 90_000));
        const created = assertOk(await call(srv, "session_create", {}), srv, "session_create");
        const session_id = created.session_id;
        try {
                // The first call leaves a file in /workspace and /tmp, an exported variable,
                // and a background process that ignores SIGHUP and SIGTERM.
                const first = assertOk(await runCode(srv, "sh", `
                        echo kept > /workspace/kept; echo kept > /tmp/kept; export GONE=1
                        (trap '' HUP TERM; exec sleep ${marker}) </dev/null >/dev/null 2>&1 &
                        for i in $(seq 100); do grep -q ${marker} /proc/$!/cmdline 2>/dev/null && break; sleep 0.05; done
                        grep -q ${marker} /proc/$!/cmdline && echo started`, { session_id }), srv, "first call");
                assert.equal(first.stdout.trim(), "started", first.stderr);
                // Still running, in the same sandbox, for the next call; a shell's exported
                // variables carry over too (its cwd and, in bash, its functions).
                const second = assertOk(await runCode(srv, "sh", `
                        cat /workspace/kept; cat /tmp/kept 2>/dev/null || echo no-tmp
                        echo "GONE=\${GONE:-unset}"
                        for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done | grep -c "^sleep ${marker} $" || true`,
                        { session_id }), srv, "second call");
                assert.deepEqual(second.stdout.trim().split("\n"), ["kept", "kept", "GONE=1", "1"], second.stderr);
                assert.equal(sleepers(marker).length, 1, "the background process runs on the host's view too");
        } finally {
                assertOk(await call(srv, "session_close", { session_id }), srv, "session_close");
        }
        // Gone with the session, although it ignores SIGTERM.
        assert.equal(sleepers(marker).length, 0, `no "sleep ${marker}" left once session_close answered`);
        // A fresh call keeps nothing, not even its /workspace.
        assertOk(await runCode(srv, "sh", "echo x > /workspace/fresh"), srv, "fresh call");
        const next = assertOk(await runCode(srv, "sh", "test -e /workspace/fresh && echo kept || echo gone"), srv, "next fresh call");
        assert.equal(next.stdout.trim(), "gone", next.stdout);
});

test("the server exits 0 on EOF and leaves nothing behind", { skip, timeout: 60_000 }, async () => {
        const { code, signal } = await srv.close();
        assert.equal(signal, null);
        assert.equal(code, 0);
        await finishAll();
});
