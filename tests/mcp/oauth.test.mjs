// OAuth 2.1 resource-server mode of msp-mcp's HTTP transport (--oauth-issuer, --oauth-jwks,
// --resource): the RFC 9728 metadata, the 401 challenge, JWT access tokens signed here with
// node:crypto (RSA and EC keys made by the test, published in a JWKS file) and refused for
// every way they can be wrong, tenants from a claim, SIGHUP reloading the keys, bad
// configurations refused at start.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import { spawn } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { skipReason, finishAll, spawnHttpServer, stopProcess, waitFor, LATEST, text, runSync,
         tmpStateDir, MSP_MCP, MSP } from "./lib.mjs";

const skip = skipReason();
after(finishAll);

const ISSUER = "https://auth.example";
const RESOURCE = "https://sandbox.example/mcp";
const METADATA_URL = "https://sandbox.example/.well-known/oauth-protected-resource/mcp";
const JSON_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize",
               params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: "oauth-test", version: "0" } } };
const ping = { jsonrpc: "2.0", id: 2, method: "ping" };

async function post(url, body, headers = {}) {
        const res = await fetch(url, { method: "POST", headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) });
        return { status: res.status, headers: res.headers, text: await res.text() };
}

const bearer = (t) => ({ authorization: `Bearer ${t}` });

// Keys made for the test: kid, the private key, its public JWK.
function rsaKey(kid, bits = 2048) {
        const { privateKey, publicKey } = crypto.generateKeyPairSync("rsa", { modulusLength: bits });
        return { kid, alg: "RS256", privateKey, publicKey, jwk: { ...publicKey.export({ format: "jwk" }), kid, use: "sig", alg: "RS256" } };
}
function ecKey(kid, curve = "P-256") {
        const { privateKey, publicKey } = crypto.generateKeyPairSync("ec", { namedCurve: curve });
        const alg = { "P-256": "ES256", "P-384": "ES384", "P-521": "ES512" }[curve];
        return { kid, alg, privateKey, publicKey, jwk: { ...publicKey.export({ format: "jwk" }), kid } };
}

function jwksFile(keys) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-jwks-"));
        const file = path.join(dir, "jwks.json");
        const write = (ks) => fs.writeFileSync(file, typeof ks === "string" ? ks : JSON.stringify({ keys: ks.map((k) => k.jwk ?? k) }));
        write(keys);
        return { file, dir, write };
}

const b64 = (b) => Buffer.from(b).toString("base64url");
const now = () => Math.floor(Date.now() / 1000);

// A JWT signed with key (RS*: PKCS#1 v1.5; ES*: R||S as JWS wants, or DER with
// dsaEncoding "der" as some signers get it wrong).
function sign(key, claims, header = {}, dsaEncoding = "ieee-p1363") {
        const h = { alg: key.alg, typ: "JWT", kid: key.kid, ...header };
        const input = `${b64(JSON.stringify(h))}.${b64(JSON.stringify(claims))}`;
        const hash = `sha${h.alg.slice(2)}`;
        const sig = h.alg.startsWith("ES")
                ? crypto.sign(hash, Buffer.from(input), { key: key.privateKey, dsaEncoding })
                : crypto.sign(hash, Buffer.from(input), key.privateKey);
        return `${input}.${b64(sig)}`;
}

const claims = (extra = {}) => ({ iss: ISSUER, aud: RESOURCE, sub: "alice", exp: now() + 300, iat: now(), ...extra });
const oauthArgs = (jwks, extra = []) => ["--oauth-issuer", ISSUER, "--oauth-jwks", jwks, "--resource", RESOURCE, ...extra];

