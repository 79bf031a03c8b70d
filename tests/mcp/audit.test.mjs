// The audit log (--audit-log PATH): run_start/run_end lines for an ok run, an exit status 3
// and a timeout with the caller, the code's sha256 and size and never the output or the code
// (unless --audit-code); session lines (closed, expired); a rename and SIGHUP start a new file; a path that
// cannot be opened stops the start naming it; over HTTP, access lines with their statuses
// and auth failures without any token text. The egress proxy's lines: egress.test.mjs.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { startServer, spawnHttpServer, stopProcess, skipReason, finishAll, call, runCode,
         assertOk, waitFor, tmpStateDir, serverIds, asUser, runSync, MSP_MCP, MSP, TRANSPORT,
         AS_USER, LATEST } from "./lib.mjs";

const skip = skipReason();
after(finishAll);

// A directory the server's user may write, removed at exit; the audit file's path in it.
function auditFile(name = "audit.jsonl") {
        const dir = tmpStateDir();
        process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
        return path.join(dir, name);
}

// Every line of the file, parsed (a line that is not JSON fails the test).
function readAudit(file) {
        const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
        assert.ok(text === "" || text.endsWith("\n"), "every line ends with a newline");
        return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

const sha256 = (s) => crypto.createHash("sha256").update(s).digest("hex");
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test("run lines: ok, exit 3 and a timeout, with the caller and the code's hash, without output or code", { skip, timeout: 120_000 }, async () => {
        const file = auditFile();
        const srv = await startServer({ args: ["--audit-log", file] });
        // The output is made from pieces, so that neither the code nor the output is
        // the other's substring.
        const codes = { ok: "printf 'out%s\\n' put-ok-zq", exit3: "printf 'out%s\\n' put-three-zq; exit 3",
                        timeout: "printf 'out%s\\n' put-slow-zq; sleep 30" };
        assertOk(await runCode(srv, "sh", codes.ok), srv);
        // A failed run is a tool error (isError) with its structured result.
        assert.equal((await runCode(srv, "sh", codes.exit3)).structuredContent.exit_code, 3);
        assert.equal((await runCode(srv, "sh", codes.timeout, { timeout_ms: 500 })).structuredContent.timed_out, true);
        const sess = assertOk(await call(srv, "session_create", {}), srv);
        assertOk(await call(srv, "session_close", { session_id: sess.session_id }), srv);
        assert.equal((await srv.close()).code, 0);

        const lines = readAudit(file);
        const raw = fs.readFileSync(file, "utf8");
        for (const s of ["output-", "put-ok-zq", "put-three-zq", "put-slow-zq", "printf"])
                assert.ok(!raw.includes(s), `the audit log holds no output or code (${s})`);
        const http = TRANSPORT === "http";
        for (const l of lines) {
                assert.match(l.time, TIME);
                if (l.event === "http") continue;
                assert.equal(l.transport, TRANSPORT);
                // Without --auth-tokens an HTTP caller has no tenant.
                assert.equal(l.tenant, http ? null : "stdio");
                if (http) assert.match(l.mcp_session, /^[0-9a-f]{32}$/);
                else assert.equal(l.mcp_session, null);
        }
        const starts = lines.filter((l) => l.event === "run_start");
        const ends = lines.filter((l) => l.event === "run_end");
        assert.equal(starts.length, 3);
        assert.equal(ends.length, 3);
        const want = [["ok", codes.ok, 0], ["error", codes.exit3, 3], ["timeout", codes.timeout, undefined]];
        want.forEach(([outcome, code, exit], i) => {
                const s = starts[i], e = ends[i];
                assert.match(s.run_id, /^r-[0-9a-f]{16}$/);
                assert.equal(e.run_id, s.run_id);
                for (const l of [s, e]) {
                        assert.equal(l.tool, "run_code");
                        assert.equal(l.language, "sh");
                        assert.equal(l.code_sha256, sha256(code));
                        assert.equal(l.code_bytes, Buffer.byteLength(code));
                        assert.equal(l.session_id, null);
                        assert.equal(l.code, undefined);
                }
                assert.equal(s.network, "none");
                assert.equal(e.outcome, outcome);
                assert.equal(e.exit_code, exit);
                assert.ok(Number.isInteger(e.duration_ms) && e.duration_ms >= 0);
                assert.ok(lines.indexOf(s) < lines.indexOf(e));
        });
        // CPU time and peak memory come from the run's cgroup: always as root; a server run
        // by a user has them only with a cgroup of its own.
        for (const e of ends) {
                if (!AS_USER || e.memory_peak_bytes !== undefined) assert.ok(e.memory_peak_bytes > 0, JSON.stringify(e));
                if (!AS_USER || e.cpu_ms !== undefined) assert.ok(Number.isInteger(e.cpu_ms), JSON.stringify(e));
        }
        assert.equal(starts[2].timeout_ms, 500);
        assert.ok(ends[2].duration_ms >= 500, `timeout after ${ends[2].duration_ms} ms`);
        const created = lines.find((l) => l.event === "session_create");
        const closed = lines.find((l) => l.event === "session_close");
        assert.equal(created?.session_id, sess.session_id);
        assert.equal(created.network, "none");
        assert.equal(created.rootfs, "host");
        assert.equal(closed?.session_id, sess.session_id);
});

test("a session that expires is a session_close line with the reason, like a closed one", { skip, timeout: 60_000 }, async () => {
        const file = auditFile();
        const srv = await startServer({ args: ["--audit-log", file] });
        const sess = assertOk(await call(srv, "session_create", { ttl_s: 1 }), srv);
        await waitFor("the expired session's line", () => readAudit(file).some((l) => l.event === "session_close"), 15_000);
        assert.deepEqual((await call(srv, "session_list", {})).structuredContent.sessions, []);
        assert.equal((await srv.close()).code, 0);
        const closed = readAudit(file).filter((l) => l.event === "session_close");
        assert.equal(closed.length, 1);
        assert.equal(closed[0].session_id, sess.session_id);
        assert.equal(closed[0].reason, "expired: its ttl_s of 1 s passed");
        assert.match(closed[0].time, TIME);
        // Nobody asked: the transport and the tenant that owned it, no MCP session.
        assert.equal(closed[0].transport, TRANSPORT);
        assert.equal(closed[0].tenant, TRANSPORT === "http" ? null : "stdio");
        assert.equal(closed[0].mcp_session, null);
});

test("--audit-code: run_start carries the code; a rename and SIGHUP start a new file", { skip, timeout: 120_000 }, async () => {
        const file = auditFile();
        const srv = await startServer({ args: ["--audit-log", file, "--audit-code"] });
        const code = "echo \"quote\\\" and\nnewline\"";
        assertOk(await runCode(srv, "sh", code), srv);
        const before = readAudit(file).filter((l) => l.event === "run_start");
        assert.equal(before.length, 1);
        assert.equal(before[0].code, code);

        fs.renameSync(file, `${file}.1`);
        srv.proc.kill("SIGHUP");
        // The server stays up (SIGHUP without --audit-log would stop a stdio server) and
        // opens the path again: the next run is in a new file.
        await waitFor("the reopened audit file", () => fs.existsSync(file));
        assertOk(await runCode(srv, "sh", "true"), srv);
        assert.equal((await srv.close()).code, 0);
        const rotated = readAudit(`${file}.1`).filter((l) => l.event === "run_end");
        const fresh = readAudit(file).filter((l) => l.event === "run_end");
        assert.equal(rotated.length, 1);
        assert.equal(fresh.length, 1);
        assert.equal(fresh[0].code_sha256, sha256("true"));
        if (AS_USER) assert.equal(fs.statSync(file).uid, serverIds().uid);
        assert.equal(fs.statSync(file).mode & 0o777, 0o640);
});

test("an audit log that cannot be opened stops the start, naming the path", { skip, timeout: 60_000 }, () => {
        const missing = path.join(path.dirname(auditFile()), "no-such-dir", "audit.jsonl");
        const argv = asUser([MSP_MCP, "--state-dir", tmpStateDir(), "--runtime", MSP, "--audit-log", missing]);
        const r = runSync(argv[0], argv.slice(1));
        assert.equal(r.status, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`--audit-log ${missing.replace(/[.]/g, "\\.")}: No such file or directory`));
        // A config file key works the same way.
        const cfg = path.join(path.dirname(missing), "..", "config.json");
        fs.writeFileSync(cfg, JSON.stringify({ "audit-log": missing }));
        fs.chmodSync(cfg, 0o644);
        const argv2 = asUser([MSP_MCP, "--state-dir", tmpStateDir(), "--runtime", MSP, "--config", cfg]);
        const c = runSync(argv2[0], argv2.slice(1));
        assert.equal(c.status, 1, c.stderr);
        assert.match(c.stderr, /--audit-log .*no-such-dir\/audit\.jsonl: No such file or directory/);
});

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize",
               params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: "audit-test", version: "0" } } };

