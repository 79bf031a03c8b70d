/* An image's blobs as msp-mcp and msp-mcp-unpack read them (image-layout.c,
 * image-unpack.c, image-cache.c): what is unpacked and cached is exactly what was checked
 * against the manifest. Layouts come from tests/helper/oci-layout.py; a layer rewritten
 * between two of the unpacker's reads comes from tests/helper/tamper-on-read.py
 * (fanotify: root). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "image/blob-check.h"
#include "image/image-cache.h"
#include "image/image-unpack.h"

#define MOTD_GOOD "genuine!"
#define MOTD_EVIL "TAMPERED"            /* as long: the tampered layer has the same size */

static char base[64];                   /* /tmp/mcp-image-blobs-XXXXXX */
static const char *helpers;             /* tests/helper */
static int n_dirs;

/* A layout under base of one plain tar layer: 1 MiB of zeros (several reads), then
 * etc/motd; its directory and the layer's digest. */
static int
make_layout(const char *motd, char *dir, size_t size, char digest[80])
{
        char spec[256], cmd[1024], out[512] = "";
        snprintf(dir, size, "%s/layout-%d", base, n_dirs++);
        snprintf(spec, sizeof spec, "%s.json", dir);
        FILE *f = fopen(spec, "w");
        if (!f)
                return -errno;
        fprintf(f, "{\"layers\": [{\"compression\": \"none\", \"entries\": ["
                   "{\"path\": \"big\", \"size\": 1048576}, {\"path\": \"etc\", \"dir\": true}, "
                   "{\"path\": \"etc/motd\", \"data\": \"%s\"}]}]}", motd);
        fclose(f);
        snprintf(cmd, sizeof cmd, "python3 %s/oci-layout.py %s < %s", helpers, dir, spec);
        f = popen(cmd, "r");
        if (!f)
                return -errno;
        size_t n = fread(out, 1, sizeof out - 1, f);
        out[n] = '\0';
        const char *l = strstr(out, "\"layers\": [\"");
        if (pclose(f) != 0 || !l)
                return -EIO;
        snprintf(digest, 80, "%.71s", l + strlen("\"layers\": [\""));
        return 0;
}

static void
blob_path(const char *dir, const char *digest, char *path, size_t size)
{
        snprintf(path, size, "%s/blobs/sha256/%s", dir, digest + strlen("sha256:"));
}

/* mcp_image_prepare of ref into cache (podman: the program it runs for
 * containers-storage:), in a child given 30 s: a read that blocks (a FIFO) is a failure
 * here, not a hung test. Its result; its message in msg. */
static int
prepare_with(const char *podman, const char *ref, const char *cache, char *msg, size_t size)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid == 0) {
                mcp_image_opts o = { .cache_dir = cache, .max_bytes = 64u << 20,
                                     .podman = podman,
                                     .unpack_helper = getenv("MSP_MCP_UNPACK") };
                mcp_image_rootfs ret;
                msp_err err = { 0 };
                int r = mcp_image_prepare(&o, ref, &ret, &err);
                if (r == 0)
                        mcp_image_rootfs_done(&ret);
                dprintf(p[1], "%d %s", r, r < 0 ? err.msg : "");
                _exit(0);
        }
        close(p[1]);
        struct pollfd pfd = { .fd = p[0], .events = POLLIN };
        char buf[MSP_ERR_MSG_MAX + 32] = "";
        int r = -ETIMEDOUT;
        if (poll(&pfd, 1, 30000) == 1) {
                ssize_t n = read(p[0], buf, sizeof buf - 1);
                buf[n > 0 ? n : 0] = '\0';
                char *sp = strchr(buf, ' ');
                r = sp ? atoi(buf) : -EIO;
                snprintf(msg, size, "%s", sp ? sp + 1 : "no result");
        } else
                snprintf(msg, size, "still running after 30 s (blocked)");
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(p[0]);
        return r;
}