test("metadata (RFC 9728), the 401 challenge, RS256 and ES256/384/512 tokens, every bad token refused", { skip, timeout: 60_000 }, async () => {
        const rsa = rsaKey("r1"), ec = ecKey("e1"), other = rsaKey("r1");
        const ec384 = ecKey("e2", "P-384"), ec521 = ecKey("e3", "P-521");
        const j = jwksFile([rsa, ec, ec384, ec521, { kty: "oct", k: "c2VjcmV0", kid: "h1" }, { ...rsaKey("enc").jwk, use: "enc" }]);
        const audit = path.join(j.dir, "audit.jsonl");
        const s = await spawnHttpServer({ args: [...oauthArgs(j.file), "--audit-log", audit] });
        assert.match(s.log(), /OAuth access tokens/);
        const base = s.url.replace(/\/mcp$/, "");
        const expected = { resource: RESOURCE, authorization_servers: [ISSUER], bearer_methods_supported: ["header"],
                           resource_name: "msp-mcp" };
        for (const p of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
                const r = await fetch(base + p);
                assert.equal(r.status, 200, p);
                assert.equal(r.headers.get("content-type"), "application/json");
                assert.deepEqual(await r.json(), expected, p);
        }

        const none = await post(s.url, INIT);
        assert.equal(none.status, 401);
        assert.equal(none.headers.get("www-authenticate"), `Bearer realm="msp-mcp", resource_metadata="${METADATA_URL}"`);

        // Valid: any key; a clock a little behind the issuer's is allowed for; typ JWT,
        // RFC 9068's at+jwt (a media type: any case, "application/" or not) or none.
        for (const t of [sign(rsa, claims()), sign(ec, claims()), sign(ec384, claims()), sign(ec521, claims()),
                         sign(rsa, claims({ exp: now() - 10 })),
                         sign(rsa, claims({ aud: ["https://other.example", RESOURCE] })),
                         sign(rsa, claims(), { typ: "at+jwt" }), sign(ec, claims(), { typ: "application/AT+JWT" }),
                         sign(rsa, claims(), { typ: undefined })]) {
                const r = await post(s.url, INIT, bearer(t));
                assert.equal(r.status, 200, r.text);
                assert.ok(r.headers.get("mcp-session-id"));
        }

        const pem = rsa.publicKey.export({ type: "spki", format: "pem" });
        const hs256 = (() => {
                const input = `${b64(JSON.stringify({ alg: "HS256", typ: "JWT", kid: "r1" }))}.${b64(JSON.stringify(claims()))}`;
                return `${input}.${b64(crypto.createHmac("sha256", pem).update(input).digest())}`;
        })();
        const unsigned = `${b64(JSON.stringify({ alg: "none", typ: "JWT" }))}.${b64(JSON.stringify(claims()))}.`;
        // alg twice: a JSON parser that keeps the first sees RS256, one that keeps the last
        // HS256 (HMAC with the public key as secret); the token must not pass either way.
        const twoAlgs = (() => {
                const input = `${b64('{"alg":"RS256","typ":"JWT","kid":"r1","alg":"HS256"}')}.${b64(JSON.stringify(claims()))}`;
                return `${input}.${b64(crypto.createHmac("sha256", pem).update(input).digest())}`;
        })();
        const good = sign(rsa, claims());
        // An ES256 signature one byte short, and the same signature as DER.
        const ecGood = sign(ec, claims());
        const ecShort = ecGood.replace(/[^.]+$/, (sig) => b64(Buffer.from(sig, "base64url").subarray(1)));
        const ecDer = sign(ec, claims(), {}, "der");
        const bad = [
                ["wrong audience", sign(rsa, claims({ aud: "https://other.example/mcp" })), /aud does not name --resource/],
                ["no audience", sign(rsa, claims({ aud: undefined })), /aud does not name/],
                ["wrong issuer", sign(rsa, claims({ iss: "https://evil.example" })), /iss is not --oauth-issuer/],
                ["expired", sign(ec, claims({ exp: now() - 120 })), /the token expired/],
                ["no exp", sign(rsa, claims({ exp: undefined })), /exp is missing/],
                ["not yet valid", sign(rsa, claims({ nbf: now() + 600 })), /not valid before/],
                ["bad signature", sign(other, claims()), /the signature does not verify/],
                ["changed claims", good.replace(/\.[^.]+\./, `.${b64(JSON.stringify(claims({ sub: "mallory" })))}.`),
                 /the signature does not verify/],
                ["unknown kid", sign(rsa, claims(), { kid: "nope" }), /no RS256 key with the token's kid/],
                ["alg none", unsigned, /alg none is not accepted/],
                ["HS256 with the public key as secret", hs256, /alg HS256 is not accepted/],
                ["ES256 under an RSA kid", sign({ ...ec, kid: "r1" }, claims()), /no ES256 key with the token's kid/],
                ["encryption key", sign({ ...rsa, kid: "enc" }, claims()), /no RS256 key/],
                ["no tenant claim", sign(rsa, claims({ sub: undefined })), /claim sub is missing or not a tenant name/],
                ["tenant claim with a slash", sign(rsa, claims({ sub: "a/b" })), /claim sub is missing or not a tenant name/],
                ["typ foo", sign(rsa, claims(), { typ: "foo" }), /typ foo is not accepted \(JWT or at\+jwt\)/],
                ["ES256 signature of 63 bytes", ecShort, /the ES256 signature is 63 bytes, not r\|\|s of 64/],
                ["ES256 signature in DER", ecDer, /the ES256 signature is 7[0-2] bytes, not r\|\|s of 64/],
                ["ES512 signed with the P-256 key", sign({ ...ec, alg: "ES512", kid: "e3" }, claims()),
                 /the ES512 signature is 64 bytes, not r\|\|s of 132/],
                ["signature not base64url", `${good}=`, /the token's signature is not base64url/],
                ["not a JWT", "abc.def", /not a JWT/],
                ["alg twice", twoAlgs, /alg HS256 is not accepted|the signature does not verify|not base64url JSON/],
                ["exp as a string", sign(rsa, claims({ exp: String(now() + 300) })), /exp is missing or not a number/],
                ["crit", sign(rsa, claims(), { crit: ["exp"] }), /"crit" extensions/],
        ];
        for (const [what, token, why] of bad) {
                const mark = s.log().length;
                const r = await post(s.url, INIT, bearer(token));
                assert.equal(r.status, 401, what);
                assert.equal(r.headers.get("www-authenticate"),
                             `Bearer realm="msp-mcp", resource_metadata="${METADATA_URL}", error="invalid_token"`, what);
                await waitFor(`the reason for ${what}`, () => why.test(s.log().slice(mark)), 5_000);
        }
        // aud may be an array naming --resource among others.
        assert.equal((await post(s.url, INIT, bearer(sign(rsa, claims({ aud: ["https://other.example", RESOURCE] }))))).status, 200);
        // A session needs a valid token on every request.
        const sid = (await post(s.url, INIT, bearer(good))).headers.get("mcp-session-id");
        assert.equal((await post(s.url, ping, { "mcp-session-id": sid })).status, 401);
        assert.equal((await post(s.url, ping, { "mcp-session-id": sid, ...bearer(bad[3][1]) })).status, 401);
        assert.equal((await post(s.url, ping, { "mcp-session-id": sid, ...bearer(good) })).status, 200);

        // The SDK client with an access token, end to end.
        const transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: bearer(sign(ec, claims())) } });
        const client = new Client({ name: "sdk-oauth", version: "0" }, { capabilities: {} });
        await client.connect(transport);
        const r = await client.callTool({ name: "run_code", arguments: { language: "sh", code: "echo with-jwt" } });
        assert.equal(r.structuredContent.stdout, "with-jwt\n", text(r));
        await client.close();

        for (const [, token] of [...bad, ["", good]])
                assert.ok(!s.log().includes(token.split(".")[2] || token), "no token in the log");
        assert.ok(!s.log().includes(rsa.jwk.n.slice(0, 40)), "no key in the log");
        // The audit log's auth_failure lines give the same reasons, and no token either.
        const lines = fs.readFileSync(audit, "utf8").split("\n").filter((l) => l).map((l) => JSON.parse(l));
        const reasons = lines.filter((l) => l.event === "auth_failure").map((l) => l.reason);
        assert.equal(reasons[0], "no bearer token");
        assert.ok(reasons.includes("aud does not name --resource"), reasons.join(" | "));
        assert.ok(reasons.some((r) => /^the token expired \d+ s ago$/.test(r)), reasons.join(" | "));
        assert.ok(!fs.readFileSync(audit, "utf8").includes(good.split(".")[2]), "no token in the audit log");
        const tenants = lines.filter((l) => l.event === "http" && l.path === "/mcp" && l.status === 200).map((l) => l.tenant);
        assert.ok(tenants.length > 0 && tenants.every((t) => t === "alice"), tenants.join(" "));
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(j.dir, { recursive: true, force: true });
});

