/* port_expose and the table of exposed ports (tools-ports.h). */
#include "mcp/tools-ports.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mcp/tools-audit.h"
#include "ports/ports.h"

typedef struct exposed {
        struct exposed *next;
        char session_id[SESSION_ID_MAX + 1];
        uint16_t port;
        mcp_port_listener *listener;    /* stdio; NULL over HTTP */
        char url[512];
} exposed;

struct mcp_ports {
        mcp_loop *loop;
        mcp_engine *engine;
        char *base_url;                 /* NULL: stdio */
        exposed *list;
};

static void
exposed_free(exposed *x)
{
        mcp_port_listener_free(x->listener);
        free(x);
}

/* The session went: its URLs refuse from now on (a listener closes, and its connections). */
static void
on_session_gone(const char *session_id, void *data)
{
        mcp_ports *p = data;
        for (exposed **x = &p->list; *x;) {
                if (strcmp((*x)->session_id, session_id) == 0) {
                        exposed *dead = *x;
                        *x = dead->next;
                        exposed_free(dead);
                } else {
                        x = &(*x)->next;
                }
        }
}

int
mcp_ports_new(mcp_loop *loop, mcp_engine *engine, const char *base_url, mcp_ports **ret)
{
        mcp_ports *p = calloc(1, sizeof *p);
        if (!p)
                return -ENOMEM;
        p->loop = loop;
        p->engine = engine;
        if (base_url && !(p->base_url = strdup(base_url))) {
                free(p);
                return -ENOMEM;
        }
        mcp_engine_set_session_gone(engine, on_session_gone, p);
        *ret = p;
        return 0;
}

mcp_ports *
mcp_ports_free(mcp_ports *p)
{
        if (!p)
                return NULL;
        mcp_engine_set_session_gone(p->engine, NULL, NULL);
        while (p->list) {
                exposed *x = p->list;
                p->list = x->next;
                exposed_free(x);
        }
        free(p->base_url);
        free(p);
        return NULL;
}

static exposed *
find(const mcp_ports *p, const char *session_id, uint16_t port)
{
        for (exposed *x = p ? p->list : NULL; x; x = x->next)
                if (x->port == port && strcmp(x->session_id, session_id) == 0)
                        return x;
        return NULL;
}

bool
mcp_ports_exposed(const mcp_ports *p, const char *session_id, uint16_t port)
{
        return find(p, session_id, port) != NULL;
}

unsigned
mcp_ports_of(const mcp_ports *p, const char *session_id, uint16_t *ports, unsigned max)
{
        unsigned n = 0;
        for (exposed *x = p ? p->list : NULL; x; x = x->next)
                if (strcmp(x->session_id, session_id) == 0) {
                        if (n < max && ports)
                                ports[n] = x->port;
                        n++;
                }
        return n;
}

static int
listener_connect(void *data, const char *session_id, uint16_t port, int *ret_fd, msp_err *err)
{
        mcp_ports *p = data;
        return mcp_engine_port_connect(p->engine, session_id, port, ret_fd, err);
}

static int
expose(mcp_ports *p, const char *session_id, uint16_t port, exposed **ret, msp_err *err)
{
        exposed *x = calloc(1, sizeof *x);
        if (!x)
                return msp_err_set(err, ENOMEM, "out of memory");
        snprintf(x->session_id, sizeof x->session_id, "%s", session_id);
        x->port = port;
        if (p->base_url) {
                snprintf(x->url, sizeof x->url, "%s/sessions/%s/ports/%u/", p->base_url, session_id,
                         (unsigned) port);
        } else {
                int r = mcp_port_listener_new(p->loop, listener_connect, p, session_id, port,
                                              &x->listener, err);
                if (r < 0) {
                        free(x);
                        return r;
                }
                snprintf(x->url, sizeof x->url, "%s", mcp_port_listener_url(x->listener));
        }
        x->next = p->list;
        p->list = x;
        *ret = x;
        return 0;
}

static void
write_exposed(oci_jw *w, const void *ctx)
{
        const exposed *x = ctx;
        oci_jw_begin_object(w);
        oci_jw_kv_string(w, "url", x->url);
        oci_jw_kv_uint64(w, "port", x->port);
        oci_jw_key(w, "session_id");
        mcp_jw_text(w, x->session_id);
        oci_jw_end_object(w);
}

void
mcp_tool_port_expose(mcp_server *srv, const mcp_rpc_id *id, targs *a, const mcp_rpc_id *token _unused_)
{
        const char *sid;
        uint64_t port = 0;
        if (mcp_arg_str(a, "session_id", true, SESSION_ID_MAX, &sid) < 0 ||
            mcp_arg_uint(a, "port", 1, 65535, &port) < 0) {
                mcp_tool_error(srv, id, a->msg);
                return;
        }
        if (port == 0) {
                mcp_tool_error(srv, id, "port: required (1 to 65535)");
                return;
        }
        if (!srv->engine || !srv->ports) {
                mcp_tool_error(srv, id, "ports are not available");
                return;
        }
        char q[96];
        oci_json_quote(sid, q, sizeof q);
        msp_err err = { 0 };
        /* Another tenant's session is one that does not exist. */
        int r = mcp_server_owns(srv, sid) ? mcp_engine_port_check(srv->engine, sid, &err) : -ENOENT;
        if (r == -ENOENT) {
                mcp_tool_errorf(srv, id, "session_id: %s: no such session (expired or closed?)", q);
                return;
        }
        if (r < 0) {
                mcp_tool_errno(srv, id, r, &err, "port_expose");
                return;
        }
        exposed *x = find(srv->ports, sid, (uint16_t) port);
        if (!x) {
                if (mcp_ports_of(srv->ports, sid, NULL, 0) >= MCP_PORTS_PER_SESSION) {
                        mcp_tool_errorf(srv, id, "port_expose: session %s has %u exposed ports "
                                        "already, the most a session may have", q,
                                        MCP_PORTS_PER_SESSION);
                        return;
                }
                if ((r = expose(srv->ports, sid, (uint16_t) port, &x, &err)) < 0) {
                        mcp_tool_errno(srv, id, r, &err, "port_expose");
                        return;
                }
                mcp_audit_port(srv, sid, (uint16_t) port);
        }
        mcp_tool_structured(srv, id, write_exposed, x);
}
