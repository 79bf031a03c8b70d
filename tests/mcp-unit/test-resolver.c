/* mcp-adapter/egress/resolver.c in a real loop: `localhost` resolves through /etc/hosts to a
 * loopback address, many lookups at once all get their answer from one helper that stays
 * (forked once), a cancelled lookup gets no callback, a name that cannot resolve (not a
 * host name: no DNS query, whatever the network) gets no
 * address, the helper holds none of the test's fds and runs as nobody when the test is
 * root, and a killed helper fails the pending lookups and is started again by the next. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/tap.h"
#include "tests/lib/loop-deadline.h"
#include "base/loop.h"
#include "egress/resolver.h"

typedef struct answers {
        mcp_loop *loop;
        int called, loopback, empty, waiting;
        char why[128];                  /* of the last answer without an address */
} answers;

static void
on_answer(const struct sockaddr_storage *addrs, size_t n, const char *why, void *data)
{
        answers *a = data;
        a->called++;
        if (n == 0) {
                a->empty++;
                snprintf(a->why, sizeof a->why, "%s", why ? why : "(null)");
        } else if (why) {
                snprintf(a->why, sizeof a->why, "an address and a reason: %s", why);
        }
        for (size_t i = 0; i < n; i++) {
                const struct sockaddr_in *v4 = (const struct sockaddr_in *) &addrs[i];
                const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *) &addrs[i];
                if ((addrs[i].ss_family == AF_INET && ntohl(v4->sin_addr.s_addr) == INADDR_LOOPBACK) ||
                    (addrs[i].ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&v6->sin6_addr))) {
                        a->loopback++;
                        break;
                }
        }
        if (--a->waiting == 0)
                mcp_loop_exit(a->loop, 0);
}

static int
wait_answers(answers *a)
{
        return test_loop_run_within(a->loop, 20 * 1000000);
}

static long
status_field(pid_t pid, const char *field)
{
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        FILE *f = fopen(path, "re");
        long v = -1;
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, field, strlen(field)) == 0)
                        v = strtol(line + strlen(field), NULL, 10);
        if (f)
                fclose(f);
        return v;
}

/* The process is stopped (state T in /proc/PID/stat). */
static bool
stopped(pid_t pid)
{
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
        if (fd >= 0)
                close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        const char *end = strrchr(buf, ')');
        return end && end[1] == ' ' && end[2] == 'T';
}

/* Does the helper hold an fd open on `target` (a readlink of /proc/PID/fd/N)? Its
 * threads open files of their own while they look a name up (a cancelled lookup's thread
 * still runs), so only what it must never have is looked for. */
static bool
helper_holds(pid_t pid, const char *target)
{
        for (int fd = 0; fd < 256; fd++) {
                char path[64], link[256];
                snprintf(path, sizeof path, "/proc/%d/fd/%d", (int) pid, fd);
                ssize_t n = readlink(path, link, sizeof link - 1);
                if (n <= 0)
                        continue;
                link[n] = '\0';
                if (strcmp(link, target) == 0)
                        return true;
        }
        return false;
}

