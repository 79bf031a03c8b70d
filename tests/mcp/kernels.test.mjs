// Kernels of live sessions: python and R runs of a session are cells of the session's
// Jupyter kernel, started inside its sandbox; variables persist, the last expression comes
// back as `value`, figures as images, errors as tracebacks with the kernel alive; a dead
// or stuck kernel is reported and started again; `fresh` runs a process of its own.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { startServer, skipReason, finishAll, call, runCode, assertOk, languagesOf } from "./lib.mjs";

const skip = skipReason();
let srv, languages = [];

const hasKernel = (name) => fs.existsSync(`/usr/share/jupyter/kernels/${name}/kernel.json`) ||
        fs.existsSync(`/usr/local/share/jupyter/kernels/${name}/kernel.json`);
const pyKernel = () => !languages.includes("python") ? "python3 is not installed"
        : !hasKernel("python3") ? "no python3 kernelspec (python3-ipykernel, contrib/install-deps.sh test)" : false;
const hasMatplotlib = () => spawnSync("/usr/bin/python3", ["-c", "import matplotlib"]).status === 0;

before(async () => {
        if (skip) return;
        srv = await startServer();
        languages = await languagesOf(srv);
});
after(finishAll);

async function session() {
        return assertOk(await call(srv, "session_create", {}), srv, "session_create").session_id;
}

test("python: variables, imports and functions persist across calls; the last expression is the value", { skip, timeout: 120_000 }, async (t) => {
        const why = pyKernel();
        if (why) return t.skip(why);
        const session_id = await session();
        const first = assertOk(await runCode(srv, "python", "import math\nx = 41\ndef inc(v):\n    return v + 1\nprint('defined')",
                                             { session_id }), srv, "first cell");
        assert.equal(first.stdout, "defined\n");
        assert.match(first.kernel ?? "", /started/, JSON.stringify(first));
        const second = assertOk(await runCode(srv, "python", "x = inc(x)\nmath.sqrt(x * 0 + 4), x", { session_id }), srv);
        assert.equal(second.value, "(2.0, 42)", JSON.stringify(second));
        assert.equal(second.kernel, undefined, "the same kernel: nothing happened to it");
        const fresh = await runCode(srv, "python", "print('x' in dir())", { session_id, fresh: true });
        assert.equal(assertOk(fresh, srv).stdout, "False\n", "a fresh run is a process of its own");
        const other = await session();
        const apart = assertOk(await runCode(srv, "python", "print('x' in dir())", { session_id: other }), srv);
        assert.equal(apart.stdout, "False\n", "another session has its own kernel");
        for (const s of [session_id, other]) assertOk(await call(srv, "session_close", { session_id: s }), srv);
});

