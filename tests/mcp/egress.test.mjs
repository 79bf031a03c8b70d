// Network egress by allowlist: run_code's {"allow": [...]} goes through msp-mcp's egress
// proxy only. The "internet" is a network namespace the test makes (veth pair, 198.18.N.2)
// holding an HTTP and an HTTPS server (a test CA; the sandbox trusts it through
// SSL_CERT_FILE/PIP_CERT/CURL_CA_BUNDLE) and a PEP 503 index with a wheel the test builds;
// the proxy reaches it through --resolve pins. No traffic leaves the machine.
import { test, after, before } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { startServer, skipReason, finishAll, call, runCode, text, assertOk, waitFor,
         runSync, TRANSPORT, tmpStateDir, spawnHttpServer, stopProcess, CALL_TIMEOUT } from "./lib.mjs";

const have = (cmd) => runSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
const skip = skipReason() ||
        (!have("openssl") || !have("curl") ? "openssl and curl needed (contrib/install-deps.sh test)" : false) ||
        (runSync("/usr/bin/python3", ["-m", "pip", "--version"]).status !== 0
                ? "python3-pip needed (contrib/install-deps.sh test)" : false);
after(finishAll);

// The internet's server: plain files, /redirect (302 to evil.test), /big (N bytes); the
// same handler over TLS on a second port.
const serverPy = `
import http.server, ssl, sys, threading, os
root, addr, p1, p2, cert, key = sys.argv[1:7]
os.chdir(root)
class H(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        if self.path.startswith("/redirect"):
            self.send_response(302)
            self.send_header("Location", "http://evil.test:%s/hello.txt" % p1)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path.startswith("/big"):
            n = 1 << 20
            self.send_response(200)
            self.send_header("Content-Length", str(n))
            self.end_headers()
            self.wfile.write(b"x" * n)
            return
        return super().do_GET()
class S(http.server.ThreadingHTTPServer):
    daemon_threads = True
plain = S((addr, int(p1)), H)
tls = S((addr, int(p2)), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
threading.Thread(target=tls.serve_forever, daemon=True).start()
plain.serve_forever()
`;

// A wheel of one module (demo_pkg.VALUE == 42), built with zipfile.
const wheelPy = `
import zipfile, sys, hashlib, base64
out = sys.argv[1]
files = {"demo_pkg/__init__.py": b"VALUE = 42\\n",
         "demo_pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\\nName: demo-pkg\\nVersion: 1.0\\n",
         "demo_pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
rec = ""
for n, d in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
    rec += "%s,sha256=%s,%d\\n" % (n, h, len(d))
rec += "demo_pkg-1.0.dist-info/RECORD,,\\n"
with zipfile.ZipFile(out, "w") as z:
    for n, d in files.items():
        z.writestr(n, d)
    z.writestr("demo_pkg-1.0.dist-info/RECORD", rec)
`;

function freePort() {
        return new Promise((resolve) => {
                const s = net.createServer();
                s.listen(0, "0.0.0.0", () => { const p = s.address().port; s.close(() => resolve(p)); });
        });
}

const net_ = {};        // the internet: { addr, p1, p2, ca }
const cleanup = [];

