// Hardening of the sandbox's view and budgets: what a sandboxed program must not reach or
// exhaust on the host (recursive read-only system binds, socket families, kernel budgets
// shared with the host, file modes of the agent's code, host paths in /proc).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startServer, rawServer, tmpStateDir, skipReason, finishAll, runCode, assertOk, call, waitFor, runSync, MSP, MSP_MCP, containersOf,
         nsenterArgs, serverIds, rootOnly, AS_USER } from "./lib.mjs";

const skip = skipReason();
const RUNC = ["/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"].find((p) => fs.existsSync(p));
let srv;

before(async () => {
        if (skip) return;
        srv = await startServer();
});
after(finishAll);

// msp-mcp in a private mount namespace with a writable, suid, dev tmpfs on /usr/local: a
// submount under the bound /usr, as a host may have.
const SUBMOUNT_WRAP = ["unshare", "-m", "--propagation", "private", "sh", "-c",
        'mount -t tmpfs -o size=1m,mode=0755,suid,dev msp-test-sub /usr/local && exec "$@"', "sh"];

const SUBMOUNT_CHECK = [
        "import os",
        "line = [l for l in open('/proc/self/mountinfo') if l.split()[4] == '/usr/local'][0]",
        "print(sorted(set(line.split()[5].split(',')) & {'ro', 'rw', 'nosuid', 'nodev'}))",
        "try:",
        "    open('/usr/local/x', 'w'); print('written')",
        "except OSError as e:",
        "    print('refused')",
].join("\n");

for (const [name, runtime] of [["msp", undefined], ["runc", RUNC]]) {
        test(`a submount under a bound system dir is read-only, nosuid, nodev inside (${name})`, { skip: skip || (runtime === undefined && name === "runc" ? "runc not installed" : false) || rootOnly("the server's wrapper mounts a tmpfs below /usr"), timeout: 120_000 }, async () => {
                const s = await startServer({ wrap: SUBMOUNT_WRAP, ...(runtime ? { runtime } : {}) });
                const out = assertOk(await runCode(s, "python", SUBMOUNT_CHECK), s, "submount check");
                assert.equal(out.stdout, "['nodev', 'nosuid', 'ro']\nrefused\n");
                assert.equal((await s.close()).code, 0);
        });
}

// The system view is bound once on the skeleton in msp-mcp's mount namespace: in the
// sandbox's mount namespace (a copy owned by its user namespace) the kernel locks the binds.
// Even with every capability in that user namespace (entered from the host), a bind cannot
// be made writable again (remount: EPERM) nor unmounted to show what is below (EINVAL).
const HOLD = [
        "import os, time",
        "open('/workspace/held', 'w').close()",
        "while not os.path.exists('/workspace/done'): time.sleep(0.02)",
].join("\n");
const UNLOCK = [
        "import ctypes, errno, sys",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "def e(r): return 'ok' if r == 0 else errno.errorcode[ctypes.get_errno()]",
        "for p in sys.argv[1:]:",
        "    print(p, e(libc.mount(None, p.encode(), None, 32 | 4096, None)), e(libc.umount2(p.encode(), 2)))",
        "print([sorted(set(l.split()[5].split(',')) & {'ro', 'rw', 'nosuid', 'nodev'}) for l in open('/proc/1/mountinfo') if l.split()[4] == '/usr'])",
].join("\n");

