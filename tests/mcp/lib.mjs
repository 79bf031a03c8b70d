// Shared helpers of the mcp suite: start msp-mcp under the official SDK client (or a raw
// JSON-lines client), and check that a server left nothing behind.
//
// Every server gets its own temporary --state-dir; leftovers are looked for under it, in
// every cgroup hierarchy (msp-mcp/<instance>), in the mount table and in /proc.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

// MSP_MCP_AS_USER=1: every server runs as the unprivileged user of
// tests/helper/test-user.sh (the way an MCP client starts it), the test itself as root.
export const AS_USER = process.env.MSP_MCP_AS_USER === "1";

// Copies of msp-mcp and msp (with msp-sandbox-init, msp-sandbox-hook and msp-mcp-unpack, which
// msp-mcp finds beside itself) in a directory of their own that any user can reach: the build
// tree may be below a private directory (a clone in /root). Removed when the file's process
// exits. { dir, mcp, msp }.
export function userCopies(mcp = process.env.MSP_MCP, msp = process.env.MSP) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-bin-"));
        fs.chmodSync(dir, 0o755);
        const init = path.join(path.dirname(mcp), "msp-sandbox-init");
        const hook = path.join(path.dirname(mcp), "msp-sandbox-hook");
        const unpack = path.join(path.dirname(mcp), "msp-mcp-unpack");
        for (const [src, name] of [[mcp, "msp-mcp"], [msp, "msp"], [init, "msp-sandbox-init"],
                                   [hook, "msp-sandbox-hook"], [unpack, "msp-mcp-unpack"]])
                if (fs.existsSync(src)) fs.copyFileSync(src, path.join(dir, name)), fs.chmodSync(path.join(dir, name), 0o755);
        process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
        return { dir, mcp: path.join(dir, "msp-mcp"), msp: path.join(dir, "msp") };
}

// The binaries as the servers' user reaches them: copies when they run as the user.
function binaries() {
        const { MSP_MCP: mcp, MSP: msp } = process.env;
        if (!AS_USER || !mcp || !msp || !fs.existsSync(mcp) || !fs.existsSync(msp)) return [mcp, msp];
        const c = userCopies(mcp, msp);
        return [c.mcp, c.msp];
}
export const [MSP_MCP, MSP] = binaries();
export const LATEST = "2025-11-25";
export const VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

// Generous per-call bound: the machine is shared; every test has its own node:test timeout.
export const CALL_TIMEOUT = 60_000;

// Why a whole file cannot run, or false (node:test takes any non-undefined skip as a skip).
export function skipReason() {
        if (!MSP_MCP || !fs.existsSync(MSP_MCP)) return "MSP_MCP is not set to the built msp-mcp";
        if (!MSP || !fs.existsSync(MSP)) return "MSP is not set to the built msp runtime";
        if (process.getuid() !== 0) return "needs root (namespaces, cgroups)";
        if (AS_USER && !TEST_USER.MSP_TEST_UID) return "no test user (run tests/helper/test-user.sh ensure as root)";
        return false;
}

// Every server started by this file, by state dir: finishAll() stops what still runs and
// checks for leftovers once per state dir (a restarted server reuses its predecessor's).
const started = new Map();      // stateDir -> { procs: [ChildProcess], sets: [Set of instances] }

function register(stateDir, proc, instances) {
        let e = started.get(stateDir);
        if (!e) started.set(stateDir, (e = { procs: [], sets: [] }));
        if (proc) e.procs.push(proc);
        if (instances) e.sets.push(instances);  // filled in later (after initialize)
}

function alive(proc) {
        return proc.exitCode === null && proc.signalCode === null;
}

// For the file's after() hook: stop servers a failed test left running (SIGTERM: they clean
// up; SIGKILL after 15 s), then assert that no state dir has leftovers.
export async function finishAll() {
        const problems = [];
        for (const [dir, e] of started) {
                for (const p of e.procs.filter(alive)) {
                        const gone = new Promise((r) => p.once("exit", r));
                        p.kill("SIGTERM");
                        const t = setTimeout(() => p.kill("SIGKILL"), 15_000);
                        await gone;
                        clearTimeout(t);
                }
                try {
                        await assertNoLeftovers(dir, new Set(e.sets.flatMap((x) => [...x])));
                } catch (err) {
                        problems.push(err.message);
                }
        }
        started.clear();
        assert.deepEqual(problems, [], "leftovers");
}

