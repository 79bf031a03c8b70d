/* Each sandbox's own host ids (sandbox-slices.h). */
#include "sandbox/sandbox-slices.h"

#include <errno.h>
#include <stdlib.h>

#include "sandbox/sandbox-ids.h"

struct mcp_slices {
        unsigned n;
        unsigned first, size;
        bool shared, images;
        unsigned *refs;                 /* n counts; 0: free */
        unsigned next;                  /* where the next search starts: the least recently
                                         * freed slots are reused last */
};

int
mcp_slices_new(unsigned n, unsigned first, unsigned size, bool shared, mcp_slices **ret,
               msp_err *err)
{
        if (n == 0)
                return msp_err_set(err, EINVAL, "sandbox id slices: none");
        mcp_slices *s = calloc(1, sizeof *s);
        if (s)
                s->refs = calloc(n, sizeof *s->refs);
        if (!s || !s->refs) {
                free(s);
                return msp_err_set(err, ENOMEM, "out of memory");
        }
        s->n = shared ? 1 : n;
        s->shared = shared;
        s->first = shared ? MCP_SANDBOX_HOST_BASE : first;
        s->size = shared ? MCP_SANDBOX_ID_COUNT : size;
        *ret = s;
        return 0;
}

/* The smallest slice run by a user: the program's uid MCP_SANDBOX_UID and some more. */
#define MIN_USER_SLICE 1024u

int
mcp_slices_for(unsigned n, bool rootless, mcp_slices **ret, msp_err *err)
{
        if (!rootless) {
                int r = mcp_slices_new(n, MCP_SANDBOX_SLICE_BASE(0), MCP_SANDBOX_ID_COUNT, false,
                                       ret, err);
                if (r >= 0)
                        (*ret)->images = true;
                return r;
        }
        /* The range's first slice holds the ids image sandboxes run as most (0 and 1000). */
        unsigned size = MCP_SANDBOX_ID_COUNT / (n + 1);
        bool shared = size < MIN_USER_SLICE;
        return mcp_slices_new(n, MCP_SANDBOX_HOST_BASE + size, size, shared, ret, err);
}

bool
mcp_slices_image_slices(const mcp_slices *s)
{
        return s->images;
}

mcp_slices *
mcp_slices_free(mcp_slices *s)
{
        if (s)
                free(s->refs);
        free(s);
        return NULL;
}

bool
mcp_slice_available(const mcp_slices *s)
{
        if (s->shared)
                return true;
        for (unsigned i = 0; i < s->n; i++)
                if (s->refs[i] == 0)
                        return true;
        return false;
}

int
mcp_slice_take(mcp_slices *s, unsigned *ret_slot, msp_err *err)
{
        if (s->shared) {
                s->refs[0]++;
                *ret_slot = 0;
                return 0;
        }
        for (unsigned k = 0; k < s->n; k++) {
                unsigned i = (s->next + k) % s->n;
                if (s->refs[i])
                        continue;
                s->refs[i] = 1;
                s->next = (i + 1) % s->n;
                *ret_slot = i;
                return 0;
        }
        return msp_err_set(err, EUSERS, "every one of the %u sandbox id slices is held by a run "
                           "or a session (each sandbox has host ids of its own: "
                           "--max-concurrent and --max-sessions size the pool)", s->n);
}

void
mcp_slice_ref(mcp_slices *s, unsigned slot)
{
        if (slot < s->n)
                s->refs[slot]++;
}

void
mcp_slice_unref(mcp_slices *s, unsigned slot)
{
        if (slot < s->n && s->refs[slot])
                s->refs[slot]--;
}

unsigned
mcp_slice_base(const mcp_slices *s, unsigned slot)
{
        return s->shared ? s->first : s->first + s->size * slot;
}

unsigned
mcp_slice_size(const mcp_slices *s)
{
        return s->size;
}

unsigned
mcp_slices_used(const mcp_slices *s)
{
        unsigned used = 0;
        for (unsigned i = 0; i < s->n; i++)
                used += s->refs[i] != 0;
        return used;
}
