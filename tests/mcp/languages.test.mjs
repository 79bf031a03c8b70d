// Every language msp-mcp lists works as on the host, in the default system view and in a
// session: standard library, stdin, args, exit code, a file written to and read back from
// /workspace; a plot written to /workspace/out/ comes back as image content where the host
// has a plotting library; R's start-up files, default packages and saveRDS/readRDS across
// calls. A language the host lacks is skipped with the reason.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { startServer, languagesOf, skipReason, finishAll, call, runCode, assertOk, text } from "./lib.mjs";

const skip = skipReason();
let srv, languages;

before(async () => {
        if (skip) return;
        srv = await startServer();
        languages = await languagesOf(srv);
});
after(finishAll);

// Where msp-mcp looks for each interpreter (languages.c), to tell "not installed" from
// "installed but not listed".
const INTERP = {
        sh: "sh", bash: "bash", python: "python3", node: "node", perl: "perl", ruby: "ruby",
        R: "Rscript", c: "gcc", cpp: "g++",
};
function hostHas(lang) {
        return ["/usr/bin", "/bin", "/usr/local/bin"].some((d) => fs.existsSync(`${d}/${INTERP[lang]}`));
}

// Each program prints "std=42 stdin=ABC args=one|two words file=<lang> ok" and exits 3:
// 42 from the standard library, stdin upper-cased, the args joined by "|", and the text it
// wrote to /workspace/<lang>.txt and read back.
const PROGRAMS = {
        sh: `x=$(expr 6 \\* 7); read -r line; up=$(printf '%s' "$line" | tr a-z A-Z)
printf '%s' sh > /workspace/sh.txt
printf 'std=%s stdin=%s args=%s|%s file=%s ok\\n' "$x" "$up" "$1" "$2" "$(cat /workspace/sh.txt)"; exit 3`,
        bash: `printf -v x '%d' $((6 * 7)); read -r line; IFS='|'
echo -n bash > /workspace/bash.txt; f=$(</workspace/bash.txt)
echo "std=$x stdin=\${line^^} args=$* file=$f ok"; exit 3`,
        python: `import sys, math, json
line = sys.stdin.readline().strip()
with open("/workspace/python.txt", "w") as f: json.dump("python", f)
with open("/workspace/python.txt") as f: back = json.load(f)
print(f"std={math.prod([6, 7])} stdin={line.upper()} args={'|'.join(sys.argv[1:])} file={back} ok")
sys.exit(3)`,
        node: `const fs = require("node:fs"), path = require("node:path"), os = require("node:os");
const line = fs.readFileSync(0, "utf8").trim();
fs.writeFileSync("/workspace/node.txt", "node");
const std = path.basename("/x/42") + (os.EOL === "\\n" ? "" : "?");
console.log(\`std=\${std} stdin=\${line.toUpperCase()} args=\${process.argv.slice(2).join("|")} file=\${fs.readFileSync("/workspace/node.txt", "utf8")} ok\`);
process.exitCode = 3;`,
        perl: `use strict; use List::Util qw(sum);
my $line = <STDIN>; chomp $line;
open(my $w, ">", "/workspace/perl.txt") or die; print $w "perl"; close $w;
open(my $r, "<", "/workspace/perl.txt") or die; my $back = <$r>; close $r;
printf "std=%d stdin=%s args=%s file=%s ok\\n", sum(40, 2), uc $line, join("|", @ARGV), $back;
exit 3;`,
        ruby: `line = $stdin.gets.strip
File.write("/workspace/ruby.txt", "ruby")
puts "std=#{[6, 7].reduce(:*)} stdin=#{line.upcase} args=#{ARGV.join("|")} file=#{File.read("/workspace/ruby.txt")} ok"
exit 3`,
        R: `line <- readLines(file("stdin"), n = 1)
writeLines("R", "/workspace/R.txt")
back <- readLines("/workspace/R.txt")
args <- commandArgs(trailingOnly = TRUE)
cat(sprintf("std=%d stdin=%s args=%s file=%s ok\\n", as.integer(stats::median(c(41, 42, 43))),
            toupper(line), paste(args, collapse = "|"), back))
quit(status = 3)`,
        c: `#include <math.h>
#include <stdio.h>
#include <string.h>
#include <ctype.h>
int main(int argc, char **argv) {
        char line[64] = "", back[16] = "";
        if (!fgets(line, sizeof line, stdin)) return 1;
        line[strcspn(line, "\\n")] = 0;
        for (char *p = line; *p; p++) *p = (char) toupper((unsigned char) *p);
        FILE *f = fopen("/workspace/c.txt", "w"); fputs("c", f); fclose(f);
        f = fopen("/workspace/c.txt", "r"); fgets(back, sizeof back, f); fclose(f);
        printf("std=%d stdin=%s args=%s|%s file=%s ok\\n", (int) sqrt(1764.0), line,
               argc > 1 ? argv[1] : "", argc > 2 ? argv[2] : "", back);
        return 3;
}`,
        cpp: `#include <algorithm>
#include <fstream>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>
int main(int argc, char **argv) {
        std::string line; std::getline(std::cin, line);
        std::transform(line.begin(), line.end(), line.begin(), ::toupper);
        std::ofstream("/workspace/cpp.txt") << "cpp";
        std::string back; std::getline(std::ifstream("/workspace/cpp.txt"), back);
        std::vector<int> v{40, 2};
        std::string args;
        for (int i = 1; i < argc; i++) args += (i > 1 ? "|" : "") + std::string(argv[i]);
        std::cout << "std=" << std::accumulate(v.begin(), v.end(), 0) << " stdin=" << line
                  << " args=" << args << " file=" << back << " ok" << std::endl;
        return 3;
}`,
};

