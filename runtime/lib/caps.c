/* Capability sets with libcap.
 *
 * Every set is set to exactly what the config says. In particular inheritable is never
 * derived from bounding (CVE-2022-29162 / CVE-2022-27650): a non-empty inheritable set
 * lets a program with file inheritable caps gain them across execve. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "lib/process.h"

#define RT_CAP_BIT(c) (UINT64_C(1) << (c))

static void
cap_freep(cap_t *c)
{
        if (*c)
                (void) cap_free(*c);
}
#define _cleanup_cap_ __attribute__((cleanup(cap_freep)))

static const char *
cap_str(int c)
{
        const char *name = oci_cap_name(c);
        return name ? name : "CAP_?";
}

int
rt_caps_last_cap(void)
{
        /* PR_CAPBSET_READ fails with EINVAL past the kernel's CAP_LAST_CAP. Asking the
         * kernel directly avoids trusting whatever procfs is mounted at this point of the
         * init (the container's /proc may not be there yet, or may be fake). */
        int lo = 0, hi = 63;

        if (prctl(PR_CAPBSET_READ, 0, 0, 0, 0) < 0)
                return -1;
        while (lo < hi) {
                int mid = (lo + hi + 1) / 2;
                if (prctl(PR_CAPBSET_READ, mid, 0, 0, 0) >= 0)
                        lo = mid;
                else
                        hi = mid - 1;
        }
        return lo;
}

static uint64_t
known_mask(int last)
{
        if (last < 0)
                return 0;
        return last >= 63 ? UINT64_MAX : RT_CAP_BIT(last + 1) - 1;
}

uint64_t
rt_caps_unsupported_mask(const oci_capabilities *caps)
{
        uint64_t all = caps->bounding | caps->effective | caps->inheritable | caps->permitted |
                       caps->ambient;
        return all & ~known_mask(rt_caps_last_cap());
}

size_t
rt_caps_supported_names(const char **ret, size_t max)
{
        int last = rt_caps_last_cap();
        size_t n = 0;

        for (int c = 0; c <= last && n < max; c++) {
                const char *name = oci_cap_name(c);
                if (name)
                        ret[n++] = name;
        }
        return n;
}

/* After a uid change with PR_SET_KEEPCAPS the effective set is empty; CAP_SETPCAP must be
 * effective to shrink the bounding set, so make effective = permitted first. */
static int
raise_effective(int last, msp_err *err)
{
        _cleanup_cap_ cap_t cur = cap_get_proc();

        if (!cur)
                return msp_err_sys(err, errno, "cap_get_proc");
        for (cap_value_t c = 0; c <= last; c++) {
                cap_flag_value_t v = CAP_CLEAR;
                if (cap_get_flag(cur, c, CAP_PERMITTED, &v) == 0 && v == CAP_SET &&
                    cap_set_flag(cur, CAP_EFFECTIVE, 1, &c, CAP_SET) < 0)
                        return msp_err_sys(err, errno, "cap_set_flag %s", cap_str(c));
        }
        if (cap_set_proc(cur) < 0)
                return msp_err_sys(err, errno, "capset (raising effective to permitted)");
        return 0;
}

/* Drop first and ask only when that fails: dropping a capability that is already out
 * succeeds, and the read per capability was ~40 prctl calls per container. */
static int
bounding_apply(uint64_t keep, int last, msp_err *err)
{
        for (cap_value_t c = 0; c <= last; c++) {
                if (keep & RT_CAP_BIT(c))
                        continue;
                if (cap_drop_bound(c) == 0)
                        continue;
                int e = errno;
                if (cap_get_bound(c) != 0)
                        return msp_err_sys(err, e, "drop %s from the bounding set", cap_str(c));
        }
        return 0;
}

static int
set_flags(cap_t caps, cap_flag_t flag, uint64_t mask, int last, msp_err *err)
{
        for (cap_value_t c = 0; c <= last; c++) {
                if (!(mask & RT_CAP_BIT(c)))
                        continue;
                if (cap_set_flag(caps, flag, 1, &c, CAP_SET) < 0)
                        return msp_err_sys(err, errno, "cap_set_flag %s", cap_str(c));
        }
        return 0;
}

static int
sets_apply(const oci_capabilities *want, int last, msp_err *err)
{
        _cleanup_cap_ cap_t caps = cap_init();
        int r;

        if (!caps)
                return msp_err_sys(err, errno, "cap_init");
        r = set_flags(caps, CAP_EFFECTIVE, want->effective, last, err);
        if (r >= 0)
                r = set_flags(caps, CAP_PERMITTED, want->permitted, last, err);
        if (r >= 0)
                r = set_flags(caps, CAP_INHERITABLE, want->inheritable, last, err);
        if (r < 0)
                return r;
        if (cap_set_proc(caps) < 0)
                return msp_err_sys(err, errno, "capset effective=0x%" PRIx64 " permitted=0x%" PRIx64
                                   " inheritable=0x%" PRIx64 " (effective must be within permitted, inheritable "
                                   "within bounding)",
                                   want->effective, want->permitted, want->inheritable);
        return 0;
}

static int
ambient_apply(uint64_t ambient, int last, msp_err *err)
{
        /* Clear first: ambient caps survive execve, and the runtime's must not. EINVAL
         * means a kernel without ambient capabilities (< 4.3), where none can be set. */
        if (cap_reset_ambient() < 0 && (errno != EINVAL || ambient != 0))
                return msp_err_sys(err, errno, "clear the ambient capability set");
        for (cap_value_t c = 0; c <= last; c++) {
                if (!(ambient & RT_CAP_BIT(c)))
                        continue;
                if (cap_set_ambient(c, CAP_SET) < 0)
                        return msp_err_sys(err, errno, "raise ambient %s", cap_str(c));
        }
        return 0;
}

int
rt_caps_apply(const oci_capabilities *caps, bool has_caps, msp_err *err)
{
        const oci_capabilities none = { 0 };
        oci_capabilities want = has_caps && caps ? *caps : none;
        int last = rt_caps_last_cap();
        int r;

        if (last < 0)
                return msp_err_sys(err, errno, "prctl(PR_CAPBSET_READ)");
        /* Capabilities newer than the kernel cannot be granted; drop them (runc does the
         * same) so that a config written for a newer kernel still runs. */
        uint64_t known = known_mask(last);
        want.bounding &= known;
        want.effective &= known;
        want.permitted &= known;
        want.inheritable &= known;
        /* The kernel only allows ambient capabilities that are also permitted and
         * inheritable. `runc spec` and `crun spec` list ambient caps with an empty
         * inheritable set and both runtimes run them, so the others are left out
         * rather than refused (rt_caps_ambient_dropped() says which). */
        want.ambient &= known & want.permitted & want.inheritable;

        r = raise_effective(last, err);
        if (r < 0)
                return r;
        r = bounding_apply(want.bounding, last, err);
        if (r < 0)
                return r;
        r = sets_apply(&want, last, err);
        if (r < 0)
                return r;
        return ambient_apply(want.ambient, last, err);
}

uint64_t
rt_caps_ambient_dropped(const oci_capabilities *caps)
{
        return caps->ambient & ~(caps->permitted & caps->inheritable);
}
