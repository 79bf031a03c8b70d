/* A cell's output (kernel-cell.h): each stream bounded by MCP_KERNEL_STREAM_MAX, the whole
 * cell by MCP_KERNEL_CELL_MAX; what does not fit is dropped and marked truncated. */
#include "kernel/kernel-cell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/oci.h"

static void
buf_free(mcp_kernel_buf *b)
{
        free(b->data);
        *b = (mcp_kernel_buf){ 0 };
}

void
kernel_cell_clear(mcp_kernel_cell *c)
{
        buf_free(&c->out);
        buf_free(&c->err);
        buf_free(&c->result);
        buf_free(&c->display);
        buf_free(&c->ename);
        buf_free(&c->evalue);
        buf_free(&c->traceback);
        for (size_t i = 0; i < c->n_images; i++)
                buf_free(&c->images[i].data);
        *c = (mcp_kernel_cell){ 0 };
}

void
mcp_kernel_cell_clear(mcp_kernel_cell *c)
{
        kernel_cell_clear(c);
}

/* Appends up to limit bytes in b (and what the cell may still keep). */
static void
buf_append(mcp_kernel_cell *c, mcp_kernel_buf *b, size_t limit, const char *s, size_t len)
{
        size_t room = b->len < limit ? limit - b->len : 0;
        if (MCP_KERNEL_CELL_MAX - c->kept < room)
                room = MCP_KERNEL_CELL_MAX - c->kept;
        if (len > room) {
                c->truncated = true;
                len = room;
        }
        if (len == 0)
                return;
        char *n = realloc(b->data, b->len + len + 1);
        if (!n) {
                c->truncated = true;
                return;
        }
        memcpy(n + b->len, s, len);
        b->len += len;
        n[b->len] = '\0';
        b->data = n;
        c->kept += len;
}

static void
buf_append_str(mcp_kernel_cell *c, mcp_kernel_buf *b, size_t limit, const char *s)
{
        if (s)
                buf_append(c, b, limit, s, strlen(s));
}

static const oci_json *
content(const kernel_msg *m, const char *key)
{
        return oci_json_get(oci_json_doc_root(m->content), key);
}

/* Kernels may send a mime bundle's text as a string or as an array of lines. */
static void
append_text(mcp_kernel_cell *c, mcp_kernel_buf *b, size_t limit, const oci_json *v)
{
        if (kernel_json_is(v, OCI_JSON_ARRAY)) {
                for (size_t i = 0; i < oci_json_len(v); i++)
                        buf_append_str(c, b, limit, kernel_json_str(oci_json_value_at(v, i)));
                return;
        }
        buf_append_str(c, b, limit, kernel_json_str(v));
}

static void
add_image(mcp_kernel_cell *c, const char *mime, const oci_json *v)
{
        if (!v)
                return;
        if (c->n_images >= MCP_KERNEL_IMAGES_MAX) {
                c->truncated = true;
                return;
        }
        mcp_kernel_image *img = &c->images[c->n_images];
        bool was = c->truncated;
        c->truncated = false;
        append_text(c, &img->data, MCP_KERNEL_CELL_MAX, v);
        /* A cut image is not an image: drop it whole. */
        if (c->truncated || !img->data.data) {
                c->kept -= img->data.len;
                buf_free(&img->data);
                c->truncated = true;
                return;
        }
        c->truncated = was;
        img->mime = mime;
        c->n_images++;
}

/* execute_result and display_data: the images, and text/plain when there is none. */
static void
mime_bundle(mcp_kernel_cell *c, const oci_json *data, mcp_kernel_buf *text)
{
        size_t before = c->n_images;
        add_image(c, "image/png", oci_json_get(data, "image/png"));
        add_image(c, "image/svg+xml", oci_json_get(data, "image/svg+xml"));
        if (text == &c->result || c->n_images == before)
                append_text(c, text, MCP_KERNEL_STREAM_MAX, oci_json_get(data, "text/plain"));
}

static void
error_fields(mcp_kernel_cell *c, const kernel_msg *m)
{
        if (c->ename.data)
                return;         /* iopub's error and the reply's say the same */
        buf_append_str(c, &c->ename, 256, kernel_json_str(content(m, "ename")));
        buf_append_str(c, &c->evalue, MCP_KERNEL_STREAM_MAX, kernel_json_str(content(m, "evalue")));
        const oci_json *tb = content(m, "traceback");
        for (size_t i = 0; kernel_json_is(tb, OCI_JSON_ARRAY) && i < oci_json_len(tb); i++) {
                if (i)
                        buf_append(c, &c->traceback, MCP_KERNEL_STREAM_MAX, "\n", 1);
                buf_append_str(c, &c->traceback, MCP_KERNEL_STREAM_MAX,
                               kernel_json_str(oci_json_value_at(tb, i)));
        }
}

void
kernel_cell_iopub(mcp_kernel_cell *c, const kernel_msg *m)
{
        const char *t = m->msg_type;
        if (strcmp(t, "stream") == 0) {
                const char *name = kernel_json_str(content(m, "name"));
                mcp_kernel_buf *b = name && strcmp(name, "stderr") == 0 ? &c->err : &c->out;
                append_text(c, b, MCP_KERNEL_STREAM_MAX, content(m, "text"));
        } else if (strcmp(t, "execute_result") == 0) {
                mime_bundle(c, content(m, "data"), &c->result);
        } else if (strcmp(t, "display_data") == 0 || strcmp(t, "update_display_data") == 0) {
                mime_bundle(c, content(m, "data"), &c->display);
        } else if (strcmp(t, "error") == 0) {
                error_fields(c, m);
        } else if (strcmp(t, "status") == 0) {
                const char *state = kernel_json_str(content(m, "execution_state"));
                if (state && strcmp(state, "idle") == 0)
                        c->got_idle = true;
        }
}

void
kernel_cell_reply(mcp_kernel_cell *c, const kernel_msg *m)
{
        const char *status = kernel_json_str(content(m, "status"));
        snprintf(c->status, sizeof c->status, "%s", status ? status : "");
        const char *count = kernel_json_num(content(m, "execution_count"));
        c->execution_count = count ? strtoll(count, NULL, 10) : 0;
        if (status && strcmp(status, "error") == 0)
                error_fields(c, m);
        c->got_reply = true;
}
