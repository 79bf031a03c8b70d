/* A port of a live session's sandbox reached from outside it (engine.h): the sandbox's
 * pid 1 makes the socket in the sandbox's network namespace (the spawn service's CONNECT)
 * and hands it over; ports/ relays it. */
#include <errno.h>

#include "engine/engine-int.h"
#include "engine/engine.h"
#include "engine/live.h"
#include "session/session.h"
#include "sandbox/sandbox.h"

int
mcp_engine_port_check(mcp_engine *e, const char *session_id, msp_err *err)
{
        mcp_session_info info;
        if (!mcp_live_find(e, session_id) || mcp_session_get(e->sessions, session_id, &info, err) < 0)
                return msp_err_set(err, ENOENT, "session %s: no such session (expired or closed?)",
                                   session_id);
        /* Its Landlock domain, pid 1's included, allows TCP to the egress proxy's port only:
         * the kernel would refuse pid 1's connect to any other port. */
        if (info.allow && info.allow->n > 0)
                return msp_err_set(err, EPERM, "session %s has a network allowlist, and the "
                                   "sandbox of such a session may open TCP connections only to "
                                   "its egress proxy, so its ports cannot be reached; expose "
                                   "ports of a session without network_allow", session_id);
        return 0;
}

int
mcp_engine_port_connect(mcp_engine *e, const char *session_id, uint16_t port, int *ret_fd,
                        msp_err *err)
{
        if (port == 0)
                return msp_err_set(err, EINVAL, "port 0");
        int r = mcp_engine_port_check(e, session_id, err);
        if (r < 0)
                return r;
        mcp_live *l = mcp_live_find(e, session_id);
        if ((r = mcp_live_ensure(l, err)) < 0)
                return r;
        if ((r = spawn_client_connect_port(l->sock_path, port, ret_fd, err)) < 0)
                return msp_err_prefix(err, "session %s: port %u", session_id, (unsigned) port);
        return 0;
}
