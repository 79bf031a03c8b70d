/* The listening socket of --listen: a TCP address (loopback unless a host is named) or a
 * unix socket. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "http/http-listen.h"
#include "oci/oci.h"

#define BACKLOG 128

static int
listen_unix(const char *path, int *ret_fd, char **ret_url, msp_err *err)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        if (!*path || strlen(path) >= sizeof sa.sun_path)
                return msp_err_set(err, EINVAL, "--listen unix:%s: the path must be 1 to %zu bytes",
                                   path, sizeof sa.sun_path - 1);
        memcpy(sa.sun_path, path, strlen(path));
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return msp_err_sys(err, errno, "--listen unix:%s: socket", path);
        /* A socket left by a server that is gone is replaced; any other file is not. */
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
                (void) unlink(path);
        if (bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, BACKLOG) < 0)
                return msp_err_sys(err, errno, "--listen unix:%s", path);
        if (asprintf(ret_url, "unix:%s", path) < 0)
                return msp_err_set(err, ENOMEM, "out of memory");
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static bool
is_loopback(const struct sockaddr *sa)
{
        if (sa->sa_family == AF_INET)
                return (ntohl(((const struct sockaddr_in *) sa)->sin_addr.s_addr) >> 24) == 127;
        if (sa->sa_family == AF_INET6)
                return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *) sa)->sin6_addr);
        return false;
}

/* "[::1]:8080", "0.0.0.0:8080", "8080" (loopback): host and port. */
static int
split_host_port(const char *spec, char *host, size_t hsize, const char **ret_port, msp_err *err)
{
        const char *port = NULL;
        size_t hlen;
        if (spec[0] == '[') {
                const char *end = strchr(spec, ']');
                if (!end || end[1] != ':')
                        return msp_err_set(err, EINVAL, "--listen \"%s\": expected [ADDRESS]:PORT", spec);
                hlen = (size_t) (end - spec - 1);
                spec++;
                port = end + 2;
        } else if (strchr(spec, ':')) {
                port = strrchr(spec, ':') + 1;
                hlen = (size_t) (port - spec - 1);
        } else {
                port = spec;
                spec = "127.0.0.1";
                hlen = strlen(spec);
        }
        if (hlen == 0) {
                spec = "127.0.0.1";
                hlen = strlen(spec);
        }
        if (hlen >= hsize || !*port || strspn(port, "0123456789") != strlen(port))
                return msp_err_set(err, EINVAL, "--listen: expected HOST:PORT, PORT or unix:PATH");
        memcpy(host, spec, hlen);
        host[hlen] = '\0';
        *ret_port = port;
        return 0;
}

int
mcp_http_listen(const char *spec, int *ret_fd, bool *ret_local, char **ret_url, msp_err *err)
{
        if (strncmp(spec, "unix:", 5) == 0) {
                *ret_local = true;
                return listen_unix(spec + 5, ret_fd, ret_url, err);
        }
        char host[256];
        const char *port = NULL;
        int r = split_host_port(spec, host, sizeof host, &port, err);
        if (r < 0)
                return r;
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                                  .ai_flags = AI_NUMERICSERV | AI_PASSIVE }, *ai = NULL;
        int g = getaddrinfo(host, port, &hints, &ai);
        if (g != 0)
                return msp_err_set(err, EINVAL, "--listen \"%s\": %s", spec, gai_strerror(g));
        _cleanup_close_ int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                                        0);
        int one = 1;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
            bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, BACKLOG) < 0) {
                int e = errno;
                freeaddrinfo(ai);
                return msp_err_sys(err, e, "--listen %s", spec);
        }
        *ret_local = is_loopback(ai->ai_addr);
        freeaddrinfo(ai);

        /* The port the kernel chose for :0. */
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        char addr[INET6_ADDRSTRLEN] = "?";
        unsigned p = 0;
        if (getsockname(fd, (struct sockaddr *) &ss, &len) == 0) {
                if (ss.ss_family == AF_INET) {
                        struct sockaddr_in *in = (struct sockaddr_in *) &ss;
                        inet_ntop(AF_INET, &in->sin_addr, addr, sizeof addr);
                        p = ntohs(in->sin_port);
                } else {
                        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) &ss;
                        inet_ntop(AF_INET6, &in6->sin6_addr, addr, sizeof addr);
                        p = ntohs(in6->sin6_port);
                }
        }
        bool v6 = ss.ss_family == AF_INET6;
        if (asprintf(ret_url, "http://%s%s%s:%u/mcp", v6 ? "[" : "", addr, v6 ? "]" : "", p) < 0)
                return msp_err_set(err, ENOMEM, "out of memory");
        *ret_fd = TAKE_FD(fd);
        return 0;
}