test("HTTP: access lines with status, tenant and remote address; auth failures; no token text", { skip: skip || (TRANSPORT !== "http" && "HTTP only: the MSP_MCP_TRANSPORT=http pass"), timeout: 60_000 }, async () => {
        const TOKEN = "tok-audit-secret-0123456789", WRONG = "tok-audit-wrong-9876543210";
        const file = auditFile();
        const tokens = path.join(path.dirname(file), "tokens");
        fs.writeFileSync(tokens, `${TOKEN} alice sessions=1\n`, { mode: 0o600 });
        fs.chownSync(tokens, serverIds().uid, serverIds().gid);
        const s = await spawnHttpServer({ args: ["--audit-log", file, "--auth-tokens", tokens] });
        const post = (body, headers = {}) => fetch(s.url, { method: "POST", headers: { ...JSON_HEADERS, ...headers },
                                                            body: JSON.stringify(body) });
        assert.equal((await fetch(s.url.replace(/\/mcp$/, "/healthz"))).status, 200);
        assert.equal((await post(INIT)).status, 401);
        assert.equal((await post(INIT, { authorization: `Bearer ${WRONG}` })).status, 401);
        const init = await post(INIT, { authorization: `Bearer ${TOKEN}` });
        assert.equal(init.status, 200);
        const body = await init.text();
        const sid = init.headers.get("mcp-session-id");
        const auth = { "mcp-session-id": sid, authorization: `Bearer ${TOKEN}` };
        assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, auth)).status, 202);
        const tool = async (id, name, args) => {
                const r = await post({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }, auth);
                assert.equal(r.status, 200);
                return (await r.json()).result;
        };
        // The tenant's quota of one live session refuses the second.
        const first = await tool(2, "session_create", {});
        assert.ok(!first.isError, JSON.stringify(first));
        const second = await tool(3, "session_create", {});
        assert.equal(second.isError, true);
        assert.ok(!(await tool(4, "session_close", { session_id: first.structuredContent.session_id })).isError);
        // One that expires: its line names the tenant that owned it.
        const brief = await tool(5, "session_create", { ttl_s: 1 });
        assert.ok(!brief.isError, JSON.stringify(brief));
        await waitFor("the expired session's line", () => readAudit(file).some((l) => l.event === "session_close" &&
                                                                                  l.session_id === brief.structuredContent.session_id), 15_000);
        const del = await fetch(s.url, { method: "DELETE", headers: { "mcp-session-id": sid, authorization: `Bearer ${TOKEN}` } });
        assert.equal(del.status, 204);
        // The access line is written when libmicrohttpd reports the request complete.
        await waitFor("the DELETE's access line", () => readAudit(file).some((l) => l.event === "http" && l.method === "DELETE"));
        assert.equal((await stopProcess(s.proc)).code, 0);

        const raw = fs.readFileSync(file, "utf8");
        assert.ok(!raw.includes("tok-audit"), "no token text in the audit log");
        const lines = readAudit(file);
        const access = lines.filter((l) => l.event === "http");
        const statuses = access.map((l) => `${l.method} ${l.path} ${l.status}`);
        assert.deepEqual(statuses, ["GET /healthz 200", "POST /mcp 401", "POST /mcp 401", "POST /mcp 200", "POST /mcp 202",
                                    "POST /mcp 200", "POST /mcp 200", "POST /mcp 200", "POST /mcp 200", "DELETE /mcp 204"]);
        for (const l of access) {
                assert.match(l.time, TIME);
                assert.equal(l.transport, "http");
                assert.equal(l.remote, "127.0.0.1");
                assert.equal(l.completed, true);
                assert.ok(Number.isInteger(l.duration_ms));
        }
        assert.equal(access[1].tenant, null);
        assert.equal(access[3].tenant, "alice");
        assert.equal(access[3].mcp_session, sid);
        assert.equal(access[3].bytes_out, Buffer.byteLength(body));
        assert.equal(access[3].bytes_in, Buffer.byteLength(JSON.stringify(INIT)));
        assert.equal(access[9].mcp_session, sid);
        const refused = lines.filter((l) => l.event === "quota_refused");
        assert.equal(refused.length, 1);
        assert.equal(refused[0].tool, "session_create");
        assert.equal(refused[0].tenant, "alice");
        assert.equal(refused[0].mcp_session, sid);
        assert.match(refused[0].reason, /tenant alice has its quota of 1 live session/);
        const sessions = lines.filter((l) => l.event.startsWith("session_"));
        assert.deepEqual(sessions.map((l) => l.event), ["session_create", "session_close", "session_create", "session_close"]);
        assert.equal(sessions[1].reason, "closed by the client");
        assert.equal(sessions[1].mcp_session, sid);
        assert.deepEqual([sessions[3].tenant, sessions[3].mcp_session, sessions[3].reason],
                         ["alice", null, "expired: its ttl_s of 1 s passed"]);
        const fails = lines.filter((l) => l.event === "auth_failure");
        assert.deepEqual(fails.map((l) => l.reason), ["no bearer token", "unknown token"]);
        assert.equal(fails[0].path, "/mcp");
        assert.equal(fails[0].remote, "127.0.0.1");
});

