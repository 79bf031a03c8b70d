// msp-mcp images benchmark: the cost of --image.
//
//   node tests/bench/images.mjs --msp-mcp PATH --msp PATH [--runs N] [--json FILE]
//
// One image layout (tests/helper/oci-layout.py: busybox in a gzip layer, and a file of
// --pad-mb MiB so that unpacking has work to do) and three measurements, each against its own
// msp-mcp, after one start that is not measured (it runs the language programs when their
// verdicts are not cached yet: langcache.h):
//   first use    start to ready with an empty --image-cache (the image is unpacked)
//   cached       start to ready again (the cache entry is found)
//   runs         --runs sequential `echo hi` calls in a session on the image and in a session
//                on the host view, alternating (after 10 warm-up calls each): p50 and p95
// Goal (issue 18): runs on the cached image within 10% of the host view's p50.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

const opt = { runs: 100, padMb: 64 };
for (let i = 2; i < process.argv.length; i++) {
        const k = process.argv[i].replace(/^--/, "").replace(/-(.)/g, (_, c) => c.toUpperCase());
        const v = process.argv[++i];
        opt[k] = ["runs", "padMb"].includes(k) ? Number(v) : v;
}
if (!opt.mspMcp || !opt.msp) die("--msp-mcp and --msp are required");

function die(msg) {
        console.error(`bench: ${msg}`);
        process.exit(1);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-bench-images-"));
fs.chmodSync(work, 0o711);     // the sandboxes' remapped root crosses it to their state dirs
process.on("exit", () => fs.rmSync(work, { recursive: true, force: true }));

function server(args) {
        const stateDir = fs.mkdtempSync(path.join(work, "state-"));
        const t0 = process.hrtime.bigint();
        const child = spawn(opt.mspMcp, ["--state-dir", stateDir, "--runtime", opt.msp, ...args],
                            { stdio: ["pipe", "pipe", "pipe"] });
        let log = "";
        child.stderr.on("data", (b) => { log = (log + b).slice(-4096); });
        const waiting = new Map();
        let next = 1;
        const exited = new Promise((r) => child.once("exit", (code) => {
                for (const [, w] of waiting) w.reject(new Error(`msp-mcp exited (${code}): ${log}`));
                r(code);
        }));
        readline.createInterface({ input: child.stdout }).on("line", (l) => {
                const m = JSON.parse(l);
                if (waiting.has(m.id)) {
                        waiting.get(m.id).resolve(m);
                        waiting.delete(m.id);
                }
        });
        const request = (method, params) => new Promise((resolve, reject) => {
                const id = next++;
                waiting.set(id, { resolve, reject });
                child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
        });
        const call = async (name, a) => {
                const r = await request("tools/call", { name, arguments: a });
                if (!r.result || r.result.isError) die(`${name}: ${JSON.stringify(r).slice(0, 600)} ${log}`);
                return r.result.structuredContent;
        };
        return {
                call, log: () => log,
                async ready() {
                        const r = await request("initialize", { protocolVersion: "2025-11-25", capabilities: {},
                                                                clientInfo: { name: "bench", version: "0" } });
                        if (!r.result) die(`initialize: ${JSON.stringify(r)} ${log}`);
                        return Number(process.hrtime.bigint() - t0) / 1e6;
                },
                async close() {
                        child.stdin.end();
                        await exited;
                },
        };
}

function pct(sorted, p) {
        return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

// Calls on the image and on the host view alternate, so that both see the same load of a
// shared machine.
async function runs(srv, names) {
        const one = async (rootfs, sid) => {
                const t0 = process.hrtime.bigint();
                const r = await srv.call("run_code", { language: "sh", code: "echo hi", session_id: sid });
                if (r.stdout !== "hi\n") die(`${rootfs}: ${JSON.stringify(r)}`);
                return Number(process.hrtime.bigint() - t0) / 1e6;
        };
        const ids = [];
        for (const rootfs of names) ids.push((await srv.call("session_create", { rootfs })).session_id);
        for (let i = 0; i < 10; i++)
                for (const [k, rootfs] of names.entries()) await one(rootfs, ids[k]);
        const t = names.map(() => []);
        for (let i = 0; i < opt.runs; i++)
                for (const [k, rootfs] of names.entries()) t[k].push(await one(rootfs, ids[k]));
        for (const sid of ids) await srv.call("session_close", { session_id: sid });
        return t.map((x) => {
                x.sort((a, b) => a - b);
                return { p50: pct(x, 50), p95: pct(x, 95) };
        });
}

const layout = path.join(work, "layout");
const spec = { layers: [{ compression: "gzip", entries: [
        { path: "bin", dir: true }, { path: "bin/busybox", file: "/bin/busybox", mode: 0o755 },
        { path: "bin/sh", symlink: "busybox" }, { path: "pad", size: opt.padMb << 20 }] }] };
const mk = spawnSync("python3", [path.join(import.meta.dirname, "..", "helper", "oci-layout.py"), layout],
                     { input: JSON.stringify(spec), encoding: "utf8" });
if (mk.status !== 0) die(`oci-layout.py: ${mk.stderr}`);
const args = ["--image", `img=oci:${layout}`, "--image-cache", path.join(work, "cache")];

const load0 = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).map(Number);
const warm = server([]);
await warm.ready();
await warm.close();
const host = server([]);
const hostStart = await host.ready();
await host.close();
const first = server(args);
const firstStart = await first.ready();
await first.close();
const cached = server(args);
const cachedStart = await cached.ready();
const [onImage, onHost] = await runs(cached, ["img", "host"]);
await cached.close();

const load1 = fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).map(Number);
const result = { padMb: opt.padMb, runs: opt.runs, cpus: os.cpus().length, loadavg: { before: load0, after: load1 }, startMs: { noImage: hostStart, firstUse: firstStart, cached: cachedStart },
                 image: onImage, host: onHost, ratioP50: onImage.p50 / onHost.p50 };
const f = (x) => x.toFixed(1);
console.log(`start to ready    no image ${f(hostStart)} ms   first use (unpack ${opt.padMb} MiB) ${f(firstStart)} ms   cached ${f(cachedStart)} ms`);
console.log(`sh echo hi        image p50 ${f(onImage.p50)} ms p95 ${f(onImage.p95)} ms   host view p50 ${f(onHost.p50)} ms p95 ${f(onHost.p95)} ms`);
console.log(`goal: image runs within 10% of the host view's p50: ${result.ratioP50 <= 1.1 ? "met" : "missed"} (${f((result.ratioP50 - 1) * 100)}%)`);
console.log(`load average      before ${load0.join(" ")}   after ${load1.join(" ")} (${os.cpus().length} CPUs)`);
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify(result, null, 2) + "\n");
