// Network sessions (--allow-network): the sandbox keeps its own network namespace and gets
// outbound access through user-mode networking (slirp4netns), never the host's namespace.
// Host loopback stays out of reach, the host's sockets are not in the sandbox's
// /proc/net/tcp, a bind inside does not take the host's port, and an "outside" the test
// makes (a network namespace behind a veth pair, with an HTTP server on 198.18.x.2) is
// reachable. No traffic leaves the machine.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { startServer, skipReason, finishAll, call, runCode, text, assertOk, waitFor,
         runSync, tmpStateDir } from "./lib.mjs";

const RUNC = ["/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"].find((p) => fs.existsSync(p));
const SLIRP = (process.env.PATH ?? "").split(":").map((d) => path.join(d, "slirp4netns")).find((p) => fs.existsSync(p));

const skip = skipReason() || (SLIRP ? false : "slirp4netns not installed (contrib/install-deps.sh test)");
after(finishAll);

function listen(server, port, host) {
        return new Promise((resolve, reject) => {
                server.once("error", reject);
                server.listen(port, host, () => resolve(server.address().port));
        });
}

// A free TCP port on the host (bound and released).
async function freePort() {
        const s = net.createServer();
        const port = await listen(s, 0, "0.0.0.0");
        await new Promise((r) => s.close(r));
        return port;
}

// The "outside": a network namespace joined to the host by a veth pair (host side
// 198.18.N.1/30, outside 198.18.N.2/30) with an HTTP server on the outside address.
// Each outside gets names and a subnet of its own: a deleted network namespace takes its
// veth pair down asynchronously, so the next test cannot reuse them at once.
let outsideCount = 0;

async function makeOutside(t) {
        const k = outsideCount++;
        const n = 1 + ((process.pid + k) % 250);
        const ns = `msp-net-test-${process.pid}-${k}`, host = `mspn${process.pid % 100000}x${k}`;
        const hostAddr = `198.18.${n}.1`, outAddr = `198.18.${n}.2`;
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-net-outside-"));
        fs.writeFileSync(path.join(dir, "hello.txt"), "hello from outside\n");
        const sh = (cmd) => {
                const r = runSync("sh", ["-ec", cmd]);
                assert.equal(r.status, 0, `${cmd}: ${r.stderr}`);
        };
        const cleanup = [];
        t.after(() => { for (const f of cleanup.reverse()) f(); });
        sh(`ip netns add ${ns}`);
        cleanup.push(() => runSync("ip", ["netns", "del", ns]));        // takes the veth pair along
        cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
        cleanup.push(() => runSync("ip", ["link", "del", host]));        // both ends, synchronously
        sh(`ip link add ${host} type veth peer name eth0 netns ${ns}
            ip addr add ${hostAddr}/30 dev ${host}
            ip link set ${host} up
            ip -n ${ns} addr add ${outAddr}/30 dev eth0
            ip -n ${ns} link set eth0 up
            ip -n ${ns} link set lo up`);
        const port = await freePort();
        const srv = spawn("ip", ["netns", "exec", ns, "python3", "-m", "http.server", "--bind", outAddr,
                                 "--directory", dir, String(port)], { stdio: "ignore" });
        cleanup.push(() => srv.kill("SIGKILL"));
        // Up when the host can fetch from it (bounded).
        await waitFor("the outside HTTP server", () => runSync("python3", ["-c",
                `import urllib.request; urllib.request.urlopen("http://${outAddr}:${port}/hello.txt", timeout=1)`]).status === 0,
                15_000, 100);
        return { hostAddr, url: `http://${outAddr}:${port}/hello.txt` };
}

// What the sandbox sees: connections to host loopback (directly and through slirp's
// gateway), its interfaces, whether a host socket shows in /proc/net/tcp*, whether the host
// can take the port the sandbox holds (asked of a host probe), and the outside's page.
const probeCode = ({ loopPort, bindPort, hostAddr, probePort, url }) => `
import json, socket, urllib.request
def conn(addr, port):
    try:
        c = socket.create_connection((addr, port), timeout=3)
        d = c.recv(16).decode().strip()
        c.close()
        return "got " + d
    except OSError as e:
        return "refused %s" % (e.errno,)
r = {}
r["loopback"] = conn("127.0.0.1", ${loopPort})
r["gateway"] = conn("10.0.2.2", ${loopPort})
r["ifaces"] = sorted(n for _, n in socket.if_nameindex())
tcp = open("/proc/net/tcp").read() + open("/proc/net/tcp6").read()
r["host_socket_seen"] = (":%04X " % ${loopPort}) in tcp
s = socket.socket()
s.bind(("0.0.0.0", ${bindPort}))
s.listen()
r["host_port"] = conn("${hostAddr}", ${probePort})
r["outside"] = urllib.request.urlopen("${url}", timeout=10).read().decode()
print(json.dumps(r))
`;

// slirp4netns processes alive (zombies included) that this test did not see before.
function slirpPids() {
        return fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
                try { return fs.readFileSync(`/proc/${p}/comm`, "utf8").trim() === "slirp4netns"; } catch { return false; }
        });
}