test("a refused token's header fields reach the log escaped: no forged line, no terminal escape", { skip, timeout: 60_000 }, async () => {
        const rsa = rsaKey("r1");
        const j = jwksFile([rsa]);
        const s = await spawnHttpServer({ args: oauthArgs(j.file) });
        const mark = s.log().length;
        const r = await post(s.url, INIT, bearer(sign(rsa, claims(), { typ: "x\nmsp-mcp: error: forged\x1b[31m" })));
        assert.equal(r.status, 401);
        await waitFor("the refusal", () => /typ x/.test(s.log().slice(mark)), 5_000);
        const log = s.log().slice(mark);
        assert.ok(!/^msp-mcp: error: forged/m.test(log), log);
        assert.ok(!log.includes("\x1b"), "no ESC byte");
        assert.match(log, /typ x\\nmsp-mcp: error: forged\\e\[31m is not accepted/);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(j.dir, { recursive: true, force: true });
});

test("tenants from a claim (--oauth-tenant-claim), beside --auth-tokens", { skip, timeout: 120_000 }, async () => {
        const key = rsaKey("k");
        const j = jwksFile([key]);
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-tokens-"));
        const TOKEN_C = "tok-carol-0123456789abcdef";
        fs.writeFileSync(path.join(dir, "tokens"), `${TOKEN_C} alice\n`, { mode: 0o600 });
        const s = await spawnHttpServer({ args: [...oauthArgs(j.file, ["--oauth-tenant-claim", "org"]),
                                                 "--auth-tokens", path.join(dir, "tokens")] });
        assert.match(s.log(), /bearer tokens and OAuth access tokens/);
        // Two users of org alice, one of org bob: the tenant is the org, not the user.
        const alice1 = sign(key, claims({ sub: "u1", org: "alice" })), alice2 = sign(key, claims({ sub: "u2", org: "alice" }));
        const bob = sign(key, claims({ sub: "u1", org: "bob" }));
        assert.equal((await post(s.url, INIT, bearer(sign(key, claims({ sub: "u1" }))))).status, 401, "no org claim");
        const connect = async (token) => {
                const transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: bearer(token) } });
                const client = new Client({ name: "tenant", version: "0" }, { capabilities: {} });
                await client.connect(transport);
                return { client, sid: transport.sessionId };
        };
        const tool = (c, name, args) => c.client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
        const a1 = await connect(alice1), a2 = await connect(alice2), b = await connect(bob), c = await connect(TOKEN_C);
        const created = await tool(a1, "session_create", {});
        const sid = created.structuredContent.session_id;
        assert.ok(sid, text(created));
        assert.ok(!(await tool(a1, "write_file", { session_id: sid, path: "secret.txt", content: "org alice" })).isError);
        // Bob's org: not found. Alice's other user, and alice's static token: found.
        const r = await tool(b, "read_file", { session_id: sid, path: "secret.txt" });
        assert.ok(r.isError);
        assert.match(text(r), /no such session/);
        assert.deepEqual((await tool(b, "session_list", {})).structuredContent.sessions, []);
        assert.equal((await tool(a2, "read_file", { session_id: sid, path: "secret.txt" })).structuredContent.content, "org alice");
        assert.equal((await tool(c, "read_file", { session_id: sid, path: "secret.txt" })).structuredContent.content, "org alice");
        // The HTTP session itself belongs to the tenant too.
        assert.equal((await post(s.url, ping, { "mcp-session-id": a1.sid, ...bearer(bob) })).status, 404);
        assert.equal((await post(s.url, ping, { "mcp-session-id": a1.sid, ...bearer(alice2) })).status, 200);
        assert.ok(!(await tool(a1, "session_close", { session_id: sid })).isError);
        for (const x of [a1, a2, b, c]) await x.client.close();
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(j.dir, { recursive: true, force: true });
        fs.rmSync(dir, { recursive: true, force: true });
});

