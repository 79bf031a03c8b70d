// contrib/mcp/: the client configurations are valid JSON and what they start works with the
// environment a client passes; the Claude Desktop example that reaches msp-mcp on a Linux
// machine over ssh works as written: a private sshd (127.0.0.1, a random port, its own host
// key and authorized_keys in a temporary directory) lets the test user in, the SDK's
// StdioClientTransport runs exactly the documented command and arguments (plus -F none, -p,
// -i and the known-hosts file that point them at this sshd), run_code answers, and closing
// the client leaves no msp-mcp, sandbox or instance directory behind.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { TRANSPORT, CALL_TIMEOUT, skipReason, userCopies, waitFor, text } from "./lib.mjs";

const CONTRIB = new URL("../../contrib/mcp/", import.meta.url).pathname;
const USER_HELPER = new URL("../helper/test-user.sh", import.meta.url).pathname;
const SSHD = "/usr/sbin/sshd";

function why() {
        const base = skipReason();
        if (base) return base;
        if (TRANSPORT === "http") return "the configurations start msp-mcp over stdio: the stdio passes run them";
        if (!fs.existsSync("/usr/bin/setpriv")) return "no setpriv (util-linux)";
        if (!fs.existsSync(SSHD)) return `no ${SSHD} (openssh-server: contrib/install-deps.sh test)`;
        if (spawnSync("ssh", ["-V"]).error) return "no ssh client (openssh-client: contrib/install-deps.sh test)";
        return false;
}
const skip = why();
const user = skip ? {} : Object.fromEntries(spawnSync(USER_HELPER, ["ensure"], { encoding: "utf8" })
        .stdout.trim().split("\n").filter((l) => l.includes("=")).map((l) => l.split(/=(.*)/s).slice(0, 2)));
const bin = skip ? null : userCopies();

function readConfig(name) {
        return JSON.parse(fs.readFileSync(path.join(CONTRIB, name), "utf8"));
}

// The one server entry of a configuration: Claude Desktop's and Claude Code's "mcpServers",
// VS Code's "servers".
function entry(cfg) {
        const servers = cfg.mcpServers ?? cfg.servers;
        assert.ok(servers && typeof servers === "object", "mcpServers or servers");
        assert.deepEqual(Object.keys(servers), ["msp"]);
        return servers.msp;
}

// What the SDK's stdio transport passes by default (getDefaultEnvironment), as the user.
function clientEnv() {
        return { HOME: user.MSP_TEST_HOME, LOGNAME: user.MSP_TEST_USER, PATH: "/usr/local/bin:/usr/bin:/bin",
                 SHELL: "/bin/bash", TERM: "xterm", USER: user.MSP_TEST_USER };
}

// Every process whose parent chain reaches pid.
function descendants(pid) {
        const parent = new Map();
        for (const p of fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
                try {
                        const stat = fs.readFileSync(`/proc/${p}/stat`, "utf8");
                        parent.set(Number(p), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
                } catch { /* gone */ }
        }
        const out = [];
        for (const p of parent.keys())
                for (let q = parent.get(p); q > 1; q = parent.get(q) ?? 0)
                        if (q === pid) { out.push(p); break; }
        return out;
}

// Processes running one of this file's binary copies (msp-mcp, msp, ...): what a server
// left, even reparented away from its sshd.
function fromCopies() {
        return fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n)).filter((p) => {
                try { return fs.readlinkSync(`/proc/${p}/exe`).startsWith(bin.dir + "/"); } catch { return false; }
        });
}

function comm(pid) {
        try { return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim(); } catch { return ""; }
}

// The user's default state dir as msp-mcp picks it without XDG_RUNTIME_DIR (test-user.sh
// makes /run/user/UID), and the instance dirs of server pid in it.
const stateDir = () => `/run/user/${user.MSP_TEST_UID}/msp-mcp`;
function instanceDirs(pid) {
        try { return fs.readdirSync(stateDir()).filter((n) => n.startsWith(`inst-${pid}-`)); } catch { return []; }
}

async function connect(command, args, env) {
        const transport = new StdioClientTransport({ command, args, env, stderr: "pipe" });
        let log = "";
        transport.stderr.on("data", (b) => { log = (log + b).slice(-65536); });
        const client = new Client({ name: "msp-mcp-clients", version: "0" }, { capabilities: {} });
        clients.push(client);
        await client.connect(transport).catch((e) => { throw new Error(`${e.message}; stderr: ${log}`); });
        return { client, transport, log: () => log };
}
const clients = [];

async function runEcho(c, what) {
        const res = await c.client.callTool({ name: "run_code", arguments: { language: "sh", code: `echo ${what}` } },
                                            undefined, { timeout: CALL_TIMEOUT });
        assert.ok(!res.isError, `${text(res)}\n--- stderr:\n${c.log()}`);
        assert.equal(res.structuredContent.stdout, `${what}\n`);
}

// ---- the private sshd ----

