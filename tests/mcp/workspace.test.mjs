// /workspace/out/ in every kind of workspace: a fresh run's, a session's (new, later calls,
// after the code removed it or put a symlink there, seeded with --seed-dir), msp's and
// runc's, a user's one-id sandbox; a plot saved there by matplotlib or R's png() with no
// mkdir first comes back as image content. Images sessions: images.test.mjs.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer, languagesOf, skipReason, finishAll, call, runCode, assertOk, text,
         tmpStateDir, AS_USER } from "./lib.mjs";

const skip = skipReason();
const RUNC = ["/usr/sbin/runc", "/usr/bin/runc"].find((p) => fs.existsSync(p));
let srv, languages;

before(async () => {
        if (skip) return;
        srv = await startServer();
        languages = await languagesOf(srv);
});
after(finishAll);

// Prints "dir mine writable" when /workspace/out is a directory of the run's own ids that
// it can create a file in (the probe is removed again: it would be reported).
const CHECK_OUT = [
        "cd /workspace",
        "[ -d out ] && [ ! -L out ] && printf dir || printf 'no dir'",
        "[ \"$(stat -c %u:%g out 2>/dev/null)\" = \"$(id -u):$(id -g)\" ] && printf ' mine' || printf ' not mine (%s)' \"$(stat -c %u:%g out 2>&1)\"",
        "touch out/.probe 2>/dev/null && rm out/.probe && echo ' writable' || echo ' not writable'",
].join("\n");

async function assertOut(server, extra = {}, what = "out/") {
        const r = assertOk(await runCode(server, "sh", CHECK_OUT, extra), server, what);
        assert.equal(r.stdout, "dir mine writable\n", `${what}: ${r.stderr}`);
        assert.deepEqual(r.files, [], `${what}: nothing written, nothing reported`);
}

async function withSession(server, fn, args = {}) {
        const s = assertOk(await call(server, "session_create", args), server, "session_create");
        try {
                return await fn({ session_id: s.session_id });
        } finally {
                await call(server, "session_close", { session_id: s.session_id });
        }
}

test("a fresh run's /workspace/out exists, the sandbox user's, writable", { skip, timeout: 60_000 }, async () => {
        await assertOut(srv, {}, "fresh run");
});

test("a session's /workspace/out: there before the first run, kept, made again after the code removes it", { skip, timeout: 90_000 }, async () => {
        await withSession(srv, async (sid) => {
                const listed = assertOk(await call(srv, "list_files", sid), srv, "list_files");
                assert.ok(listed.entries.some((e) => e.name === "out" && e.type === "dir"), JSON.stringify(listed));
                await assertOut(srv, sid, "first call");
                const kept = assertOk(await runCode(srv, "sh", "echo kept > out/k.txt; rm -rf /workspace/out; [ -e out ] || echo gone", sid), srv);
                assert.equal(kept.stdout, "gone\n");
                await assertOut(srv, sid, "the call after rm -rf out");
                assertOk(await runCode(srv, "sh", "echo kept > out/k.txt", sid), srv);
                const again = assertOk(await runCode(srv, "sh", "cat out/k.txt", sid), srv);
                assert.equal(again.stdout, "kept\n", "what out/ holds stays");
        });
});

// The code's own out: a file or a symlink (here to the host's /etc from msp-mcp's side) is
// left as it is, never followed, and nothing under it is reported.
test("a session whose code made out a symlink or a file: left alone, not followed, nothing reported", { skip, timeout: 90_000 }, async () => {
        const etc = fs.lstatSync("/etc");
        await withSession(srv, async (sid) => {
                for (const make of ["ln -s /etc out", "echo f > out"]) {
                        assertOk(await runCode(srv, "sh", `rm -rf out && ${make}`, sid), srv, make);
                        const r = assertOk(await runCode(srv, "sh", "ls -ld out | cut -c1", sid), srv, `after ${make}`);
                        assert.equal(r.stdout, make.startsWith("ln") ? "l\n" : "-\n", r.stderr);
                        assert.deepEqual(r.files, []);
                }
        });
        const now = fs.lstatSync("/etc");
        assert.deepEqual([now.uid, now.gid, now.mode], [etc.uid, etc.gid, etc.mode], "the host's /etc untouched");
});

