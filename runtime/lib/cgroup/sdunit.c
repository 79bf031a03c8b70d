/* A systemd manager's transient scope. The calls and their signatures are the manager's
 * D-Bus API (org.freedesktop.systemd1.Manager): StartTransientUnit(ssa(sv)a(sa(sv))) and
 * StopUnit(ss) return a job's object path; the job's end is the signal
 * JobRemoved(uoss: id, job, unit, result), sent to the client that queued the job and to
 * subscribers, which on a bus reaches a client only through a match rule. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cgroup/dbus.h"
#include "oci/oci.h"
#include "lib/cgroup/sdunit.h"

#define TIMEOUT_MS 30000        /* the bound on each call and on the job */
#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_IFACE "org.freedesktop.systemd1.Manager"

static void
close_conn(rt_dbus **c)
{
        if (*c) {
                rt_dbus_close(*c);
                free(*c);
        }
}

int
rt_sdunit_user_conn(rt_sdunit_conn *c, char *why, size_t whysz)
{
        const char *addr = getenv("DBUS_SESSION_BUS_ADDRESS");
        const char *xdg = getenv("XDG_RUNTIME_DIR");

        c->bus = true;
        if (addr && strncmp(addr, "unix:path=", 10) == 0) {
                size_t n = strcspn(addr + 10, ",;");
                if (n && n < sizeof c->path) {
                        memcpy(c->path, addr + 10, n);
                        c->path[n] = '\0';
                        return 0;
                }
        }
        if (xdg && *xdg == '/' && (size_t) snprintf(c->path, sizeof c->path, "%s/bus", xdg) < sizeof c->path)
                return 0;
        snprintf(why, whysz, "neither DBUS_SESSION_BUS_ADDRESS (a unix:path= address) nor "
                 "XDG_RUNTIME_DIR is set");
        return -ENOENT;
}

/* Send a call; its reply into *m (valid until the next receive). Signals that come first
 * go to on_signal. An error reply: -EIO with "NAME: message" in err. */
typedef void (*signal_fn)(const rt_dbus_msg *m, void *data);

static int
call(rt_dbus *c, const char *dest, const char *path, const char *iface, const char *member,
     const char *sig, const rt_dbus_w *body, rt_dbus_msg *m, signal_fn on_signal, void *data,
     msp_err *err)
{
        _cleanup_free_ rt_dbus_w *msg = malloc(sizeof *msg);
        uint32_t serial = rt_dbus_next_serial(c);
        long long deadline = rt_dbus_deadline(TIMEOUT_MS);
        int r;

        if (!msg)
                return msp_err_set(err, ENOMEM, "out of memory");
        if ((r = rt_dbus_build_call(msg, serial, dest, path, iface, member, sig, body)) < 0)
                return msp_err_sys(err, -r, "D-Bus %s", member);
        if ((r = rt_dbus_send(c, msg, TIMEOUT_MS, err)) < 0)
                return r;
        for (;;) {
                if ((r = rt_dbus_recv(c, deadline, m, err)) < 0)
                        return r;
                if (m->type == RT_DBUS_SIGNAL && on_signal)
                        on_signal(m, data);
                if ((m->type != RT_DBUS_RETURN && m->type != RT_DBUS_ERROR) || m->reply_serial != serial)
                        continue;
                if (m->type == RT_DBUS_RETURN)
                        return 0;
                const char *text = "";
                rt_dbus_r rd;
                rt_dbus_r_init(&rd, m->body, m->body_len);
                if (m->sig[0] == 's')
                        (void) rt_dbus_r_str(&rd, 's', &text);
                return msp_err_set(err, EIO, "%s: %s", m->error_name, text);
        }
}

/* The end of one unit's job, from JobRemoved. */
typedef struct job_watch {
        const char *unit;
        char job[256];          /* the job's path once the call returned it */
        char result[32];        /* "" until the job for unit ended */
        char seen_job[256];
} job_watch;

static void
on_job_removed(const rt_dbus_msg *m, void *data)
{
        job_watch *w = data;
        const char *job, *unit, *result;
        uint32_t id;
        rt_dbus_r r;

        if (!m->member || strcmp(m->member, "JobRemoved") != 0 || strcmp(m->sig, "uoss") != 0)
                return;
        rt_dbus_r_init(&r, m->body, m->body_len);
        if (rt_dbus_r_u32(&r, &id) < 0 || rt_dbus_r_str(&r, 'o', &job) < 0 ||
            rt_dbus_r_str(&r, 's', &unit) < 0 || rt_dbus_r_str(&r, 's', &result) < 0)
                return;
        if (strcmp(unit, w->unit) != 0 || (w->job[0] && strcmp(job, w->job) != 0))
                return;
        snprintf(w->seen_job, sizeof w->seen_job, "%s", job);
        snprintf(w->result, sizeof w->result, "%s", result);
}

