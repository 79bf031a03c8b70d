/* The stdio relay: which fds count as terminals, the pipes made for them, and the copy
 * in both directions with EOF passed on (stdin) and everything drained (output). Each
 * case puts a pty on fds 0-2 in a forked child, which reports by its exit status. */
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>

#include "lib/relay.h"

#include "tests/lib/tap.h"

static void
test_is_terminal(void)
{
        int p[2], sv[2], master, slave;

        CHECK(pipe2(p, O_CLOEXEC) == 0);
        CHECK(!rt_stdio_is_terminal(p[0]) && !rt_stdio_is_terminal(p[1]));
        CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        CHECK(!rt_stdio_is_terminal(sv[0]));
        int null = open("/dev/null", O_RDWR | O_CLOEXEC), zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
        CHECK(null >= 0 && zero >= 0);
        CHECK(!rt_stdio_is_terminal(null) && !rt_stdio_is_terminal(zero));
        int file = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
        CHECK(file >= 0 && !rt_stdio_is_terminal(file));
        CHECK(!rt_stdio_is_terminal(99));
        CHECK(openpty(&master, &slave, NULL, NULL, NULL) == 0);
        CHECK(rt_stdio_is_terminal(slave) && rt_stdio_is_terminal(master));
        /* a master from /dev/ptmx (a char device, not of the memory major) */
        int ptmx = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        CHECK(ptmx >= 0 && rt_stdio_is_terminal(ptmx));
}

/* fds 0-2 onto fd (the caller's stdout saved first: the TAP stream). */
static void
stdio_onto(int fd)
{
        for (int i = 0; i < 3; i++)
                CHECK(dup2(fd, i) == i);
}

static ino_t
ino(int fd)
{
        struct stat st;

        return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

static void
test_open(void)
{
        int master, slave, p[2];
        rt_stdio_relay r;
        msp_err e;

        CHECK(openpty(&master, &slave, NULL, NULL, NULL) == 0);
        stdio_onto(slave);
        CHECK_OK(rt_stdio_relay_open(&r, &e), e);
        CHECK(r.child[0] > 2 && r.child[1] > 2 && r.child[2] > 2);
        /* stdout and stderr are the same terminal: one pipe keeps their order */
        CHECK(ino(r.child[1]) == ino(r.child[2]) && ino(r.child[0]) != ino(r.child[1]));
        CHECK(r.link[2].from < 0);
        CHECK(fcntl(r.child[1], F_GETFD) & FD_CLOEXEC);
        /* the process's ends block; ours do not */
        CHECK(!(fcntl(r.child[0], F_GETFL) & O_NONBLOCK));
        CHECK(fcntl(r.link[0].to, F_GETFL) & O_NONBLOCK);
        rt_stdio_relay_done(&r);
        CHECK(r.child[0] < 0 && r.link[0].to < 0 && r.link[1].from < 0);
        rt_stdio_relay_done(&r);
        rt_stdio_relay_done(NULL);

        CHECK(pipe2(p, O_CLOEXEC) == 0);
        stdio_onto(p[1]);
        CHECK_OK(rt_stdio_relay_open(&r, &e), e);
        CHECK(r.child[0] < 0 && r.child[1] < 0 && r.child[2] < 0);
        CHECK(r.link[0].from < 0 && r.link[1].from < 0);
        rt_stdio_relay_done(&r);
}

static void
pump(rt_stdio_relay *r, bool (*more)(const rt_stdio_relay *))
{
        struct pollfd p[RT_RELAY_LINKS];

        while (more(r)) {
                rt_stdio_relay_pollfds(r, p);
                CHECK(poll(p, RT_RELAY_LINKS, 5000) > 0);
                rt_stdio_relay_handle(r, p);
        }
}

static bool
input_open(const rt_stdio_relay *r)
{
        return r->link[0].from >= 0;
}

static void
test_copy(void)
{
        int master, slave, tap = dup(1);
        rt_stdio_relay r;
        char buf[64] = "";
        msp_err e;

        CHECK(tap >= 0 && openpty(&master, &slave, NULL, NULL, NULL) == 0);
        stdio_onto(slave);
        CHECK_OK(rt_stdio_relay_open(&r, &e), e);
        int in = dup(r.child[0]), out = dup(r.child[1]);
        rt_stdio_relay_started(&r);
        CHECK(r.child[0] < 0);
        /* typed on the terminal, then Ctrl-D: the line, then EOF on the process's side */
        CHECK(write(master, "hi\n\x04", 4) == 4);
        pump(&r, input_open);
        CHECK(read(in, buf, sizeof buf) == 3 && memcmp(buf, "hi\n", 3) == 0);
        CHECK(read(in, buf, sizeof buf) == 0);
        /* what the process wrote before its end reaches the terminal, then the link ends */
        CHECK(write(out, "out", 3) == 3);
        close(out);
        pump(&r, rt_stdio_relay_busy);
        dup2(tap, 1);
        /* after the echo of the input */
        char term[256] = "";
        size_t len = 0;
        struct pollfd pm = { .fd = master, .events = POLLIN };
        while (!strstr(term, "out") && len < sizeof term - 1 && poll(&pm, 1, 5000) > 0) {
                ssize_t n = read(master, term + len, sizeof term - 1 - len);
                CHECK(n > 0);
                len += (size_t) n;
        }
        CHECK(strstr(term, "out"));
        rt_stdio_relay_done(&r);
}

int
main(void)
{
        static const tap_fork_test tests[] = {
                { "terminals: ttys and char devices but the memory ones; not pipes, files, sockets", test_is_terminal },
                { "pipes for the terminals among fds 0-2 only; stderr shares stdout's", test_open },
                { "input with its EOF to the process, its output drained to the terminal", test_copy },
        };
        return tap_run_table(tests, ARRAY_SIZE(tests));
}