before(async () => {
        if (skip) return;
        const n = 1 + ((process.pid + 97) % 250);
        const ns = `msp-egress-${process.pid}`, host = `mspe${process.pid % 100000}`;
        const hostAddr = `198.18.${n}.1`, addr = `198.18.${n}.2`;
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-egress-"));
        const sh = (cmd) => {
                const r = runSync("sh", ["-ec", cmd]);
                assert.equal(r.status, 0, `${cmd}: ${r.stderr}`);
        };
        cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
        sh(`ip netns add ${ns}`);
        cleanup.push(() => runSync("ip", ["netns", "del", ns]));
        cleanup.push(() => runSync("ip", ["link", "del", host]));
        sh(`ip link add ${host} type veth peer name eth0 netns ${ns}
            ip addr add ${hostAddr}/30 dev ${host}
            ip link set ${host} up
            ip -n ${ns} addr add ${addr}/30 dev eth0
            ip -n ${ns} link set eth0 up
            ip -n ${ns} link set lo up`);
        // The CA and the servers' certificate (pypi.test and files.test).
        sh(`cd ${dir}
            openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=msp-test-ca 2>/dev/null
            openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=pypi.test 2>/dev/null
            printf 'subjectAltName=DNS:pypi.test,DNS:files.test,DNS:evil.test\\n' > ext
            openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 -extfile ext 2>/dev/null
            mkdir -p www/simple/demo-pkg www/packages
            echo 'hello from the internet' > www/hello.txt`);
        sh(`/usr/bin/python3 -c '${wheelPy.replace(/'/g, "'\\''")}' ${dir}/www/packages/demo_pkg-1.0-py3-none-any.whl`);
        fs.writeFileSync(path.join(dir, "www/simple/demo-pkg/index.html"),
                '<!DOCTYPE html><html><body><a href="/packages/demo_pkg-1.0-py3-none-any.whl">demo_pkg-1.0-py3-none-any.whl</a></body></html>\n');
        fs.writeFileSync(path.join(dir, "www/simple/index.html"),
                '<!DOCTYPE html><html><body><a href="/simple/demo-pkg/">demo-pkg</a></body></html>\n');
        const p1 = await freePort(), p2 = await freePort();
        const srv = spawn("ip", ["netns", "exec", ns, "/usr/bin/python3", "-c", serverPy, path.join(dir, "www"),
                                 addr, String(p1), String(p2), path.join(dir, "srv.pem"), path.join(dir, "srv.key")],
                          { stdio: "ignore" });
        cleanup.push(() => srv.kill("SIGKILL"));
        await waitFor("the internet's servers", () => runSync("curl", ["-sf", "--max-time", "1", "--cacert",
                path.join(dir, "ca.pem"), "--resolve", `pypi.test:${p2}:${addr}`,
                `https://pypi.test:${p2}/hello.txt`]).status === 0, 15_000, 100);
        Object.assign(net_, { addr, p1, p2, ca: fs.readFileSync(path.join(dir, "ca.pem"), "utf8") });
});
after(() => { for (const f of cleanup.reverse()) f(); });

// The server's maximum, and pins for the internet's names.
function serverArgs(extra = []) {
        const { addr, p1, p2 } = net_;
        return ["--network-allow", `*.test:${p1}`, "--network-allow", `*.test:${p2}`,
                "--network-allow", `localhost:${p1}`,
                "--resolve", `pypi.test=${addr}`, "--resolve", `files.test=${addr}`,
                "--resolve", `evil.test=${addr}`, ...extra];
}

// run_code with the CA in /workspace and every trust variable naming it.
function withCa(extra) {
        return {
                files: [{ path: "ca.pem", content: net_.ca }],
                env: { SSL_CERT_FILE: "/workspace/ca.pem", CURL_CA_BUNDLE: "/workspace/ca.pem",
                       PIP_CERT: "/workspace/ca.pem", REQUESTS_CA_BUNDLE: "/workspace/ca.pem" },
                ...extra,
        };
}

test("curl through the allowlist over HTTP and HTTPS; a host off the list is refused with the reason", { skip, timeout: 120_000 }, async () => {
        const { p1, p2 } = net_;
        const srv = await startServer({ args: serverArgs() });
        const ok = assertOk(await runCode(srv, "sh", `
                curl -sS --max-time 20 http://pypi.test:${p1}/hello.txt
                curl -sS --max-time 20 https://pypi.test:${p2}/hello.txt`,
                withCa({ network: { allow: [`pypi.test:${p1}`, `pypi.test:${p2}`] } })), srv);
        assert.equal(ok.exit_code, 0, ok.stderr);
        assert.equal(ok.stdout, "hello from the internet\nhello from the internet\n");
        assert.deepEqual(ok.denied_hosts, []);

        const res = await runCode(srv, "sh", `curl -sS -i --max-time 20 http://files.test:${p1}/hello.txt`,
                                  { network: { allow: [`pypi.test:${p1}`] } });
        const r = assertOk(res, srv);
        assert.match(r.stdout, /^HTTP\/1\.1 403 Forbidden/);
        assert.match(r.stdout, new RegExp(`X-Msp-Egress: files\\.test:${p1} is not in this sandbox's network allowlist`));
        assert.deepEqual(r.denied_hosts, [`files.test:${p1}`]);
        assert.match(text(res), new RegExp(`egress proxy refused files\\.test:${p1}`));
        // HTTPS to a refused host: CONNECT gets the 403.
        const t = assertOk(await runCode(srv, "sh", `curl -sS --max-time 20 https://evil.test:${p2}/ 2>&1; echo "rc=$?"`,
                                         withCa({ network: { allow: [`pypi.test:${p2}`] } })), srv);
        assert.match(t.stdout, /CONNECT.*403|403.*CONNECT|rc=56/s);
        assert.deepEqual(t.denied_hosts, [`evil.test:${p2}`]);
        assert.equal((await srv.close()).code, 0);
});