test("tokens without kid, RS384 with a key that names no alg, a resource without a path", { skip, timeout: 60_000 }, async () => {
        const rsa = rsaKey("r"), ec = ecKey("e"), rsa2 = rsaKey("r2");
        const j = jwksFile([{ ...rsa.jwk, kid: undefined, alg: undefined }, { ...ec.jwk, kid: undefined }]);
        const resource = "https://sandbox.example";
        const s = await spawnHttpServer({ args: ["--oauth-issuer", ISSUER, "--oauth-jwks", j.file, "--resource", resource] });
        const base = s.url.replace(/\/mcp$/, "");
        assert.equal((await fetch(`${base}/.well-known/oauth-protected-resource`).then((r) => r.json())).resource, resource);
        const none = await post(s.url, INIT);
        assert.equal(none.headers.get("www-authenticate"),
                     `Bearer realm="msp-mcp", resource_metadata="${resource}/.well-known/oauth-protected-resource"`);
        const c = claims({ aud: resource });
        // One key of each kind: a token without kid finds it.
        for (const t of [sign(rsa, c, { kid: undefined }), sign(ec, c, { kid: undefined }),
                         sign({ ...rsa, alg: "RS384" }, c, { kid: undefined })])
                assert.equal((await post(s.url, INIT, bearer(t))).status, 200);
        // Two RSA keys: a token without kid names neither.
        j.write([{ ...rsa.jwk, kid: undefined }, rsa2]);
        s.proc.kill("SIGHUP");
        await waitFor("the reload", () => /OAuth keys reloaded from .*: 2/.test(s.log()), 10_000);
        const mark = s.log().length;
        assert.equal((await post(s.url, INIT, bearer(sign(rsa, c, { kid: undefined })))).status, 401);
        await waitFor("the reason", () => /the token names no kid and 2 keys could verify it/.test(s.log().slice(mark)), 5_000);
        assert.equal((await post(s.url, INIT, bearer(sign(rsa2, c)))).status, 200, "with its kid it does");
        // A key bound to RS256 verifies no RS384 token.
        assert.equal((await post(s.url, INIT, bearer(sign({ ...rsa2, alg: "RS384" }, c)))).status, 401);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(j.dir, { recursive: true, force: true });
});