test("the system view's binds are locked read-only in the sandbox's namespaces", { skip, timeout: 60_000 }, async () => {
        const res = runCode(srv, "python", HOLD, { timeout_ms: 30_000 });
        const inst = srv.instance(), root = path.join(srv.stateDir, inst, "runtime");
        const id = await waitFor("the sandbox holding", () => containersOf(srv.stateDir, inst).find((c) =>
                runSync("nsenter", [...nsenterArgs(srv.pid), "test", "-e", path.join(srv.stateDir, inst, "ws", c, "held")]).status === 0), 20_000);
        try {
                const { pid } = JSON.parse(runSync(MSP, ["--root", root, "state", id]).stdout);
                const out = runSync("nsenter", ["-t", String(pid), "-U", "-m", "-r", "-w", "--", "python3", "-c", UNLOCK,
                        "/usr", "/etc/ld.so.cache", "/etc/ssl/certs"]);
                assert.equal(out.stdout, "/usr EPERM EINVAL\n/etc/ld.so.cache EPERM EINVAL\n/etc/ssl/certs EPERM EINVAL\n" +
                        "[['nodev', 'nosuid', 'ro']]\n", out.stderr);
        } finally {
                runSync("nsenter", [...nsenterArgs(srv.pid), "touch", path.join(srv.stateDir, inst, "ws", id, "done")]);
        }
        assertOk(await res, srv, "held run");
});

// Socket families: unix, inet, inet6 and netlink work; vsock (not confined by a network
// namespace), packet, bluetooth, can, xdp, alg, tipc... are EAFNOSUPPORT. Native AIO
// (io_setup, charged to the host-wide fs.aio-max-nr) is ENOSYS.
const FAMILIES = [
        "import ctypes, errno, os, socket",
        "def try_family(fam, kind=socket.SOCK_DGRAM, proto=0):",
        "    try:",
        "        socket.socket(fam, kind, proto).close(); return 'ok'",
        "    except OSError as e:",
        "        return errno.errorcode[e.errno]",
        "print(try_family(socket.AF_UNIX), try_family(socket.AF_INET), try_family(socket.AF_INET6),",
        "      try_family(socket.AF_NETLINK, socket.SOCK_RAW, 0), try_family(socket.AF_NETLINK, socket.SOCK_RAW, 4))",
        "print(*[try_family(f) for f in (40, 17, 31, 29, 44, 38, 30, 5)])",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "ctx = ctypes.c_ulong(0)",
        "r = libc.syscall(206, 1, ctypes.byref(ctx))",
        "print(r, errno.errorcode.get(ctypes.get_errno()))",
].join("\n");

test("socket families other than unix, inet, inet6, netlink route are refused; io_setup is ENOSYS", { skip, timeout: 60_000 }, async () => {
        const out = assertOk(await runCode(srv, "python", FAMILIES), srv, "families");
        const [ok, bad, aio] = out.stdout.trim().split("\n");
        assert.equal(ok, "ok ok ok ok EPROTONOSUPPORT", "unix, inet, inet6, netlink route; not sock_diag");
        assert.equal(bad, Array(8).fill("EAFNOSUPPORT").join(" "), "vsock, packet, bluetooth, can, xdp, alg, tipc, appletalk");
        assert.equal(aio, "-1 ENOSYS");
});

// Another local user (nobody) reads a file in msp-mcp's mount namespace (where the
// workspaces are mounted): the error, or "" when it could.
function readAsNobody(srv, file) {
        const r = runSync("nsenter", ["-t", String(srv.pid), "-m", "setpriv", "--reuid=65534",
                                      "--regid=65534", "--clear-groups", "cat", file]);
        return r.status === 0 ? "" : r.stderr;
}

function readAsRoot(srv, file) {
        return runSync("nsenter", ["-t", String(srv.pid), "-m", "cat", file]).stdout;
}