const USER_HELPER = new URL("../helper/test-user.sh", import.meta.url).pathname;
const TEST_USER = AS_USER ? Object.fromEntries(spawnSync(USER_HELPER, ["env"], { encoding: "utf8" })
        .stdout.trim().split("\n").map((l) => l.split("="))) : {};

// A command line as the server's user: unchanged, or run through test-user.sh.
export function asUser(argv) {
        return AS_USER ? [USER_HELPER, "run", ...argv] : argv;
}

// nsenter arguments into server pid's mount namespace, as its root: run by a user, that
// namespace belongs to the server's user namespace (a file root of the initial one made on
// its tmpfs mounts would have an owner they cannot represent).
export function nsenterArgs(pid) {
        return AS_USER ? ["-t", String(pid), "-U", "-m"] : ["-t", String(pid), "-m"];
}

// The uid and gid the servers run as.
export function serverIds() {
        return AS_USER ? { uid: Number(TEST_USER.MSP_TEST_UID), gid: Number(TEST_USER.MSP_TEST_GID) } : { uid: 0, gid: 0 };
}

// Why a test cannot run as the user (a cgroup limit, a root-only setup), or false.
export function rootOnly(why) {
        return AS_USER ? `as a user: ${why}` : false;
}

export function tmpStateDir() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-test-"));
        if (AS_USER) fs.chownSync(dir, Number(TEST_USER.MSP_TEST_UID), Number(TEST_USER.MSP_TEST_GID));
        return dir;
}

export function serverArgs(stateDir, { runtime = MSP, args = [] } = {}) {
        return ["--state-dir", stateDir, "--runtime", runtime, ...args];
}

// The transport startServer() uses: MSP_MCP_TRANSPORT=http runs msp-mcp with --listen on
// a loopback port and connects the SDK's StreamableHTTPClientTransport; stdio otherwise.
export const TRANSPORT = process.env.MSP_MCP_TRANSPORT === "http" ? "http" : "stdio";

// A running msp-mcp under the SDK client. stderr is kept (last 64 KiB) for messages.
// wrap: a command line msp-mcp runs under (its path and arguments follow wrap's).
export async function startServer(opts = {}) {
        return TRANSPORT === "http" ? startHttpServer(opts) : startStdioServer(opts);
}

// msp-mcp --listen ADDRESS (127.0.0.1:0 unless given): the child, its URL (from the
// "listening on URL" line on stderr) and its stderr tail.
export async function spawnHttpServer({ stateDir = tmpStateDir(), runtime = MSP, args = [],
                                        listen = "127.0.0.1:0", wrap = [] } = {}) {
        const argv = asUser([...wrap, MSP_MCP, ...serverArgs(stateDir, { runtime, args: [...args, "--listen", listen] })]);
        const proc = spawn(argv[0], argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env } });
        register(stateDir, proc);
        let log = "";
        const url = await new Promise((resolve, reject) => {
                const t = setTimeout(() => reject(new Error(`msp-mcp did not listen in ${CALL_TIMEOUT} ms: ${log}`)), CALL_TIMEOUT);
                proc.stderr.on("data", (b) => {
                        log = (log + b.toString()).slice(-65536);
                        if (process.env.MSP_MCP_TEST_VERBOSE) process.stderr.write(b);
                        const m = /listening on (\S+)/.exec(log);
                        if (m) { clearTimeout(t); resolve(m[1]); }
                });
                proc.once("exit", (code, signal) => { clearTimeout(t); reject(new Error(`msp-mcp exited (${code ?? signal}): ${log}`)); });
        });
        const inst = instanceOf(stateDir, proc.pid);
        register(stateDir, null, new Set(inst ? [inst] : []));
        return { proc, url, stateDir, log: () => log };
}

