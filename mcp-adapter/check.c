/* mcp_check_host(): what the default policy needs from the kernel and the host, each probed
 * by trying it (features, not versions), one line each: "ok|MISSING  name  what". */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "engine/engine.h"
#include "langprobe.h"
#include "base/base.h"
#include "image/image.h"
#include "oci/oci.h"
#include "host/host.h"

#define LANDLOCK_ABI_NEEDED 6           /* the default profile's scopes */

typedef struct checker {
        FILE *out;
        msp_err *err;
        int first_missing;              /* -errno of the first missing requirement */
} checker;

static void line(checker *c, bool ok, const char *name, const char *fmt, ...) _printf_(4, 5);

static void
line(checker *c, bool ok, const char *name, const char *fmt, ...)
{
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        if (c->out)
                fprintf(c->out, "%-8s %-14s %s\n", ok ? "ok" : "MISSING", name, what);
        if (!ok && !c->first_missing)
                c->first_missing = msp_err_set(c->err, ENOTSUP, "%s: %s", name, what);
}

static void
read_small(const char *path, char *buf, size_t size)
{
        (void) mcp_read_text(path, buf, size);
        char *nl = strchr(buf, '\n');
        if (nl && nl[1] == '\0')
                *nl = '\0';
}

/* Try it: a child that unshares a user namespace. */
static bool
userns_works(void)
{
        pid_t pid = fork();
        if (pid < 0)
                return false;
        if (pid == 0)
                _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
        int st;
        while (waitpid(pid, &st, 0) < 0)
                if (errno != EINTR)
                        return false;
        return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void
check_cgroups(checker *c)
{
        char buf[1024];
        if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0) {
                read_small("/sys/fs/cgroup/cgroup.controllers", buf, sizeof buf);
                bool ok = strstr(buf, "memory") && strstr(buf, "pids") && strstr(buf, "cpu");
                line(c, true, "cgroup", "unified (v2)");
                line(c, ok, "controllers", "v2: %s (needs memory, pids, cpu)", buf);
                return;
        }
        bool hybrid = access("/sys/fs/cgroup/unified/cgroup.controllers", F_OK) == 0;
        line(c, true, "cgroup", "%s", hybrid ? "hybrid (v1 controllers, v2 at /sys/fs/cgroup/unified)"
                                             : "legacy (v1)");
        static const char *const ctl[] = { "memory", "pids", "cpu" };
        char have[128] = "", missing[128] = "";
        for (size_t i = 0; i < ARRAY_SIZE(ctl); i++) {
                char p[64];
                snprintf(p, sizeof p, "/sys/fs/cgroup/%s/tasks", ctl[i]);
                char *dst = access(p, F_OK) == 0 ? have : missing;
                if (dst[0])
                        strcat(dst, " ");
                strncat(dst, ctl[i], sizeof have - strlen(dst) - 2);
        }
        line(c, !missing[0], "controllers", "v1: %s%s%s", have, missing[0] ? "; missing: " : "",
             missing);
        bool memsw = access("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes", F_OK) == 0;
        line(c, memsw, "swap-limit", "%s", memsw ? "memory.memsw (swap accounting) present"
                                                 : "no memory.memsw: swapaccount=1 is off, "
                                                   "memory limits cannot exclude swap");
}

/* Run by a user: what this host gives a rootless server, and which mechanism holds each
 * limit of a run (bundle.h: without a cgroup). */