test("SIGHUP reloads the JWKS; a broken one keeps the keys", { skip, timeout: 60_000 }, async () => {
        const k1 = rsaKey("k1"), k2 = ecKey("k2");
        const j = jwksFile([k1]);
        const s = await spawnHttpServer({ args: oauthArgs(j.file) });
        const t1 = sign(k1, claims()), t2 = sign(k2, claims());
        assert.equal((await post(s.url, INIT, bearer(t1))).status, 200);
        assert.equal((await post(s.url, INIT, bearer(t2))).status, 401);
        // Rotation: k2 in, k1 out.
        j.write([k2]);
        s.proc.kill("SIGHUP");
        await waitFor("the reload", () => /OAuth keys reloaded from .*: 1/.test(s.log()), 10_000);
        assert.equal((await post(s.url, INIT, bearer(t2))).status, 200);
        assert.equal((await post(s.url, INIT, bearer(t1))).status, 401);
        j.write("{\"keys\": [");
        s.proc.kill("SIGHUP");
        await waitFor("the refused reload", () => /OAuth keys not reloaded, the old ones stay: .*jwks\.json/.test(s.log()), 10_000);
        assert.equal((await post(s.url, INIT, bearer(t2))).status, 200);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(j.dir, { recursive: true, force: true });
});

