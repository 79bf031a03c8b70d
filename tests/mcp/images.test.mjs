// OCI images as root filesystems (--image NAME=REF): layouts written by
// tests/helper/oci-layout.py (entries no builder would write included) and, with podman,
// an image built and saved by podman; no registry.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer, skipReason, finishAll, call, runCode, assertOk, tmpStateDir, serverArgs,
         MSP_MCP, AS_USER, asUser, serverIds, text } from "./lib.mjs";

const skip = skipReason() || (!fs.existsSync("/bin/busybox") && "no /bin/busybox (busybox-static)");
const MAKER = path.join(import.meta.dirname, "..", "helper", "oci-layout.py");
const TAMPER = path.join(import.meta.dirname, "..", "helper", "tamper-on-read.py");
const work = fs.mkdtempSync(path.join(os.tmpdir(), "msp-mcp-images-"));
fs.chmodSync(work, 0o755);      // the layouts, for a server run by the test user
after(async () => {
        await finishAll();
        fs.rmSync(work, { recursive: true, force: true });
});

let n = 0;
// A cache directory under work for the servers' user (made by it, run as a user).
function cacheDir(name) {
        const dir = path.join(work, name);
        fs.mkdirSync(dir);
        if (AS_USER) fs.chownSync(dir, serverIds().uid, serverIds().gid);
        return dir;
}
// An OCI layout from spec; {dir, manifest, layers}.
function layout(spec, dir = path.join(work, `layout-${n++}`)) {
        const r = spawnSync("python3", [MAKER, dir], { input: JSON.stringify(spec), encoding: "utf8" });
        assert.equal(r.status, 0, r.stderr);
        return { dir, ...JSON.parse(r.stdout) };
}

// busybox with sh, the layer every image here starts from.
function baseLayer(extra = []) {
        return { compression: "gzip", entries: [
                { path: "bin", dir: true }, { path: "etc", dir: true },
                { path: "bin/busybox", file: "/bin/busybox", mode: 0o755 },
                { path: "bin/sh", symlink: "busybox" },
                { path: "bin/ls", symlink: "/bin/busybox" },
                { path: "bin/cat", hardlink: "bin/busybox" },
                ...extra] };
}

// msp-mcp started with argv; its exit status and stderr when it refuses to start.
function startFails(args) {
        const [cmd, ...argv] = asUser([MSP_MCP, ...serverArgs(tmpStateDir(), { args })]);
        const r = spawnSync(cmd, argv, { input: "", encoding: "utf8", timeout: 120_000 });
        return { status: r.status, stderr: r.stderr };
}

async function inImage(srv, rootfs, code) {
        const s = assertOk(await call(srv, "session_create", { rootfs }), srv, "session_create");
        const res = assertOk(await runCode(srv, "sh", code, { session_id: s.session_id }), srv, "run_code");
        await call(srv, "session_close", { session_id: s.session_id });
        return res;
}