test("--audit-log: an allowed and a refused host, with the reason and the bytes each way", { skip, timeout: 120_000 }, async () => {
        const { p1 } = net_;
        const dir = tmpStateDir();
        after(() => fs.rmSync(dir, { recursive: true, force: true }));
        const file = path.join(dir, "audit.jsonl");
        const srv = await startServer({ args: serverArgs(["--audit-log", file]) });
        const r = assertOk(await runCode(srv, "sh", `
                curl -sS --max-time 20 http://pypi.test:${p1}/hello.txt
                curl -s --max-time 20 http://files.test:${p1}/hello.txt >/dev/null`,
                { network: { allow: [`pypi.test:${p1}`] } }), srv);
        assert.equal(r.stdout, "hello from the internet\n", r.stderr);
        assert.equal((await srv.close()).code, 0);
        const lines = fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
        const start = lines.find((l) => l.event === "run_start");
        assert.equal(start.network, "allow");
        assert.deepEqual(start.network_allow, [`pypi.test:${p1}`]);
        const egress = lines.filter((l) => l.event === "egress");
        for (const l of egress) assert.equal(l.run_id, start.run_id);
        const allowed = egress.find((l) => l.decision === "allowed");
        assert.equal(allowed?.host, "pypi.test");
        assert.equal(allowed.port, p1);
        assert.equal(allowed.address, net_.addr);
        const closed = egress.find((l) => l.decision === "closed" && l.host === "pypi.test");
        // up: the request line and headers; down: the response with its 24-byte body.
        assert.ok(closed.bytes_up > 40 && closed.bytes_down > 24, JSON.stringify(closed));
        const denied = egress.find((l) => l.decision === "denied");
        assert.equal(denied?.host, "files.test");
        assert.equal(denied.port, p1);
        assert.match(denied.reason, /not in this sandbox's network allowlist/);
        const end = lines.find((l) => l.event === "run_end");
        assert.equal(end.denied_hosts, 1);
        assert.ok(end.network_bytes >= closed.bytes_down, `${end.network_bytes} relayed in all`);
        assert.ok(lines.indexOf(closed) < lines.indexOf(end), "the connection's lines come before the run's end");
});

// pip through an allowlist whose host does not resolve says only "no matching
// distribution": the proxy knows why, and the result, its text and the audit log say it.
test("an allowed host the proxy cannot reach: the result's upstream_errors, its text and the audit log say why (not resolved, connection refused)", { skip, timeout: 180_000 }, async () => {
        const { p1, p2 } = net_;
        let p3;         // nothing listens there in the internet's namespace: refused
        do p3 = await freePort(); while (p3 === p1 || p3 === p2);
        const dir = tmpStateDir();
        after(() => fs.rmSync(dir, { recursive: true, force: true }));
        const file = path.join(dir, "audit.jsonl");
        const srv = await startServer({ args: serverArgs(["--network-allow", `pypi.test:${p3}`, "--audit-log", file]) });
        const res = await runCode(srv, "sh", `
                curl -sS --max-time 20 http://nowhere.test:${p1}/; echo "rc=$?"
                curl -sS --max-time 20 http://pypi.test:${p3}/; echo "rc=$?"
                /usr/bin/python3 -m pip install --disable-pip-version-check --no-cache-dir -q --retries 0 \\
                        --index-url https://nowhere.test:${p2}/simple/ --target /tmp/site demo-pkg; echo "pip rc=$?"`,
                withCa({ network: { allow: [`nowhere.test:${p1}`, `nowhere.test:${p2}`, `pypi.test:${p3}`] },
                         timeout_ms: 120_000 }));
        const r = assertOk(res, srv);
        assert.match(r.stdout, /pip rc=1/, r.stderr);
        assert.deepEqual(r.denied_hosts, []);
        // A host without a DNS server that answers gets the longer reason.
        const unresolved = "no address \\(name not resolved(: no answer from the DNS server)?\\)";
        const want = [new RegExp(`^nowhere\\.test:${p1}: ${unresolved}$`), new RegExp(`^nowhere\\.test:${p2}: ${unresolved}$`),
                      new RegExp(`^pypi\\.test:${p3}: connection refused$`)];
        assert.equal(r.upstream_errors.length, want.length, JSON.stringify(r.upstream_errors));
        for (const re of want)
                assert.ok(r.upstream_errors.some((e) => re.test(e)), `${re} in ${JSON.stringify(r.upstream_errors)}`);
        assert.match(text(res), new RegExp(`; upstream connections failed: .*nowhere\\.test:${p1} \\(${unresolved}\\)`));
        assert.match(text(res), new RegExp(`pypi\\.test:${p3} \\(connection refused\\)`));
        // The client heard it too, in the proxy's error response.
        assert.match(r.stderr + r.stdout, new RegExp(`pypi\\.test:${p3}: connection refused|502`));
        assert.equal((await srv.close()).code, 0);
        const lines = fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
        const failed = lines.filter((l) => l.event === "egress" && l.decision === "failed");
        assert.ok(failed.some((l) => l.host === "nowhere.test" && l.port === p1 &&
                                     new RegExp(`^${unresolved}$`).test(l.reason)), JSON.stringify(failed));
        assert.ok(failed.some((l) => l.host === "pypi.test" && l.port === p3 && l.reason === "connection refused"),
                  JSON.stringify(failed));
        const end = lines.find((l) => l.event === "run_end");
        assert.deepEqual([...end.upstream_errors].sort(), [...r.upstream_errors].sort());
});

// runc runs the same init, which hands the listener over the same way; without Landlock the
// namespace alone keeps a raw connect() from going anywhere.
const RUNC = ["/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"].find((p) => fs.existsSync(p));
test("with --runtime runc: curl through the allowlist, and nothing else reachable", { skip: skip || (!RUNC ? "runc not installed" : false), timeout: 120_000 }, async () => {
        const { addr, p1 } = net_;
        const srv = await startServer({ runtime: RUNC, args: serverArgs() });
        const r = assertOk(await runCode(srv, "sh", `
                curl -sS --max-time 20 http://pypi.test:${p1}/hello.txt
                curl -s --max-time 5 --noproxy '*' http://${addr}:${p1}/hello.txt; echo "direct rc=$?"`,
                { network: { allow: [`pypi.test:${p1}`] } }), srv);
        assert.equal(r.exit_code, 0, r.stderr);
        assert.match(r.stdout, /^hello from the internet\ndirect rc=7\n$/);
        assert.equal((await srv.close()).code, 0);
});

test("pip installs a wheel from the allowed index over HTTPS", { skip, timeout: 180_000 }, async () => {
        const { p2 } = net_;
        const srv = await startServer({ args: serverArgs() });
        const r = assertOk(await runCode(srv, "sh", `
                /usr/bin/python3 -m pip install --disable-pip-version-check --no-cache-dir -q \\
                        --index-url https://pypi.test:${p2}/simple/ --target /tmp/site demo-pkg &&
                PYTHONPATH=/tmp/site /usr/bin/python3 -c 'import demo_pkg; print(demo_pkg.VALUE)'`,
                withCa({ network: { allow: [`pypi.test:${p2}`] }, timeout_ms: 120_000 })), srv);
        assert.equal(r.exit_code, 0, r.stderr);
        assert.equal(r.stdout, "42\n");
        assert.equal((await srv.close()).code, 0);
});

test("what ignores the proxy gets nothing: raw connect() elsewhere fails, the proxy port works", { skip, timeout: 120_000 }, async () => {
        const { addr, p1 } = net_;
        const srv = await startServer({ args: serverArgs() });
        const r = assertOk(await runCode(srv, "python", `
import errno, json, socket
def conn(a, p):
    try:
        socket.create_connection((a, p), timeout=3).close()
        return "connected"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def bind(p):
    try:
        socket.socket().bind(("127.0.0.1", p))
        return "bound"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
print(json.dumps({"internet": conn("${addr}", ${p1}), "loopback_other": conn("127.0.0.1", 9),
                  "proxy": conn("127.0.0.1", 3128), "bind": bind(8000)}))`,
                { network: { allow: [`pypi.test:${p1}`] } }), srv);
        assert.equal(r.exit_code, 0, r.stderr);
        // Landlock refuses TCP connect and bind outside the proxy's port (EACCES) before
        // the namespace's routing would (ENETUNREACH, ECONNREFUSED).
        assert.deepEqual(JSON.parse(r.stdout), { internet: "EACCES", loopback_other: "EACCES",
                                                 proxy: "connected", bind: "EACCES" });
        assert.equal((await srv.close()).code, 0);
});

// localhost is in NO_PROXY (the sandbox's own loopback): --noproxy '' sends it to the proxy.
test("an allowed name that resolves to loopback and a redirect to a host off the list are refused", { skip, timeout: 120_000 }, async () => {
        const { p1 } = net_;
        const srv = await startServer({ args: serverArgs() });
        const r = assertOk(await runCode(srv, "sh", `
                curl -s --noproxy '' --max-time 20 http://localhost:${p1}/; echo
                curl -s -L --max-time 20 http://pypi.test:${p1}/redirect`,
                { network: { allow: [`localhost:${p1}`, `pypi.test:${p1}`] } }), srv);
        assert.match(r.stdout, /localhost resolves to a loopback address \(127\.0\.0\.1\): refused/);
        assert.match(r.stdout, new RegExp(`evil\\.test:${p1} is not in this sandbox's network allowlist`));
        assert.deepEqual(r.denied_hosts.sort(), [`evil.test:${p1}`, `localhost:${p1}`]);
        assert.equal((await srv.close()).code, 0);
});

test("the run's connection and byte limits hold", { skip, timeout: 120_000 }, async () => {
        const { p1 } = net_;
        const srv = await startServer({ args: serverArgs(["--network-max-conns", "2", "--network-max-bytes", "200K"]) });
        const r = assertOk(await runCode(srv, "sh", `
                for i in 1 2 3; do curl -s --max-time 20 http://pypi.test:${p1}/hello.txt; done
                curl -s --max-time 20 -o /dev/null -w '%{size_download}\\n' http://files.test:${p1}/big`,
                { network: { allow: [`*.test:${p1}`] } }), srv);
        const lines = r.stdout.split("\n");
        assert.equal(lines[0], "hello from the internet");
        assert.equal(lines[1], "hello from the internet");
        assert.match(r.stdout, /connection limit \(2\) was reached/);
        const big = await runCode(srv, "sh", `curl -s --max-time 20 -o /dev/null -w '%{size_download}' http://files.test:${p1}/big; echo " rc=$?"`,
                                  { network: { allow: [`files.test:${p1}`] } });
        const b = assertOk(big, srv);
        const [size, rc] = b.stdout.trim().split(" ");
        assert.ok(Number(size) < 400 * 1024 && rc !== "rc=0", `a 1 MiB download under a 200K budget: ${b.stdout}`);
        assert.equal((await srv.close()).code, 0);
});

test("a call may only narrow the server's list; full needs --allow-network; the schema says what is allowed", { skip, timeout: 60_000 }, async () => {
        const { p1 } = net_;
        const srv = await startServer({ args: serverArgs() });
        let res = await runCode(srv, "sh", "true", { network: { allow: ["pypi.org"] } });
        assert.equal(res.isError, true);
        assert.match(text(res), /'pypi\.org' is not within this server's --network-allow list/);
        res = await runCode(srv, "sh", "true", { network: { allow: [`*.test:${p1 + 1 === 65536 ? 1 : p1 + 1}`] } });
        assert.equal(res.isError, true);
        res = await runCode(srv, "sh", "true", { network: "full" });
        assert.equal(res.isError, true);
        assert.match(text(res), /--allow-network/);
        res = await runCode(srv, "sh", "true", { network: { allow: ["bad pattern"] } });
        assert.match(text(res), /network\.allow\[0\]: network pattern 'bad pattern'/);
        assertOk(await runCode(srv, "sh", "true", { network: "none" }), srv);
        const tools = await srv.client.listTools();
        const rc = tools.tools.find((t) => t.name === "run_code");
        assert.match(rc.inputSchema.properties.network.description, new RegExp(`within: \\*\\.test:${p1}`));
        assert.equal(rc.annotations.openWorldHint, true);
        assert.equal((await srv.close()).code, 0);
});

test("a session keeps its allowlist across calls; a call in it cannot change it", { skip, timeout: 120_000 }, async () => {
        const { p1 } = net_;
        const srv = await startServer({ args: serverArgs() });
        const bad = await call(srv, "session_create", { network: { allow: ["pypi.org"] } });
        assert.equal(bad.isError, true);
        assert.match(text(bad), /'pypi\.org' is not within/);
        const sess = assertOk(await call(srv, "session_create", { network: { allow: [`pypi.test:${p1}`] } }), srv);
        assert.deepEqual(sess.network_allow, [`pypi.test:${p1}`]);
        assert.equal(sess.network, false);
        for (let i = 0; i < 2; i++) {
                const r = assertOk(await runCode(srv, "sh", `curl -sS --max-time 20 http://pypi.test:${p1}/hello.txt`,
                                                 { session_id: sess.session_id }), srv);
                assert.equal(r.stdout, "hello from the internet\n", r.stderr);
        }
        const off = assertOk(await runCode(srv, "sh", `curl -s --max-time 20 http://files.test:${p1}/hello.txt`,
                                           { session_id: sess.session_id }), srv);
        assert.deepEqual(off.denied_hosts, [`files.test:${p1}`]);
        const res = await runCode(srv, "sh", "true", { session_id: sess.session_id, network: { allow: [`files.test:${p1}`] } });
        assert.equal(res.isError, true);
        assert.match(text(res), /a session's runs have the session's network/);
        assert.equal((await srv.close()).code, 0);
});

// Over HTTP the messages ride the call's own exchange (an event stream ending with the
// result); another HTTP session of the same server, listening at "debug", hears none of them.
test("a client that asked for logging hears every decision before the result, and no other client does", { skip, timeout: 120_000 }, async () => {
        const { p1 } = net_;
        const srv = await startServer({ args: serverArgs() });
        const logs = [], others = [];
        srv.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
        await srv.client.setLoggingLevel("info");
        let other = null;
        if (TRANSPORT === "http") {
                other = new Client({ name: "other", version: "0.0.1" }, { capabilities: {} });
                await other.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
                other.setNotificationHandler(LoggingMessageNotificationSchema, (n) => others.push(n.params));
                await other.setLoggingLevel("debug");
        }
        const r = assertOk(await runCode(srv, "sh", `
                curl -sS --max-time 20 http://pypi.test:${p1}/hello.txt
                curl -s --max-time 20 http://files.test:${p1}/hello.txt >/dev/null`,
                { network: { allow: [`pypi.test:${p1}`] } }), srv);
        assert.equal(r.stdout, "hello from the internet\n", r.stderr);
        // No wait: the run's proxy events are sent before its result on the same stream.
        const egress = logs.filter((m) => /^egress /.test(m.data)).map((m) => `${m.level} ${m.data}`);
        const want = [
                new RegExp(`^info egress \\S+: allowed pypi\\.test:${p1} \\(198\\.18\\.\\d+\\.2\\)$`),
                new RegExp(`^info egress \\S+: closed pypi\\.test:${p1} after \\d+ bytes$`),
                new RegExp(`^warning egress \\S+: denied files\\.test:${p1}: files\\.test:${p1} is not in this sandbox's network allowlist$`),
        ];
        // The first connection's close and the second's refusal may come in either order.
        assert.equal(egress.length, want.length, `egress messages: ${JSON.stringify(egress)}`);
        for (const re of want)
                assert.equal(egress.filter((m) => re.test(m)).length, 1, `${re} in ${JSON.stringify(egress)}`);
        if (other) {
                assert.deepEqual(await other.ping(), {});
                assert.deepEqual(others.filter((m) => /egress/.test(m.data)), [],
                                 "another HTTP session heard this one's egress decisions");
                await other.close();
        }
        assert.equal((await srv.close()).code, 0);
});

// The server starts with a soft limit of 200 fds (hard 1024, what the sandboxes' own
// RLIMIT_NOFILE needs) and raises it to 1024; --run-fds 100 is all the run's proxy may
// hold. The run opens 600 connections to its proxy and holds them, sending nothing: before
// the budget, the proxy took 256 of them, more than the server's 200 fds left room for.
test("a run holding hundreds of proxy connections cannot take the server's fds: /healthz and a new HTTP client are served; the soft limit is raised",
     { skip: skip || (TRANSPORT !== "http" && "HTTP only: the MSP_MCP_TRANSPORT=http pass") ||
             (!have("prlimit") && "prlimit (util-linux) needed to start the server with a low soft limit"), timeout: 180_000 }, async () => {
        const { p1 } = net_;
        const s = await spawnHttpServer({ wrap: ["prlimit", "--nofile=200:1024", "--"],
                                          args: [...serverArgs(), "--max-concurrent", "2", "--run-fds", "100"] });
        const limits = fs.readFileSync(`/proc/${s.proc.pid}/limits`, "utf8");
        assert.match(limits, /^Max open files\s+1024\s+1024\s+files/m, limits);
        const client = new Client({ name: "holder", version: "0" }, { capabilities: {} });
        await client.connect(new StreamableHTTPClientTransport(new URL(s.url)));
        const held = client.callTool({ name: "run_code", arguments: { language: "python", network: { allow: [`pypi.test:${p1}`] }, code: `
import socket, time
held = []
for i in range(600):
    try:
        held.append(socket.create_connection(("127.0.0.1", 3128), timeout=5))
    except OSError as e:
        print("connect", i, e)
        break
print("opened", len(held), flush=True)
time.sleep(20)
` } }, undefined, { timeout: CALL_TIMEOUT });
        const fds = () => fs.readdirSync(`/proc/${s.proc.pid}/fd`).length;
        let done = false;
        held.finally(() => { done = true; });
        await waitFor("the proxy refusing connections, or the server out of fds",
                      () => /closed a new connection/.test(s.log()) || fds() >= 195 ||
                            (done && assert.fail(`the run ended first: ${s.log().slice(-3000)}`)), 60_000, 50);
        const healthz = await fetch(s.url.replace(/\/mcp$/, "/healthz"), { signal: AbortSignal.timeout(10_000) });
        assert.equal(healthz.status, 200);
        const other = new Client({ name: "newcomer", version: "0" }, { capabilities: {} });
        await other.connect(new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { signal: AbortSignal.timeout(20_000) } }));
        const r = await other.callTool({ name: "run_code", arguments: { language: "sh", code: "echo served" } });
        assert.equal(r.structuredContent?.stdout, "served\n", text(r));
        await other.close();
        assert.ok(fds() < 100 + 80, `msp-mcp holds ${fds()} fds, its proxy at most 100`);
        const h = await held;
        assert.match(h.structuredContent.stdout, /^opened 600$/m, text(h));
        // The refusal is one decision in the log, not one line per connection.
        const refusals = s.log().match(/egress \S+: closed a new connection: the run's fd budget \(100, --run-fds\) is spent/g) ?? [];
        assert.ok(refusals.length >= 1 && refusals.length <= 5, s.log().slice(-3000));
        await client.close();
        assert.deepEqual(await stopProcess(s.proc), { code: 0, signal: null });
});