async function runContract(lang, extra = {}, server = srv) {
        const res = await runCode(server, lang, PROGRAMS[lang],
                                  { stdin: "abc\n", args: ["one", "two words"], timeout_ms: 60_000, ...extra });
        const out = res.structuredContent;
        assert.ok(out, `${lang}: no structuredContent: ${JSON.stringify(res).slice(0, 1000)}`);
        assert.equal(out.stderr, "", `${lang}: stderr`);
        assert.equal(out.stdout, `std=42 stdin=ABC args=one|two words file=${lang} ok\n`, lang);
        assert.equal(out.exit_code, 3, `${lang}: ${out.stderr}`);
        assert.equal(res.isError, true, `${lang}: a non-zero exit is a tool error`);
}

for (const lang of Object.keys(INTERP)) {
        test(`${lang}: a real program in the system view and in a session`, { skip, timeout: 240_000 }, async (t) => {
                if (!languages.includes(lang)) {
                        assert.ok(!hostHas(lang), `${INTERP[lang]} is installed but '${lang}' is not listed; ` +
                                  `msp-mcp --check says why`);
                        t.skip(`${INTERP[lang]} is not installed on this host`);
                        return;
                }
                await runContract(lang);
                const s = assertOk(await call(srv, "session_create", {}), srv, "session_create");
                // A program of its own in the session's sandbox: fresh, since a session's
                // python, R and node runs are cells (of a kernel, of a REPL) that take
                // neither stdin nor args.
                await runContract(lang, { session_id: s.session_id, fresh: true });
                await call(srv, "session_close", { session_id: s.session_id });
        });
}

test("every language listed has a program here", { skip }, () => {
        for (const lang of languages) assert.ok(PROGRAMS[lang], `no program for '${lang}' in languages.test.mjs`);
});

function hostR(expr) {
        return spawnSync("Rscript", ["-e", expr], { encoding: "utf8", timeout: 60_000 });
}

test("R: Renviron and ldpaths found, default packages attached, saveRDS/readRDS across session calls", { skip, timeout: 240_000 }, async (t) => {
        if (!languages.includes("R")) return t.skip("Rscript is not installed (contrib/install-deps.sh languages)");
        const res = await runCode(srv, "R", `
stopifnot(file.exists(file.path(R.home("etc"), c("Renviron", "ldpaths"))))
stopifnot(nzchar(Sys.getenv("R_LIBS_SITE")) || nzchar(Sys.getenv("R_LIBS_USER")))
stopifnot(grepl(file.path(R.home(), "lib"), Sys.getenv("LD_LIBRARY_PATH"), fixed = TRUE))  # ldpaths ran
for (p in c("utils", "stats", "graphics", "grDevices", "methods"))
        stopifnot(paste0("package:", p) %in% search())
cat(R.version$major, "\\n")`, { timeout_ms: 60_000 });
        const out = assertOk(res, srv, "R start-up");
        assert.equal(out.stderr, "");
        assert.match(out.stdout, /^\d+ \n$/);

        const s = assertOk(await call(srv, "session_create", {}), srv, "session_create");
        assertOk(await runCode(srv, "R", 'saveRDS(list(a = 1:3, m = "kept"), "/workspace/state.rds")',
                               { session_id: s.session_id, timeout_ms: 60_000 }), srv, "saveRDS");
        const back = assertOk(await runCode(srv, "R", 'x <- readRDS("state.rds"); cat(sum(x$a), x$m, "\\n")',
                                            { session_id: s.session_id, timeout_ms: 60_000 }), srv, "readRDS");
        assert.equal(back.stdout, "6 kept \n");
        await call(srv, "session_close", { session_id: s.session_id });
});