static int
prepare(const char *ref, const char *cache, char *msg, size_t size)
{
        return prepare_with("podman", ref, cache, msg, size);
}

/* The cache holds nothing but its lock: no entry, no tmp-* left. */
static bool
cache_empty(const char *cache)
{
        char cmd[256];
        snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s | grep -v '^.lock$')\"", cache);
        return system(cmd) == 0;
}

static void
make_cache(char *cache, size_t size)
{
        snprintf(cache, size, "%s/cache-%d", base, n_dirs++);
        mkdir(cache, 0700);
}

/* One line from fd (its writer may send it in pieces) within 30 s; "" at EOF. */
static int
read_line(int fd, char *line, size_t size)
{
        size_t n = 0;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        while (n + 1 < size && (n == 0 || line[n - 1] != '\n')) {
                ssize_t k = poll(&pfd, 1, 30000) == 1 ? read(fd, line + n, 1) : -1;
                if (k < 0)
                        return -ETIMEDOUT;
                if (k == 0)
                        break;
                n++;
        }
        line[n] = '\0';
        return 0;
}

/* tamper-on-read.py started on blob; its stdout (after "ready"), or -1. */
static int
start_tamper(const char *blob, const char *replacement, pid_t *ret_pid)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -1;
        char script[256];
        snprintf(script, sizeof script, "%s/tamper-on-read.py", helpers);
        pid_t pid = fork();
        if (pid == 0) {
                dup2(p[1], 1);
                execlp("python3", "python3", script, blob, replacement, "msp-mcp-unpack", "2",
                       "60", (char *) NULL);
                _exit(127);
        }
        close(p[1]);
        char line[16];
        if (read_line(p[0], line, sizeof line) < 0 || strcmp(line, "ready\n") != 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                close(p[0]);
                return -1;
        }
        *ret_pid = pid;
        return p[0];
}

static bool
fanotify_usable(void)
{
        int fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY);
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

/* The unpacker's first read gets the genuine start of the layer; the rest of the file is
 * then rewritten (same inode, same size, a valid tar whose etc/motd differs) before its
 * second read: what it unpacked no longer hashes to the manifest's digest, so nothing of it
 * may be cached under that manifest. */
TEST(layer_rewritten_between_reads_is_refused_and_not_cached)
{
        char good[128], evil[128], dg[80], de[80], blob[256], repl[256], cache[128], msg[1200];
        ASSERT_OK(make_layout(MOTD_GOOD, good, sizeof good, dg));
        ASSERT_OK(make_layout(MOTD_EVIL, evil, sizeof evil, de));
        blob_path(good, dg, blob, sizeof blob);
        blob_path(evil, de, repl, sizeof repl);
        struct stat a, b;
        ASSERT_TRUE(stat(blob, &a) == 0 && stat(repl, &b) == 0 && a.st_size == b.st_size);
        make_cache(cache, sizeof cache);
        pid_t tamper;
        int out = start_tamper(blob, repl, &tamper);
        ASSERT_TRUE(out >= 0);
        char ref[160];
        snprintf(ref, sizeof ref, "oci:%s", good);
        int r = prepare(ref, cache, msg, sizeof msg);
        char said[32] = "";
        (void) read_line(out, said, sizeof said);
        int status;
        kill(tamper, SIGKILL);
        waitpid(tamper, &status, 0);
        close(out);
        /* the window was hit: the unpacker read the blob, and the rewrite came between */
        ASSERT_STREQ(said, "tampered\n");
        if (r == 0) {
                char motd[256], text[16] = "";
                snprintf(motd, sizeof motd, "%s/sha256-*/rootfs/etc/motd", cache);
                snprintf(msg, sizeof msg, "cat %s", motd);
                FILE *f = popen(msg, "r");
                if (f) {
                        if (!fgets(text, sizeof text, f))
                                text[0] = '\0';
                        pclose(f);
                }
                TAP_FAIL_("the tampered layer was cached (etc/motd: \"%s\")", text);
        }
        tap_diag("%s", msg);
        ASSERT_TRUE(strstr(msg, "digest mismatch") != NULL);
        ASSERT_TRUE(strstr(msg, dg) != NULL);
        ASSERT_TRUE(cache_empty(cache));
}

