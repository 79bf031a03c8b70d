// run_code: every language offered, stdout/stderr/exit codes, stdin, args, env, files,
// images, concurrency, progress and cancellation.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startServer, languagesOf, skipReason, finishAll, call, runCode, text, assertOk, waitFor,
         containersOf, cgroupsOf } from "./lib.mjs";
import fs from "node:fs";
import os from "node:os";

const skip = skipReason();
let srv, languages;

before(async () => {
        if (skip) return;
        srv = await startServer();
        languages = await languagesOf(srv);
});
after(finishAll);

// A hello world per language msp-mcp may offer. A language offered without an entry here
// fails the test: add one.
const HELLO = {
        sh: 'echo "hello from sh"',
        bash: 'echo "hello from ${BASH_VERSION:+bash}"',
        dash: 'echo "hello from dash"',
        python: 'import sys\nprint("hello from python", file=sys.stdout)',
        python3: 'print("hello from python3")',
        node: 'console.log("hello from node")',
        javascript: 'console.log("hello from javascript")',
        perl: 'print "hello from perl\\n";',
        ruby: 'puts "hello from ruby"',
        R: 'cat("hello from R\\n")',
        c: '#include <stdio.h>\nint main(void) { puts("hello from c"); return 0; }',
        cpp: '#include <iostream>\nint main() { std::cout << "hello from cpp" << std::endl; }',
        "c++": '#include <iostream>\nint main() { std::cout << "hello from c++" << std::endl; }',
        java: 'public class Main { public static void main(String[] a) { System.out.println("hello from java"); } }',
        tcl: 'puts "hello from tcl"',
        tclsh: 'puts "hello from tclsh"',
        awk: 'BEGIN { print "hello from awk" }',
        php: '<?php echo "hello from php\\n";',
        lua: 'print("hello from lua")',
        go: 'package main\nimport "fmt"\nfunc main() { fmt.Println("hello from go") }',
        rust: 'fn main() { println!("hello from rust"); }',
};

test("hello world in every language offered", { skip, timeout: 600_000 }, async (t) => {
        assert.ok(languages.length >= 2);
        for (const lang of languages) {
                await t.test(lang, async () => {
                        assert.ok(HELLO[lang], `no hello world for language '${lang}' in run_code.test.mjs`);
                        // Compilers (c, java, ...) need more than the default on a busy machine.
                        const res = await runCode(srv, lang, HELLO[lang], { timeout_ms: 60_000 });
                        const out = assertOk(res, srv, lang);
                        assert.equal(out.exit_code, 0, `${lang}: ${out.stderr}`);
                        assert.equal(out.stdout, `hello from ${lang}\n`, `${lang}: stderr ${out.stderr}`);
                        assert.equal(out.timed_out, false);
                        assert.equal(out.oom_killed, false);
                        assert.equal(out.truncated, false);
                        assert.match(text(res), new RegExp(`hello from ${lang.replace(/[+]/g, "\\+")}`));
                });
        }
});

test("stdout and stderr apart, exit code 0, duration and run_id", { skip, timeout: 60_000 }, async () => {
        const res = await runCode(srv, "sh", "echo out; echo err >&2; printf 'no newline'");
        const out = assertOk(res, srv);
        assert.equal(out.stdout, "out\nno newline");
        assert.equal(out.stderr, "err\n");
        assert.equal(out.exit_code, 0);
        assert.equal(out.signal, null);
        assert.equal(typeof out.duration_ms, "number");
        assert.ok(out.duration_ms >= 0 && out.duration_ms < 60_000);
        assert.match(out.run_id, /^[A-Za-z0-9_.-]+$/);
        // The text block carries the same JSON.
        assert.ok(res.content.some((c) => c.type === "text"));
});

test("a non-zero exit is a tool error (isError) with the exit code", { skip, timeout: 60_000 }, async () => {
        const res = await runCode(srv, "sh", "echo before; echo oops >&2; exit 3");
        assert.equal(res.isError, true);
        const out = res.structuredContent;
        assert.equal(out.exit_code, 3);
        assert.equal(out.stdout, "before\n");
        assert.equal(out.stderr, "oops\n");
        assert.equal(out.timed_out, false);
        const py = await runCode(srv, "python", "raise SystemExit(42)");
        assert.equal(py.isError, true);
        assert.equal(py.structuredContent.exit_code, 42);
        const exc = await runCode(srv, "python", "1/0");
        assert.equal(exc.isError, true);
        assert.equal(exc.structuredContent.exit_code, 1);
        assert.match(exc.structuredContent.stderr, /ZeroDivisionError/);
});