test("the agent's code and workspace are unreadable by other local users while it runs", { skip, timeout: 60_000 }, async () => {
        const code = [
                "import os, time",
                "open('/workspace/secret', 'w').write('API_KEY=1')",
                "while not os.path.exists('/workspace/done'): time.sleep(0.02)",
                "print('API_KEY=1' if open('/.msp/main.py').read().count('API_KEY') else 'no code')",
        ].join("\n");
        const res = runCode(srv, "python", code, { timeout_ms: 30_000 });
        const inst = path.join(srv.stateDir, srv.instance());
        const [id] = await waitFor("the run's workspace file", () => {
                const ids = fs.readdirSync(path.join(inst, "ws"));
                return ids.length === 1 && readAsRoot(srv, path.join(inst, "ws", ids[0], "secret")) ? ids : null;
        }, 20_000);
        const prog = path.join(inst, "b", id, "code", "main.py");
        assert.match(readAsRoot(srv, prog), /API_KEY/, "root reads the code");
        assert.match(readAsNobody(srv, prog), /Permission denied/, `nobody reads ${prog}`);
        assert.match(readAsNobody(srv, path.join(inst, "ws", id, "secret")), /Permission denied/, "nobody reads the workspace");
        runSync("nsenter", [...nsenterArgs(srv.pid), "touch", path.join(inst, "ws", id, "done")]);
        assert.equal(assertOk(await res, srv, "the run").stdout, "API_KEY=1\n", "the sandbox reads its code");
});

test("a session's workspace is unreadable by other local users", { skip, timeout: 60_000 }, async () => {
        const sess = assertOk(await call(srv, "session_create", {}), srv, "session_create");
        assertOk(await runCode(srv, "sh", "echo API_KEY=1 > secret", { session_id: sess.session_id }), srv, "write");
        const file = path.join(srv.stateDir, "sessions", sess.session_id, "merged", "secret");
        assert.equal(readAsRoot(srv, file), "API_KEY=1\n");
        assert.match(readAsNobody(srv, file), /Permission denied/);
        assert.ok(!(await call(srv, "session_close", { session_id: sess.session_id })).isError, "session_close");
});

test("the sandbox sees no host path in its mountinfo, and not the kernel's config, symbols or memory map", { skip, timeout: 60_000 }, async () => {
        const out = assertOk(await runCode(srv, "sh", [
                "cat /proc/self/mountinfo",
                "echo ---",
                "for f in /proc/config.gz /proc/iomem /proc/ioports /proc/kallsyms; do",
                "  [ -e $f ] || continue; echo $f $(wc -c < $f)",
                "done",
        ].join("\n")), srv, "mountinfo");
        const [mountinfo, masked] = out.stdout.split("---\n");
        for (const p of [srv.stateDir, path.dirname(MSP_MCP), path.dirname(MSP)])
                assert.ok(!mountinfo.includes(p), `${p} in the sandbox's mountinfo:\n${mountinfo}`);
        for (const line of masked.trim().split("\n").filter(Boolean))
                assert.match(line, / 0$/, `readable: ${line}`);
        assert.ok(masked.includes("/proc/kallsyms"), masked);
});

// A sandbox's user namespace has its own budgets (/proc/sys/user): they cap what one sandbox
// takes from its owner's. A sandbox takes every inotify instance it can and holds them while held() runs on the host;
// it prints the count, the errno that stopped it, its max_user_namespaces and the owner of its
// user namespace as it sees it (NS_GET_OWNER_UID).
const HOLD_INOTIFY = [
        "import ctypes, errno, fcntl, os, struct, time",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "fds = []",
        "while len(fds) < 200:",
        "    fd = libc.inotify_init1(0)",
        "    if fd < 0: break",
        "    fds.append(fd)",
        "err = errno.errorcode.get(ctypes.get_errno())",
        "ns = os.open('/proc/self/ns/user', os.O_RDONLY)",
        "owner = struct.unpack('I', fcntl.ioctl(ns, 0xb704, bytes(4)))[0]",
        "print(len(fds), err, open('/proc/sys/user/max_user_namespaces').read().strip(), owner)",
        "open('/workspace/held', 'w').close()",
        "while not os.path.exists('/workspace/done'): time.sleep(0.02)",
].join("\n");