static void
check_rootless(checker *c, const mcp_rootless *rl, bool require_cgroups)
{
        line(c, true, "rootless", "uid %u: msp-mcp enters a user namespace of its own (root there "
             "is uid %u)", (unsigned) rl->uid, (unsigned) rl->uid);
        if (rl->multi)
                line(c, true, "subids", "/etc/subuid %lu+%lu, /etc/subgid %lu+%lu, %s, %s: "
                     "sandboxes run as subordinate ids", rl->subuid, rl->subuid_n, rl->subgid,
                     rl->subgid_n, rl->newuidmap, rl->newgidmap);
        else if (c->out)
                fprintf(c->out, "%-8s %-14s %s: every sandbox runs as uid %u itself (uid 0 "
                        "inside); give the user ranges in /etc/subuid and /etc/subgid and "
                        "install newuidmap (uidmap) for subordinate ids\n", "absent", "subids",
                        !rl->subuid_n || !rl->subgid_n ? "no range of 1000 ids or more"
                                                       : "no newuidmap/newgidmap",
                        (unsigned) rl->uid);
        char why[1024];
        bool deleg = mcp_rootless_delegated(why, sizeof why);
        if (deleg)
                line(c, true, "cgroup", "%s: each sandbox gets a cgroup below it (msp-mcp moves "
                     "itself into a leaf there)", why);
        else if (require_cgroups)
                line(c, false, "cgroup", "--require-cgroups: no cgroup for the sandboxes (%s)", why);
        else
                line(c, true, "cgroup", "none for the sandboxes (%s): each limit holds by the "
                     "means below", why);
        static const char *const by_rlimits[][2] = {
                { "memory", "RLIMIT_DATA = memory_mb, per process (an allocation past it "
                            "fails: no OOM kill, oom_killed stays false)" },
                { "pids", "RLIMIT_NPROC = pids, counted in the sandbox's own user namespace" },
                { "cpu", "RLIMIT_CPU (the timeout's CPU seconds at the quota, + 1) and the "
                         "wall-clock timeout; no CPU quota" },
                { "disk", "tmpfs sizes (/workspace, /tmp, /dev/shm) and RLIMIT_FSIZE" },
                { "timeout", "the runtime kills pid 1: the whole pid namespace ends with it" },
        };
        static const char *const by_cgroup[][2] = {
                { "memory", "cgroup memory.max = memory_mb, no swap (an OOM kill is reported as "
                            "oom_killed)" },
                { "pids", "cgroup pids.max = pids" },
                { "cpu", "cgroup cpu.max (the CPU quota) and the wall-clock timeout" },
                { "disk", "tmpfs sizes (/workspace, /tmp, /dev/shm) and RLIMIT_FSIZE" },
                { "timeout", "cgroup.kill: every process of the sandbox" },
        };
        const char *const (*limits)[2] = deleg ? by_cgroup : by_rlimits;
        for (size_t i = 0; c->out && i < ARRAY_SIZE(by_cgroup); i++)
                fprintf(c->out, "%-8s %-14s %s\n", "limit", limits[i][0], limits[i][1]);
}

/* The languages of the host view: listed ones with their interpreter and, when the policy
 * can be enforced, whether a program ran in the sandbox ("broken" with the failure
 * otherwise); those present but not working in the view ("off", never a missing
 * requirement) with the reason. */
static void
check_languages(checker *c, const mcp_config *cfg)
{
        _cleanup_free_ mcp_host *host = malloc(sizeof *host);
        msp_err e = { 0 };
        if (!c->out || !host || mcp_host_detect(host, &e) < 0)
                return;
        const mcp_languages *l = &host->langs;
        mcp_langprobe probes[MCP_LANG_MAX] = { 0 };
        for (size_t i = 0; i < l->n; i++)
                probes[i].name = l->names[i];
        int probed = c->first_missing ? -ENOTSUP : mcp_langprobe_run(cfg, host, probes, l->n, &e);
        if (probed < 0 && !c->first_missing)
                fprintf(c->out, "%-8s %-14s no program was run: %s\n", "absent", "lang-probe", e.msg);
        for (size_t i = 0; i < l->n; i++) {
                char name[32];
                snprintf(name, sizeof name, "lang %s", l->names[i]);
                if (probed < 0)
                        line(c, true, name, "%s", l->interp[i]);
                else if (probes[i].ran)
                        line(c, true, name, "%s (a program ran in the sandbox, %" PRIu64 " ms)",
                             l->interp[i], probes[i].ms);
                else
                        fprintf(c->out, "%-8s %-14s %s: listed, but its program fails in the "
                                "sandbox: %s\n", "broken", name, l->interp[i], probes[i].why);
        }
        for (size_t i = 0; i < l->n_off; i++)
                fprintf(c->out, "%-8s lang %-9s not listed: %s\n", "off", l->off[i]->name, l->why[i]);
}

/* Allowlists: not part of the default policy (without --network-allow they are refused),
 * so the line is "ok", "off" or "warning", never MISSING. The proxy is msp-mcp's own (no
 * program to find); what confines a program that ignores it is Landlock's TCP rules (ABI
 * 4) in the runtime. */