test("bad OAuth configurations are refused at start naming the problem; --check reports the mode", { skip, timeout: 120_000 }, async () => {
        const stateDir = tmpStateDir();
        const run = (args) => runSync(MSP_MCP, ["--state-dir", stateDir, "--runtime", MSP, "--listen", "127.0.0.1:0", ...args]);
        const good = jwksFile([rsaKey("k"), ecKey("e")]);
        const c = run(["--check", ...oauthArgs(good.file)]);
        assert.match(c.stdout, new RegExp(`ok\\s+http oauth\\s+OAuth access tokens of ${ISSUER} for ${RESOURCE}: 2 keys in \\S+jwks\\.json, tenant from claim sub`));
        assert.doesNotMatch(c.stdout, /warning\s+http auth/);
        const small = rsaKey("small", 1024);
        const cases = [
                [["--oauth-issuer", ISSUER, "--oauth-jwks", good.file], /--resource URL is missing/],
                [["--resource", RESOURCE], /--oauth-issuer URL is missing/],
                [oauthArgs("http://auth.example/jwks"), /--oauth-jwks http:\/\/auth\.example\/jwks: keys fetched over plain HTTP could be anyone's/],
                [[...oauthArgs(good.file), "--oauth-jwks-ca", good.file], /--oauth-jwks-ca goes with an https:\/\/ --oauth-jwks/],
                [oauthArgs("/nonexistent/jwks.json"), /--oauth-jwks \/nonexistent\/jwks\.json: No such file/],
                [["--oauth-issuer", ISSUER, "--oauth-jwks", good.file, "--resource", "https://sandbox.example/mcp#x"], /--resource https:\/\/sandbox\.example\/mcp#x: expected an http/],
                [["--oauth-issuer", "auth.example", "--oauth-jwks", good.file, "--resource", RESOURCE], /--oauth-issuer auth\.example: expected an http/],
                [[...oauthArgs(good.file), "--oauth-tenant-claim", "c".repeat(65)], /--oauth-tenant-claim "c{65}": expected a claim name of 1 to 64/],
        ];
        for (const [content, why] of [["not json", /jwks\.json: /],
                                      [JSON.stringify({ nokeys: [] }), /expected a JWKS, an object with a "keys" array/],
                                      [JSON.stringify({ keys: [small.jwk] }), /keys\[0\] \(kid small\): a 1024-bit RSA key \(at least 2048 bits\)/],
                                      [JSON.stringify({ keys: [{ kty: "oct", k: "c2VjcmV0" }] }), /no signing key of a kind msp-mcp verifies/],
                                      [JSON.stringify({ keys: [{ kty: "EC", crv: "P-256", x: "AA", y: "AA", kid: "e" }] }), /keys\[0\] \(kid e\): an EC key needs "x" and "y" of 32 bytes/],
                                      [JSON.stringify({ keys: [{ kty: "RSA", e: "AQAB", kid: "r" }] }), /keys\[0\] \(kid r\): an RSA key needs "n" and "e"/]]) {
                const j = jwksFile(content);
                cases.push([oauthArgs(j.file), why]);
        }
        for (const [args, why] of cases) {
                const r = run(args);
                assert.equal(r.status, 1, `${args.join(" ")}: ${r.stderr}`);
                assert.match(r.stderr, why);
        }
        // --check names the same problem.
        assert.match(run(["--check", ...oauthArgs("/nonexistent/jwks.json")]).stdout, /MISSING\s+http oauth\s+--oauth-jwks \/nonexistent/);
        // OAuth alone authenticates: a listener beyond loopback is allowed (checked, not started).
        assert.doesNotMatch(runSync(MSP_MCP, ["--state-dir", stateDir, "--runtime", MSP, "--check", "--listen", "0.0.0.0:0",
                                              ...oauthArgs(good.file)]).stdout, /warning\s+http auth/);
        // A server that refused to start left nothing behind.
        assert.deepEqual(fs.readdirSync(stateDir).filter((n) => n.startsWith("inst-")), []);
        fs.rmSync(stateDir, { recursive: true, force: true });
        fs.rmSync(good.dir, { recursive: true, force: true });
});

// An HTTPS server of the test's: a certificate openssl makes for the names given, the JWKS
// (or status) it serves at /jwks changed at will.
function certificate(dir, san) {
        const key = path.join(dir, `${san.replace(/\W/g, "_")}.key`), cert = path.join(dir, `${san.replace(/\W/g, "_")}.pem`);
        const gen = runSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                        "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=jwks-test",
                                        "-addext", `subjectAltName=${san}`]);
        assert.equal(gen.status, 0, `openssl (contrib/install-deps.sh test installs it): ${gen.stderr}`);
        return { key, cert };
}

