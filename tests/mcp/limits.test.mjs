// Limits: the wall-clock timeout, the memory limit (OOM kill), the pids limit (fork bomb),
// the output cap (flood), and the network (none but loopback).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startServer, skipReason, finishAll, runCode, assertOk, hostAddress, text, waitFor, AS_USER,
         TRANSPORT } from "./lib.mjs";

const skip = skipReason();
let srv;

before(async () => {
        if (skip) return;
        srv = await startServer();
});
after(finishAll);

test("a timeout: while true with timeout_ms 500 → timed_out, and ping right after", { skip, timeout: 60_000 }, async () => {
        const t0 = Date.now();
        const res = await runCode(srv, "sh", "echo spinning; while true; do :; done", { timeout_ms: 500 });
        const took = Date.now() - t0;
        assert.equal(res.isError, true);
        const out = res.structuredContent;
        assert.equal(out.timed_out, true);
        assert.equal(out.stdout, "spinning\n", "output before the kill is kept");
        assert.equal(out.exit_code, null);
        assert.ok(out.duration_ms >= 450 && out.duration_ms < 10_000, `duration_ms ${out.duration_ms}`);
        assert.ok(took < 15_000, `the result came ${took} ms after the call`);
        assert.match(text(res), /time/i);
        assert.deepEqual(await srv.client.ping(), {});
});

test("a timeout kills the whole process tree, also background children", { skip, timeout: 60_000 }, async () => {
        const res = await runCode(srv, "sh", "sleep 100 & sleep 100 & (while :; do :; done) & wait", { timeout_ms: 700 });
        assert.equal(res.structuredContent.timed_out, true);
        assert.deepEqual(await srv.client.ping(), {});
});

test("a memory hog with memory_mb 32 is OOM-killed (oom_killed, isError)", { skip, timeout: 60_000 }, async () => {
        // b"x" * n writes every page (a bytearray of zeros might stay untouched).
        const res = await runCode(srv, "python", "a = []\nwhile True:\n    a.append(b'x' * (1 << 20))", { memory_mb: 32, timeout_ms: 30_000 });
        assert.equal(res.isError, true, JSON.stringify(res.structuredContent));
        assert.equal(res.structuredContent.timed_out, false);
        if (AS_USER) {
                // No cgroup: RLIMIT_DATA refuses the allocation instead of an OOM kill.
                assert.equal(res.structuredContent.oom_killed, false);
                assert.match(res.structuredContent.stderr, /MemoryError/, JSON.stringify(res.structuredContent));
        } else {
                assert.equal(res.structuredContent.oom_killed, true, JSON.stringify(res.structuredContent));
                assert.match(text(res), /memory|oom/i);
        }
        // Within the limit, the same program style is fine.
        const ok = await runCode(srv, "python", "a = [b'x' * (1 << 20) for _ in range(8)]\nprint(len(a))", { memory_mb: 64 });
        assert.equal(assertOk(ok, srv).stdout, "8\n");
        assert.equal(ok.structuredContent.oom_killed, false);
});

test("a fork bomb: the pids limit holds, the server stays responsive, the result comes back", { skip, timeout: 120_000 }, async () => {
        const bomb = runCode(srv, "sh", "echo boom; f() { f | f & }; f; sleep 2; echo survived", { pids: 32, timeout_ms: 5_000 });
        // While it runs, the server answers.
        const t0 = Date.now();
        assert.deepEqual(await srv.client.ping(), {});
        assert.ok(Date.now() - t0 < 5_000, "ping during the fork bomb");
        const res = await bomb;
        assert.ok(res.structuredContent, JSON.stringify(res).slice(0, 500));
        assert.match(res.structuredContent.stdout, /^boom\n/);
        // The limit itself: of 60 forks under pids 20, at most 19 succeed (EAGAIN after).
        const code = [
                "import os, signal, time",
                "kids, err = [], None",
                "for i in range(60):",
                "    try:",
                "        pid = os.fork()",
                "    except OSError as e:",
                "        err = e.errno; break",
                "    if pid == 0:",
                "        time.sleep(30); os._exit(0)",
                "    kids.append(pid)",
                "print(len(kids), err)",
                "for k in kids: os.kill(k, signal.SIGKILL)",
        ].join("\n");
        const lim = await runCode(srv, "python", code, { pids: 20, timeout_ms: 20_000 });
        const [forked, errno] = assertOk(lim, srv, "fork count").stdout.trim().split(" ");
        assert.ok(Number(forked) < 20, `${forked} forks under pids 20`);
        assert.equal(errno, "11", "fork fails with EAGAIN");
        assert.equal(assertOk(await runCode(srv, "sh", "echo alive"), srv).stdout, "alive\n");
});

