// Lifecycle: no leftovers after the client disconnects mid-run or after SIGKILL and a
// restart on the same --state-dir; msp-mcp --check; --runtime runc (plain OCI bundles).
import { test, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startServer, skipReason, finishAll, call, runCode, assertOk, waitFor, tmpStateDir,
         containersOf, cgroupsOf, leftovers, runSync, MSP_MCP, MSP, AS_USER, asUser } from "./lib.mjs";

const skip = skipReason();
after(finishAll);

const RUNC = ["/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc", "/usr/local/bin/runc"].find((p) => fs.existsSync(p));

// Start a long run and wait until its container is there.
// sessions: how many sessions the server has (each keeps its sandbox's container).
async function startLongRun(srv, sessions = 0) {
        let started = false;
        const p = runCode(srv, "sh", "echo started; sleep 60", { timeout_ms: 120_000 },
                          { onprogress: (n) => { if (/started/.test(n.message ?? "")) started = true; } });
        p.catch(() => {});      // rejected when the connection goes away
        await waitFor("the run to start", () => started, 30_000);
        const inst = srv.instance();
        assert.ok(inst, "instance dir");
        assert.equal(containersOf(srv.stateDir, inst).length, 1 + sessions, "the run's container and the sessions'");
        // Run by a user without a delegated cgroup, a sandbox has none.
        if (!AS_USER) assert.ok(cgroupsOf(inst).length >= 1, "the instance has cgroups");
        return { p, inst };
}

test("the client disconnects mid-run: msp-mcp kills the run, cleans up, exits 0", { skip, timeout: 90_000 }, async () => {
        const srv = await startServer();
        const { inst } = await startLongRun(srv);
        const { code, signal } = await srv.close();
        assert.equal(signal, null);
        assert.equal(code, 0);
        assert.deepEqual(leftovers(srv.stateDir, new Set([inst])), []);
});

test("SIGKILL mid-run, then a restart on the same --state-dir cleans the dead instance", { skip, timeout: 120_000 }, async () => {
        const stateDir = tmpStateDir();
        const a = await startServer({ stateDir });
        // A session of the dead server must go too (its workspace died with it).
        const sess = assertOk(await call(a, "session_create", {}), a).session_id;
        assertOk(await call(a, "write_file", { session_id: sess, path: "f", content: "x" }), a);
        const { inst } = await startLongRun(a, 1);
        const exited = new Promise((r) => a.proc.once("exit", r));
        a.proc.kill("SIGKILL");
        await exited;
        await a.client.close().catch(() => {});
        // The dead server's instance is still there until someone cleans it.
        assert.ok(fs.existsSync(path.join(stateDir, inst)), "the dead instance's dir is left for the next start");

        const b = await startServer({ stateDir });
        assert.notEqual(b.instance(), inst);
        // What is left of the dead instance (the new server's own dir and process aside).
        const dead = () => leftovers(stateDir, new Set([inst]))
                .filter((l) => !l.includes(b.instance()) && !l.startsWith(`process ${b.pid}:`));
        await waitFor("the dead instance to be cleaned by the restart", () => dead().length === 0, 30_000, 100)
                .catch((e) => assert.fail(`${e.message}: ${dead().join("; ")}`));
        assert.ok(!fs.existsSync(path.join(stateDir, inst)));
        assert.deepEqual(cgroupsOf(inst), []);
        await waitFor("the dead server's session dir to be removed",
                      () => !fs.existsSync(path.join(stateDir, "sessions", sess)), 30_000, 100);
        // The new server works.
        assert.equal(assertOk(await runCode(b, "sh", "echo fresh"), b).stdout, "fresh\n");
        const { code } = await b.close();
        assert.equal(code, 0);
});