async function assertImage(lang, code, name, server = srv) {
        const res = await runCode(server, lang, code, { timeout_ms: 120_000 });
        const out = assertOk(res, server, `${lang} plot`);
        assert.equal(out.stderr, "", `${lang} plot: stderr`);
        const img = res.content.find((c) => c.type === "image");
        assert.ok(img, `${lang}: no image block in ${JSON.stringify(res.content).slice(0, 500)}`);
        assert.equal(img.mimeType, "image/png");
        const png = Buffer.from(img.data, "base64");
        assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
        assert.ok(png.length > 1000, `${lang}: a plot, not an empty image (${png.length} bytes)`);
        assert.ok(out.files.some((f) => f.path === `out/${name}` && f.mime_type === "image/png"));
}

const R_PLOT = `dir.create("/workspace/out", showWarnings = FALSE)
png("/workspace/out/r.png", width = 400, height = 300)
plot(stats::rnorm(50), main = "a title with text")
invisible(dev.off())`;

test("R: png() works headless, the plot comes back as image content", { skip, timeout: 240_000 }, async (t) => {
        if (!languages.includes("R")) return t.skip("Rscript is not installed (contrib/install-deps.sh languages)");
        if (hostR('quit(status = !capabilities("png"))').status !== 0)
                return t.skip("this host's R has no png device (capabilities('png') is FALSE)");
        await assertImage("R", R_PLOT, "r.png");
});

// The binds the languages need are plain OCI mounts: runc runs every language the same.
const RUNC = ["/usr/sbin/runc", "/usr/bin/runc"].find((p) => fs.existsSync(p));
test("--runtime runc: every language listed, and an R plot", { skip: skip || (RUNC ? false : "runc not installed (contrib/install-deps.sh bench)"), timeout: 300_000 }, async () => {
        const rs = await startServer({ runtime: RUNC });
        for (const lang of languages) await runContract(lang, {}, rs);
        if (languages.includes("R")) await assertImage("R", R_PLOT, "r.png", rs);
        await rs.close();
});

test("python: matplotlib (Agg) plot comes back as image content", { skip, timeout: 240_000 }, async (t) => {
        if (!languages.includes("python")) return t.skip("python3 is not installed");
        if (spawnSync("/usr/bin/python3", ["-c", "import matplotlib"]).status !== 0)
                return t.skip("matplotlib is not installed for /usr/bin/python3 (contrib/install-deps.sh languages)");
        await assertImage("python", `import os, sys
assert sys.executable.startswith("/usr/bin/python3"), sys.executable
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
os.makedirs("/workspace/out", exist_ok=True)
plt.plot([1, 3, 2])
plt.title("a title with text")
plt.savefig("/workspace/out/py.png")
assert "/usr/lib/python3/dist-packages" in matplotlib.__file__`, "py.png");
});

test("--check names every language listed, with its interpreter", { skip, timeout: 60_000 }, () => {
        const dir = fs.mkdtempSync("/tmp/msp-mcp-test-");
        try {
                const r = spawnSync(process.env.MSP_MCP, ["--check", "--runtime", process.env.MSP, "--state-dir", dir],
                                    { encoding: "utf8", timeout: 60_000 });
                assert.equal(r.status, 0, r.stdout + r.stderr);
                for (const lang of languages)
                        assert.match(r.stdout, new RegExp(`^ok +lang ${lang} +/\\S+ \\(a program ran in the sandbox, \\d+ ms\\)$`, "m"), r.stdout);
                // Present but not listed: an "off" line with the reason, never a failure.
                for (const m of r.stdout.matchAll(/^off +lang (\S+) +not listed: .+$/gm))
                        assert.ok(!languages.includes(m[1]), m[0]);
        } finally {
                fs.rmSync(dir, { recursive: true, force: true });
        }
});