test("--seed-dir: out/ is made in the session's upper layer, the seed stays as it was", { skip, timeout: 90_000 }, async () => {
        const seed = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-seed-"));
        fs.chmodSync(seed, 0o755);
        fs.writeFileSync(path.join(seed, "seed.txt"), "from the seed\n", { mode: 0o644 });
        try {
                const seeded = await startServer({ args: ["--seed-dir", seed] });
                await withSession(seeded, async (sid) => {
                        await assertOut(seeded, sid, "seeded session");
                        const r = assertOk(await runCode(seeded, "sh", "cat seed.txt; rm -rf out", sid), seeded);
                        assert.equal(r.stdout, "from the seed\n");
                        await assertOut(seeded, sid, "seeded session after rm -rf out");
                });
                await seeded.close();
                assert.deepEqual(fs.readdirSync(seed), ["seed.txt"], "nothing added to the seed");
        } finally {
                fs.rmSync(seed, { recursive: true, force: true });
        }
});

test("--runtime runc: out/ in a fresh run and in a session", { skip: skip || (RUNC ? false : "runc not installed (contrib/install-deps.sh bench)"), timeout: 120_000 }, async () => {
        const rs = await startServer({ runtime: RUNC });
        await assertOut(rs, {}, "runc fresh run");
        await withSession(rs, async (sid) => {
                await assertOut(rs, sid, "runc session");
                assertOk(await runCode(rs, "sh", "rm -rf out", sid), rs);
                await assertOut(rs, sid, "runc session after rm -rf out");
        });
        await rs.close();
});

// A user with no subordinate ids: the sandbox is root inside (the user's one id).
test("run by a user without subordinate ids, out/ is the sandbox's (uid 0 inside)", {
        skip: skip || (AS_USER ? "the stdio pass starts its own user" : false), timeout: 120_000,
}, async () => {
        const stateDir = tmpStateDir();
        fs.chownSync(stateDir, 65534, 65534);
        const nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", "-i",
                        "PATH=/usr/bin:/bin", "HOME=/nonexistent"];
        const one = await startServer({ stateDir, wrap: nobody });
        const id = assertOk(await runCode(one, "sh", "id -u"), one);
        assert.equal(id.stdout, "0\n");
        await assertOut(one, {}, "one-id fresh run");
        await withSession(one, (sid) => assertOut(one, sid, "one-id session"));
        await one.close();
});

// ---- plots saved straight into out/ ----

function hasMatplotlib() {
        return spawnSync("/usr/bin/python3", ["-c", "import matplotlib"]).status === 0;
}
function hasRPng() {
        return spawnSync("Rscript", ["-e", 'quit(status = !capabilities("png"))'], { timeout: 60_000 }).status === 0;
}

const PLOTS = {
        python: { name: "p.png", code: `import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 3, 2])
plt.savefig("/workspace/out/p.png")` },
        R: { name: "r.png", code: `png("/workspace/out/r.png", width = 400, height = 300)
plot(1:10)
invisible(dev.off())` },
};

function plotSkip(lang) {
        if (!languages.includes(lang)) return `${lang} is not offered (contrib/install-deps.sh languages)`;
        if (lang === "python" && !hasMatplotlib()) return "matplotlib is not installed for /usr/bin/python3 (python3-matplotlib)";
        if (lang === "R" && !hasRPng()) return "this host's R has no png device (capabilities('png') is FALSE)";
        return null;
}

async function assertPlot(lang, extra) {
        const { name, code } = PLOTS[lang];
        const res = await runCode(srv, lang, code, { timeout_ms: 120_000, ...extra });
        const out = assertOk(res, srv, `${lang} plot`);
        assert.equal(out.stderr, "", `${lang} plot: stderr`);
        const img = res.content.find((c) => c.type === "image");
        assert.ok(img, `${lang}: no image block in ${text(res).slice(0, 500)}`);
        assert.equal(img.mimeType, "image/png");
        assert.deepEqual([...Buffer.from(img.data, "base64").subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
        assert.ok(out.files.some((f) => f.path === `out/${name}` && f.mime_type === "image/png"), JSON.stringify(out.files));
}

for (const lang of Object.keys(PLOTS))
        test(`${lang}: a plot saved to /workspace/out/ with no mkdir comes back, fresh and in a session`, { skip, timeout: 300_000 }, async (t) => {
                const why = plotSkip(lang);
                if (why) return t.skip(why);
                await assertPlot(lang, {});
                await withSession(srv, (sid) => assertPlot(lang, sid));
        });

test("the instructions and run_code's description name out/ and what comes back", { skip, timeout: 30_000 }, async () => {
        const { tools } = await srv.client.listTools();
        const desc = tools.find((t) => t.name === "run_code").description;
        assert.match(desc, /\/workspace\/out\/ \(it exists in every workspace\)/, desc);
        assert.match(desc, /images .* as image content, other files as resource links/i, desc);
        assert.match(srv.client.getInstructions(), /a new \/workspace holding an empty out\/ directory/);
});