// Stops a server started with --listen: SIGTERM (a clean stop), its exit status.
export async function stopProcess(proc) {
        if (!alive(proc)) return { code: proc.exitCode, signal: proc.signalCode };
        const gone = new Promise((r) => proc.once("exit", r));
        proc.kill("SIGTERM");
        await gone;
        return { code: proc.exitCode, signal: proc.signalCode };
}

async function startHttpServer({ stateDir = tmpStateDir(), runtime = MSP, args = [],
                                 name = "msp-mcp-tests", wrap = [] } = {}) {
        register(stateDir);
        const h = await spawnHttpServer({ stateDir, runtime, args, wrap });
        const transport = new StreamableHTTPClientTransport(new URL(h.url));
        const client = new Client({ name, version: "0.0.1" }, { capabilities: {} });
        await client.connect(transport);
        const srv = {
                client, transport, proc: h.proc, stateDir, pid: h.proc.pid, url: h.url,
                log: h.log,
                instance: () => instanceOf(stateDir, h.proc.pid),
                instances: new Set(),
                async close() {
                        await client.close();
                        return stopProcess(h.proc);
                },
        };
        register(stateDir, null, srv.instances);
        const inst = srv.instance();
        if (inst) srv.instances.add(inst);
        return srv;
}

async function startStdioServer({ stateDir = tmpStateDir(), runtime = MSP, args = [],
                                  name = "msp-mcp-tests", wrap = [] } = {}) {
        const argv = asUser([...wrap, MSP_MCP, ...serverArgs(stateDir, { runtime, args })]);
        const transport = new StdioClientTransport({
                command: argv[0],
                args: argv.slice(1),
                env: { ...process.env },
                stderr: "pipe",
        });
        let log = "";
        transport.stderr.on("data", (b) => {
                log = (log + b.toString()).slice(-65536);
                if (process.env.MSP_MCP_TEST_VERBOSE) process.stderr.write(b);
        });
        const client = new Client({ name, version: "0.0.1" }, { capabilities: {} });
        register(stateDir);     // removed by finishAll() even when the start fails
        await client.connect(transport);
        // The child process: its exit status after close() (the SDK does not expose it).
        const proc = transport._process;
        const srv = {
                client, transport, proc, stateDir, pid: transport.pid,
                log: () => log,
                instance: () => instanceOf(stateDir, proc.pid),
                instances: new Set(),
                async close() {
                        const exited = proc.exitCode !== null || proc.signalCode !== null
                                ? Promise.resolve()
                                : new Promise((r) => proc.once("exit", r));
                        await client.close();
                        await exited;
                        return { code: proc.exitCode, signal: proc.signalCode };
                },
        };
        register(stateDir, proc, srv.instances);
        const inst = srv.instance();
        if (inst) srv.instances.add(inst);
        return srv;
}

// The languages server srv lists: run_code's language enum.
export async function languagesOf(srv) {
        const { tools } = await srv.client.listTools();
        return tools.find((t) => t.name === "run_code").inputSchema.properties.language.enum;
}

// The instance dir (name) of server pid under stateDir: inst-<pid>-<random>.
export function instanceOf(stateDir, pid) {
        let names = [];
        try { names = fs.readdirSync(stateDir); } catch { return null; }
        return names.find((n) => n.startsWith(`inst-${pid}-`)) ?? null;
}

// Call a tool; the result, with the server's stderr tail available for messages.
export async function call(srv, name, args, opts = {}) {
        return srv.client.callTool({ name, arguments: args }, undefined,
                                   { timeout: CALL_TIMEOUT, ...opts });
}