test("death by a signal: exit_code null, signal named", { skip, timeout: 60_000 }, async () => {
        // A fault, and a shell killing itself (msp-sandbox-init is pid 1, so it can).
        const res = await runCode(srv, "python", "import ctypes\nprint('before', flush=True)\nctypes.string_at(0)");
        assert.equal(res.isError, true);
        assert.equal(res.structuredContent.exit_code, null);
        assert.equal(res.structuredContent.signal, "SIGSEGV");
        assert.equal(res.structuredContent.stdout, "before\n");
        const sh = await runCode(srv, "sh", "echo pid $$; kill -TERM $$; echo not reached");
        assert.equal(sh.isError, true);
        assert.equal(sh.structuredContent.exit_code, null);
        assert.equal(sh.structuredContent.signal, "SIGTERM");
        assert.match(sh.structuredContent.stdout, /^pid \d+\n$/);
        assert.notEqual(sh.structuredContent.stdout, "pid 1\n", "the program is not pid 1");
});

test("a plain exit with a status above 128 (exit 130) is an exit code, not a signal", { skip, timeout: 60_000 }, async () => {
        // `run` reports both as 130; msp-sandbox-init's status pipe tells them apart.
        for (const code of [129, 130, 137, 143]) {
                const res = await runCode(srv, "sh", `exit ${code}`);
                assert.equal(res.isError, true);
                assert.equal(res.structuredContent.exit_code, code, JSON.stringify(res.structuredContent));
                assert.equal(res.structuredContent.signal, null);
        }
});

test("stdin, args and env reach the program", { skip, timeout: 60_000 }, async () => {
        const res = await runCode(srv, "sh", 'echo "args:$#:$1:$2"; echo "env:$GREETING"; tr a-z A-Z',
                                  { stdin: "shout\n", args: ["one", "two words"], env: { GREETING: "hi there" } });
        const out = assertOk(res, srv);
        assert.equal(out.stdout, "args:2:one:two words\nenv:hi there\nSHOUT\n");
        const py = await runCode(srv, "python", "import sys,os\nprint(sys.argv[1:], os.environ['X'], sys.stdin.read())",
                                 { stdin: "in", args: ["a"], env: { X: "y" } });
        assert.equal(assertOk(py, srv).stdout, "['a'] y in\n");
        // Without stdin the program reads EOF at once (no hang).
        const eof = await runCode(srv, "sh", "cat; echo done", { timeout_ms: 10_000 });
        assert.equal(assertOk(eof, srv).stdout, "done\n");
});

test("files are placed in /workspace (utf8, base64, executable); the workspace is fresh each time", { skip, timeout: 60_000 }, async () => {
        const res = await runCode(srv, "sh", "pwd; cat data/a.txt; od -An -tx1 b.bin | tr -d ' '; ./tool.sh; touch left-behind", {
                files: [
                        { path: "data/a.txt", content: "alpha\n" },
                        { path: "b.bin", content: Buffer.from([0, 255, 7]).toString("base64"), encoding: "base64" },
                        { path: "tool.sh", content: "#!/bin/sh\necho tool ran\n", executable: true },
                ],
        });
        assert.equal(assertOk(res, srv).stdout, "/workspace\nalpha\n00ff07\ntool ran\n");
        const again = await runCode(srv, "sh", "ls -A /workspace; ls -A /workspace/out | wc -l");
        assert.equal(assertOk(again, srv).stdout, "out\n0\n", "a fresh workspace is empty but for out/");
});

