/* Each sandbox's own host ids (sandbox-slices.c): a slot is held until its last holder lets
 * go, the pool refuses with the reason when every slot is held, the slots' ranges are
 * disjoint and above the storage range; run by a user, slices of the user's one range, or
 * one slot every holder shares when they would be too small. */
#include <errno.h>
#include <string.h>

#include "tests/lib/tap.h"
#include "sandbox/sandbox-ids.h"
#include "sandbox/sandbox-slices.h"

/* --max-concurrent and --max-sessions near UINT_MAX: the count never wraps to a small
 * pool (as root the claim then refuses the span), and run by a user it shares one slot
 * instead of dividing the range by zero. */
TEST(huge_limits_neither_wrap_nor_divide_by_zero)
{
        ASSERT_EQ_INT(mcp_sandbox_slices_needed(2147483648u, 16), MCP_SANDBOX_SLICES_MAX);
        ASSERT_EQ_INT(mcp_sandbox_slices_needed(1, 4294967295u), MCP_SANDBOX_SLICES_MAX);
        ASSERT_EQ_INT(mcp_sandbox_slices_needed(4, 16), 24);
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_sandbox_ids_claim(MCP_SANDBOX_ROOT_BASE,
                                            mcp_sandbox_slices_needed(1, 4294967293u), &err),
                      -ERANGE);
        mcp_slices *s = NULL;
        ASSERT_EQ_INT(mcp_slices_for(mcp_sandbox_slices_needed(1, 4294967293u), true, &s, &err),
                      0);
        unsigned a, b;
        ASSERT_EQ_INT(mcp_slice_take(s, &a, &err), 0);
        ASSERT_EQ_INT(mcp_slice_take(s, &b, &err), 0);
        ASSERT_EQ_INT(mcp_slice_base(s, a), mcp_slice_base(s, b));
        mcp_slices_free(s);
}

TEST(slots_disjoint_above_storage)
{
        mcp_slices *s = NULL;
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_slices_for(3, false, &s, &err), 0);
        unsigned a, b, c;
        ASSERT_EQ_INT(mcp_slice_take(s, &a, &err), 0);
        ASSERT_EQ_INT(mcp_slice_take(s, &b, &err), 0);
        ASSERT_EQ_INT(mcp_slice_take(s, &c, &err), 0);
        ASSERT_TRUE(a != b && b != c && a != c);
        unsigned base[] = { mcp_slice_base(s, a), mcp_slice_base(s, b), mcp_slice_base(s, c) };
        for (int i = 0; i < 3; i++) {
                ASSERT_TRUE(base[i] >= MCP_SANDBOX_HOST_BASE + MCP_SANDBOX_ID_COUNT);
                for (int j = 0; j < 3; j++)
                        ASSERT_TRUE(i == j || base[i] + MCP_SANDBOX_ID_COUNT <= base[j] ||
                                    base[j] + MCP_SANDBOX_ID_COUNT <= base[i]);
        }
        ASSERT_EQ_INT(mcp_slices_used(s), 3);
        mcp_slices_free(s);
}

/* A session's slot stays held while a run it evicted is still being deleted. */
TEST(held_until_last_holder)
{
        mcp_slices *s = NULL;
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_slices_for(1, false, &s, &err), 0);
        unsigned a, b;
        ASSERT_EQ_INT(mcp_slice_take(s, &a, &err), 0);
        mcp_slice_ref(s, a);                    /* the run */
        ASSERT_FALSE(mcp_slice_available(s));
        ASSERT_EQ_INT(mcp_slice_take(s, &b, &err), -EUSERS);
        ASSERT_TRUE(strstr(err.msg, "every one of the 1 sandbox id slices") != NULL);
        mcp_slice_unref(s, a);                  /* the session closed */
        ASSERT_FALSE(mcp_slice_available(s));
        mcp_slice_unref(s, a);                  /* the run gone */
        ASSERT_TRUE(mcp_slice_available(s));
        ASSERT_EQ_INT(mcp_slice_take(s, &b, &err), 0);
        ASSERT_EQ_INT(b, a);
        mcp_slices_free(s);
}

/* A freed slot is reused last: the next take prefers one never held or freed earlier. */
TEST(freed_reused_last)
{
        mcp_slices *s = NULL;
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_slices_for(3, false, &s, &err), 0);
        unsigned a, b;
        ASSERT_EQ_INT(mcp_slice_take(s, &a, &err), 0);
        mcp_slice_unref(s, a);
        ASSERT_EQ_INT(mcp_slice_take(s, &b, &err), 0);
        ASSERT_TRUE(b != a);
        mcp_slices_free(s);
}

/* Run by a user: slices of the user's one range for sandboxes off an image, its first
 * slice (the ids image sandboxes mostly run as) left out; too many for slices of 1024 ids
 * and the pool is one slot of the whole range every holder shares. */
TEST(user_range_sliced)
{
        mcp_slices *s = NULL;
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_slices_for(20, true, &s, &err), 0);
        ASSERT_FALSE(mcp_slices_image_slices(s));
        ASSERT_EQ_INT(mcp_slice_size(s), 65536 / 21);
        unsigned prev_end = MCP_SANDBOX_HOST_BASE + 65536 / 21;
        for (unsigned i = 0; i < 20; i++) {
                unsigned k;
                ASSERT_EQ_INT(mcp_slice_take(s, &k, &err), 0);
                ASSERT_EQ_INT(mcp_slice_base(s, k), prev_end);
                prev_end = mcp_slice_base(s, k) + mcp_slice_size(s);
                ASSERT_TRUE(mcp_slice_size(s) > MCP_SANDBOX_UID);
        }
        ASSERT_TRUE(prev_end <= MCP_SANDBOX_HOST_BASE + MCP_SANDBOX_ID_COUNT);
        unsigned k;
        ASSERT_EQ_INT(mcp_slice_take(s, &k, &err), -EUSERS);
        mcp_slices_free(s);
}

TEST(shared_by_a_user)
{
        mcp_slices *s = NULL;
        msp_err err = { 0 };
        ASSERT_EQ_INT(mcp_slices_for(64, true, &s, &err), 0);
        unsigned a, b;
        for (int i = 0; i < 100; i++)
                ASSERT_EQ_INT(mcp_slice_take(s, &a, &err), 0);
        ASSERT_EQ_INT(mcp_slice_take(s, &b, &err), 0);
        ASSERT_EQ_INT(a, b);
        ASSERT_EQ_INT(mcp_slice_base(s, a), MCP_SANDBOX_HOST_BASE);
        ASSERT_EQ_INT(mcp_slice_size(s), MCP_SANDBOX_ID_COUNT);
        ASSERT_TRUE(mcp_slice_available(s));
        mcp_slices_free(s);
}

int
main(void)
{
        RUN(huge_limits_neither_wrap_nor_divide_by_zero);
        RUN(slots_disjoint_above_storage);
        RUN(held_until_last_holder);
        RUN(freed_reused_last);
        RUN(user_range_sliced);
        RUN(shared_by_a_user);
        return tap_done();
}