async function sandboxHoldingInotify(held) {
        const res = runCode(srv, "python", HOLD_INOTIFY, { timeout_ms: 30_000 });
        const inst = path.join(srv.stateDir, srv.instance());
        const ws = await waitFor("the sandbox holding its inotify instances", () => {
                for (const id of fs.readdirSync(path.join(inst, "ws")))
                        if (runSync("nsenter", ["-t", String(srv.pid), "-m", "test", "-e", path.join(inst, "ws", id, "held")]).status === 0)
                                return path.join(inst, "ws", id);
                return null;
        }, 20_000);
        const during = held();
        runSync("nsenter", [...nsenterArgs(srv.pid), "touch", path.join(ws, "done")]);
        return { out: assertOk(await res, srv, "inotify run"), during };
}

test("a sandbox taking every inotify instance it can gets 16; host root still gets one", { skip, timeout: 60_000 }, async () => {
        const { out, during: host } = await sandboxHoldingInotify(() => runSync("python3", ["-c",
                "import ctypes, os; l = ctypes.CDLL(None, use_errno=True); fd = l.inotify_init1(0); print(fd >= 0, os.strerror(ctypes.get_errno()))"]));
        assert.match(out.stdout, /^16 EMFILE 0 \d+\n$/);
        assert.match(host.stdout, /^True /, `host root's inotify_init1 while the sandbox holds its instances: ${host.stdout}${host.stderr}`);
});

// What host root can take of its inotify budget (fs.inotify.max_user_instances): taken until
// EMFILE and given back.
const ROOT_INOTIFY = "import ctypes; l = ctypes.CDLL(None, use_errno=True); n = 0\n" +
        "while n < 100000 and l.inotify_init1(0) >= 0: n += 1\nprint(n)";

// msp-mcp --check's sandbox-userns line: false when msp-mcp makes the sandboxes' user
// namespaces (root of the host, with msp as the runtime or CAP_SYS_RESOURCE), else why not.
function sandboxUserns(runtime = MSP) {
        const dir = tmpStateDir();
        try {
                const r = runSync(MSP_MCP, ["--check", "--runtime", runtime, "--state-dir", dir]);
                const m = r.stdout.match(/^(ok|off) +sandbox-userns +(.*)$/m);
                assert.ok(m, r.stdout);
                return m[1] === "ok" ? false : `msp-mcp --check: ${m[2]}`;
        } finally {
                fs.rmSync(dir, { recursive: true, force: true });
        }
}

// The sandbox's user namespace is owned by its own host uid (msp-mcp makes it as that uid):
// what the sandbox charges to per-user budgets is charged to that uid, never to host root.
test("the sandbox's user namespace is owned by its unprivileged uid; its inotify instances are not host root's", { skip: skip || rootOnly("run by a user, msp-mcp's own user namespace owns the sandboxes'"), timeout: 60_000 }, async (t) => {
        const off = sandboxUserns();
        if (off) return t.skip(off);
        const before = Number(runSync("python3", ["-c", ROOT_INOTIFY]).stdout);
        const { out, during } = await sandboxHoldingInotify(() => Number(runSync("python3", ["-c", ROOT_INOTIFY]).stdout));
        // The owner as the sandbox sees it: its own uid (host 101000), not the overflow id
        // that host root (unmapped inside) shows as.
        assert.equal(out.stdout, "16 EMFILE 0 1000\n");
        assert.ok(before > 0, `host root could take ${before} inotify instances before the run`);
        // Other root processes may take a few meanwhile; the sandbox's 16 would show.
        assert.ok(before - during < 16, `host root: ${before} inotify instances before, ${during} while the sandbox holds 16`);
});