test("the sandbox: unprivileged user, no capabilities, read-only system dirs, /tmp writable", { skip, timeout: 60_000 }, async () => {
        const res = await runCode(srv, "sh", [
                "id -u; id -g",
                "grep CapEff /proc/self/status",
                "grep NoNewPrivs /proc/self/status",
                "touch /usr/x 2>/dev/null && echo usr-writable || echo usr-ro",
                "touch /tmp/x && echo tmp-ok",
                "echo $( (ls -A /root; ls -A /home) 2>/dev/null | grep -c .)-entries-in-root-and-home",
                "test -r /etc/shadow && echo shadow || echo no-shadow",
                "hostname",
        ].join("\n"));
        const lines = assertOk(res, srv).stdout.split("\n");
        assert.equal(lines[0], "1000");
        assert.equal(lines[1], "1000");
        assert.match(lines[2], /CapEff:\s+0+$/);
        assert.match(lines[3], /NoNewPrivs:\s+1/);
        assert.equal(lines[4], "usr-ro");
        assert.equal(lines[5], "tmp-ok");
        assert.equal(lines[6], "0-entries-in-root-and-home", "nothing of the host's /root, /home");
        assert.equal(lines[7], "no-shadow");
        assert.notEqual(lines[8], os.hostname(), "own uts namespace");
});

// A 1x1 PNG, written by the sandboxed code with printf of octal escapes.
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==", "base64");
const octal = [...PNG].map((b) => "\\" + b.toString(8).padStart(3, "0")).join("");

test("an image written to /workspace/out/ comes back as image content", { skip, timeout: 60_000 }, async () => {
        const res = await runCode(srv, "sh", `mkdir -p /workspace/out && printf '${octal}' > /workspace/out/dot.png && echo written; echo notes > /workspace/out/notes.txt`);
        const out = assertOk(res, srv);
        assert.equal(out.stdout, "written\n");
        const img = res.content.find((c) => c.type === "image");
        assert.ok(img, `no image block in ${JSON.stringify(res.content).slice(0, 500)}`);
        assert.equal(img.mimeType, "image/png");
        assert.deepEqual(Buffer.from(img.data, "base64"), PNG);
        const f = out.files.find((x) => x.path === "out/dot.png");
        assert.ok(f, JSON.stringify(out.files));
        assert.equal(f.mime_type, "image/png");
        assert.equal(f.size, PNG.length);
        // A non-image file: listed, and a resource_link.
        const notes = out.files.find((x) => x.path === "out/notes.txt");
        assert.ok(notes, JSON.stringify(out.files));
        assert.equal(notes.size, 6);
        assert.ok(res.content.some((c) => c.type === "resource_link" && c.uri === notes.uri), `no resource_link for ${notes.uri}`);
});

async function readLink(uri) {
        const read = await srv.client.readResource({ uri });
        return read.contents[0].text ?? Buffer.from(read.contents[0].blob, "base64").toString();
}

test("in a session, the resource_link of a file the run wrote is readable", { skip, timeout: 60_000 }, async () => {
        const s = assertOk(await call(srv, "session_create", {}), srv);
        const res = await runCode(srv, "sh", "mkdir -p out && echo notes > out/notes.txt", { session_id: s.session_id });
        const notes = assertOk(res, srv).files.find((x) => x.path === "out/notes.txt");
        assert.ok(notes, JSON.stringify(res.structuredContent.files));
        const link = res.content.find((c) => c.type === "resource_link" && c.uri === notes.uri);
        assert.ok(link, `no resource_link for ${notes.uri}`);
        assert.equal(await readLink(link.uri), "notes\n");
        assertOk(await call(srv, "session_close", { session_id: s.session_id }), srv);
});

test("without a session, the resource_link of a file the run wrote is readable", { skip, timeout: 60_000 }, async () => {
        const res = await runCode(srv, "sh", "mkdir -p out && echo notes > out/notes.txt");
        const notes = assertOk(res, srv).files.find((x) => x.path === "out/notes.txt");
        assert.equal(await readLink(notes.uri), "notes\n");
});

test("ten concurrent calls: all correct, distinct outputs", { skip, timeout: 180_000 }, async () => {
        const calls = Array.from({ length: 10 }, (_, i) =>
                runCode(srv, i % 2 ? "sh" : "python",
                        i % 2 ? `echo "call ${i} $$"; sleep 0.2` : `import time,os\nprint("call ${i}", os.getpid())\ntime.sleep(0.2)`,
                        { timeout_ms: 120_000 }, { timeout: 170_000 }));
        const results = await Promise.all(calls);
        const ids = new Set();
        results.forEach((res, i) => {
                const out = assertOk(res, srv, `call ${i}`);
                assert.match(out.stdout, new RegExp(`^call ${i} \\d+\\n$`));
                ids.add(out.run_id);
        });
        assert.equal(ids.size, 10, "distinct run ids");
});