static int
slurp(const char *path, char **ret, size_t *ret_len)
{
        struct stat st;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return -errno;
        *ret = malloc((size_t) st.st_size + 1);
        ssize_t n = *ret ? read(fd, *ret, (size_t) st.st_size) : -1;
        close(fd);
        *ret_len = (size_t) st.st_size;
        return n == st.st_size ? 0 : -EIO;
}

/* The layer unpacked from a pipe a child fills with a, then b (the blob as a reader sees
 * it change between reads), into a fresh rootfs; its result, message and etc/motd. */
static int
unpack_stream(const mcp_image_layer *y, const char *a, size_t na, const char *b, size_t nb,
              char *msg, size_t size, char motd[16])
{
        char root[128];
        snprintf(root, sizeof root, "%s/root-%d", base, n_dirs++);
        mkdir(root, 0755);
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid == 0) {
                close(p[0]);
                bool ok = write(p[1], a, na) == (ssize_t) na && write(p[1], b, nb) == (ssize_t) nb;
                _exit(ok ? 0 : 1);
        }
        close(p[1]);
        int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        mcp_unpack_budget budget = { .max_bytes = 64u << 20 };
        msp_err err = { 0 };
        int r = mcp_image_unpack_layer(rfd, p[0], y, &budget, &err);
        snprintf(msg, size, "%s", err.msg);
        close(p[0]);
        close(rfd);
        kill(pid, SIGKILL);             /* a writer the unpacker stopped reading */
        waitpid(pid, NULL, 0);
        char path[160];
        snprintf(path, sizeof path, "%s/etc/motd", root);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? 0 : read(fd, motd, 15);
        motd[n > 0 ? n : 0] = '\0';
        if (fd >= 0)
                close(fd);
        return r;
}

/* msp-mcp-unpack's own check (mcp_image_unpack_layer), fed through a pipe: the blob whole
 * unpacks; its start then another layer's rest, more bytes than the manifest names, fewer,
 * and a change only after the tar's end-of-archive blocks (bytes libarchive itself never
 * needs) are each refused naming the digest. */
TEST(unpack_checks_exactly_the_bytes_it_reads)
{
        char good[128], evil[128], dg[80], de[80], path[256], msg[1200], motd[16];
        _cleanup_free_ char *g = NULL, *e = NULL;
        size_t ng, ne;
        ASSERT_OK(make_layout(MOTD_GOOD, good, sizeof good, dg));
        ASSERT_OK(make_layout(MOTD_EVIL, evil, sizeof evil, de));
        blob_path(good, dg, path, sizeof path);
        ASSERT_OK(slurp(path, &g, &ng));
        blob_path(evil, de, path, sizeof path);
        ASSERT_OK(slurp(path, &e, &ne));
        ASSERT_EQ_U64(ng, ne);
        mcp_image_layer y = { .size = ng, .compression = MCP_LAYER_TAR };
        snprintf(y.digest, sizeof y.digest, "%s", dg);

        ASSERT_OK(unpack_stream(&y, g, ng, "", 0, msg, sizeof msg, motd));
        ASSERT_STREQ(motd, MOTD_GOOD);

        const size_t half = 256 * 1024;
        ASSERT_EQ_INT(unpack_stream(&y, g, half, e + half, ne - half, msg, sizeof msg, motd),
                      -EINVAL);
        tap_diag("spliced: %s", msg);
        ASSERT_TRUE(strstr(msg, "digest mismatch") != NULL && strstr(msg, dg) != NULL);

        ASSERT_EQ_INT(unpack_stream(&y, g, ng, "more", 4, msg, sizeof msg, motd), -EFBIG);
        tap_diag("grown: %s", msg);
        ASSERT_TRUE(strstr(msg, "grew while read") != NULL && strstr(msg, dg) != NULL);

        ASSERT_TRUE(unpack_stream(&y, g, ng - 512, "", 0, msg, sizeof msg, motd) < 0);
        tap_diag("short: %s", msg);
        ASSERT_TRUE(strstr(msg, dg) != NULL);

        ASSERT_TRUE(g[ng - 1] == '\0');           /* the tar's zero padding */
        ASSERT_EQ_INT(unpack_stream(&y, g, ng - 1, "x", 1, msg, sizeof msg, motd), -EINVAL);
        tap_diag("after the end: %s", msg);
        ASSERT_TRUE(strstr(msg, "digest mismatch") != NULL);
}