// The kernel keeps budgets per host uid (epoll watches, pipe buffers) and per user
// namespace owner up to the host (inotify, processes, pending signals, message queue bytes,
// locked memory). Nine sandboxes at once each take every inotify instance their namespace
// allows and hold them; on the host, each one's process uid and namespace owner are read.
// As root, each sandbox has host ids of its own (its slice) and owns its namespace: all nine
// get 16 (on one shared uid, eight took its 128 and the ninth got none). Run by a user, the
// top of the count is the user's: each sandbox's share is bounded so that --max-concurrent
// of them and the user fit in fs.inotify.max_user_instances, and all nine get that share;
// each still has a uid of its own, a slice of the user's subordinate range.
// On the host: "uid owner" of every sandboxed program whose arguments have the marker.
const HOST_IDS = [
        "import fcntl, os, struct, sys",
        "for p in os.listdir('/proc'):",
        "    try:",
        "        argv = open(f'/proc/{p}/cmdline', 'rb').read().split(b'\\0')",
        "        if sys.argv[1].encode() not in argv or b'/.msp/main.py' not in argv or argv[0].endswith(b'init'): continue",
        "        uid = [l.split()[1] for l in open(f'/proc/{p}/status') if l.startswith('Uid:')][0]",
        "        ns = os.open(f'/proc/{p}/ns/user', os.O_RDONLY)",
        "        print(uid, struct.unpack('I', fcntl.ioctl(ns, 0xb704, bytes(4)))[0])",
        "    except (OSError, ValueError):",
        "        pass",
].join("\n");

for (const [name, runtime] of [["msp", MSP], ["runc", RUNC]]) {
        test(`nine sandboxes at once each get their whole inotify share and a host uid of their own (${name})`, { skip: skip || (!runtime && "runc not installed"), timeout: 180_000 }, async () => {
                const N = 9;
                const s = await startServer({ runtime, args: ["--max-concurrent", String(N)] });
                const marker = `msp-slice-test-${process.pid}-${Date.now()}`;
                const runs = Array.from({ length: N }, () => runCode(s, "python", HOLD_INOTIFY, { args: [marker], timeout_ms: 120_000 }));
                const inst = path.join(s.stateDir, s.instance());
                const held = () => fs.readdirSync(path.join(inst, "ws")).filter((id) =>
                        runSync("nsenter", ["-t", String(s.pid), "-m", "test", "-e", path.join(inst, "ws", id, "held")]).status === 0);
                const wss = await waitFor(`${N} sandboxes holding their inotify instances`, () => {
                        const h = held();
                        return h.length === N ? h : null;
                }, 120_000, 100);
                const ids = runSync("python3", ["-c", HOST_IDS, marker]).stdout.trim().split("\n").filter(Boolean).map((l) => l.split(" ").map(Number));
                for (const id of wss)
                        runSync("nsenter", [...nsenterArgs(s.pid), "touch", path.join(inst, "ws", id, "done")]);
                const counts = (await Promise.all(runs)).map((r) => assertOk(r, s, "inotify run").stdout.split(" ").slice(0, 2).join(" "));
                assert.equal(ids.length, N, `sandbox processes seen on the host: ${JSON.stringify(ids)}`);
                // One owner at the top (the user; host root when the runtime makes the
                // namespaces): each sandbox gets the bounded share.
                const oneOwner = AS_USER || sandboxUserns(runtime) !== false;
                const total = Number(fs.readFileSync("/proc/sys/fs/inotify/max_user_instances", "utf8"));
                const share = oneOwner ? Math.min(16, Math.floor(total / (N + 1))) : 16;
                assert.deepEqual(counts, Array(N).fill(`${share} EMFILE`));
                // Run by a user, each a slice of the user's subordinate range: its own uid,
                // every namespace the user's.
                assert.equal(new Set(ids.map(([uid]) => uid)).size, N, `host uids: ${JSON.stringify(ids)}`);
                for (const [uid, owner] of ids) {
                        if (AS_USER) {
                                assert.equal(owner, serverIds().uid, "run by a user, each namespace is the user's");
                                continue;
                        }
                        assert.equal(owner, oneOwner ? 0 : uid, "each namespace is owned by its sandbox's own uid (or root, when the runtime makes it)");
                        assert.ok(uid >= 1073741824 + 65536, `uid ${uid} above the images' storage range`);
                }
                assert.equal((await s.close()).code, 0);
        });
}