static void
check_egress(FILE *out, const mcp_config *cfg, long abi)
{
        if (!out)
                return;
        const mcp_egress_policy *p = &cfg->network_allow;
        if (!p->n) {
                fprintf(out, "%-8s %-14s no --network-allow: network allowlists are refused (the "
                        "egress proxy is not used)\n", "off", "egress");
                return;
        }
        char pats[256] = "", pins[256] = "";
        size_t n = 0;
        for (size_t i = 0; i < p->n && n < sizeof pats; i++)
                n += (size_t) snprintf(pats + n, sizeof pats - n, "%s%s", i ? " " : "", p->rules[i].text);
        n = 0;
        for (size_t i = 0; i < cfg->n_resolve && n < sizeof pins; i++) {
                char a[INET6_ADDRSTRLEN] = "?";
                const struct sockaddr_storage *ss = &cfg->resolve[i].addr;
                inet_ntop(ss->ss_family, ss->ss_family == AF_INET
                                ? (const void *) &((const struct sockaddr_in *) ss)->sin_addr
                                : (const void *) &((const struct sockaddr_in6 *) ss)->sin6_addr, a, sizeof a);
                n += (size_t) snprintf(pins + n, sizeof pins - n, "%s%s=%s", i ? " " : "",
                                       cfg->resolve[i].host, a);
        }
        const char *rt = cfg->runtime_path ? strrchr(cfg->runtime_path, '/') : NULL;
        rt = rt ? rt + 1 : cfg->runtime_path ? cfg->runtime_path : "";
        bool msp = strcmp(rt, "msp") == 0;
        bool tcp = msp && abi >= 4;
        fprintf(out, "%-8s %-14s proxy in msp-mcp; %zu pattern%s (--network-allow %s); %zu resolver "
                "pin%s%s%s%s\n", tcp ? "ok" : "warning", "egress", p->n, p->n == 1 ? "" : "s", pats,
                cfg->n_resolve, cfg->n_resolve == 1 ? "" : "s", cfg->n_resolve ? " (--resolve " : "",
                pins, cfg->n_resolve ? ")" : "");
        if (tcp)
                fprintf(out, "%-8s %-14s Landlock ABI %ld: TCP connect and bind confined to the "
                        "proxy's port\n", "ok", "egress-tcp", abi);
        else
                fprintf(out, "%-8s %-14s %s: a program that ignores the proxy variables is stopped "
                        "only by its namespace having no route\n", "warning", "egress-tcp",
                        !msp ? "the runtime is not msp (no Landlock)" : "Landlock ABI below 4 (no TCP rules)");
}

