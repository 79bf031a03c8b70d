/* Shared by the cgroup unit tests: find (and remove) cgroups a test run left behind. */
#pragma once

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cgroup-internal.h"
#include "cgroup.h"

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
