/* Cleanup attributes and small helpers shared by every part of msp. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_ __attribute__((noreturn))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline void
msp_freep(void *p)
{
        free(*(void **) p);
}

static inline void
msp_closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                (void) close(*fd);
                errno = saved;
        }
}

static inline void
msp_fclosep(FILE **f)
{
        if (*f)
                (void) fclose(*f);
}

static inline void
msp_closedirp(DIR **d)
{
        if (*d)
                (void) closedir(*d);
}

#define _cleanup_free_ _cleanup_(msp_freep)
#define _cleanup_close_ _cleanup_(msp_closep)
#define _cleanup_fclose_ _cleanup_(msp_fclosep)
#define _cleanup_closedir_ _cleanup_(msp_closedirp)

/* Hand ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

/* libc's -1/errno convention turned into -errno at the call site. */
#define NERRNO(expr) ({ long _r = (long) (expr); _r < 0 ? -errno : _r; })

static inline int
msp_negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}