int
mcp_check_host(const mcp_config *cfg, FILE *out, msp_err *err)
{
        checker c = { .out = out, .err = err };
        char buf[1024];
        struct utsname u;
        if (uname(&u) == 0)
                line(&c, true, "kernel", "%s %s", u.release, u.machine);

        long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        line(&c, abi >= LANDLOCK_ABI_NEEDED, "landlock", "ABI %ld%s (the default profile needs %d)",
             abi < 0 ? 0 : abi, abi < 0 ? " (not enabled)" : "", LANDLOCK_ABI_NEEDED);

        read_small("/proc/sys/user/max_user_namespaces", buf, sizeof buf);
        bool userns = userns_works();
        line(&c, userns, "userns", "%s (max_user_namespaces %s)",
             userns ? "unshare(CLONE_NEWUSER) works" : "unshare(CLONE_NEWUSER) fails",
             buf[0] ? buf : "?");

        mcp_rootless rl;
        mcp_rootless_probe(&rl);
        if (!rl.on) {
                msp_err e = { 0 };
                unsigned slices = mcp_sandbox_slices_needed(cfg->max_concurrent,
                                                            cfg->max_sessions);
                if (mcp_sandbox_ids_claim(cfg->sandbox_ids, slices, &e) == 0)
                        snprintf(e.msg, sizeof e.msg, "host %u..%llu, held by no account or "
                                 "subordinate range: the images' %u ids and %u slices of them, "
                                 "one per sandbox", MCP_SANDBOX_HOST_BASE,
                                 MCP_SANDBOX_HOST_BASE +
                                         (unsigned long long) MCP_SANDBOX_ID_COUNT * (1 + slices) - 1,
                                 MCP_SANDBOX_ID_COUNT, slices);
                line(&c, e.errnum == 0, "sandbox-ids", "%s", e.msg);
        }

        const char *why_not = mcp_sandbox_userns_why_not(cfg->runtime_path);
        if (out && why_not)
                fprintf(out, "%-8s %-14s %s\n", "off", "sandbox-userns", why_not);
        else if (out)
                fprintf(out, "%-8s %-14s made by msp-mcp, owned by its slice's uid %u (the "
                        "first slice's: uid %u): per-user budgets are charged to it, not to host "
                        "root or another sandbox\n", "ok", "sandbox-userns", MCP_SANDBOX_UID,
                        MCP_SANDBOX_SLICE_BASE(0) + MCP_SANDBOX_UID);

        if (rl.on)
                check_rootless(&c, &rl, cfg->require_cgroups);
        else
                check_cgroups(&c);

        int sc = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
        line(&c, sc >= 0, "seccomp", "%s",
             sc >= 0 ? "filter mode available (the built-in profile refuses namespaces, "
                       "mounts, ptrace, io_uring and native AIO, socket families other than "
                       "unix, inet, inet6 and netlink route)"
                     : strerror(errno));

        char fs[8192];
        read_small("/proc/filesystems", fs, sizeof fs);
        line(&c, strstr(fs, "\toverlay\n") != NULL, "overlayfs", "%s",
             strstr(fs, "\toverlay\n") ? "in /proc/filesystems" : "not in /proc/filesystems "
                                                                  "(session seed directories)");
        line(&c, strstr(fs, "\ttmpfs\n") != NULL, "tmpfs", "%s",
             strstr(fs, "\ttmpfs\n") ? "in /proc/filesystems" : "not in /proc/filesystems");

        int pfd = (int) syscall(SYS_pidfd_open, getpid(), 0);
        line(&c, pfd >= 0, "pidfd", "%s", pfd >= 0 ? "pidfd_open works" : strerror(errno));
        if (pfd >= 0)
                close(pfd);
        struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
        int ofd = (int) syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how);
        line(&c, ofd >= 0, "openat2", "%s", ofd >= 0 ? "RESOLVE_IN_ROOT works" : strerror(errno));
        if (ofd >= 0)
                close(ofd);

        const char *rt = cfg->runtime_path ? cfg->runtime_path : "(none)";
        struct stat st;
        bool exe = stat(rt, &st) == 0 && S_ISREG(st.st_mode) && access(rt, X_OK) == 0;
        int ver = -1;
        if (exe) {
                const char *argv[] = { rt, "--version", NULL };
                ver = mcp_spawn_wait(argv, NULL);
        }
        line(&c, exe && ver == 0, "runtime", "%s: %s", rt,
             !exe ? "not an executable file" : ver == 0 ? "--version works" : "--version fails");

        const char *in = cfg->init_path;
        bool init_ok = in && stat(in, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0001);
        line(&c, init_ok, "sandbox-init", "%s: %s", in ? in : MCP_SANDBOX_INIT_INSTALLED,
             !in ? "not found (nor beside msp-mcp): --sandbox-init PATH"
                 : init_ok ? "executable by all" : "not a regular file executable by all");

        /* Not part of the policy: without it network sessions are refused, nothing opens. */
        const char *helper = cfg->usernet_path ? cfg->usernet_path : MCP_USERNET_HELPER;
        if (mcp_usernet_usable(cfg->usernet_path))
                line(&c, true, "network-helper", "%s: present (network sessions get their own "
                     "namespace with outbound-only user-mode networking)", helper);
        else if (out)
                fprintf(out, "%-8s %-14s %s: not found, network sessions are refused\n", "absent",
                        "network-helper", helper);

        check_egress(out, cfg, abi);

        const char *state = cfg->state_dir ? cfg->state_dir : "/run/msp-mcp";
        if (geteuid() != 0) {
                /* what start-up does: the user's own dir, reachable by the sandbox's root */
                msp_err e = { 0 };
                bool ok = mcp_rootless_state_check(state, &e) == 0 &&
                          mcp_rootless_reachable(state, &e) == 0;
                line(&c, ok, "state-dir", "%s", ok ? state : e.msg);
        } else {
                bool made = mkdir(state, 0711) == 0 || errno == EEXIST;
                bool w = made && access(state, W_OK | X_OK) == 0;
                line(&c, w, "state-dir", "%s: %s", state, w ? "writable" : strerror(errno));
        }
        if (mcp_config_has_image(cfg)) {
                msp_err e = { 0 };
                bool ok = mcp_image_cache_usable(cfg->image_cache, &e) == 0;
                line(&c, ok, "image-cache", "%s", ok ? cfg->image_cache : e.msg);
        }
        check_languages(&c, cfg);
        return c.first_missing;
}