// As root, the sandboxes' host ids are ones no account and no /etc/subuid or /etc/subgid
// range holds: a user granted them could act as a sandbox's ids through newuidmap (signal
// its processes, read its workspace). A range that is held is refused, naming the holder.
function subidRanges() {
        return ["/etc/subuid", "/etc/subgid"].flatMap((f) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : "")
                .split("\n").filter(Boolean).map((l) => l.split(":").slice(1).map(Number)));
}

test("as root, sandboxes' host ids are held by no account or subordinate range; a held range is refused", { skip: skip || rootOnly("run by a user, the sandboxes' ids are the user's own subordinate ids"), timeout: 60_000 }, async () => {
        const out = assertOk(await runCode(srv, "sh", "cat /proc/self/uid_map /proc/self/gid_map"), srv, "the maps");
        const maps = out.stdout.trim().split("\n").map((l) => l.trim().split(/\s+/).map(Number));
        for (const [inside, outside, count] of maps) {
                assert.equal(inside, 0);
                for (const [start, n] of subidRanges())
                        assert.ok(start + n <= outside || outside + count <= start, `${outside}+${count} meets a subordinate range ${start}+${n}`);
                const held = runSync("awk", ["-F:", "-v", `lo=${outside}`, "-v", `hi=${outside + count - 1}`,
                        "$3 >= lo && $3 <= hi", "/etc/passwd", "/etc/group"]);
                assert.equal(held.stdout, "", `accounts with ids in ${outside}+${count}`);
        }
        const check = (base) => runSync(MSP_MCP, ["--check", "--runtime", MSP, "--sandbox-ids", String(base),
                "--state-dir", srv.stateDir]).stdout.match(/^(\S+) +sandbox-ids +(.*)$/m);
        const account = check(1);
        assert.equal(account?.[1], "MISSING");
        assert.match(account[2], /sandbox-ids 1\.\.\d+: (the host has a (user|group) with id \d+|\/etc\/sub[ug]id grants them)/);
        const [range] = subidRanges();
        if (range) {
                const granted = check(range[0]);
                assert.equal(granted?.[1], "MISSING");
                assert.match(granted[2], new RegExp(`^sandbox-ids ${range[0]}\\.\\.\\d+: /etc/sub[ug]id grants them to a user \\('[^:]+:${range[0]}:`));
        }
});

// Every response stays under what the SDK accepts (10 MiB a message): output is cut with
// truncated set, images past the budget become resource_links, file content is cut.
const TEN_MIB = 10 * 1024 * 1024;

async function rawCall(raw, name, args) {
        const before = raw.lines.length;
        const msg = await raw.request("tools/call", { name, arguments: args });
        const line = raw.lines.slice(before).find((l) => l.includes(`"id":${raw.lastId}`)) ?? JSON.stringify(msg);
        return { msg, bytes: Buffer.byteLength(line) };
}