test("msp-mcp --check lists every requirement and exits 0 on this host", { skip, timeout: 60_000 }, () => {
        const dir = tmpStateDir();
        try {
                const check = (...args) => { const [cmd, ...rest] = asUser([MSP_MCP, "--check", ...args]); return runSync(cmd, rest); };
                const r = check("--runtime", MSP, "--state-dir", dir);
                const out = r.stdout + r.stderr;
                assert.equal(r.status, 0, out);
                for (const word of [/landlock/i, /userns|user namespace/i, /cgroup/i, /seccomp/i, /overlay/i, /runtime/i])
                        assert.match(r.stdout, word, r.stdout);
                assert.match(r.stdout, /ABI \d+/i, "the Landlock ABI is named");
                if (AS_USER) {
                        // What a user's server gets, and which mechanism holds each limit.
                        assert.match(r.stdout, /^ok +rootless +uid \d+/m, r.stdout);
                        assert.match(r.stdout, /^ok +subids +\/etc\/subuid \d+\+\d+/m, r.stdout);
                        for (const [lim, how] of [["memory", /RLIMIT_DATA/], ["pids", /RLIMIT_NPROC/], ["cpu", /RLIMIT_CPU/],
                                                  ["disk", /tmpfs/], ["timeout", /pid namespace/]])
                                assert.match(r.stdout, new RegExp(`^limit +${lim} +.*${how.source}`, "m"), r.stdout);
                        // Without a delegated cgroup, --require-cgroups refuses, and so does the server.
                        const req = check("--runtime", MSP, "--state-dir", dir, "--require-cgroups");
                        assert.equal(req.status, 1, req.stdout);
                        assert.match(req.stdout, /^MISSING +cgroup +--require-cgroups/m, req.stdout);
                        const [cmd, ...rest] = asUser([MSP_MCP, "--runtime", MSP, "--state-dir", dir, "--require-cgroups"]);
                        const srv = runSync(cmd, rest);
                        assert.equal(srv.status, 1, srv.stderr);
                        assert.match(srv.stderr, /--require-cgroups: no cgroup for the sandboxes \(.*not delegated/);
                }
                // Nothing but the report: no server started, nothing on stdin read.
                const bad = check("--runtime", "/nonexistent/oci-runtime", "--state-dir", dir);
                assert.notEqual(bad.status, 0, "a missing runtime fails --check");
                assert.match(bad.stdout + bad.stderr, /\/nonexistent\/oci-runtime/);
        } finally {
                fs.rmSync(dir, { recursive: true, force: true });
        }
});

test("msp-mcp --version and --help exit 0; an unknown flag exits non-zero", { skip, timeout: 30_000 }, () => {
        const v = runSync(MSP_MCP, ["--version"]);
        assert.equal(v.status, 0);
        assert.match(v.stdout, /msp-mcp/);
        const h = runSync(MSP_MCP, ["--help"]);
        assert.equal(h.status, 0);
        for (const f of ["--state-dir", "--runtime", "--check", "--allow-network"]) assert.ok(h.stdout.includes(f), `--help mentions ${f}`);
        const u = runSync(MSP_MCP, ["--no-such-flag"]);
        assert.notEqual(u.status, 0);
        assert.match(u.stderr, /no-such-flag/);
});

test("--runtime runc runs run_code too (the bundles are plain OCI)", { skip: skip || (RUNC ? false : "runc not installed (contrib/install-deps.sh bench)"), timeout: 120_000 }, async () => {
        const srv = await startServer({ runtime: RUNC });
        const sh = assertOk(await runCode(srv, "sh", "echo hi from runc; id -u"), srv, "sh under runc");
        assert.equal(sh.stdout, "hi from runc\n1000\n");
        const py = assertOk(await runCode(srv, "python", "print(6*7)"), srv, "python under runc");
        assert.equal(py.stdout, "42\n");
        const err = await runCode(srv, "sh", "exit 5");
        assert.equal(err.structuredContent.exit_code, 5);
        const to = await runCode(srv, "sh", "while :; do :; done", { timeout_ms: 500 });
        assert.equal(to.structuredContent.timed_out, true);
        const { code } = await srv.close();
        assert.equal(code, 0);
});

// A user with no /etc/subuid range (nobody): msp-mcp maps the user's one id, and every
// sandbox runs as that id (0 inside). Its user namespace says "deny" in setgroups, and so
// does the sandbox's: msp, like runc, sets no supplementary groups there (docs/ROOTLESS.md).
for (const [name, runtime] of [["msp", MSP], ["runc", RUNC]])
        test(`run by a user without subordinate ids, a sandbox runs as the user's one id (${name})`, {
                skip: skip || (runtime ? false : `${name} not installed`) || (AS_USER ? "the stdio pass starts its own user" : false),
                timeout: 120_000,
        }, async () => {
                const stateDir = tmpStateDir();
                fs.chownSync(stateDir, 65534, 65534);
                const nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "-i",
                                "PATH=/usr/bin:/bin", "HOME=/nonexistent"];
                const check = runSync(nobody[0], [...nobody.slice(1), MSP_MCP, "--check", "--runtime", runtime, "--state-dir", stateDir]);
                assert.match(check.stdout, /^absent +subids +no range/m, check.stdout);
                const srv = await startServer({ stateDir, runtime, wrap: nobody });
                const out = assertOk(await runCode(srv, "sh", "id -u; stat -c %u /workspace; echo x > /workspace/f && cat /workspace/f; cat /proc/self/setgroups"), srv, "one-id run");
                assert.equal(out.stdout, "0\n0\nx\ndeny\n");
                const { code } = await srv.close();
                assert.equal(code, 0);
        });

test("nothing left behind: containers, cgroups, mounts, dirs, processes", { skip, timeout: 60_000 }, finishAll);