/* Connect, and make sure JobRemoved reaches this connection before a job is queued. */
static int
open_manager(const rt_sdunit_conn *sc, rt_dbus **ret, msp_err *err)
{
        _cleanup_(close_conn) rt_dbus *c = calloc(1, sizeof *c);
        rt_dbus_w body;
        rt_dbus_msg m;
        int r;

        if (!c)
                return msp_err_set(err, ENOMEM, "out of memory");
        if ((r = rt_dbus_open(c, sc->path, sc->bus, TIMEOUT_MS, err)) < 0)
                return r;
        if (sc->bus) {
                rt_dbus_w_init(&body);
                rt_dbus_w_str(&body, 's', "type='signal',sender='" SD_DEST "',path='" SD_PATH "',"
                              "interface='" SD_IFACE "',member='JobRemoved'");
                if ((r = call(c, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                              "AddMatch", "s", &body, &m, NULL, NULL, err)) < 0)
                        return msp_err_prefix(err, "D-Bus AddMatch for JobRemoved");
        }
        rt_dbus_w_init(&body);
        if ((r = call(c, sc->bus ? SD_DEST : NULL, SD_PATH, SD_IFACE, "Subscribe", "", &body, &m,
                      NULL, NULL, err)) < 0)
                return msp_err_prefix(err, "systemd Subscribe");
        *ret = TAKE_PTR(c);
        return 0;
}

/* After a call that queued a job (reply "o"): wait for its JobRemoved; 0 when the job's
 * result is "done", -EIO naming the result otherwise. */
static int
wait_job(rt_dbus *c, const rt_dbus_msg *reply, job_watch *w, msp_err *err)
{
        long long deadline = rt_dbus_deadline(TIMEOUT_MS);
        const char *job;
        rt_dbus_msg m;
        rt_dbus_r r;
        int e;

        rt_dbus_r_init(&r, reply->body, reply->body_len);
        if (strcmp(reply->sig, "o") != 0 || rt_dbus_r_str(&r, 'o', &job) < 0)
                return msp_err_set(err, EPROTO, "the reply is no job path (signature '%s')", reply->sig);
        snprintf(w->job, sizeof w->job, "%s", job);
        if (w->result[0] && strcmp(w->seen_job, w->job) != 0)
                w->result[0] = '\0';
        while (!w->result[0]) {
                if ((e = rt_dbus_recv(c, deadline, &m, err)) < 0)
                        return msp_err_prefix(err, "wait for job %s", w->job);
                if (m.type == RT_DBUS_SIGNAL)
                        on_job_removed(&m, w);
        }
        if (strcmp(w->result, "done") != 0)
                return msp_err_set(err, EIO, "the job ended '%s'", w->result);
        return 0;
}

static void
w_prop(rt_dbus_w *b, const char *name, const char *sig)
{
        rt_dbus_w_struct(b);
        rt_dbus_w_str(b, 's', name);
        rt_dbus_w_variant(b, sig);
}

int
rt_sdunit_start_scope(const rt_sdunit_conn *sc, const char *unit, const char *slice, pid_t pid,
                      msp_err *err)
{
        _cleanup_(close_conn) rt_dbus *c = NULL;
        _cleanup_free_ rt_dbus_w *b = malloc(sizeof *b);
        job_watch w = { .unit = unit };
        char desc[256];
        size_t props, pids, aux;
        rt_dbus_msg m;
        int r;

        if (!b)
                return msp_err_set(err, ENOMEM, "out of memory");
        if ((r = open_manager(sc, &c, err)) < 0)
                return msp_err_prefix(err, "start unit %s", unit);
        snprintf(desc, sizeof desc, "msp container %s", unit);
        rt_dbus_w_init(b);
        rt_dbus_w_str(b, 's', unit);
        rt_dbus_w_str(b, 's', "fail");
        props = rt_dbus_w_array_begin(b, 8);
        w_prop(b, "Description", "s");
        rt_dbus_w_str(b, 's', desc);
        w_prop(b, "Slice", "s");
        rt_dbus_w_str(b, 's', slice);
        w_prop(b, "Delegate", "b");
        rt_dbus_w_bool(b, true);
        w_prop(b, "PIDs", "au");
        pids = rt_dbus_w_array_begin(b, 4);
        rt_dbus_w_u32(b, (uint32_t) pid);
        rt_dbus_w_array_end(b, pids);
        rt_dbus_w_array_end(b, props);
        aux = rt_dbus_w_array_begin(b, 8);
        rt_dbus_w_array_end(b, aux);
        r = call(c, sc->bus ? SD_DEST : NULL, SD_PATH, SD_IFACE, "StartTransientUnit",
                 "ssa(sv)a(sa(sv))", b, &m, on_job_removed, &w, err);
        if (r >= 0)
                r = wait_job(c, &m, &w, err);
        if (r < 0)
                return msp_err_prefix(err, "start unit %s", unit);
        return 0;
}

int
rt_sdunit_stop(const rt_sdunit_conn *sc, const char *unit, msp_err *err)
{
        _cleanup_(close_conn) rt_dbus *c = NULL;
        job_watch w = { .unit = unit };
        rt_dbus_w b;
        rt_dbus_msg m;
        int r;

        if ((r = open_manager(sc, &c, err)) < 0)
                return msp_err_prefix(err, "stop unit %s", unit);
        rt_dbus_w_init(&b);
        rt_dbus_w_str(&b, 's', unit);
        rt_dbus_w_str(&b, 's', "replace");
        r = call(c, sc->bus ? SD_DEST : NULL, SD_PATH, SD_IFACE, "StopUnit", "ss", &b, &m,
                 on_job_removed, &w, err);
        if (r < 0 && strstr(err->msg, "org.freedesktop.systemd1.NoSuchUnit:") == err->msg)
                return 0;
        if (r >= 0)
                r = wait_job(c, &m, &w, err);
        if (r < 0)
                return msp_err_prefix(err, "stop unit %s", unit);
        return 0;
}