let ssh = null;         // { dir, port, proc, log(), createdPrivsep }

function freePort() {
        return new Promise((resolve, reject) => {
                const s = net.createServer();
                s.once("error", reject);
                s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
        });
}

function keygen(file) {
        const r = spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "msp-mcp-test", "-f", file], { encoding: "utf8" });
        assert.equal(r.status, 0, `ssh-keygen: ${r.stderr}`);
}

// sshd -D -e on a port freePort() found; another process may take it first: retried.
async function startSshd(dir) {
        for (let attempt = 0; attempt < 5; attempt++) {
                const port = await freePort();
                fs.writeFileSync(path.join(dir, "sshd_config"), [
                        "ListenAddress 127.0.0.1", `Port ${port}`,
                        `HostKey ${dir}/host_key`, `AuthorizedKeysFile ${dir}/authorized_keys`,
                        `AllowUsers ${user.MSP_TEST_USER}`, "PidFile none",
                        "PubkeyAuthentication yes", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
                        // PAM: the test user has no password ("!" in /etc/shadow), which sshd
                        // without PAM takes for a locked account.
                        "UsePAM yes",
                        // The key files live under /tmp (mode 1777), which StrictModes refuses.
                        "StrictModes no",
                        // The remote msp-mcp is found by name, as the example says: the copies first.
                        `SetEnv PATH=${bin.dir}:/usr/local/bin:/usr/bin:/bin`,
                        "",
                ].join("\n"));
                const proc = spawn(SSHD, ["-D", "-e", "-f", path.join(dir, "sshd_config")], { stdio: ["ignore", "ignore", "pipe"] });
                let log = "";
                const up = await new Promise((resolve) => {
                        const t = setTimeout(() => resolve(false), 10_000);
                        proc.stderr.on("data", (b) => {
                                log = (log + b).slice(-65536);
                                if (/Server listening on 127\.0\.0\.1 port/.test(log)) { clearTimeout(t); resolve(true); }
                        });
                        proc.once("exit", () => { clearTimeout(t); resolve(false); });
                });
                if (up) return { port, proc, log: () => log };
                await stopProcess(proc);
                if (!/Address already in use/.test(log)) assert.fail(`sshd did not start: ${log}`);
        }
        assert.fail("sshd found no free port in 5 attempts");
}

async function stopProcess(proc) {
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        const gone = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        const t = setTimeout(() => proc.kill("SIGKILL"), 5_000);
        await gone;
        clearTimeout(t);
}

before(async () => {
        if (skip) return;
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-sshd-"));
        fs.chmodSync(dir, 0o755);
        keygen(path.join(dir, "host_key"));
        keygen(path.join(dir, "client_key"));
        fs.copyFileSync(path.join(dir, "client_key.pub"), path.join(dir, "authorized_keys"));
        fs.chmodSync(path.join(dir, "authorized_keys"), 0o644);
        // sshd's privilege separation directory (Debian's service makes it at start).
        const createdPrivsep = !fs.existsSync("/run/sshd");
        if (createdPrivsep) fs.mkdirSync("/run/sshd", { mode: 0o755 });
        ssh = { dir, createdPrivsep };
        Object.assign(ssh, await startSshd(dir));
        const hostKey = fs.readFileSync(path.join(dir, "host_key.pub"), "utf8").trim();
        fs.writeFileSync(path.join(dir, "known_hosts"), `[127.0.0.1]:${ssh.port} ${hostKey}\n`);
});

after(async () => {
        for (const c of clients) await c.close().catch(() => {});
        if (!ssh) return;
        if (ssh.proc) {
                // A failed test's sessions first (sshd -D leaves them running when it stops).
                for (const p of descendants(ssh.proc.pid)) try { process.kill(p, "SIGKILL"); } catch { /* gone */ }
                await stopProcess(ssh.proc);
        }
        if (ssh.createdPrivsep) fs.rmSync("/run/sshd", { recursive: true, force: true });
        fs.rmSync(ssh.dir, { recursive: true, force: true });
});

// The example's command and arguments pointed at this sshd (its port, the key it accepts,
// its host key; no ssh_config of this host) and at the test user, with a client's small
// environment.
function connectSsh(e) {
        const here = ["-F", "none", "-p", String(ssh.port), "-i", path.join(ssh.dir, "client_key"),
                      "-o", `UserKnownHostsFile=${path.join(ssh.dir, "known_hosts")}`, "-o", "IdentitiesOnly=yes"];
        const args = e.args.map((a) => (a === "user@linux-host" ? `${user.MSP_TEST_USER}@127.0.0.1` : a));
        return connect(e.command, [...here, ...args], { PATH: "/usr/bin:/bin" });
}

// The processes of this sshd's sessions (the remote msp-mcp, its runtime and sandboxes).
const sessions = () => descendants(ssh.proc.pid);

// ---- the tests ----