/* A check compares the hex after "sha256:" with what the bytes hash to: a digest of another
 * shape (msp-mcp-unpack takes its digests from its arguments) is refused before any byte,
 * never read past its end. */
TEST(blob_check_refuses_a_malformed_digest)
{
        static const char *const bad[] = {
                "", "sha25", "sha256:", "sha256:abc",
                "sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
                "sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
                "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0",
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
                mcp_blob_check c;
                msp_err err = { 0 };
                ASSERT_EQ_INT(mcp_blob_check_begin(&c, bad[i], 0, &err), -EINVAL);
                ASSERT_TRUE(strstr(err.msg, "expected sha256:<64 hex digits>") != NULL);
                mcp_blob_check_done(&c);
        }
        mcp_blob_check c;
        msp_err err = { 0 };
        /* sha256 of nothing */
        ASSERT_OK(mcp_blob_check_begin(&c, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", 0, &err));
        ASSERT_OK(mcp_blob_check_end(&c, &err));
}

/* A blob or index.json that is a FIFO is refused at once (it would block the server's
 * single thread at open or read), a symlink too (it may point anywhere); nothing cached. */
TEST(fifo_and_symlink_blobs_refused_without_blocking)
{
        char dir[128], dg[80], blob[256], cache[128], msg[1200], ref[160], index[160];
        for (int kind = 0; kind < 3; kind++) {
                ASSERT_OK(make_layout(MOTD_GOOD, dir, sizeof dir, dg));
                blob_path(dir, dg, blob, sizeof blob);
                snprintf(index, sizeof index, "%s/index.json", dir);
                const char *victim = kind == 2 ? index : blob;
                char keep[300];
                snprintf(keep, sizeof keep, "%s.real", victim);
                ASSERT_OK(rename(victim, keep) < 0 ? -errno : 0);
                if (kind == 1)
                        ASSERT_OK(symlink(keep, victim) < 0 ? -errno : 0);
                else
                        ASSERT_OK(mkfifo(victim, 0644) < 0 ? -errno : 0);
                make_cache(cache, sizeof cache);
                snprintf(ref, sizeof ref, "oci:%s", dir);
                int r = prepare(ref, cache, msg, sizeof msg);
                tap_diag("%s: %s", kind == 1 ? "symlink" : "FIFO", msg);
                ASSERT_TRUE(r < 0 && r != -ETIMEDOUT);
                ASSERT_TRUE(strstr(msg, kind == 2 ? "index.json" : dg) != NULL);
                ASSERT_TRUE(cache_empty(cache));
        }
}

/* The config digest of the layout's image (what podman calls its id), without "sha256:". */
static int
config_id(const char *dir, char id[72])
{
        char cmd[512];
        snprintf(cmd, sizeof cmd, "python3 -c 'import json; d = \"%s\"; "
                 "i = json.load(open(d + \"/index.json\")); "
                 "m = json.load(open(d + \"/blobs/sha256/\" + i[\"manifests\"][0][\"digest\"][7:])); "
                 "print(m[\"config\"][\"digest\"][7:])'", dir);
        FILE *f = popen(cmd, "r");
        if (!f)
                return -errno;
        bool ok = fgets(id, 72, f) != NULL;
        if (pclose(f) != 0 || !ok || strlen(id) != 65)
                return -EIO;
        id[64] = '\0';
        return 0;
}

/* A podman that says the image is id and exports the layout at src whatever it is asked
 * for (as a name moved to another image between the two calls would); argv to log. */
static void
fake_podman(const char *path, const char *id, const char *src, const char *log)
{
        FILE *f = fopen(path, "w");
        if (!f)
                return;
        fprintf(f, "#!/bin/sh\necho \"$*\" >> %s\n"
                   "case $1 in\nimage) echo %s ;;\nsave) cp -r %s \"$6\" ;;\nesac\n", log, id, src);
        fclose(f);
        chmod(path, 0755);
}

/* containers-storage: the image is exported by the id podman gave, not by its name, and
 * cs-<id> is linked only to an image whose config hashes to that id: an export of another
 * image is refused and nothing is cached; the image of the id is. */
TEST(storage_export_must_be_the_image_of_its_id)
{
        char a[128], b[128], dg[80], ida[72], idb[72], cache[128], msg[1200], podman[160];
        char log[160], want[400], link[256], target[128] = "";
        ASSERT_OK(make_layout(MOTD_GOOD, a, sizeof a, dg));
        ASSERT_OK(make_layout(MOTD_EVIL, b, sizeof b, dg));
        ASSERT_OK(config_id(a, ida));
        ASSERT_OK(config_id(b, idb));
        snprintf(podman, sizeof podman, "%s/podman", base);
        snprintf(log, sizeof log, "%s/podman.log", base);

        fake_podman(podman, ida, b, log);
        make_cache(cache, sizeof cache);
        int r = prepare_with(podman, "containers-storage:app", cache, msg, sizeof msg);
        tap_diag("%s", msg);
        ASSERT_TRUE(r < 0);
        snprintf(want, sizeof want, "podman exported an image whose config is sha256:%s, not the "
                 "id sha256:%s", idb, ida);
        ASSERT_TRUE(strstr(msg, want) != NULL);
        ASSERT_TRUE(cache_empty(cache));

        fake_podman(podman, ida, a, log);
        make_cache(cache, sizeof cache);
        ASSERT_OK(prepare_with(podman, "containers-storage:app", cache, msg, sizeof msg));
        snprintf(link, sizeof link, "%s/cs-%s", cache, ida);
        ASSERT_TRUE(readlink(link, target, sizeof target - 1) > 0);
        ASSERT_TRUE(strncmp(target, "sha256-", 7) == 0);
        /* each save named the id */
        snprintf(want, sizeof want, "grep -c -- '^save .* %s$' %s | grep -qx 2", ida, log);
        ASSERT_EQ_INT(system(want), 0);
}

int
main(void)
{
        helpers = getenv("MSP_TEST_HELPERS");
        if (!helpers || !getenv("MSP_MCP_UNPACK")) {
                printf("1..0 # SKIP MSP_TEST_HELPERS and MSP_MCP_UNPACK unset (run by meson)\n");
                return 0;
        }
        snprintf(base, sizeof base, "/tmp/mcp-image-blobs-XXXXXX");
        if (!mkdtemp(base)) {
                printf("1..0 # SKIP mkdtemp: %s\n", strerror(errno));
                return 0;
        }
        if (fanotify_usable())
                RUN(layer_rewritten_between_reads_is_refused_and_not_cached);
        else
                tap_skip("layer_rewritten_between_reads_is_refused_and_not_cached",
                         "fanotify permission events unavailable (needs root)");
        RUN(blob_check_refuses_a_malformed_digest);
        RUN(fifo_and_symlink_blobs_refused_without_blocking);
        RUN(unpack_checks_exactly_the_bytes_it_reads);
        RUN(storage_export_must_be_the_image_of_its_id);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", base);
        if (system(cmd) != 0)
                tap_diag("could not remove %s", base);
        return tap_done();
}
