/* The egress proxy's resolver helper (see resolver.h). */
#include "egress/resolver.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "oci/oci.h"
#include "egress/proxy-policy.h"

#define HELPER_THREADS 16       /* lookups at once in the helper */
#define NOBODY 65534

typedef struct request {
        uint64_t id;
        char host[MCP_EGRESS_HOST_MAX + 1];
} request;

typedef struct answer {
        uint64_t id;
        int32_t gai;                    /* getaddrinfo's return */
        uint32_t n;
        struct {
                sa_family_t family;
                unsigned char addr[16];
        } addrs[MCP_RESOLVER_MAX_ADDRS];
} answer;

typedef struct pending {
        struct pending *next;
        uint64_t id;
        mcp_resolved_fn fn;
        void *data;
} pending;

struct mcp_resolver {
        mcp_loop *loop;
        int fd;                 /* our end; -1: no helper */
        pid_t pid;
        uint64_t next_id;
        pending *pending;
};

/* ---- the helper ---- */

static int helper_fd;
static sem_t helper_slots;

static void *
lookup(void *arg)
{
        request *q = arg;
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
        struct addrinfo *res = NULL;
        answer a = { .id = q->id };
        a.gai = getaddrinfo(q->host, NULL, &hints, &res);
        if (a.gai == 0) {
                for (struct addrinfo *ai = res; ai && a.n < MCP_RESOLVER_MAX_ADDRS; ai = ai->ai_next) {
                        a.addrs[a.n].family = (sa_family_t) ai->ai_family;
                        if (ai->ai_family == AF_INET)
                                memcpy(a.addrs[a.n++].addr,
                                       &((struct sockaddr_in *) ai->ai_addr)->sin_addr, 4);
                        else if (ai->ai_family == AF_INET6)
                                memcpy(a.addrs[a.n++].addr,
                                       &((struct sockaddr_in6 *) ai->ai_addr)->sin6_addr, 16);
                }
                freeaddrinfo(res);
        }
        /* One datagram per answer: threads cannot interleave them. */
        (void) !send(helper_fd, &a, sizeof a, MSG_NOSIGNAL);
        free(q);
        sem_post(&helper_slots);
        return NULL;
}

/* Nothing of msp-mcp's stays open but stderr and the socket; no privileges. */
static int
helper_confine(int fd, pid_t parent)
{
        if (mcp_child_keep_only(fd, parent) < 0)
                return -1;
        if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
                               setresuid(NOBODY, NOBODY, NOBODY) < 0))
                return -1;
        return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

_noreturn_ static void
helper_main(int fd, pid_t parent)
{
        if (helper_confine(fd, parent) < 0 || sem_init(&helper_slots, 0, HELPER_THREADS) < 0)
                _exit(1);
        helper_fd = 3;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        for (;;) {
                request *q = malloc(sizeof *q);
                if (!q)
                        _exit(1);
                ssize_t n = recv(helper_fd, q, sizeof *q, 0);
                if (n == 0 || (n < 0 && errno != EINTR))
                        _exit(0);       /* msp-mcp closed its end */
                if (n != (ssize_t) sizeof *q) {
                        free(q);
                        continue;
                }
                q->host[MCP_EGRESS_HOST_MAX] = '\0';
                while (sem_wait(&helper_slots) < 0)
                        ;
                pthread_t t;
                if (pthread_create(&t, &attr, lookup, q) != 0)
                        lookup(q);
        }
}

/* ---- msp-mcp's side ---- */

static void
helper_stop(mcp_resolver *r)
{
        if (r->fd >= 0) {
                mcp_loop_del_io(r->loop, r->fd);
                close(r->fd);
                r->fd = -1;
        }
        if (r->pid > 0) {
                (void) kill(r->pid, SIGKILL);
                (void) waitpid(r->pid, NULL, 0);
                r->pid = 0;
        }
}

/* Why a lookup found no address: a name that does not exist, or a DNS server that did not
 * answer (no route out), told apart. */
static const char *
lookup_error(int gai)
{
        switch (gai) {
        case EAI_AGAIN:
                return "name not resolved: no answer from the DNS server";
        case EAI_FAIL:
                return "name not resolved: the DNS server failed";
        case EAI_SYSTEM:
        case EAI_MEMORY:
                return "name not resolved: the resolver failed";
        default:
                return "name not resolved";
        }
}