test("two runs at once each get their own pids budget (run by a user: RLIMIT_NPROC, counted per sandbox user namespace)", { skip, timeout: 120_000 }, async () => {
        const code = [
                "import os, sys, time",
                "n = 0",
                "for i in range(15):",
                "    try:",
                "        pid = os.fork()",
                "    except OSError:",
                "        break",
                "    if pid == 0:",
                "        time.sleep(20); os._exit(0)",
                "    n += 1",
                "print('held', n)",
                "time.sleep(float(sys.argv[1]))",
        ].join("\n");
        let held = false;
        const a = runCode(srv, "python", code, { pids: 20, args: ["8"], timeout_ms: 30_000 },
                          { onprogress: (n) => { if (/held/.test(n.message ?? "")) held = true; } });
        await waitFor("the first run to hold its processes", () => held, 30_000);
        const b = assertOk(await runCode(srv, "python", code, { pids: 20, args: ["0"], timeout_ms: 30_000 }), srv, "second run");
        assert.equal(b.stdout, "held 15\n", "the second run forks as many while the first holds 17 processes");
        assert.equal(assertOk(await a, srv, "first run").stdout, "held 15\n");
});

test("an output flood (yes | head -c 50M) is truncated; the full log is a resource", { skip, timeout: 120_000 }, async () => {
        const res = await runCode(srv, "sh", "yes | head -c 50M; echo tail-of-err >&2", { timeout_ms: 60_000 }, { timeout: 110_000 });
        const out = assertOk(res, srv);
        assert.equal(out.truncated, true);
        assert.ok(out.stdout.length > 0 && out.stdout.length < 50 * 1024 * 1024 / 4,
                  `stdout in the result: ${out.stdout.length} bytes`);
        assert.ok(out.stdout.startsWith("y\ny\n"));
        assert.equal(out.stderr, "tail-of-err\n");
        // The whole message stays bounded.
        assert.ok(JSON.stringify(res).length < 3 * out.stdout.length + 65536);
        // the text names the run's own resources, not a placeholder
        assert.ok(text(res).includes(`sandbox://runs/${out.run_id}/stdout`), text(res).slice(0, 300));
        assert.ok(!text(res).includes("<run_id>"), text(res).slice(0, 300));
        const log = await srv.client.readResource({ uri: `sandbox://runs/${out.run_id}/stdout` });
        const body = log.contents[0].text ?? Buffer.from(log.contents[0].blob, "base64").toString();
        assert.ok(body.length >= out.stdout.length, `resource ${body.length} < result ${out.stdout.length}`);
        assert.ok(body.startsWith("y\ny\n"));
        // One message must fit the SDK's 10 MiB stdio buffer: a long log comes back cut,
        // and says so.
        assert.ok(JSON.stringify(log).length < 10 * 1024 * 1024, "the resources/read answer fits one SDK message");
        if (body.length < 50 * 1024 * 1024) assert.equal(log.contents[0]._meta?.["msp/truncated"], true);
        assert.deepEqual(await srv.client.ping(), {});
});

