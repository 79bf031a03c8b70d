/* libFuzzer target for the spawn service's wire format (mcp-adapter/sandbox/spawn-proto.c),
 * which msp-sandbox-init decodes as pid 1 from whatever arrives on its socket. Beyond the
 * sanitizers it checks what the init relies on: an accepted request's cwd and strings lie
 * within the input, argv has 1..SPAWN_ARGC_MAX entries and envp at most SPAWN_ENVC_MAX,
 * both NULL-terminated, the cwd is absolute, and encoding the decoded request again gives
 * the input byte for byte (one message, one meaning); an accepted fixed message is exactly
 * its size with a known kind, and a CONNECT's port is 1..65535. Built only with clang
 * (tests/meson.build); run with tests/fuzz/run-fuzz.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/spawn-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct spawn_request req;
static char copy[SPAWN_MSG_MAX + 1];
static char again[SPAWN_MSG_MAX];

static int
inside(const char *p, size_t size)
{
        return p >= copy && p < copy + size;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > sizeof copy)
                return 0;
        struct spawn_msg m;
        if (spawn_msg_decode(data, size, &m) == 0 &&
            (size != sizeof m || m.kind < SPAWN_SHUTDOWN || m.kind > SPAWN_CONNECT_FAILED))
                abort();
        /* A port the init would connect to is a TCP port. */
        int port = spawn_msg_decode(data, size, &m) == 0 ? spawn_connect_port(&m) : -1;
        if (port >= 0 && (port < 1 || port > 65535 || m.kind != SPAWN_CONNECT))
                abort();
        memcpy(copy, data, size);
        if (spawn_request_decode(copy, size, &req) < 0)
                return 0;
        if (!inside(req.cwd, size) || req.cwd[0] != '/')
                abort();
        size_t argc = 0, envc = 0;
        for (; req.argv[argc]; argc++)
                if (argc >= SPAWN_ARGC_MAX || !inside(req.argv[argc], size))
                        abort();
        for (; req.envp[envc]; envc++)
                if (envc >= SPAWN_ENVC_MAX || !inside(req.envp[envc], size))
                        abort();
        if (argc < 1)
                abort();
        ssize_t n = spawn_request_encode(again, sizeof again, (const char *const *) req.argv,
                                         (const char *const *) req.envp, req.cwd);
        if (n != (ssize_t) size || memcmp(again, data, size) != 0)
                abort();
        return 0;
}
