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

test("nothing left behind: containers, cgroups, mounts, dirs, processes", { skip, timeout: 60_000 }, finishAll);