// state.hold: a promise the answer waits for (an issuer slow to answer).
async function jwksServer(c) {
        const state = { status: 200, body: "" };
        const server = https.createServer({ key: fs.readFileSync(c.key), cert: fs.readFileSync(c.cert) }, async (req, res) => {
                state.requests = (state.requests ?? 0) + 1;
                const { status, body } = state;
                await state.hold;
                res.writeHead(req.url === "/jwks" ? status : 404, { "content-type": "application/json" });
                res.end(body);
        });
        await new Promise((r) => server.listen(0, "127.0.0.1", r));
        // Closing ends the connections too: a fetch msp-mcp left open does not keep node alive.
        const close = () => new Promise((r) => { server.close(r); server.closeAllConnections(); });
        return { state, url: `https://127.0.0.1:${server.address().port}/jwks`, close };
}

// msp-mcp started and left to exit on its own, without blocking this process (whose HTTPS
// server it may be fetching from).
function runAsync(args) {
        return new Promise((resolve) => {
                const p = spawn(MSP_MCP, args, { stdio: ["ignore", "pipe", "pipe"] });
                let out = "", err = "";
                p.stdout.on("data", (b) => { out += b; });
                p.stderr.on("data", (b) => { err += b; });
                p.on("exit", (status) => resolve({ status, stdout: out, stderr: err }));
        });
}

test("an https:// JWKS: fetched at start and on SIGHUP, trusted through --oauth-jwks-ca, its host checked", { skip, timeout: 120_000 }, async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-jwks-tls-"));
        const good = certificate(dir, "IP:127.0.0.1"), other = certificate(dir, "DNS:other.example");
        const k1 = rsaKey("k1"), k2 = ecKey("k2");
        const srv = await jwksServer(good);
        srv.state.body = JSON.stringify({ keys: [k1.jwk] });
        const s = await spawnHttpServer({ args: [...oauthArgs(srv.url), "--oauth-jwks-ca", good.cert] });
        // Fetched once at start (checked before the engine starts, then served with).
        const fetched = srv.state.requests;
        assert.equal(fetched, 1, `${fetched} fetches at start`);
        assert.equal((await post(s.url, INIT, bearer(sign(k1, claims())))).status, 200);
        assert.equal(srv.state.requests, fetched, "not fetched per request");
        // Rotation on the issuer's side, then SIGHUP.
        srv.state.body = JSON.stringify({ keys: [k2.jwk] });
        s.proc.kill("SIGHUP");
        await waitFor("the reload", () => /OAuth keys reloaded from https:\/\/127\.0\.0\.1:\d+\/jwks: 1/.test(s.log()), 15_000);
        assert.equal((await post(s.url, INIT, bearer(sign(k2, claims())))).status, 200);
        assert.equal((await post(s.url, INIT, bearer(sign(k1, claims())))).status, 401);
        // The issuer failing: the keys stay.
        srv.state.status = 500;
        s.proc.kill("SIGHUP");
        await waitFor("the refused reload", () => /OAuth keys not reloaded, the old ones stay: --oauth-jwks: https:\S+: HTTP status 500/.test(s.log()), 15_000);
        assert.equal((await post(s.url, INIT, bearer(sign(k2, claims())))).status, 200);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });

        // At start: an untrusted certificate, one for another host, a status other than 200.
        srv.state.status = 200;
        const stateDir = tmpStateDir();
        const start = (args) => runAsync(["--state-dir", stateDir, "--runtime", MSP, "--listen", "127.0.0.1:0", ...args]);
        let r = await start(oauthArgs(srv.url));
        assert.equal(r.status, 1);
        assert.match(r.stderr, /--oauth-jwks: https:\S+: the server's certificate is not trusted: .*issuer is unknown/);
        r = await start([...oauthArgs(srv.url.replace(/jwks$/, "nope")), "--oauth-jwks-ca", good.cert]);
        assert.match(r.stderr, /HTTP status 404 \(expected 200\)/);
        await srv.close();
        const wrong = await jwksServer(other);
        wrong.state.body = JSON.stringify({ keys: [k1.jwk] });
        r = await start([...oauthArgs(wrong.url), "--oauth-jwks-ca", other.cert]);
        assert.equal(r.status, 1);
        assert.match(r.stderr, /the server's certificate is not trusted: .*does not match/);
        await wrong.close();
        assert.deepEqual(fs.readdirSync(stateDir).filter((n) => n.startsWith("inst-")), []);
        fs.rmSync(stateDir, { recursive: true, force: true });
        fs.rmSync(dir, { recursive: true, force: true });
});