test("responses stay under 10 MiB: control-byte output, twelve 1 MiB images, read_file of control bytes", { skip, timeout: 180_000 }, async () => {
        const raw = rawServer({ args: ["--output-limit", "16M"] });
        await raw.initialize();
        const wrap = raw.request;
        raw.request = (m, p) => { raw.lastId = (raw.lastId ?? 1) + 1; return wrap(m, p, raw.lastId); };

        const flood = await rawCall(raw, "run_code", { language: "python", code:
                "import sys\nsys.stdout.buffer.write(b'\\x01' * (8 << 20))\nsys.stderr.buffer.write(b'\"' * (4 << 20))" });
        assert.ok(flood.bytes < TEN_MIB, `run_code response of ${flood.bytes} bytes`);
        const out = flood.msg.result.structuredContent;
        assert.equal(out.truncated, true);
        assert.equal(out.exit_code, 0);
        assert.ok(out.stdout.length > 0 && out.stdout.length < 8 << 20, `stdout ${out.stdout.length}`);
        assert.ok(out.stderr.length > 0, "stderr keeps a part");

        const images = await rawCall(raw, "run_code", { language: "python", code:
                "import os\nos.makedirs('out', exist_ok=True)\nfor i in range(12): open(f'out/p{i}.png', 'wb').write(b'\\x89PNG\\r\\n\\x1a\\n' + os.urandom(1000000))" });
        assert.ok(images.bytes < TEN_MIB, `images response of ${images.bytes} bytes`);
        const content = images.msg.result.content;
        const inline = content.filter((c) => c.type === "image").length;
        const links = content.filter((c) => c.type === "resource_link" && c.mimeType === "image/png");
        assert.ok(inline >= 1 && inline < 12, `${inline} images inline: ${JSON.stringify(content.map((c) => [c.type, c.mimeType, c.size]))}`);
        assert.equal(inline + links.length, 12, "the others are resource_links");
        const linked = await raw.request("resources/read", { uri: links[0].uri });
        assert.ok(linked.result?.contents?.[0]?.blob, `a linked image is readable: ${JSON.stringify(linked).slice(0, 300)}`);

        const sess = (await raw.request("tools/call", { name: "session_create", arguments: {} })).result.structuredContent;
        await raw.request("tools/call", { name: "run_code", arguments: { language: "python", session_id: sess.session_id, code:
                "open('ctl', 'wb').write(b'\\x01' * (1 << 20))\nopen('big', 'wb').write(b'a' * (8 << 20))" } });
        const ctl = await rawCall(raw, "read_file", { session_id: sess.session_id, path: "ctl" });
        assert.ok(ctl.bytes < TEN_MIB, `read_file response of ${ctl.bytes} bytes`);
        assert.equal(ctl.msg.result.structuredContent.truncated, true);
        assert.equal(ctl.msg.result.structuredContent.size, 1 << 20);
        const big = await rawCall(raw, "read_file", { session_id: sess.session_id, path: "big", encoding: "base64", max_bytes: 8 << 20 });
        assert.ok(big.bytes < TEN_MIB, `base64 read_file response of ${big.bytes} bytes`);
        assert.equal(big.msg.result.structuredContent.truncated, true);
        await raw.request("tools/call", { name: "session_close", arguments: { session_id: sess.session_id } });
        const { code } = await raw.close();
        assert.equal(code, 0);
});

// Run logs have a byte budget (a quarter of the state filesystem's free space): on a
// 64 MiB state dir, eight runs of 12 MiB output all succeed and the logs stay within it.
test("run logs stay within their budget on a small state filesystem; every run succeeds", { skip, timeout: 180_000 }, async () => {
        const dir = tmpStateDir();
        const { uid, gid } = serverIds();
        assert.equal(runSync("mount", ["-t", "tmpfs", "-o", `size=64m,mode=0711,uid=${uid},gid=${gid}`, "msp-test-state", dir]).status, 0);
        try {
                const s = await startServer({ stateDir: dir });
                let last;
                for (let i = 0; i < 8; i++) {
                        const res = await runCode(s, "python", "import sys\nsys.stdout.buffer.write(b'x' * (12 << 20))");
                        last = assertOk(res, s, `run ${i}`);
                        assert.equal(last.exit_code, 0);
                        const du = runSync("du", ["-sb", path.join(dir, s.instance(), "logs")]);
                        const bytes = Number(du.stdout.split("\t")[0]);
                        assert.ok(bytes <= 17 << 20, `logs take ${bytes} bytes after run ${i}`);
                }
                const log = await s.client.readResource({ uri: `sandbox://runs/${last.run_id}/stdout` });
                assert.ok(log.contents[0].text.length > 0, "the last run's log is kept");
                assert.equal((await s.close()).code, 0);
        } finally {
                runSync("umount", [dir]);
        }
});

test("nothing left behind: containers, cgroups, mounts, dirs, processes", { skip, timeout: 60_000 }, finishAll);
