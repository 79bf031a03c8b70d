/* The spawn service's messages, encoded and checked (see spawn-proto.h). libc only and no
 * allocation: msp-sandbox-init links this file too. */
#include "sandbox/spawn-proto.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

/* Appends s with its NUL at *at; false when it does not fit. */
static int
put_string(char *buf, size_t size, size_t *at, const char *s)
{
        size_t n = strlen(s) + 1;
        if (n > size - *at)
                return 0;
        memcpy(buf + *at, s, n);
        *at += n;
        return 1;
}

ssize_t
spawn_request_encode(char *buf, size_t size, const char *const *argv, const char *const *envp,
                     const char *cwd)
{
        if (!argv || !argv[0] || !cwd || cwd[0] != '/')
                return -EINVAL;
        if (size > SPAWN_MSG_MAX)
                size = SPAWN_MSG_MAX;
        if (size < sizeof(struct spawn_request_head))
                return -E2BIG;
        size_t at = sizeof(struct spawn_request_head), argc = 0, envc = 0;
        if (!put_string(buf, size, &at, cwd))
                return -E2BIG;
        for (; argv[argc]; argc++)
                if (argc == SPAWN_ARGC_MAX || !put_string(buf, size, &at, argv[argc]))
                        return -E2BIG;
        for (; envp && envp[envc]; envc++)
                if (envc == SPAWN_ENVC_MAX || !put_string(buf, size, &at, envp[envc]))
                        return -E2BIG;
        struct spawn_request_head h = {
                .magic = SPAWN_MAGIC, .kind = SPAWN_REQUEST, .argc = (uint16_t) argc,
                .envc = (uint16_t) envc,
                .strings_len = (uint32_t) (at - sizeof(struct spawn_request_head)),
        };
        memcpy(buf, &h, sizeof h);
        return (ssize_t) at;
}

int
spawn_request_decode(char *buf, size_t len, struct spawn_request *req)
{
        struct spawn_request_head h;
        if (len < sizeof h || len > SPAWN_MSG_MAX)
                return -EPROTO;
        memcpy(&h, buf, sizeof h);
        if (h.magic != SPAWN_MAGIC || h.kind != SPAWN_REQUEST || h.argc < 1 ||
            h.argc > SPAWN_ARGC_MAX || h.envc > SPAWN_ENVC_MAX ||
            h.strings_len != len - sizeof h || h.strings_len == 0 || buf[len - 1] != '\0')
                return -EPROTO;
        /* Each string starts after the previous NUL; the last byte is a NUL (checked
         * above), so no string runs past the message. */
        size_t want = 1 + (size_t) h.argc + h.envc, got = 0;
        char *s = buf + sizeof h, *end = buf + len;
        while (s < end) {
                if (got == want)
                        return -EPROTO;         /* more strings than counted */
                if (got == 0)
                        req->cwd = s;
                else if (got <= h.argc)
                        req->argv[got - 1] = s;
                else
                        req->envp[got - 1 - h.argc] = s;
                got++;
                s += strlen(s) + 1;
        }
        if (got != want || req->cwd[0] != '/')
                return -EPROTO;
        req->argv[h.argc] = NULL;
        req->envp[h.envc] = NULL;
        return 0;
}

struct spawn_msg
spawn_msg_make(enum spawn_kind kind, int32_t value)
{
        return (struct spawn_msg){ .magic = SPAWN_MAGIC, .kind = (uint32_t) kind, .value = value };
}

int
spawn_msg_decode(const void *buf, size_t len, struct spawn_msg *msg)
{
        if (len != sizeof *msg)
                return -EPROTO;
        memcpy(msg, buf, sizeof *msg);
        if (msg->magic != SPAWN_MAGIC || msg->kind < SPAWN_SHUTDOWN || msg->kind > SPAWN_CONNECT_FAILED)
                return -EPROTO;
        return 0;
}

int
spawn_connect_port(const struct spawn_msg *msg)
{
        if (msg->kind != SPAWN_CONNECT || msg->value < 1 || msg->value > 65535)
                return -EPROTO;
        return msg->value;
}

int
spawn_send(int fd, const void *buf, size_t n, const int *fds, size_t nfds)
{
        struct iovec iov = { .iov_base = (void *) buf, .iov_len = n };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(3 * sizeof(int))];
        } ctl;
        struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (nfds > 3)
                return -EINVAL;
        if (nfds > 0) {
                memset(&ctl, 0, sizeof ctl);
                msg.msg_control = ctl.buf;
                msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
                struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
                memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
        }
        for (;;) {
                ssize_t r = sendmsg(fd, &msg, MSG_NOSIGNAL);
                if (r >= 0)
                        return (size_t) r == n ? 0 : -EMSGSIZE;
                if (errno != EINTR)
                        return -errno;
        }
}