test("SIGHUP: while an https:// JWKS is slow to answer, requests are served with the old keys", { skip, timeout: 120_000 }, async (t) => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-jwks-slow-"));
        const good = certificate(dir, "IP:127.0.0.1");
        const k1 = rsaKey("k1"), k2 = ecKey("k2");
        const srv = await jwksServer(good);
        t.after(() => srv.close());
        srv.state.body = JSON.stringify({ keys: [k1.jwk] });
        const s = await spawnHttpServer({ args: [...oauthArgs(srv.url), "--oauth-jwks-ca", good.cert] });
        const t1 = sign(k1, claims()), t2 = sign(k2, claims());
        const init = await post(s.url, INIT, bearer(t1));
        assert.equal(init.status, 200);
        const sid = init.headers.get("mcp-session-id");
        // The issuer rotates its keys and answers only when the test lets it.
        let release;
        srv.state.hold = new Promise((r) => { release = r; });
        srv.state.body = JSON.stringify({ keys: [k2.jwk] });
        try {
                s.proc.kill("SIGHUP");
                await waitFor("the fetch at the issuer", () => srv.state.requests === 2, 10_000);
                // Answered while the fetch waits (well within its 10 s), with the old key.
                const r = await fetch(s.url, { method: "POST", signal: AbortSignal.timeout(5_000),
                                               headers: { ...JSON_HEADERS, "mcp-session-id": sid, ...bearer(t1) },
                                               body: JSON.stringify(ping) });
                assert.equal(r.status, 200, await r.text());
                assert.doesNotMatch(s.log(), /OAuth keys (not )?reloaded/);
                assert.equal((await post(s.url, INIT, bearer(t2))).status, 401, "the new key not yet");
        } finally {
                release();
        }
        await waitFor("the reload", () => /OAuth keys reloaded from https:\/\/127\.0\.0\.1:\d+\/jwks: 1/.test(s.log()), 15_000);
        assert.equal((await post(s.url, INIT, bearer(t2))).status, 200);
        assert.equal((await post(s.url, INIT, bearer(t1))).status, 401);
        // Not JSON from the issuer: refused after the fetch, the keys stay, the log says why.
        srv.state.hold = undefined;
        srv.state.body = "{\"keys\": [";
        s.proc.kill("SIGHUP");
        await waitFor("the refused reload", () => /OAuth keys not reloaded, the old ones stay: .*jwks/.test(s.log()), 15_000);
        assert.equal((await post(s.url, INIT, bearer(t2))).status, 200);
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
        fs.rmSync(dir, { recursive: true, force: true });
});