// Detection decides from files; --check runs a program per language and names a listed one
// that fails: here R, whose /etc configuration a Landlock policy keeps it from reading. The
// server runs the same programs once per interpreter and policy (langcache.h) and does not
// list such a language; a call naming it says why.
test("--check and the server: a language whose program fails in the sandbox is named broken by --check, not listed by the server, refused by a call with the failure", { skip, timeout: 240_000 }, async (t) => {
        if (!languages.includes("R")) return t.skip("Rscript is not installed (contrib/install-deps.sh languages)");
        const dir = fs.mkdtempSync("/tmp/msp-mcp-test-"), state = fs.mkdtempSync("/tmp/msp-mcp-test-");
        fs.chmodSync(dir, 0o755);      // the policy file, for a server run by the test user
        try {
                const policy = JSON.parse(fs.readFileSync(new URL("../../contrib/profiles/landlock-default.json", import.meta.url)));
                for (const rule of policy.rules.pathBeneath)
                        if (rule.paths.includes("/etc")) rule.paths = rule.paths.filter((p) => p !== "/etc").concat("/etc/ld.so.cache");
                fs.writeFileSync(`${dir}/landlock.json`, JSON.stringify(policy));
                const r = spawnSync(process.env.MSP_MCP, ["--check", "--runtime", process.env.MSP, "--state-dir", state,
                                                          "--landlock-profile", `${dir}/landlock.json`],
                                    { encoding: "utf8", timeout: 120_000 });
                assert.equal(r.status, 0, r.stdout + r.stderr);
                assert.match(r.stdout, /^broken +lang R +\/\S+: listed, but its program fails in the sandbox: exit \d+, .*stderr: .+$/m, r.stdout);
                assert.match(r.stdout, /^ok +lang sh +\/\S+ \(a program ran in the sandbox/m, r.stdout);

                // What --check names broken (R; node too, whose OpenSSL reads /etc/ssl) is not listed.
                const named = [...r.stdout.matchAll(/^broken +lang (\S+)/gm)].map((m) => m[1]);
                const listed = languages.filter((l) => !named.includes(l));
                const broken = await startServer({ args: ["--landlock-profile", `${dir}/landlock.json`] });
                assert.deepEqual(await languagesOf(broken), listed, broken.log());
                assert.match(broken.log(), /language R not listed: its program fails in the sandbox: exit \d+/);
                const res = await runCode(broken, "R", "cat('hi')");
                assert.ok(res.isError, JSON.stringify(res));
                assert.match(text(res), /^language: "R" is not available: its program fails in the sandbox: exit \d+, .*stderr: .+/);
                assert.equal(assertOk(await runCode(broken, "sh", "echo ok"), broken).stdout, "ok\n");
                await broken.close();
                // The verdicts are kept: a second start runs no program and lists the same.
                const again = await startServer({ args: ["--landlock-profile", `${dir}/landlock.json`] });
                assert.deepEqual(await languagesOf(again), listed, again.log());
                assert.doesNotMatch(again.log(), /programs run in the sandbox/);
                await again.close();
        } finally {
                fs.rmSync(dir, { recursive: true, force: true });
                fs.rmSync(state, { recursive: true, force: true });
        }
});

test("node: a globally installed module loads, as on the host", { skip, timeout: 120_000 }, async (t) => {
        const mod = "/usr/lib/node_modules/npm/node_modules/semver";
        if (!languages.includes("node")) return t.skip("node is not installed");
        if (!fs.existsSync(mod)) return t.skip(`${mod} is not installed (npm)`);
        const out = assertOk(await runCode(srv, "node", `const semver = require("${mod}");
console.log(semver.valid("1.2.3"), semver.gt("2.0.0", "1.9.9"))`), srv, "node global module");
        assert.equal(out.stdout, "1.2.3 true\n");
});

test("python: Debian's /usr/bin/python3 with its dist-packages", { skip, timeout: 120_000 }, async (t) => {
        if (!languages.includes("python")) return t.skip("python3 is not installed");
        // The host's interpreter with the sandbox's environment (no user site, no PYTHON*).
        const host = spawnSync("/usr/bin/python3", ["-c", "import sys; print('\\n'.join(sys.path[1:]))"],
                               { encoding: "utf8", env: { PATH: "/usr/bin:/bin", HOME: "/nonexistent", LANG: "C.UTF-8" } });
        const out = assertOk(await runCode(srv, "python", "import sys\nprint(sys.executable)\nprint('\\n'.join(sys.path[1:]))"),
                             srv, "python sys.path");
        const [exe, ...path] = out.stdout.trim().split("\n");
        assert.match(exe, /^\/usr\/bin\/python3/);
        // The same module path as the host's interpreter (the program's own directory aside).
        assert.deepEqual(path, host.stdout.trim().split("\n"));
        assert.ok(path.includes("/usr/lib/python3/dist-packages"), out.stdout);
});

// Debian and Ubuntu mark /usr/bin/python3 EXTERNALLY-MANAGED (PEP 668): a plain
// `pip install` stops with externally-managed-environment. The sandbox's system dirs are
// read-only, so pip installs into the user site, /workspace/.local (HOME=/workspace), which
// the session's next call imports from. Offline: the wheel is built in the workspace.
const WHEEL_PY = `
import zipfile, hashlib, base64, os
os.makedirs("/workspace/wheels", exist_ok=True)
files = {"demo_pkg/__init__.py": b"VALUE = 42\\n",
         "demo_pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\\nName: demo-pkg\\nVersion: 1.0\\n",
         "demo_pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
         "demo_pkg-1.0.dist-info/entry_points.txt": b"[console_scripts]\\ndemo-pkg = demo_pkg:main\\n"}
files["demo_pkg/__init__.py"] += b"def main():\\n    print('demo', VALUE)\\n"
rec = ""
for n, d in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
    rec += "%s,sha256=%s,%d\\n" % (n, h, len(d))
rec += "demo_pkg-1.0.dist-info/RECORD,,\\n"
with zipfile.ZipFile("/workspace/wheels/demo_pkg-1.0-py3-none-any.whl", "w") as z:
    for n, d in files.items():
        z.writestr(n, d)
    z.writestr("demo_pkg-1.0.dist-info/RECORD", rec)
`;
const hostPip = () => spawnSync("/usr/bin/python3", ["-m", "pip", "--version"]).status === 0;

test("python: pip install (PEP 668's externally-managed system python) lands in /workspace/.local; the session's next call imports it and runs its script", { skip, timeout: 180_000 }, async (t) => {
        if (!languages.includes("python")) return t.skip("python3 is not installed");
        if (!hostPip()) return t.skip("python3-pip is not installed (contrib/install-deps.sh test)");
        const rc = (await srv.client.listTools()).tools.find((x) => x.name === "run_code");
        assert.match(rc.description, /`pip install PKG` installs into \/workspace\/\.local/);
        const s = assertOk(await call(srv, "session_create", {}), srv, "session_create");
        const opts = { session_id: s.session_id, timeout_ms: 120_000 };
        assertOk(await runCode(srv, "python", WHEEL_PY, opts), srv, "build the wheel");
        const pip = assertOk(await runCode(srv, "sh", `
                python3 -m pip install --disable-pip-version-check --no-index --find-links /workspace/wheels demo-pkg`,
                opts), srv, "pip install");
        assert.doesNotMatch(pip.stderr, /externally-managed/);
        const use = assertOk(await runCode(srv, "python", "import demo_pkg\nprint(demo_pkg.VALUE, demo_pkg.__file__)", opts),
                             srv, "import");
        assert.match(use.stdout, /^42 \/workspace\/\.local\/lib\/python3[.\d]*\/site-packages\/demo_pkg\/__init__\.py$/m);
        const script = assertOk(await runCode(srv, "sh", "demo-pkg", opts), srv, "the console script on PATH");
        assert.equal(script.stdout, "demo 42\n");
});

const hostVenv = () => spawnSync("/usr/bin/python3", ["-c", "import ensurepip, venv"]).status === 0;

test("python: a venv in /workspace (python3 -m venv) installs and imports in the session's next call", { skip, timeout: 240_000 }, async (t) => {
        if (!languages.includes("python")) return t.skip("python3 is not installed");
        if (!hostVenv()) return t.skip("python3-venv is not installed (ensurepip missing)");
        const s = assertOk(await call(srv, "session_create", {}), srv, "session_create");
        const opts = { session_id: s.session_id, timeout_ms: 180_000 };
        assertOk(await runCode(srv, "python", WHEEL_PY, opts), srv, "build the wheel");
        assertOk(await runCode(srv, "sh", `
                python3 -m venv /workspace/venv &&
                /workspace/venv/bin/pip install --disable-pip-version-check -q --no-index --find-links /workspace/wheels demo-pkg`,
                opts), srv, "venv and pip install");
        const use = assertOk(await runCode(srv, "sh", "/workspace/venv/bin/python -c 'import demo_pkg; print(demo_pkg.VALUE)'", opts),
                             srv, "import in the venv");
        assert.equal(use.stdout, "42\n");
});