test("--check: the egress line (patterns, pins, Landlock's TCP rules) and the audit log's", { skip, timeout: 120_000 }, () => {
        const file = auditFile();
        const check = (args) => {
                const argv = asUser([MSP_MCP, "--check", "--state-dir", tmpStateDir(), "--runtime", MSP, ...args]);
                return runSync(argv[0], argv.slice(1)).stdout;
        };
        const on = check(["--network-allow", "pypi.test", "--network-allow", "*.files.test:8443",
                          "--resolve", "pypi.test=192.0.2.7", "--audit-log", file]);
        assert.match(on, /^(ok|warning)\s+egress\s+proxy in msp-mcp; 2 patterns \(--network-allow pypi\.test \*\.files\.test:8443\); 1 resolver pin \(--resolve pypi\.test=192\.0\.2\.7\)$/m);
        // msp applies Landlock; the ABI decides whether TCP connect and bind are confined.
        assert.match(on, /^ok\s+egress-tcp\s+Landlock ABI \d+: TCP connect and bind confined to the proxy's port$|^warning\s+egress-tcp\s+Landlock ABI below 4/m);
        assert.match(on, new RegExp(`^ok\\s+audit-log\\s+${file.replace(/[.]/g, "\\.")}: will be created$`, "m"));
        assert.ok(!fs.existsSync(file), "--check creates no audit file");
        const off = check(["--audit-log", path.join(path.dirname(file), "none", "a.jsonl")]);
        assert.match(off, /^off\s+egress\s+no --network-allow: network allowlists are refused/m);
        assert.match(off, /^warning\s+audit-log\s+.*\/none\/a\.jsonl: cannot be opened: No such file or directory$/m);
});