for (const [name, runtime] of [["msp", undefined], ["runc", RUNC]]) {
        test(`a network session has its own namespace with outbound-only user-mode networking (${name})`, {
                skip: skip || (name === "runc" && !runtime ? "runc not installed" : false), timeout: 120_000,
        }, async (t) => {
                const outside = await makeOutside(t);
                // A service on host loopback the sandbox must not reach.
                const loop = net.createServer((s) => { s.on("error", () => {}); s.end("secret\n"); });
                const loopPort = await listen(loop, 0, "127.0.0.1");
                t.after(() => loop.close());
                // Answers whether the host can take bindPort while the sandbox holds it.
                const bindPort = await freePort();
                const probe = net.createServer((s) => {
                        s.on("error", () => {});
                        const x = net.createServer();
                        x.once("error", () => s.end("busy\n"));
                        x.listen(bindPort, "0.0.0.0", () => x.close(() => s.end("free\n")));
                });
                const probePort = await listen(probe, 0, outside.hostAddr);
                t.after(() => probe.close());

                const before = new Set(slirpPids());
                const srv = await startServer({ runtime, args: ["--allow-network"] });
                const sess = assertOk(await call(srv, "session_create", { network: true }), srv);
                const res = assertOk(await runCode(srv, "python", probeCode({
                        loopPort, bindPort, hostAddr: outside.hostAddr, probePort, url: outside.url,
                }), { session_id: sess.session_id }), srv);
                assert.equal(res.exit_code, 0, res.stderr);
                const r = JSON.parse(res.stdout);
                // All at once, so that a failure shows every check that failed.
                assert.deepEqual({
                        hostLoopback: r.loopback.startsWith("refused"),  // host 127.0.0.1 is not the sandbox's
                        slirpGateway: r.gateway.startsWith("refused"),   // nor behind slirp's gateway
                        ifaces: r.ifaces,                                // own namespace: lo and the tap
                        hostSocketSeen: r.host_socket_seen,              // /proc/net/tcp is the sandbox's
                        hostPort: r.host_port,                           // a bind inside leaves the host's port free
                        outside: r.outside,                              // outbound works
                }, {
                        hostLoopback: true, slirpGateway: true, ifaces: ["lo", "tap0"],
                        hostSocketSeen: false, hostPort: "got free", outside: "hello from outside\n",
                }, JSON.stringify(r));

                // The session keeps its network across calls: a second run goes out again.
                const again = assertOk(await runCode(srv, "python",
                        `import urllib.request; print(urllib.request.urlopen("${outside.url}", timeout=10).read().decode(), end="")`,
                        { session_id: sess.session_id }), srv);
                assert.equal(again.stdout, "hello from outside\n", again.stderr);

                // One helper for the session's sandbox, alive across its calls, gone (and
                // reaped) once the session is closed.
                assert.equal(slirpPids().filter((p) => !before.has(p)).length, 1, "one slirp4netns for the session");
                assertOk(await call(srv, "session_close", { session_id: sess.session_id }), srv);
                await waitFor("the session's slirp4netns gone", () => slirpPids().every((p) => before.has(p)), 10_000, 50);
                assert.equal((await srv.close()).code, 0);
        });
}

test("a network run's slirp4netns ends when msp-mcp is killed mid-run; a restart cleans the rest", { skip, timeout: 120_000 }, async () => {
        const before = new Set(slirpPids());
        const stateDir = tmpStateDir();
        const a = await startServer({ stateDir, args: ["--allow-network"] });
        const sess = assertOk(await call(a, "session_create", { network: true }), a).session_id;
        let started = false;
        const p = runCode(a, "sh", "echo started; sleep 60", { session_id: sess, timeout_ms: 120_000 },
                          { onprogress: (n) => { if (/started/.test(n.message ?? "")) started = true; } });
        p.catch(() => {});      // rejected when the connection goes away
        await waitFor("the run to start", () => started, 30_000);
        const helpers = slirpPids().filter((x) => !before.has(x));
        assert.equal(helpers.length, 1, "one helper for the run");
        const exited = new Promise((r) => a.proc.once("exit", r));
        a.proc.kill("SIGKILL");
        await exited;
        await a.client.close().catch(() => {});
        // Its exit FIFO lost its only writer with msp-mcp: the helper goes though the
        // sandbox still runs (until the next start cleans the dead instance).
        await waitFor("the helper to exit with msp-mcp", () => !slirpPids().includes(helpers[0]), 10_000, 50);
        const b = await startServer({ stateDir, args: ["--allow-network"] });
        await waitFor("the dead instance to be cleaned by the restart", () => fs.readdirSync(stateDir)
                .filter((n) => n.startsWith("inst-") && n !== b.instance()).length === 0, 30_000, 100);
        assert.equal((await b.close()).code, 0);
});

test("without its user-mode networking helper a network session is refused, naming it", { skip: skipReason(), timeout: 60_000 }, async () => {
        const srv = await startServer({ args: ["--allow-network", "--slirp4netns", "/nonexistent/slirp4netns"] });
        const res = await call(srv, "session_create", { network: true });
        assert.equal(res.isError, true);
        assert.match(text(res), /slirp4netns/);
        assertOk(await call(srv, "session_create", {}), srv);
        const chk = runSync(process.env.MSP_MCP, ["--check", "--allow-network", "--slirp4netns", "/nonexistent/slirp4netns"]);
        assert.match(chk.stdout, /^absent\s+network-helper \/nonexistent\/slirp4netns: not found, network sessions are refused$/m);
        assert.equal(chk.status, 0, "not part of the policy: the check passes");
        assert.equal((await srv.close()).code, 0);
});

test("a helper that does not bring up the network fails the run with the reason; nothing is left", { skip: skipReason(), timeout: 60_000 }, async () => {
        const srv = await startServer({ args: ["--allow-network", "--slirp4netns", "/bin/false"] });
        const sess = assertOk(await call(srv, "session_create", { network: true }), srv);
        const res = await runCode(srv, "sh", "echo never", { session_id: sess.session_id });
        assert.equal(res.isError, true);
        assert.equal(res.structuredContent.stdout, "", "the program never ran");
        assert.match(res.structuredContent.stderr, /network helper: \/bin\/false did not bring up the network/);
        assert.equal((await srv.close()).code, 0);
});