test("python: an exception returns its traceback without colours and the kernel lives on", { skip, timeout: 120_000 }, async (t) => {
        const why = pyKernel();
        if (why) return t.skip(why);
        const session_id = await session();
        assertOk(await runCode(srv, "python", "kept = 'yes'", { session_id }), srv);
        const res = await runCode(srv, "python", "1/0", { session_id });
        assert.equal(res.isError, true);
        const out = res.structuredContent;
        assert.equal(out.traceback, true, JSON.stringify(out));
        assert.match(out.stderr, /ZeroDivisionError/);
        assert.doesNotMatch(out.stderr, /\x1b\[/, "no ANSI colours");
        const after_ = assertOk(await runCode(srv, "python", "kept", { session_id }), srv);
        assert.equal(after_.value, "'yes'");
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("python: a dead kernel is reported and started again; a stuck one is interrupted, or killed and restarted", { skip, timeout: 180_000 }, async (t) => {
        const why = pyKernel();
        if (why) return t.skip(why);
        const session_id = await session();
        assertOk(await runCode(srv, "python", "v = 1", { session_id }), srv);
        const died = await runCode(srv, "python", "import os; os._exit(3)", { session_id });
        assert.equal(died.isError, true);
        assert.match(died.structuredContent.kernel ?? "", /died: exit code 3/, JSON.stringify(died.structuredContent));
        const again = assertOk(await runCode(srv, "python", "print('v' in dir())", { session_id }), srv);
        assert.equal(again.stdout, "False\n", "a new kernel: the old state is gone");
        assert.match(again.kernel ?? "", /started/);
        assertOk(await runCode(srv, "python", "w = 2", { session_id }), srv);
        const slow = await runCode(srv, "python", "import time; time.sleep(60)", { session_id, timeout_ms: 500 });
        assert.equal(slow.structuredContent.timed_out, true, JSON.stringify(slow.structuredContent));
        assert.match(slow.structuredContent.kernel ?? "", /interrupted/);
        assert.equal(assertOk(await runCode(srv, "python", "w", { session_id }), srv).value, "2", "interrupted, not restarted");
        const stuck = await runCode(srv, "python",
                "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass", { session_id, timeout_ms: 500 });
        assert.equal(stuck.structuredContent.timed_out, true);
        assert.match(stuck.structuredContent.kernel ?? "", /killed and restarted/, JSON.stringify(stuck.structuredContent));
        assert.equal(assertOk(await runCode(srv, "python", "print('w' in dir())", { session_id }), srv).stdout, "False\n");
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("python: stdin and args need fresh; pip install in the session imports in its kernel", { skip, timeout: 180_000 }, async (t) => {
        const why = pyKernel();
        if (why) return t.skip(why);
        const session_id = await session();
        const refused = await runCode(srv, "python", "print(1)", { session_id, stdin: "x" });
        assert.equal(refused.isError, true);
        assert.match(refused.content[0].text, /fresh/);
        const ok = assertOk(await runCode(srv, "python", "import sys; print(sys.stdin.read(), sys.argv[1:])",
                                          { session_id, stdin: "in", args: ["a"], fresh: true }), srv);
        assert.equal(ok.stdout, "in ['a']\n");
        // A module made under the user site after the kernel started is importable.
        assertOk(await runCode(srv, "python", "import site; site.getusersitepackages()", { session_id }), srv);
        assertOk(await runCode(srv, "sh", "d=$(python3 -c 'import site; print(site.getusersitepackages())'); " +
                               "mkdir -p \"$d\" && echo 'VALUE = 42' > \"$d/late_mod.py\"", { session_id }), srv);
        assert.equal(assertOk(await runCode(srv, "python", "import late_mod; late_mod.VALUE", { session_id }), srv).value, "42");
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("python: a matplotlib figure left open comes back as an image, without savefig", { skip, timeout: 120_000 }, async (t) => {
        const why = pyKernel() || (!hasMatplotlib() && "python3-matplotlib is not installed (contrib/install-deps.sh languages)");
        if (why) return t.skip(why);
        const session_id = await session();
        const res = await runCode(srv, "python", "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nNone", { session_id });
        assertOk(res, srv);
        const img = res.content.find((c) => c.type === "image");
        assert.ok(img, JSON.stringify(res.content).slice(0, 500));
        assert.equal(img.mimeType, "image/png");
        assert.equal(Buffer.from(img.data, "base64").subarray(1, 4).toString(), "PNG");
        assert.ok(res.structuredContent.files.some((f) => f.path === "display/1.png"), JSON.stringify(res.structuredContent.files));
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

test("R: variables persist across calls, a plot is an image, an error keeps the kernel", { skip, timeout: 180_000 }, async (t) => {
        if (!languages.includes("R")) return t.skip("R is not installed");
        if (!hasKernel("ir")) return t.skip("no ir kernelspec (r-cran-irkernel, contrib/install-deps.sh languages)");
        const session_id = await session();
        assertOk(await runCode(srv, "R", "x <- 41", { session_id }), srv);
        const second = assertOk(await runCode(srv, "R", "x <- x + 1; x", { session_id }), srv);
        assert.match(second.stdout + (second.value ?? ""), /\[1\] 42/, JSON.stringify(second));
        const err = await runCode(srv, "R", "stop('boom')", { session_id });
        assert.equal(err.isError, true);
        assert.match(err.structuredContent.stderr, /boom/);
        const plot = await runCode(srv, "R", "plot(1:10)", { session_id });
        assertOk(plot, srv);
        assert.ok(plot.content.some((c) => c.type === "image" && c.mimeType === "image/png"),
                  JSON.stringify(plot.content).slice(0, 500));
        const still = assertOk(await runCode(srv, "R", "cat(x)", { session_id }), srv);
        assert.equal(still.stdout, "42");
        assertOk(await call(srv, "session_close", { session_id }), srv);
});

// The same with runc as the runtime: the kernel needs nothing of msp's.
const RUNC = ["/usr/sbin/runc", "/usr/bin/runc", "/usr/local/sbin/runc"].find((p) => fs.existsSync(p));

test("python with runc as the runtime: a kernel's state persists", { skip: skip || (RUNC ? false : "runc not installed"), timeout: 120_000 }, async (t) => {
        const why = pyKernel();
        if (why) return t.skip(why);
        const r = await startServer({ runtime: RUNC });
        const session_id = assertOk(await call(r, "session_create", {}), r).session_id;
        assertOk(await runCode(r, "python", "z = 6 * 7", { session_id }), r);
        assert.equal(assertOk(await runCode(r, "python", "z", { session_id }), r).value, "42");
        assertOk(await call(r, "session_close", { session_id }), r);
});

test("a kernel's sockets are its session's only: another session and a fresh run see none of them", { skip, timeout: 120_000 }, async (t) => {
        const why = pyKernel();
        if (why) return t.skip(why);
        const a = await session(), b = await session();
        assertOk(await runCode(srv, "python", "secret = 1", { session_id: a }), srv);
        const mine = assertOk(await runCode(srv, "sh", "ls -A /.msp/k", { session_id: a }), srv);
        assert.match(mine.stdout, /python3/, "the session's own kernel dir");
        const other = assertOk(await runCode(srv, "sh", "ls -A /.msp/k; find / -xdev -type s 2>/dev/null | grep -c kernel- || true",
                                             { session_id: b }), srv);
        assert.equal(other.stdout, "0\n", `another session sees no kernel socket: ${other.stdout}`);
        const fresh = assertOk(await runCode(srv, "sh", "ls -A /.msp/k 2>&1; find / -xdev -type s 2>/dev/null | grep -c kernel- || true"), srv);
        assert.match(fresh.stdout, /No such file or directory\n0\n$/, fresh.stdout);
        for (const s of [a, b]) assertOk(await call(srv, "session_close", { session_id: s }), srv);
});

test("python: a symlink the sandbox leaves in its kernel dir is never followed on the host", { skip, timeout: 120_000 }, async (t) => {
        const why = pyKernel();
        if (why) return t.skip(why);
        // A host directory of root's: msp-mcp must neither chown it to the sandbox's user
        // nor write the kernel's connection file (its key) into it.
        const target = fs.mkdtempSync("/tmp/msp-kernel-target-");
        t.after(() => fs.rmSync(target, { recursive: true, force: true }));
        const before_ = fs.statSync(target);
        // Landlock's default policy refuses symlinks there; runc and kernels without
        // Landlock do not, nor does a profile that leaves make_sym alone.
        const profile = JSON.parse(fs.readFileSync(new URL("../../contrib/profiles/landlock-default.json", import.meta.url)));
        const noSym = (v) => v.filter((a) => a !== "make_sym");
        profile.handledAccess.handledAccessFS = noSym(profile.handledAccess.handledAccessFS);
        for (const rule of profile.rules.pathBeneath) rule.allowedAccess = noSym(rule.allowedAccess);
        fs.writeFileSync(`${target}.json`, JSON.stringify(profile));
        t.after(() => fs.rmSync(`${target}.json`, { force: true }));
        const own = await startServer({ args: ["--landlock-profile", `${target}.json`] });
        t.after(() => own.close());
        const session = async () => assertOk(await call(own, "session_create", {}), own, "session_create").session_id;
        const srv_ = own;
        const session_id = await session();
        const link = await runCode(srv_, "sh", `ln -s ${target} /.msp/k/python3 && echo linked`, { session_id });
        if (link.structuredContent?.stdout !== "linked\n") {
                assertOk(await call(srv_, "session_close", { session_id }), srv_);
                return t.skip(`the sandbox cannot make a symlink in its kernel dir: ${JSON.stringify(link.structuredContent ?? link.content)}`);
        }
        await runCode(srv_, "python", "1 + 1", { session_id });
        const after_ = fs.statSync(target);
        assert.equal(after_.uid, before_.uid, "the host directory's owner is unchanged");
        assert.equal(after_.gid, before_.gid);
        assert.deepEqual(fs.readdirSync(target), [], "nothing written into the host directory");
        assertOk(await call(srv_, "session_close", { session_id }), srv_);
});
