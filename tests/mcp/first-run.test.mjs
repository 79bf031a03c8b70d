// First run as a user would: msp-mcp started by an ordinary user (tests/helper/test-user.sh)
// the way an MCP client starts it — the SDK's stdio transport with its default environment
// (HOME, LOGNAME, PATH, SHELL, TERM, USER: no XDG_RUNTIME_DIR) and a home whose ~/.local is
// 0700, as rootless podman leaves it; no --state-dir or --image-cache. Its defaults work,
// --check says what start-up will do, and a start that fails anyway reaches the client as
// an MCP error naming why, not as "connection closed".
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { skipReason, finishAll, MSP_MCP, MSP, text } from "./lib.mjs";

const USER_HELPER = new URL("../helper/test-user.sh", import.meta.url).pathname;
const skip = skipReason() || (process.getuid() !== 0 && "needs root to start msp-mcp as the test user")
        || (!fs.existsSync("/usr/bin/setpriv") && "no setpriv (util-linux)");
const env = skip ? {} : Object.fromEntries(spawnSync(USER_HELPER, ["ensure"], { encoding: "utf8" })
        .stdout.trim().split("\n").filter((l) => l.includes("=")).map((l) => l.split(/=(.*)/s).slice(0, 2)));
const uid = Number(env.MSP_TEST_UID), gid = Number(env.MSP_TEST_GID);
const tmpState = `/tmp/msp-mcp-${uid}`;
const runUser = `/run/user/${uid}`;

const work = skip ? "" : fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-first-run-"));
if (work) fs.chmodSync(work, 0o755);    // the homes below, for the test user
after(async () => {
        for (const c of clients) await c.close().catch(() => {});
        await finishAll();
        if (work) fs.rmSync(work, { recursive: true, force: true });
        fs.rmSync(tmpState, { recursive: true, force: true });
        fs.rmSync(path.join(runUser, "msp-mcp"), { recursive: true, force: true });
});

// A home as a real user has it: owned by them, ~/.local 0700.
function makeHome(name) {
        const home = path.join(work, name);
        fs.mkdirSync(path.join(home, ".local"), { recursive: true, mode: 0o700 });
        fs.chmodSync(home, 0o755);
        fs.chmodSync(path.join(home, ".local"), 0o700);
        for (const p of [home, path.join(home, ".local")]) fs.chownSync(p, uid, gid);
        return home;
}

// What the SDK's StdioClientTransport passes by default (getDefaultEnvironment), as the user.
function sdkEnv(home) {
        return { HOME: home, LOGNAME: env.MSP_TEST_USER, PATH: "/usr/local/bin:/usr/bin:/bin",
                 SHELL: "/bin/bash", TERM: "xterm", USER: env.MSP_TEST_USER };
}

// argv that starts msp-mcp as the user; hideRunUser: in a mount namespace whose /run/user
// is empty (a host without logind's per-user directory).
function userArgv(args, { hideRunUser = false } = {}) {
        const as = ["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--inh-caps=-all",
                    MSP_MCP, "--runtime", MSP, ...args];
        if (!hideRunUser) return as;
        return ["unshare", "-m", "--propagation", "private", "sh", "-c",
                'mount -t tmpfs -o mode=0755 tmpfs /run/user && exec "$@"', "sh", ...as];
}

// Every server started here, closed by after() whatever a test left.
const clients = [];

async function connect(home, args = [], opts = {}) {
        const argv = userArgv(args, opts);
        const transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1),
                                                      env: sdkEnv(home), stderr: "pipe" });
        let log = "";
        transport.stderr.on("data", (b) => { log = (log + b).slice(-65536); });
        const client = new Client({ name: "first-run", version: "0" }, { capabilities: {} });
        clients.push(client);
        const err = await client.connect(transport).then(() => null, (e) => e);
        return { client, transport, err, log: () => log };
}

async function runSh(c, code) {
        return c.client.callTool({ name: "run_code", arguments: { language: "sh", code } }, undefined,
                                 { timeout: 60_000 });
}

test("an ordinary user's msp-mcp with the SDK's default environment, ~/.local 0700 and no /run/user/UID: starts and runs code; state in /tmp/msp-mcp-UID", { skip, timeout: 120_000 }, async () => {
        fs.rmSync(tmpState, { recursive: true, force: true });
        const home = makeHome("no-run-user");
        const c = await connect(home, [], { hideRunUser: true });
        assert.equal(c.err, null, `${c.err}\n${c.log()}`);
        const r = await runSh(c, "echo hi from the sandbox");
        assert.equal(r.isError ?? false, false, `${text(r)}\n${c.log()}`);
        assert.match(text(r), /hi from the sandbox/);
        const st = fs.lstatSync(tmpState);
        assert.ok(st.isDirectory() && st.uid === uid && (st.mode & 0o022) === 0, `${tmpState}: ${st.mode.toString(8)}`);
        await c.client.close();
        // nothing of the server's left in its state dir
        await new Promise((res) => setTimeout(res, 0));
        assert.deepEqual(fs.readdirSync(tmpState).filter((x) => x.startsWith("inst-")), []);
});

test("with /run/user/UID (a logind host) but no XDG_RUNTIME_DIR: the state goes there", { skip, timeout: 120_000 }, async (t) => {
        const st = fs.statSync(runUser, { throwIfNoEntry: false });
        if (!st || st.uid !== uid || (st.mode & 0o077) !== 0) return t.skip(`${runUser} is not the test user's private directory`);
        const home = makeHome("run-user");
        const c = await connect(home);
        assert.equal(c.err, null, `${c.err}\n${c.log()}`);
        assert.match(text(await runSh(c, "echo ok")), /ok/);
        assert.ok(fs.existsSync(path.join(runUser, "msp-mcp")), "state under /run/user/UID");
        await c.client.close();
});