TEST(lookups)
{
        mcp_loop *loop = NULL;
        mcp_resolver *r = NULL;
        msp_err err = { 0 };
        ASSERT_OK(mcp_loop_new(&loop));
        ASSERT_OK_ERR(mcp_resolver_new(loop, &r, &err), err);
        ASSERT_EQ_INT(mcp_resolver_pid(r), 0);
        /* Not CLOEXEC: still not the helper's. */
        int canary = memfd_create("resolver-canary", 0);
        ASSERT_TRUE(canary >= 0);
        answers a = { .loop = loop };
        uint64_t t, cancelled;
        for (int i = 0; i < 40; i++) {
                ASSERT_OK(mcp_resolver_ask(r, "localhost", on_answer, &a, &t));
                a.waiting++;
        }
        ASSERT_OK(mcp_resolver_ask(r, "localhost", on_answer, &a, &cancelled));
        mcp_resolver_cancel(r, cancelled);
        ASSERT_OK(mcp_resolver_ask(r, "not a host name!", on_answer, &a, &t));
        a.waiting++;
        pid_t pid = mcp_resolver_pid(r);
        ASSERT_TRUE(pid > 0);
        ASSERT_OK(wait_answers(&a));
        ASSERT_EQ_INT(a.called, 41);
        ASSERT_EQ_INT(a.loopback, 40);
        ASSERT_EQ_INT(a.empty, 1);
        ASSERT_TRUE(strncmp(a.why, "name not resolved", 17) == 0);
        ASSERT_EQ_INT(mcp_resolver_pid(r), pid);
        /* The name as /proc shows it: this process holds it, the helper must not. */
        ASSERT_TRUE(helper_holds(getpid(), "/memfd:resolver-canary (deleted)"));
        ASSERT_FALSE(helper_holds(pid, "/memfd:resolver-canary (deleted)"));
        if (geteuid() == 0) {
                ASSERT_EQ_INT(status_field(pid, "Uid:"), 65534);
                ASSERT_EQ_INT(status_field(pid, "Gid:"), 65534);
        }
        ASSERT_EQ_INT(status_field(pid, "NoNewPrivs:"), 1);
        ASSERT_EQ_INT(status_field(pid, "CapEff:"), 0);
        close(canary);

        /* The helper dies with a lookup pending (stopped first, so that it cannot answer): no
         * address; the next lookup starts another. */
        ASSERT_OK(kill(pid, SIGSTOP));
        while (!stopped(pid))
                usleep(1000);
        a = (answers) { .loop = loop, .waiting = 1 };
        ASSERT_OK(mcp_resolver_ask(r, "localhost", on_answer, &a, &t));
        ASSERT_OK(kill(pid, SIGKILL));
        ASSERT_OK(wait_answers(&a));
        ASSERT_EQ_INT(a.called, 1);
        ASSERT_EQ_INT(a.empty, 1);
        ASSERT_STREQ(a.why, "name not resolved: the resolver helper died");
        ASSERT_EQ_INT(mcp_resolver_pid(r), 0);
        a = (answers) { .loop = loop, .waiting = 1 };
        ASSERT_OK(mcp_resolver_ask(r, "localhost", on_answer, &a, &t));
        ASSERT_OK(wait_answers(&a));
        ASSERT_EQ_INT(a.loopback, 1);
        ASSERT_TRUE(mcp_resolver_pid(r) > 0 && mcp_resolver_pid(r) != pid);
        mcp_resolver_free(r);
        mcp_loop_free(loop);
}

/* In a child with a mount namespace of its own: /etc/resolv.conf names a DNS server that
 * cannot answer (a documentation address, one try of one second). 0: the lookup's reason
 * says so. */
static int
lookup_without_dns(const char *conf)
{
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount(conf, "/etc/resolv.conf", NULL, MS_BIND, NULL) < 0)
                return 2;
        mcp_loop *loop = NULL;
        mcp_resolver *r = NULL;
        msp_err err = { 0 };
        uint64_t t;
        answers a = { .waiting = 1 };
        if (mcp_loop_new(&loop) < 0 || mcp_resolver_new(loop, &r, &err) < 0)
                return 3;
        a.loop = loop;
        if (mcp_resolver_ask(r, "nowhere.test", on_answer, &a, &t) < 0 || wait_answers(&a) < 0)
                return 4;
        tap_diag("without an answering DNS server: %s", a.why);
        return a.empty == 1 && strcmp(a.why, "name not resolved: no answer from the DNS server") == 0 ? 0 : 5;
}

TEST(no_dns_answer)
{
        char conf[] = "/tmp/msp-resolver-test-XXXXXX";
        int fd = mkstemp(conf);
        ASSERT_TRUE(fd >= 0);
        static const char text[] = "nameserver 192.0.2.1\noptions timeout:1 attempts:1\n";
        ASSERT_EQ_INT(write(fd, text, sizeof text - 1), (int) (sizeof text - 1));
        close(fd);
        pid_t pid = fork();
        if (pid == 0)
                _exit(lookup_without_dns(conf));
        int status = 0;
        ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
        unlink(conf);
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ_INT(WEXITSTATUS(status), 0);
}

int
main(void)
{
        RUN(lookups);
        if (geteuid() == 0)
                RUN(no_dns_answer);
        else
                tap_skip("no_dns_answer", "needs root (another /etc/resolv.conf in a mount namespace)");
        return tap_done();
}