test("progress notifications on a long run: strictly increasing, with the output tail", { skip, timeout: 60_000 }, async () => {
        const seen = [];
        // The run paces its own output; 3 s of it leaves room for several (rate-limited)
        // notifications.
        const res = await runCode(srv, "sh", 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "line $i"; sleep 0.3; done',
                                  {}, { onprogress: (p) => seen.push(p), timeout: 50_000 });
        assertOk(res, srv);
        assert.ok(seen.length >= 2, `${seen.length} progress notifications: ${JSON.stringify(seen)}`);
        for (let i = 1; i < seen.length; i++)
                assert.ok(seen[i].progress > seen[i - 1].progress, `progress not increasing: ${JSON.stringify(seen)}`);
        assert.ok(seen.some((p) => /line \d+/.test(p.message ?? "")), `no output tail in ${JSON.stringify(seen)}`);
        // Rate-limited: far fewer notifications than lines would allow at full speed is fine;
        // more than one per 50 ms is not.
        assert.ok(seen.length <= 3000 / 50, `${seen.length} notifications in 3 s`);
});

test("cancellation mid-run: no result, ping answers, the run's container is gone", { skip, timeout: 60_000 }, async () => {
        const ac = new AbortController();
        let started = false;
        const p = runCode(srv, "sh", "echo started; sleep 30; echo never", { timeout_ms: 50_000 },
                          { signal: ac.signal, onprogress: (n) => { if (/started/.test(n.message ?? "")) started = true; } });
        const inst = srv.instance();
        assert.ok(inst, "instance dir");
        await waitFor("the run's output in a progress notification", () => started, 30_000);
        assert.ok(containersOf(srv.stateDir, inst).length >= 1, "a container runs");
        const t0 = Date.now();
        ac.abort("test cancel");
        await assert.rejects(p);
        assert.deepEqual(await srv.client.ping(), {});
        await waitFor("the cancelled run's container to be deleted",
                      () => containersOf(srv.stateDir, inst).length === 0, 10_000);
        await waitFor("the cancelled run's cgroups to be removed", () => cgroupsOf(inst).every(
                (cg) => fs.readdirSync(cg, { withFileTypes: true }).filter((e) => e.isDirectory()).length === 0), 10_000);
        assert.ok(Date.now() - t0 < 10_000, "cancelled well before the sleep ends");
        // The server still runs code.
        assert.equal(assertOk(await runCode(srv, "sh", "echo after"), srv).stdout, "after\n");
});

test("full stdout/stderr of a run are resources", { skip, timeout: 60_000 }, async () => {
        const res = await runCode(srv, "sh", "echo to-out; echo to-err >&2");
        const out = assertOk(res, srv);
        const so = await srv.client.readResource({ uri: `sandbox://runs/${out.run_id}/stdout` });
        assert.equal(so.contents[0].text, "to-out\n");
        const se = await srv.client.readResource({ uri: `sandbox://runs/${out.run_id}/stderr` });
        assert.equal(se.contents[0].text, "to-err\n");
        const { resources } = await srv.client.listResources();
        assert.ok(resources.some((r) => r.uri === `sandbox://runs/${out.run_id}/stdout`),
                  JSON.stringify(resources.map((r) => r.uri)));
        await assert.rejects(srv.client.readResource({ uri: "sandbox://runs/no-such-run/stdout" }),
                             (e) => e.code === -32002);
        const tpl = await srv.client.listResourceTemplates();
        assert.ok(tpl.resourceTemplates.length >= 1);
        // No path of the host leaks in: the result mentions no state dir.
        assert.ok(!JSON.stringify(res).includes(srv.stateDir), "no host path in the result");
});

test("the server exits 0 on EOF and leaves nothing behind", { skip, timeout: 60_000 }, async () => {
        const { code, signal } = await srv.close();
        assert.equal(signal, null);
        assert.equal(code, 0);
        await finishAll();
});
