/* The fixture of the runtime's cgroup tests (tests/rt-unit: test-cgroup.c,
 * test-cgroup-ctl.c), on top of tests/lib/tap.h's forked tests: the main that needs root
 * and a cgroup file system, and the check that a run left no cgroup behind. */
#pragma once

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/cgroup/cgroup-internal.h"
#include "lib/cgroup/cgroup.h"
#include "tests/lib/tap.h"

/* Nothing whose name starts with `prefix` directly below any hierarchy's root (the root
 * itself on a unified host); removes and reports what it finds. */
static inline bool
cg_test_no_leftovers(rt_cgroup_mode mode, const char *prefix)
{
        bool clean = true;
        DIR *root = opendir(CG_ROOT);
        struct dirent *h;

        while (root && (h = readdir(root))) {
                char dir[PATH_MAX];
                if (h->d_name[0] == '.')
                        continue;
                snprintf(dir, sizeof dir, mode == RT_CGROUP_UNIFIED ? CG_ROOT : CG_ROOT "/%s", h->d_name);
                DIR *d = opendir(dir);
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
                                continue;
                        char path[300];
                        snprintf(path, sizeof path, "/%s", de->d_name);
                        printf("# left behind: %s%s\n", dir, path);
                        clean = false;
                        (void) rt_cgroup_destroy(path, NULL);
                }
                if (d)
                        closedir(d);
                if (mode == RT_CGROUP_UNIFIED)
                        break;
        }
        if (root)
                closedir(root);
        return clean;
}

/* The main of a cgroup test program: needs root and a cgroup file system, runs each test
 * in its own child (tap_run_forked: SKIP's reason on its line), then checks that no
 * cgroup named <prefix><runner pid>-* is left in any hierarchy. Sets *runner and *mode
 * first: the tests name their cgroups after them. */
static inline int
cg_test_main(const tap_fork_test *tests, size_t n, const char *prefix, pid_t *runner,
             rt_cgroup_mode *mode)
{
        msp_err e;
        char leftover_prefix[64];

        *runner = getpid();
        if (geteuid() != 0 || rt_cgroup_mode_detect(mode, &e) < 0) {
                printf("1..0 # SKIP needs root and a cgroup file system\n");
                return 0;
        }
        printf("# cgroup mode: %s\n", *mode == RT_CGROUP_UNIFIED ? "unified" :
               *mode == RT_CGROUP_HYBRID ? "hybrid" : "legacy");
        for (size_t i = 0; i < n; i++)
                (void) tap_run_forked(tests[i].name, tests[i].fn);
        snprintf(leftover_prefix, sizeof leftover_prefix, "%s%d-", prefix, (int) *runner);
        tap_check(cg_test_no_leftovers(*mode, leftover_prefix),
                  "no test cgroup left in any hierarchy");
        return tap_done();
}