test("a start that fails reaches the SDK client as an MCP error naming why", { skip, timeout: 120_000 }, async () => {
        const home = makeHome("fails");
        // a state dir below the 0700 ~/.local: the sandbox's root could not reach it
        const bad = path.join(home, ".local", "state", "msp-mcp");
        const c = await connect(home, ["--state-dir", bad]);
        assert.ok(c.err, "connect fails");
        assert.match(String(c.err), /msp-mcp cannot start: .*state dir .*cannot be searched by the sandbox's root/, String(c.err));
        assert.equal(c.err.code, -32603, String(c.err));
        await c.client.close().catch(() => {});
        // as root too: an audit log that cannot be opened
        const argv = [MSP_MCP, "--runtime", MSP, "--audit-log", path.join(work, "no-such-dir", "audit.log")];
        const transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: "pipe" });
        const client = new Client({ name: "first-run", version: "0" }, { capabilities: {} });
        const err = await client.connect(transport).then(() => null, (e) => e);
        assert.match(String(err), /msp-mcp cannot start: --audit-log .*No such file or directory/, String(err));
        await client.close().catch(() => {});
});

test("--check tests what start-up does: an unreachable state dir fails it; the user's defaults pass it", { skip, timeout: 120_000 }, async () => {
        const home = makeHome("check");
        const bad = path.join(home, ".local", "state", "msp-mcp");
        const run = (args, opts) => {
                const argv = userArgv(["--check", ...args], opts);
                return spawnSync(argv[0], argv.slice(1), { env: sdkEnv(home), encoding: "utf8", timeout: 120_000 });
        };
        const r = run(["--state-dir", bad]);
        assert.equal(r.status, 1, r.stdout + r.stderr);
        assert.match(r.stdout, /state-dir .*cannot be searched by the sandbox's root/, r.stdout);
        const ok = run([], { hideRunUser: true });
        assert.match(ok.stdout, new RegExp(`state-dir +${tmpState}`), ok.stdout);
        // --help shows the defaults of the user asking, the units and kinds of values
        const help = spawnSync(userArgv(["--help"], { hideRunUser: true })[0], userArgv(["--help"], { hideRunUser: true }).slice(1),
                               { env: sdkEnv(home), encoding: "utf8" });
        assert.match(help.stdout, new RegExp(`--image-cache DIR .*\\(default ${home}/\\.cache/msp-mcp/images\\)`), help.stdout);
        assert.match(help.stdout, /--listen ADDR /);
        assert.match(help.stdout, /--oauth-tenant-claim CLAIM/);
        assert.match(help.stdout, /--max-timeout TIME .*\(default 10m\)/);
});

test("limits that contradict each other are answered in the units given", { skip, timeout: 60_000 }, async () => {
        const r = spawnSync(MSP_MCP, ["--runtime", MSP, "--timeout", "5m", "--max-timeout", "1m"], { input: "", encoding: "utf8" });
        assert.equal(r.status, 2, r.stderr);
        assert.match(r.stderr, /--timeout 5m is above --max-timeout 1m/, r.stderr);
});

test("--image run by a user: the image cache defaults to the user's ~/.cache; --check and start agree; a session runs in the image", { skip: skip || (!fs.existsSync("/bin/busybox") && "no /bin/busybox (busybox-static)"), timeout: 180_000 }, async () => {
        const home = makeHome("image");
        const dir = path.join(work, "layout");
        const maker = path.join(import.meta.dirname, "..", "helper", "oci-layout.py");
        const spec = { layers: [{ compression: "gzip", entries: [
                { path: "bin", dir: true }, { path: "etc", dir: true },
                { path: "bin/busybox", file: "/bin/busybox", mode: 0o755 },
                { path: "bin/sh", symlink: "busybox" },
                { path: "etc/motd", data: "from the image\n" }] }] };
        const made = spawnSync("python3", [maker, dir], { input: JSON.stringify(spec), encoding: "utf8" });
        assert.equal(made.status, 0, made.stderr);
        spawnSync("chmod", ["-R", "a+rX", dir]);
        const args = ["--image", `img=oci:${dir}`];
        const argv = userArgv(["--check", ...args]);
        const check = spawnSync(argv[0], argv.slice(1), { env: sdkEnv(home), encoding: "utf8", timeout: 120_000 });
        assert.match(check.stdout, new RegExp(`image-cache +${home}/\\.cache/msp-mcp/images`), check.stdout);
        assert.equal(check.status, 0, check.stdout + check.stderr);
        const c = await connect(home, args);
        assert.equal(c.err, null, `${c.err}\n${c.log()}`);
        const s = await c.client.callTool({ name: "session_create", arguments: { rootfs: "img" } });
        assert.equal(s.isError ?? false, false, text(s));
        const r = await c.client.callTool({ name: "run_code", arguments: { language: "sh", code: "cat /etc/motd",
                                            session_id: s.structuredContent.session_id } }, undefined, { timeout: 60_000 });
        assert.match(text(r), /from the image/, `${text(r)}\n${c.log()}`);
        await c.client.close();
        assert.ok(fs.existsSync(path.join(home, ".cache", "msp-mcp", "images")));
});
