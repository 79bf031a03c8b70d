/* Each sandbox's own host ids (sandbox-slices.h). */
#include "sandbox-slices.h"

#include <errno.h>
#include <stdlib.h>

#include "sandbox-ids.h"

struct mcp_slices {
        unsigned n;
        bool shared;
        unsigned *refs;                 /* n counts; 0: free */
        unsigned next;                  /* where the next search starts: the least recently
                                         * freed slots are reused last */
};

int
mcp_slices_new(unsigned n, bool shared, mcp_slices **ret, msp_err *err)
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
        *ret = s;
        return 0;
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
        return s->shared ? MCP_SANDBOX_HOST_BASE : MCP_SANDBOX_SLICE_BASE(slot);
}

unsigned
mcp_slices_used(const mcp_slices *s)
{
        unsigned used = 0;
        for (unsigned i = 0; i < s->n; i++)
                used += s->refs[i] != 0;
        return used;
}