test("an image's layers, whiteouts, opaque dirs, Env and WorkingDir; the cache is reused", { skip, timeout: 180_000 }, async () => {
        const img = layout({ tag: "v1", config: { Env: ["GREETING=hello from the image", "PATH=/bin"], WorkingDir: "/srv/app" },
                layers: [
                        baseLayer([
                                { path: "etc/motd", data: "lower motd" },
                                { path: "etc/gone", dir: true }, { path: "etc/gone/f", data: "x" },
                                { path: "opq", dir: true }, { path: "opq/lower", data: "lower" },
                                { path: "srv/app", dir: true }, { path: "srv/app/data.txt", data: "app data\n" },
                                { path: "bin/suid", data: "#!/bin/sh\n", mode: 0o4755 },
                                { path: "owned", data: "u", uid: 1000, gid: 1000 },
                                { path: "dev/evil", chr: [1, 3] },
                        ]),
                        { compression: "zstd", entries: [
                                { path: "etc/.wh.motd", data: "" },
                                { path: "etc/.wh.gone", data: "" },
                                { path: "opq/upper", data: "upper" },   // before the marker: kept
                                { path: "opq/.wh..wh..opq", data: "" },
                                { path: "etc/new", data: "upper file" },
                        ] },
                        { compression: "none", entries: [{ path: "./etc//newer", data: "plain tar" }] },
                ] });
        const cache = cacheDir("cache");
        const srv = await startServer({ args: ["--image", `img=oci:${img.dir}:v1`, "--image-cache", cache] });
        const entry = path.join(cache, `sha256-${img.manifest.slice(7)}`);
        assert.ok(fs.statSync(path.join(entry, "rootfs")).isDirectory(), srv.log());
        assert.match(srv.log(), /image img: unpacked into/);
        const r = await inImage(srv, "img", [
                "pwd; echo \"$GREETING\"; cat data.txt",
                "ls /etc | grep -v -e passwd -e group -e hosts -e resolv -e nsswitch -e hostname | tr '\\n' ' '; echo",
                "ls /opq | tr '\\n' ' '; echo",
                "cat /etc/new /etc/newer",
                "ls -ln /owned | awk '{print $3, $4}'",
                "[ -u /bin/suid ] && echo setuid || echo no setuid",
                "[ -c /dev/evil ] && echo device || echo no device",
        ].join("\n"));
        assert.equal(r.stdout, "/srv/app\nhello from the image\napp data\nnew newer \nupper \nupper fileplain tar1000 1000\nno setuid\nno device\n",
                     r.stderr);
        const ino = fs.statSync(path.join(entry, "rootfs", "bin", "busybox")).ino;
        await srv.close();

        // A second start unpacks nothing: the same files, and the log says so.
        const again = await startServer({ args: ["--image", `img=oci:${img.dir}:v1`, "--image-cache", cache] });
        assert.match(again.log(), /image img: cached at/);
        assert.equal(fs.statSync(path.join(entry, "rootfs", "bin", "busybox")).ino, ino);
        assert.equal((await inImage(again, "img", "cat /etc/new")).stdout, "upper file");
        // python is the host's, not the image's: a tool error naming both, and no run.
        const s = assertOk(await call(again, "session_create", { rootfs: "img" }), again, "session_create");
        const py = await runCode(again, "python", "print(1)", { session_id: s.session_id });
        assert.equal(py.isError, true, JSON.stringify(py));
        assert.match(text(py), /language: 'python' is not available in rootfs 'img' \(no python3 in /, text(py));
        assert.doesNotMatch(text(py), /no such session/, text(py));
        await call(again, "session_close", { session_id: s.session_id });
        await again.close();
        assert.deepEqual(fs.readdirSync(cache).filter((x) => !x.startsWith(".")), [path.basename(entry)]);
});

// The default Landlock profile's rule paths are never resolved through the image's
// symlinks (docs/LANDLOCK.md): in a merged /usr (bin -> usr/bin, lib -> usr/lib) the
// symlinked rules are skipped and /usr's covers what they point to.
test("a merged-/usr image runs under the default Landlock profile (its symlinked rule paths skipped)", { skip, timeout: 180_000 }, async () => {
        const img = layout({ config: { Env: ["PATH=/bin"] }, layers: [{ compression: "gzip", entries: [
                { path: "usr", dir: true }, { path: "usr/bin", dir: true }, { path: "usr/lib", dir: true },
                { path: "usr/bin/busybox", file: "/bin/busybox", mode: 0o755 },
                { path: "usr/bin/sh", symlink: "busybox" }, { path: "usr/bin/cat", symlink: "busybox" },
                { path: "usr/lib/data.txt", data: "lib data\n" },
                { path: "bin", symlink: "usr/bin" }, { path: "lib", symlink: "usr/lib" },
                { path: "lib64", symlink: "/usr/lib" }, { path: "etc", dir: true }]}] });
        const srv = await startServer({ args: ["--image", `merged=oci:${img.dir}`, "--image-cache", cacheDir("cache-merged")] });
        const r = await inImage(srv, "merged", [
                "cat /lib/data.txt /lib64/data.txt",
                "echo x > /lib/new 2>/dev/null || echo lib-write-denied",
                "echo x > /tmp/t && cat /tmp/t",
        ].join("\n"));
        assert.equal(r.stdout, "lib data\nlib data\nlib-write-denied\nx\n", r.stderr);
        await srv.close();
});

// An image with its own accounts: "app" (1234:1235) and the group "staff" (50).
function userImage(user) {
        return layout({ config: { User: user, Env: ["PATH=/bin"] }, layers: [baseLayer([
                { path: "etc/passwd", data: "root:x:0:0:root:/root:/bin/sh\napp:x:1234:1235:app:/home/app:/bin/sh\n" },
                { path: "etc/group", data: "root:x:0:\napp:x:1235:\nstaff:x:50:app\n" },
                { path: "bin/id", symlink: "busybox" }, { path: "bin/stat", symlink: "busybox" }])] });
}

test("an image's User (name, uid, name:group from the image's /etc/passwd and /etc/group) runs the code and owns the workspace", { skip, timeout: 180_000 }, async () => {
        const cache = cacheDir("cache-user");
        const args = [];
        const want = { app: "1234 1235", "1000": "1000 0", "app:staff": "1234 50", "app:7": "1234 7" };
        for (const [i, user] of Object.keys(want).entries())
                args.push("--image", `u${i}=oci:${userImage(user).dir}`);
        const srv = await startServer({ args: [...args, "--image-cache", cache] });
        for (const [i, [user, ids]] of Object.entries(want).entries()) {
                const s = assertOk(await call(srv, "session_create", { rootfs: `u${i}` }), srv, "session_create");
                const sid = { session_id: s.session_id };
                assertOk(await call(srv, "write_file", { ...sid, path: "in/given.txt", content: "given\n" }), srv, "write_file");
                const r = assertOk(await runCode(srv, "sh", [
                        "echo $(id -u) $(id -g)",
                        "cat in/given.txt && echo more >> in/given.txt",
                        "echo made > /workspace/made.txt && mkdir d && echo x > d/f",
                        "stat -c '%u %g' /workspace /workspace/in /workspace/in/given.txt made.txt d/f | sort -u",
                ].join("\n"), sid), srv, `run_code as ${user}`);
                assert.equal(r.stdout, `${ids}\ngiven\n${ids}\n`, `User ${user}: ${r.stderr}`);
                // Later calls of the session: the same user, the files still its own.
                const again = assertOk(await runCode(srv, "sh", "id -u; cat made.txt in/given.txt", sid), srv);
                assert.equal(again.stdout, `${ids.split(" ")[0]}\nmade\ngiven\nmore\n`, again.stderr);
                await call(srv, "session_close", sid);
        }
        await srv.close();
});

// Each image's sessions: /workspace/out is there, the run's user's (the image's User or the
// sandbox user), writable, and made again after the code removes it.
test("an image session's /workspace/out exists, is the run's user's and writable, with and without User", { skip, timeout: 180_000 }, async () => {
        const cache = cacheDir("cache-out");
        const plain = layout({ config: { Env: ["PATH=/bin"] }, layers: [baseLayer([
                { path: "bin/id", symlink: "busybox" }, { path: "bin/stat", symlink: "busybox" },
                { path: "bin/touch", symlink: "busybox" }, { path: "bin/rm", symlink: "busybox" }])] });
        const user = userImage("app");
        const srv = await startServer({ args: ["--image", `plain=oci:${plain.dir}`, "--image", `user=oci:${user.dir}`,
                                               "--image-cache", cache] });
        const check = "cd /workspace; [ -d out ] && [ \"$(stat -c %u:%g out)\" = \"$(id -u):$(id -g)\" ] && touch out/f && echo ok-$(id -u)";
        for (const [rootfs, uid] of [["plain", "1000"], ["user", "1234"]]) {
                const s = assertOk(await call(srv, "session_create", { rootfs }), srv, "session_create");
                const sid = { session_id: s.session_id };
                const r = assertOk(await runCode(srv, "sh", check, sid), srv, `${rootfs}: out/`);
                assert.equal(r.stdout, `ok-${uid}\n`, r.stderr);
                assert.deepEqual(r.files.map((f) => f.path), ["out/f"]);
                assertOk(await runCode(srv, "sh", "rm -rf /workspace/out", sid), srv);
                const again = assertOk(await runCode(srv, "sh", check, sid), srv, `${rootfs}: out/ again`);
                assert.equal(again.stdout, `ok-${uid}\n`, again.stderr);
                await call(srv, "session_close", sid);
        }
        await srv.close();
});

// Files at an image's top level (/app.py, /entrypoint.sh) are the image's own: readable and
// runnable like its top-level directories' files, and as read-only; a top-level symlink
// (a merged /usr: /bin -> usr/bin, /lib -> usr/lib) resolves as before.
test("an image's top-level files are readable and runnable, not writable; top-level symlinks resolve", { skip, timeout: 180_000 }, async () => {
        const applets = ["sh", "cat", "echo", "ls", "id", "touch", "chmod"];
        const img = layout({ config: { Env: ["PATH=/bin"] }, layers: [{ compression: "gzip", entries: [
                { path: "usr", dir: true }, { path: "usr/bin", dir: true }, { path: "usr/lib", dir: true },
                { path: "usr/bin/busybox", file: "/bin/busybox", mode: 0o755 },
                ...applets.map((a) => ({ path: `usr/bin/${a}`, symlink: "busybox" })),
                { path: "usr/lib/data.txt", data: "lib data\n" },
                { path: "bin", symlink: "usr/bin" }, { path: "lib", symlink: "usr/lib" },
                { path: "etc", dir: true },
                { path: "app.py", data: "echo app.py read\n" },
                { path: "entrypoint.sh", data: "#!/bin/sh\necho entrypoint ran with $1\n", mode: 0o755 },
                { path: "app-link", symlink: "app.py" },
        ] }] });
        const cache = cacheDir("cache-top");
        const srv = await startServer({ args: ["--image", `top=oci:${img.dir}`, "--image-cache", cache] });
        const r = await inImage(srv, "top", [
                "cat /app.py /app-link",
                "sh /app.py",
                "/entrypoint.sh one",
                "cat /lib/data.txt; ls /bin/busybox",
                "echo x > /app.py 2>/dev/null && echo wrote app.py || echo app.py not writable",
                "echo x >> /entrypoint.sh 2>/dev/null && echo appended || echo entrypoint.sh not writable",
                "chmod 777 /app.py 2>/dev/null && echo chmod || echo no chmod",
                "touch /new.txt 2>/dev/null && echo created || echo no new top-level file",
                "cat /app.py",
        ].join("\n"));
        assert.equal(r.stdout, ["echo app.py read", "echo app.py read", "app.py read", "entrypoint ran with one",
                                "lib data", "/bin/busybox", "app.py not writable", "entrypoint.sh not writable",
                                "no chmod", "no new top-level file", "echo app.py read", ""].join("\n"), r.stderr);
        await srv.close();
        const rootfs = path.join(cache, `sha256-${img.manifest.slice(7)}`, "rootfs");
        assert.equal(fs.readFileSync(path.join(rootfs, "app.py"), "utf8"), "echo app.py read\n", "the cache is unchanged");
        assert.ok(!fs.existsSync(path.join(rootfs, "new.txt")));
});

test("an image's User missing from its /etc/passwd (or outside the sandbox's ids) refuses the start", { skip, timeout: 60_000 }, () => {
        const cache = cacheDir("cache-bad-user");
        for (const [user, want] of [
                ["nobody", /--image bad: image "oci:.*": User "nobody": no user "nobody" in the image's \/etc\/passwd/],
                ["app:wheel", /User "app:wheel": no group "wheel" in the image's \/etc\/group/],
                ["70000", /--image bad: User "70000" is 70000:0, outside the sandboxes' \d+ ids/]]) {
                const r = startFails(["--image", `bad=oci:${userImage(user).dir}`, "--image-cache", cache]);
                assert.equal(r.status, 1, r.stderr);
                assert.match(r.stderr, want);
        }
});

// Each bad image refuses the start with a message naming what is wrong; nothing is cached.
function assertRefused(img, want, extra = []) {
        const cache = cacheDir(`cache-${n++}`);
        const r = startFails(["--image", `bad=oci:${img.dir}`, "--image-cache", cache, ...extra]);
        assert.equal(r.status, 1, r.stderr);
        assert.match(r.stderr, want);
        assert.deepEqual(fs.readdirSync(cache).filter((x) => !x.startsWith(".")), [], "a half-unpacked image stays");
}

test("a corrupt layer blob is refused naming its digest", { skip, timeout: 60_000 }, () => {
        const img = layout({ layers: [baseLayer()] });
        const blob = path.join(img.dir, "blobs", "sha256", img.layers[0].slice(7));
        const b = fs.readFileSync(blob);
        b[b.length - 20] ^= 0xff;
        fs.writeFileSync(blob, b);
        assertRefused(img, new RegExp(`blob ${img.layers[0]}: digest mismatch`));
});

const blobOf = (img, digest) => path.join(img.dir, "blobs", "sha256", digest.slice(7));

// tamper-on-read.py on blob: it rewrites blob with replacement's bytes in place before
// msp-mcp-unpack's nth read of it returns (fanotify holds that read). Resolves once it
// watches: { done() -> its stdout, status } or { skip: why }.
async function tamperOnRead(blob, replacement, nth) {
        const t = spawn("python3", [TAMPER, blob, replacement, "msp-mcp-unpack", String(nth), "60"],
                        { stdio: ["ignore", "pipe", "pipe"] });
        let out = "", err = "";
        t.stderr.on("data", (b) => { err += b; });
        const exited = new Promise((resolve) => t.once("exit", (status) => resolve(status)));
        const ready = await new Promise((resolve) => {
                t.stdout.on("data", (b) => { out += b; if (out.startsWith("ready\n")) resolve(true); });
                exited.then(() => resolve(false));
        });
        if (!ready) return { skip: `tamper-on-read.py: ${err.trim() || out}` };
        return { done: async () => ({ status: await exited, out, err }) };
}

// The layer is rewritten between two of msp-mcp-unpack's reads: its first read got the
// genuine start, the rest is another valid tar of the same size (etc/motd differs). What it
// unpacked does not hash to the manifest's digest: refused, nothing cached under it.
test("a layer rewritten between msp-mcp-unpack's reads is refused and nothing is cached", { skip, timeout: 120_000 }, async (t) => {
        const spec = (motd) => ({ layers: [{ ...baseLayer([{ path: "etc/motd", data: motd }]), compression: "none" }] });
        const img = layout(spec("genuine!")), evil = layout(spec("TAMPERED"));
        const blob = blobOf(img, img.layers[0]);
        assert.equal(fs.statSync(blob).size, fs.statSync(blobOf(evil, evil.layers[0])).size);
        const tamper = await tamperOnRead(blob, blobOf(evil, evil.layers[0]), 2);
        if (tamper.skip) return t.skip(tamper.skip);
        try {
                assertRefused(img, new RegExp(`blob ${img.layers[0]}: digest mismatch`));
        } finally {
                const { status, out, err } = await tamper.done();
                assert.equal(status, 0, err);
                assert.match(out, /tampered/);          // the window was really hit
        }
});

// A FIFO would block the server's single thread at open or read (a symlink may point
// anywhere): the layout's files are read only as regular files.
test("a layer blob or index.json that is a FIFO or a symlink is refused at once", { skip, timeout: 60_000 }, () => {
        for (const [what, fifo, want] of [["blob", true, /: a FIFO, not a regular file/],
                                          ["blob", false, /: a symlink, or below one/],
                                          ["index", true, /index\.json: a FIFO, not a regular file/]]) {
                const img = layout({ layers: [baseLayer()] });
                const victim = what === "blob" ? blobOf(img, img.layers[0]) : path.join(img.dir, "index.json");
                fs.renameSync(victim, `${victim}.real`);
                if (fifo) assert.equal(spawnSync("mkfifo", [victim]).status, 0);
                else fs.symlinkSync(`${victim}.real`, victim);
                assertRefused(img, want);
        }
});

test("a missing blob is refused naming its digest", { skip, timeout: 60_000 }, () => {
        const img = layout({ layers: [baseLayer()] });
        fs.rmSync(path.join(img.dir, "blobs", "sha256", img.layers[0].slice(7)));
        assertRefused(img, new RegExp(`blob ${img.layers[0]}: missing`));
});

test("a layer entry with ../ is refused and nothing is written outside", { skip, timeout: 60_000 }, () => {
        const victim = `msp-image-escape-${process.pid}`;
        const img = layout({ layers: [baseLayer([{ path: `../../../../../../tmp/${victim}`, data: "escaped" }])] });
        assertRefused(img, /entry "\.\.\/.*": escapes the rootfs/);
        assert.ok(!fs.existsSync(`/tmp/${victim}`));
});

test("a file below a symlink (to / or to ..) is refused and nothing is written outside", { skip, timeout: 60_000 }, () => {
        const victim = `msp-image-escape-${process.pid}`;
        for (const target of ["/tmp", "../../../../../../../tmp"]) {
                const img = layout({ layers: [baseLayer([{ path: "link", symlink: target }]),
                                              { entries: [{ path: `link/${victim}`, data: "escaped" }] }] });
                assertRefused(img, new RegExp(`entry "link/${victim}": its parent "link" is a symlink`));
                assert.ok(!fs.existsSync(`/tmp/${victim}`));
        }
});

test("an image larger than --image-max-size is refused", { skip, timeout: 60_000 }, () => {
        const img = layout({ layers: [baseLayer([{ path: "big", size: 4 << 20 }])] });
        assertRefused(img, /the unpacked image exceeds the limit of 3145728 bytes \(--image-max-size\) at "(big|bin\/busybox)"/,
                      ["--image-max-size", "3M"]);
});

// Refused like a bad User: after the unpack, which stays cached.
test("an image with more than 1024 top-level directories and files is refused", { skip, timeout: 60_000 }, () => {
        const many = Array.from({ length: 1030 }, (_, i) => ({ path: `f${i}`, data: "" }));
        const img = layout({ layers: [baseLayer(many)] });
        const r = startFails(["--image", `bad=oci:${img.dir}`, "--image-cache", cacheDir("cache-many")]);
        assert.equal(r.status, 1, r.stderr);
        assert.match(r.stderr, /--image bad: image "oci:.*": more than 1024 directories and files at its top level/);
});

// A sparse entry writes a few bytes but names a size of 1 TiB: the size it names is what it
// costs, not the data it carries.
test("a sparse file larger than --image-max-size is refused", { skip, timeout: 60_000 }, () => {
        const img = layout({ layers: [baseLayer([{ path: "holes", data: "end", sparse: 2 ** 40 }])] });
        assertRefused(img, /the unpacked image exceeds the limit of 8388608 bytes \(--image-max-size\) at "holes"/,
                      ["--image-max-size", "8M"]);
});

// The archives are parsed by msp-mcp-unpack, run beside msp-mcp for each image (the cases
// above go through it): msp-mcp itself maps neither libarchive nor what it pulls in.
test("msp-mcp links no libarchive, libxml2 or ICU; msp-mcp-unpack beside it does", { timeout: 30_000 }, () => {
        const ldd = (bin) => spawnSync("ldd", [bin], { encoding: "utf8" });
        const server = ldd(MSP_MCP);
        assert.equal(server.status, 0, server.stderr);
        assert.doesNotMatch(server.stdout, /libarchive|libxml2|libicuuc/);
        const helper = ldd(path.join(path.dirname(MSP_MCP), "msp-mcp-unpack"));
        assert.equal(helper.status, 0, helper.stderr);
        assert.match(helper.stdout, /libarchive/);
});

const podman = spawnSync("podman", ["--version"]).status === 0;
// Run by a user, containers-storage: names an image in that user's own rootless store,
// which this file (root) does not build into; tests/podman-rootless sets one up.
const podmanSkip = !podman ? "podman not installed (contrib/install-deps.sh podman)"
        : AS_USER && "as a user: containers-storage: is the test user's rootless podman store, which this file does not build into";
test("containers-storage: an image podman built (ENV, WORKDIR, COPY)", { skip: skip || podmanSkip, timeout: 300_000 }, async () => {
        const tag = `localhost/msp-mcp-image-test:${process.pid}`;
        const lowerDir = path.join(os.tmpdir(), `msp-mcp-image-base-${process.pid}`);
        // podman names what it pulls from oci:DIR after DIR, which must then be lowercase.
        const base = layout({ layers: [baseLayer([{ path: "etc/motd", data: "base" }, { path: "data", dir: true }])] },
                            lowerDir);
        const pull = spawnSync("podman", ["pull", "-q", `oci:${base.dir}`], { encoding: "utf8", timeout: 120_000 });
        assert.equal(pull.status, 0, pull.stderr);
        const baseId = pull.stdout.trim();
        const ctx = path.join(work, "ctx");
        fs.mkdirSync(ctx);
        fs.writeFileSync(path.join(ctx, "Containerfile"),
                         `FROM ${baseId}\nENV FROM_PODMAN=yes\nWORKDIR /data\nCOPY hello /data/hello\n`);
        fs.writeFileSync(path.join(ctx, "hello"), "hello from podman\n", { mode: 0o644 });
        fs.chmodSync(path.join(ctx, "hello"), 0o644);
        const b = spawnSync("podman", ["build", "-q", "-t", tag, ctx], { encoding: "utf8", timeout: 240_000 });
        assert.equal(b.status, 0, b.stderr);
        try {
                const cache = cacheDir("cache-pm");
                const args = ["--image", `pm=containers-storage:${tag}`, "--image-cache", cache];
                const srv = await startServer({ args });
                assert.match(srv.log(), /image pm: unpacked into/);
                const r = await inImage(srv, "pm", "pwd; echo $FROM_PODMAN; cat hello /etc/motd");
                assert.equal(r.stdout, "/data\nyes\nhello from podman\nbase");
                await srv.close();
                // Found again by its id in the store: not exported, not unpacked.
                const again = await startServer({ args });
                assert.match(again.log(), /image pm: cached at/);
                await again.close();
                const names = fs.readdirSync(cache).filter((x) => !x.startsWith(".")).sort();
                assert.equal(names.length, 2, names.join(" "));
                assert.match(names[0], /^cs-[0-9a-f]{64}$/);
                assert.equal(fs.readlinkSync(path.join(cache, names[0])), names[1]);
        } finally {
                for (const x of [tag, baseId]) spawnSync("podman", ["rmi", "-f", x]);
                fs.rmSync(lowerDir, { recursive: true, force: true });
        }
});