export function text(res) {
        return (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

// Assert a successful tool result; the message carries the result and the server's stderr.
export function assertOk(res, srv, what = "call") {
        assert.ok(!res.isError, `${what} failed: ${text(res).slice(0, 2000)}\n--- msp-mcp stderr:\n${srv.log().slice(-2000)}`);
        assert.ok(res.structuredContent, `${what}: no structuredContent`);
        return res.structuredContent;
}

export async function runCode(srv, language, code, extra = {}, opts = {}) {
        return call(srv, "run_code", { language, code, ...extra }, opts);
}

// ---- waiting for a condition (bounded polling, never a blind sleep) ----

export async function waitFor(what, fn, timeoutMs = 10_000, stepMs = 25) {
        const end = Date.now() + timeoutMs;
        for (;;) {
                const v = await fn();
                if (v) return v;
                if (Date.now() > end) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
                await new Promise((r) => setTimeout(r, stepMs));
        }
}

// ---- leftovers ----

function cgroupRoots() {
        const roots = [];
        for (const n of fs.readdirSync("/sys/fs/cgroup")) {
                const p = path.join("/sys/fs/cgroup", n);
                try { if (fs.statSync(p).isDirectory()) roots.push(p); } catch { /* gone */ }
        }
        // A pure v2 host: /sys/fs/cgroup itself is the hierarchy.
        roots.push("/sys/fs/cgroup");
        return roots;
}

// Containers the runtime still knows under the instance's runtime root (a directory each;
// dot-names such as msp's .cache of compiled seccomp filters are not containers).
export function containersOf(stateDir, inst) {
        const root = path.join(stateDir, inst, "runtime");
        try {
                return fs.readdirSync(root).filter((n) => {
                        if (n.startsWith(".")) return false;
                        try { return fs.statSync(path.join(root, n)).isDirectory(); } catch { return false; }
                });
        } catch { return []; }
}

// Cgroups of one instance: <hierarchy>/msp-mcp/<inst> in every hierarchy, with the runs in it.
export function cgroupsOf(inst) {
        const found = [];
        for (const r of cgroupRoots()) {
                const p = path.join(r, "msp-mcp", inst);
                if (fs.existsSync(p)) found.push(p);
        }
        return found;
}

// Processes that mention the state dir in their command line or live in the instance's
// cgroups (a container's own processes do not name the state dir).
function processesOf(stateDir, insts) {
        const found = [];
        for (const pid of fs.readdirSync("/proc")) {
                if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
                let cmd = "", cg = "";
                try { cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "); } catch { continue; }
                try { cg = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8"); } catch { /* gone */ }
                if (cmd.includes(stateDir) || [...insts].some((i) => cg.includes(`/msp-mcp/${i}`)))
                        found.push(`${pid}: ${cmd.trim()}`);
        }
        return found;
}

function mountsOf(stateDir) {
        return fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")
                .filter((l) => l.includes(stateDir));
}

// Everything a server (gone by now) may have left: a list of descriptions, empty when clean.
export function leftovers(stateDir, insts) {
        const out = [];
        let names = [];
        try { names = fs.readdirSync(stateDir); } catch { /* removed: fine */ }
        for (const n of names.filter((x) => x.startsWith("inst-"))) {
                out.push(`instance dir ${n} left in the state dir`);
                for (const c of containersOf(stateDir, n)) out.push(`container ${c} under ${n}/runtime`);
        }
        // A clean shutdown removes its sessions (docs/MCP.md, "Sessions and workspaces").
        let sessions = [];
        try { sessions = fs.readdirSync(path.join(stateDir, "sessions")); } catch { /* none */ }
        for (const n of sessions) out.push(`session dir sessions/${n} left`);
        for (const i of insts) for (const c of cgroupsOf(i)) out.push(`cgroup ${c}`);
        for (const m of mountsOf(stateDir)) out.push(`mount: ${m}`);
        for (const p of processesOf(stateDir, insts)) out.push(`process ${p}`);
        return out;
}

// After the server is gone: assert that nothing is left, then remove the state dir.
export async function assertNoLeftovers(stateDir, insts) {
        // The server is gone; its runtime children may take a moment to be reaped.
        let left = [];
        try {
                await waitFor("no leftovers", () => (left = leftovers(stateDir, insts)).length === 0, 5000, 50);
        } catch {
                assert.deepEqual(left, [], `leftovers of msp-mcp under ${stateDir}`);
        } finally {
                // Never rm -rf through a mount that is still there.
                if (mountsOf(stateDir).length === 0) fs.rmSync(stateDir, { recursive: true, force: true });
        }
}

// ---- a raw JSON-lines client, for what the SDK does not let us send ----

export function rawServer({ stateDir = tmpStateDir(), args = [], runtime = MSP } = {}) {
        const argv = asUser([MSP_MCP, ...serverArgs(stateDir, { runtime, args })]);
        const child = spawn(argv[0], argv.slice(1), {
                stdio: ["pipe", "pipe", "pipe"], env: { ...process.env },
        });
        let log = "";
        child.stderr.on("data", (b) => { log = (log + b.toString()).slice(-65536); });
        const instances = new Set();
        register(stateDir, child, instances);
        const waiting = new Map();
        const lines = [];
        const notifications = [];
        const exited = new Promise((r) => child.once("exit", (code, signal) => {
                // Nothing more will come: fail the requests still waiting at once.
                for (const [id, w] of waiting) w(null, new Error(`msp-mcp exited (${code ?? signal}) before answering id ${id}; stderr: ${log.slice(-1000)}`));
                waiting.clear();
                r({ code, signal });
        }));
        child.stdin.on("error", () => {});      // EPIPE after an early exit: reported by exited
        let lineWaiter = null;
        readline.createInterface({ input: child.stdout }).on("line", (line) => {
                lines.push(line);
                let msg;
                try { msg = JSON.parse(line); } catch { msg = { unparsable: line }; }
                if (msg.id !== undefined && msg.id !== null && waiting.has(msg.id) && !msg.method) {
                        waiting.get(msg.id)(msg);
                        waiting.delete(msg.id);
                } else if (msg.method) {
                        notifications.push(msg);
                }
                if (lineWaiter) lineWaiter();
        });
        let nextId = 1;
        const raw = {
                child, stateDir, lines, notifications, exited, log: () => log, instances,
                send(obj) { child.stdin.write((typeof obj === "string" ? obj : JSON.stringify(obj)) + "\n"); },
                request(method, params, id = nextId++) {
                        const p = new Promise((resolve, reject) => {
                                const t = setTimeout(() => reject(new Error(`no answer to ${method} (id ${id}) in ${CALL_TIMEOUT} ms; stderr: ${log.slice(-1000)}`)), CALL_TIMEOUT);
                                waiting.set(id, (m, err) => { clearTimeout(t); if (err) reject(err); else resolve(m); });
                        });
                        raw.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
                        return p;
                },
                // The next line the server writes after `count` lines were seen.
                async lineAfter(count, timeoutMs = CALL_TIMEOUT) {
                        await waitForLine(() => lines.length > count, timeoutMs);
                        return lines[count];
                },
                async initialize(protocolVersion = LATEST) {
                        const r = await raw.request("initialize", {
                                protocolVersion, capabilities: {},
                                clientInfo: { name: "raw", version: "0" },
                        });
                        raw.send({ jsonrpc: "2.0", method: "notifications/initialized" });
                        const inst = instanceOf(stateDir, child.pid);
                        if (inst) raw.instances.add(inst);
                        return r;
                },
                async close() {
                        child.stdin.end();
                        return exited;
                },
        };
        function waitForLine(pred, timeoutMs) {
                return new Promise((resolve, reject) => {
                        if (pred()) return resolve();
                        const t = setTimeout(() => { lineWaiter = null; reject(new Error(`no line from msp-mcp in ${timeoutMs} ms; stderr: ${log.slice(-1000)}`)); }, timeoutMs);
                        lineWaiter = () => { if (pred()) { clearTimeout(t); lineWaiter = null; resolve(); } };
                });
        }
        return raw;
}

// ---- small utilities ----

// The host's first non-loopback IPv4 address (or null).
export function hostAddress() {
        for (const list of Object.values(os.networkInterfaces()))
                for (const a of list ?? [])
                        if (a.family === "IPv4" && !a.internal) return a.address;
        return null;
}

export function runSync(cmd, args) {
        return spawnSync(cmd, args, { encoding: "utf8", timeout: 60_000 });
}