test("network: the host's address is unreachable from inside (TCP and UDP); UDP on loopback works; only lo", { skip, timeout: 60_000 }, async (t) => {
        const addr = hostAddress();
        if (!addr) return t.skip("the host has no non-loopback IPv4 address to try");
        let connections = 0;
        const server = net.createServer((s) => { connections++; s.on("error", () => {}); s.end("hello\n"); });
        await new Promise((r) => server.listen(0, "0.0.0.0", r));
        const port = server.address().port;
        try {
                // The listener is reachable from here: the sandbox is what makes the difference.
                await new Promise((resolve, reject) => {
                        const c = net.connect(port, addr, () => { c.destroy(); resolve(); });
                        c.on("error", reject);
                });
                const before = connections;
                // The network namespace has only loopback: no route to the host, for TCP and
                // for UDP alike (ENETUNREACH).
                const code = [
                        "import socket",
                        "try:",
                        `    socket.create_connection(("${addr}", ${port}), timeout=3)`,
                        "    print('tcp connected')",
                        "except OSError as e:",
                        "    print('tcp refused', e.errno)",
                        "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
                        "try:",
                        `    u.sendto(b'x', ("${addr}", ${port}))`,
                        "    print('udp sent')",
                        "except OSError as e:",
                        "    print('udp refused', e.errno)",
                        "a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); a.bind(('127.0.0.1', 0))",
                        "b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); b.sendto(b'ok', a.getsockname())",
                        "print('udp loopback', a.recv(2).decode())",
                        "print(' '.join(sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:])))",
                ].join("\n");
                const res = await runCode(srv, "python", code, { timeout_ms: 20_000 });
                const out = assertOk(res, srv).stdout.split("\n");
                assert.equal(out[0], "tcp refused 101", "ENETUNREACH: no route out of the network namespace");
                assert.equal(out[1], "udp refused 101", "ENETUNREACH: no route out of the network namespace");
                assert.equal(out[2], "udp loopback ok");
                assert.equal(out[3], "lo", "the only interface is loopback");
                assert.equal(connections, before, "no connection reached the host's listener");
        } finally {
                server.close();
        }
});

test("network: TCP on loopback inside the sandbox works", {
        skip,
        timeout: 60_000,
}, async () => {
        const code = [
                "import socket",
                "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)",
                "c = socket.create_connection(srv.getsockname(), timeout=3)",
                "a, _ = srv.accept(); a.sendall(b'ok'); print('loopback', c.recv(2).decode())",
        ].join("\n");
        assert.equal(assertOk(await runCode(srv, "python", code), srv).stdout, "loopback ok\n");
});

// Twelve callers (over HTTP each its own MCP session, one tenant) each run a fresh run that
// writes three 100 KiB files to out/: 3.6 MB, against a tenant's budget of 1 MiB.
test("kept out/ files of fresh runs stay on disk within --kept-files-tenant-size; the oldest are dropped and say so",
     { skip, timeout: 180_000 }, async () => {
        const s = await startServer({ args: ["--kept-files-size", "2M", "--kept-files-tenant-size", "1M"] });
        const callers = [];
        for (let i = 0; i < 12; i++) {
                if (TRANSPORT !== "http") { callers.push(s); continue; }
                const client = new Client({ name: `caller-${i}`, version: "0" }, { capabilities: {} });
                await client.connect(new StreamableHTTPClientTransport(new URL(s.url)));
                callers.push({ client, log: s.log });
        }
        const runs = [];
        for (const [i, c] of callers.entries()) {
                const out = assertOk(await runCode(c, "sh", `mkdir -p out
                        for f in a b c; do head -c 102400 /dev/zero | tr '\\0' '${"abcdefghijkl"[i]}' > out/$f.txt; done`), s);
                assert.equal(out.files.length, 3, JSON.stringify(out.files));
                runs.push(out);
        }
        const read = async (c, uri) => (await c.client.readResource({ uri })).contents[0].text;
        // The newest are there, whichever session asks (the same tenant).
        const last = runs.at(-1).files.find((f) => f.path === "out/c.txt");
        assert.equal(await read(callers[0], last.uri), "l".repeat(102400));
        // The oldest went, and the server said so.
        const first = runs[0].files.find((f) => f.path === "out/a.txt");
        await assert.rejects(read(callers[0], first.uri), /dropped/);
        assert.ok(s.log().includes(`kept file ${first.uri} dropped: the oldest of its tenant's (--kept-files-tenant-size)`),
                  s.log().slice(-2000));
        // On disk, within the budget; nothing of it in the server's memory.
        const dir = path.join(s.stateDir, s.instance(), "kept");
        const bytes = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
        assert.ok(bytes > 0 && bytes <= 1024 * 1024, `${bytes} bytes kept`);
        for (const c of callers) if (c !== s) await c.client.close();
        assert.equal((await s.close()).code, 0);
});

test("the server exits 0 on EOF and leaves nothing behind", { skip, timeout: 60_000 }, async () => {
        const { code, signal } = await srv.close();
        assert.equal(signal, null);
        assert.equal(code, 0);
        await finishAll();
});