/* The helper is gone: every pending lookup gets no address. */
static void
helper_lost(mcp_resolver *r)
{
        helper_stop(r);
        while (r->pending) {
                pending *p = r->pending;
                r->pending = p->next;
                p->fn(NULL, 0, "name not resolved: the resolver helper died", p->data);
                free(p);
        }
}

static int
on_answer(mcp_loop *l, int fd, uint32_t events, void *data)
{
        (void) l;
        (void) events;
        mcp_resolver *r = data;
        for (;;) {
                answer a;
                ssize_t n = recv(fd, &a, sizeof a, MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return 0;
                if (n != (ssize_t) sizeof a || a.n > MCP_RESOLVER_MAX_ADDRS) {
                        helper_lost(r);
                        return 0;
                }
                pending **pp = &r->pending;
                while (*pp && (*pp)->id != a.id)
                        pp = &(*pp)->next;
                if (!*pp)
                        continue;       /* cancelled */
                pending *p = *pp;
                *pp = p->next;
                struct sockaddr_storage addrs[MCP_RESOLVER_MAX_ADDRS];
                for (uint32_t i = 0; i < a.n; i++) {
                        memset(&addrs[i], 0, sizeof addrs[i]);
                        addrs[i].ss_family = a.addrs[i].family;
                        if (a.addrs[i].family == AF_INET)
                                memcpy(&((struct sockaddr_in *) &addrs[i])->sin_addr, a.addrs[i].addr, 4);
                        else
                                memcpy(&((struct sockaddr_in6 *) &addrs[i])->sin6_addr, a.addrs[i].addr, 16);
                }
                p->fn(addrs, a.n, a.n ? NULL : lookup_error(a.gai), p->data);
                free(p);
        }
}

static int
helper_start(mcp_resolver *r)
{
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid == 0) {
                close(sv[0]);
                helper_main(sv[1], parent);
        }
        int e = errno;
        close(sv[1]);
        if (pid < 0) {
                close(sv[0]);
                return -e;
        }
        r->fd = sv[0];
        r->pid = pid;
        if (mcp_loop_add_io(r->loop, r->fd, EPOLLIN, on_answer, r) < 0) {
                helper_stop(r);
                return -ENOMEM;
        }
        return 0;
}

int
mcp_resolver_new(mcp_loop *loop, mcp_resolver **ret, msp_err *err)
{
        mcp_resolver *r = calloc(1, sizeof *r);
        if (!r)
                return msp_err_set(err, ENOMEM, "resolver: out of memory");
        *r = (mcp_resolver) { .loop = loop, .fd = -1 };
        *ret = r;
        return 0;
}

mcp_resolver *
mcp_resolver_free(mcp_resolver *r)
{
        if (!r)
                return NULL;
        helper_stop(r);
        while (r->pending) {
                pending *p = r->pending;
                r->pending = p->next;
                free(p);
        }
        free(r);
        return NULL;
}

int
mcp_resolver_ask(mcp_resolver *r, const char *host, mcp_resolved_fn fn, void *data,
                 uint64_t *ticket)
{
        request q = { .id = ++r->next_id };
        if (strlen(host) > MCP_EGRESS_HOST_MAX)
                return -ENAMETOOLONG;
        strcpy(q.host, host);
        pending *p = malloc(sizeof *p);
        if (!p)
                return -ENOMEM;
        int e = r->fd < 0 ? helper_start(r) : 0;
        /* A full socket buffer (a helper that stopped reading) counts as a lost helper. */
        if (e == 0 && send(r->fd, &q, sizeof q, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t) sizeof q) {
                e = -errno;
                helper_lost(r);
        }
        if (e < 0) {
                free(p);
                return e;
        }
        *p = (pending) { .next = r->pending, .id = q.id, .fn = fn, .data = data };
        r->pending = p;
        *ticket = q.id;
        return 0;
}

void
mcp_resolver_cancel(mcp_resolver *r, uint64_t ticket)
{
        for (pending **pp = &r->pending; *pp; pp = &(*pp)->next)
                if ((*pp)->id == ticket) {
                        pending *p = *pp;
                        *pp = p->next;
                        free(p);
                        return;
                }
}

pid_t
mcp_resolver_pid(const mcp_resolver *r)
{
        return r->pid;
}
