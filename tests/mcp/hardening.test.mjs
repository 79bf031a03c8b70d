// Hardening of the sandbox's view and budgets: what a sandboxed program must not reach or
// exhaust on the host (recursive read-only system binds, socket families, kernel budgets
// shared with the host, file modes of the agent's code, host paths in /proc).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { startServer, skipReason, finishAll, runCode, assertOk } from "./lib.mjs";

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
        test(`a submount under a bound system dir is read-only, nosuid, nodev inside (${name})`, { skip: skip || (runtime === undefined && name === "runc" ? "runc not installed" : false), timeout: 120_000 }, async () => {
                const s = await startServer({ wrap: SUBMOUNT_WRAP, ...(runtime ? { runtime } : {}) });
                const out = assertOk(await runCode(s, "python", SUBMOUNT_CHECK), s, "submount check");
                assert.equal(out.stdout, "['nodev', 'nosuid', 'ro']\nrefused\n");
                assert.equal((await s.close()).code, 0);
        });
}

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
        "      try_family(socket.AF_NETLINK, socket.SOCK_RAW, 0))",
        "print(*[try_family(f) for f in (40, 17, 31, 29, 44, 38, 30, 5)])",
        "libc = ctypes.CDLL(None, use_errno=True)",
        "ctx = ctypes.c_ulong(0)",
        "r = libc.syscall(206, 1, ctypes.byref(ctx))",
        "print(r, errno.errorcode.get(ctypes.get_errno()))",
].join("\n");

test("socket families other than unix, inet, inet6, netlink are refused; io_setup is ENOSYS", { skip, timeout: 60_000 }, async () => {
        const out = assertOk(await runCode(srv, "python", FAMILIES), srv, "families");
        const [ok, bad, aio] = out.stdout.trim().split("\n");
        assert.equal(ok, "ok ok ok ok");
        assert.equal(bad, Array(8).fill("EAFNOSUPPORT").join(" "), "vsock, packet, bluetooth, can, xdp, alg, tipc, appletalk");
        assert.equal(aio, "-1 ENOSYS");
});

test("nothing left behind: containers, cgroups, mounts, dirs, processes", { skip, timeout: 60_000 }, finishAll);