test("every configuration in contrib/mcp/ is valid JSON with one msp server", { skip }, () => {
        const files = fs.readdirSync(CONTRIB).filter((n) => n.endsWith(".json")).sort();
        assert.deepEqual(files, ["claude-code.mcp.json", "claude_desktop_config.json", "claude_desktop_mcp_remote.json",
                                 "claude_desktop_ssh.json", "vscode.mcp.json"]);
        for (const f of files) {
                const e = entry(readConfig(f));
                assert.equal(typeof e.command, "string", `${f}: command`);
                assert.ok(Array.isArray(e.args) && e.args.every((a) => typeof a === "string"), `${f}: args`);
                if ("type" in e) assert.equal(e.type, "stdio", `${f}: type`);
        }
});

test("the local configurations start msp-mcp with no arguments and no environment of their own, and it runs code as the user", { skip, timeout: 120_000 }, async () => {
        const local = ["claude_desktop_config.json", "claude-code.mcp.json", "vscode.mcp.json"].map((f) => [f, entry(readConfig(f))]);
        for (const [f, e] of local) {
                assert.equal(e.command, "/usr/local/bin/msp-mcp", `${f}: where meson install puts it`);
                assert.deepEqual(e.args, [], `${f}: args`);
                assert.deepEqual(e.env ?? {}, {}, `${f}: env`);
        }
        // The command line they all give, with the built msp-mcp for /usr/local/bin/msp-mcp,
        // as the user, with only the environment the client passes (env -i: the SDK would add
        // this process's own).
        const env = Object.entries({ ...clientEnv(), ...(local[0][1].env ?? {}) }).map(([k, v]) => `${k}=${v}`);
        const c = await connect("setpriv", [`--reuid=${user.MSP_TEST_UID}`, `--regid=${user.MSP_TEST_GID}`, "--init-groups",
                                            "--inh-caps=-all", "env", "-i", ...env, bin.mcp, ...local[0][1].args], {});
        await runEcho(c, "hi from a local configuration");
        await c.client.close();
});

test("Claude Desktop over ssh: the documented command reaches msp-mcp on the Linux host, runs code, and leaves nothing behind", { skip, timeout: 120_000 }, async () => {
        const e = entry(readConfig("claude_desktop_ssh.json"));
        assert.equal(e.command, "ssh");
        assert.ok(!("env" in e), "the ssh example needs no env");
        const dest = e.args.indexOf("user@linux-host");
        assert.ok(dest > 0, "the destination user@linux-host");
        assert.deepEqual(e.args.slice(dest + 1), ["msp-mcp"], "the remote command");
        assert.equal(e.args[0], "-T", "no tty: the stdio stream stays byte for byte");
        for (const o of ["BatchMode=yes", "ServerAliveInterval=15", "ServerAliveCountMax=3"])
                assert.ok(e.args.includes(o), `option ${o}`);
        const c = await connectSsh(e);
        const mcp = sessions().filter((p) => comm(p) === "msp-mcp");
        assert.ok(mcp.length > 0, `an msp-mcp under this sshd: ${sessions().map(comm)}; sshd: ${ssh.log()}`);
        for (const p of mcp) assert.equal(fs.statSync(`/proc/${p}`).uid, Number(user.MSP_TEST_UID), "msp-mcp runs as the user");
        await runEcho(c, "hi over ssh");
        assert.ok(mcp.some((p) => instanceDirs(p).length > 0), `an instance dir in ${stateDir()}`);
        await c.client.close();
        await waitFor("no session process of this sshd left", () => sessions().length === 0, 15_000, 50);
        await waitFor("no process of the binaries left", () => fromCopies().length === 0, 15_000, 50);
        for (const p of mcp) assert.deepEqual(instanceDirs(p), [], `instance dirs of ${p} in ${stateDir()}`);
});

test("Claude Desktop over ssh: the client killed mid-run (ssh gone at once) leaves no msp-mcp or sandbox behind", { skip, timeout: 120_000 }, async () => {
        const e = entry(readConfig("claude_desktop_ssh.json"));
        const c = await connectSsh(e);
        const mcp = sessions().filter((p) => comm(p) === "msp-mcp");
        assert.ok(mcp.length > 0, "an msp-mcp under this sshd");
        // A run that would outlive the test, seen running before the client dies.
        const run = c.client.callTool({ name: "run_code", arguments: { language: "sh", code: "echo started; exec sleep 600" } },
                                      undefined, { timeout: CALL_TIMEOUT }).catch((err) => err);
        await waitFor("the run's sandbox", () => sessions().some((p) => comm(p) === "sleep"), 30_000, 50);
        c.transport._process.kill("SIGKILL");
        await run;
        await waitFor("no session process of this sshd left", () => sessions().length === 0, 30_000, 50);
        await waitFor("no process of the binaries left", () => fromCopies().length === 0, 15_000, 50);
        for (const p of mcp) assert.deepEqual(instanceDirs(p), [], `instance dirs of ${p} in ${stateDir()}`);
});
