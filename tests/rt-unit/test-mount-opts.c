/* OCI mount option parsing: a pure function, no privileges needed. */
#include <errno.h>
#include <string.h>
#include <sys/mount.h>

#include "lib/mount-opts.h"
#include "tests/lib/tap.h"

/* Parse a NULL-terminated option list into *o; returns the parser's result. */
static int
parse(rt_mount_opts *o, msp_err *e, const char *const *list)
{
        size_t n = 0;
        while (list[n])
                n++;
        oci_strv v = { .v = (char **) list, .n = n };
        msp_err_clear(e);
        return rt_mount_opts_parse(&v, "/data", o, e);
}

#define OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

TEST(empty_list)
{
        rt_mount_opts o;
        msp_err e;
        oci_strv v = { 0 };
        ASSERT_OK_ERR(rt_mount_opts_parse(&v, "/x", &o, &e), e);
        ASSERT_EQ_U64(o.flags_set, 0);
        ASSERT_EQ_U64(o.flags_clr, 0);
        ASSERT_EQ_U64(o.propagation, 0);
        ASSERT_FALSE(o.bind);
        ASSERT_NULL(o.data);
        ASSERT_OK_ERR(rt_mount_opts_parse(NULL, "/x", &o, &e), e);
}

TEST(basic_flags)
{
        rt_mount_opts o;
        msp_err e;
        ASSERT_OK_ERR(parse(&o, &e, OPTS("nosuid", "nodev", "noexec", "ro", "relatime")), e);
        ASSERT_EQ_U64(o.flags_set, MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY | MS_RELATIME);
        ASSERT_EQ_U64(o.flags_clr, 0);
        ASSERT_NULL(o.data);
        rt_mount_opts_done(&o);
}

TEST(last_one_wins)
{
        rt_mount_opts o;
        msp_err e;
        ASSERT_OK_ERR(parse(&o, &e, OPTS("ro", "rw", "nosuid", "suid", "suid", "nosuid")), e);
        ASSERT_EQ_U64(o.flags_set, MS_NOSUID);
        ASSERT_EQ_U64(o.flags_clr, MS_RDONLY);
        rt_mount_opts_done(&o);
}

TEST(bind_and_rbind)
{
        rt_mount_opts o;
        msp_err e;
        ASSERT_OK_ERR(parse(&o, &e, OPTS("rbind", "ro")), e);
        ASSERT_TRUE(o.bind);
        ASSERT_TRUE(o.rbind);
        rt_mount_opts_done(&o);
        ASSERT_OK_ERR(parse(&o, &e, OPTS("rbind", "bind")), e);
        ASSERT_TRUE(o.bind);
        ASSERT_FALSE(o.rbind);
        rt_mount_opts_done(&o);
}

TEST(propagation)
{
        static const struct {
                const char *name;
                unsigned long want;
        } cases[] = {
                { "shared", MS_SHARED },           { "rshared", MS_SHARED | MS_REC },
                { "slave", MS_SLAVE },             { "rslave", MS_SLAVE | MS_REC },
                { "private", MS_PRIVATE },         { "rprivate", MS_PRIVATE | MS_REC },
                { "unbindable", MS_UNBINDABLE },   { "runbindable", MS_UNBINDABLE | MS_REC },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
                rt_mount_opts o;
                msp_err e;
                ASSERT_OK_ERR(parse(&o, &e, OPTS("bind", cases[i].name)), e);
                ASSERT_EQ_U64(o.propagation, cases[i].want);
                ASSERT_EQ_U64(o.flags_set, 0);
                rt_mount_opts_done(&o);
        }
}

TEST(recursive_attrs)
{
        rt_mount_opts o;
        msp_err e;
        ASSERT_OK_ERR(parse(&o, &e, OPTS("rbind", "rro", "rnosuid", "rnodev", "rnoexec",
                                         "rnosymfollow", "rnodiratime")), e);
        ASSERT_EQ_U64(o.rec_attr_set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                              MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSYMFOLLOW |
                                              MOUNT_ATTR_NODIRATIME);
        ASSERT_EQ_U64(o.rec_attr_clr, 0);
        ASSERT_EQ_U64(o.flags_set, 0);
        rt_mount_opts_done(&o);

        ASSERT_OK_ERR(parse(&o, &e, OPTS("rro", "rrw", "rsuid", "rdev", "rexec", "rsymfollow",
                                         "rdiratime")), e);
        ASSERT_EQ_U64(o.rec_attr_set, 0);
        ASSERT_EQ_U64(o.rec_attr_clr, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                              MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSYMFOLLOW |
                                              MOUNT_ATTR_NODIRATIME);
        rt_mount_opts_done(&o);
}

TEST(recursive_atime_is_an_enum)
{
        rt_mount_opts o;
        msp_err e;
        ASSERT_OK_ERR(parse(&o, &e, OPTS("rnoatime")), e);
        ASSERT_EQ_U64(o.rec_attr_set, MOUNT_ATTR_NOATIME);
        ASSERT_EQ_U64(o.rec_attr_clr, MOUNT_ATTR__ATIME);
        rt_mount_opts_done(&o);
        /* the later mode replaces the earlier one, never ORs into it */
        ASSERT_OK_ERR(parse(&o, &e, OPTS("rnoatime", "rstrictatime")), e);
        ASSERT_EQ_U64(o.rec_attr_set, MOUNT_ATTR_STRICTATIME);
        ASSERT_EQ_U64(o.rec_attr_clr, MOUNT_ATTR__ATIME);
        rt_mount_opts_done(&o);
        ASSERT_OK_ERR(parse(&o, &e, OPTS("rstrictatime", "rro", "rrelatime")), e);
        ASSERT_EQ_U64(o.rec_attr_set, MOUNT_ATTR_RELATIME | MOUNT_ATTR_RDONLY);
        ASSERT_EQ_U64(o.rec_attr_clr, MOUNT_ATTR__ATIME);
        rt_mount_opts_done(&o);
        ASSERT_OK_ERR(parse(&o, &e, OPTS("rnoatime", "ratime")), e);
        ASSERT_EQ_U64(o.rec_attr_set, MOUNT_ATTR_RELATIME);
        rt_mount_opts_done(&o);
}

TEST(data_string)
{
        rt_mount_opts o;
        msp_err e;
        ASSERT_OK_ERR(parse(&o, &e, OPTS("nosuid", "mode=755", "size=65536k", "strictatime")), e);
        ASSERT_STREQ(o.data, "mode=755,size=65536k");
        ASSERT_EQ_U64(o.flags_set, MS_NOSUID | MS_STRICTATIME);
        rt_mount_opts_done(&o);
        ASSERT_NULL(o.data);

        ASSERT_OK_ERR(parse(&o, &e, OPTS("nosuid", "noexec", "newinstance", "ptmxmode=0666",
                                         "mode=0620", "gid=5")), e);
        ASSERT_STREQ(o.data, "newinstance,ptmxmode=0666,mode=0620,gid=5");
        rt_mount_opts_done(&o);

        /* a value may itself contain commas and colons (overlay lowerdir, SELinux context) */
        ASSERT_OK_ERR(parse(&o, &e, OPTS("lowerdir=/a:/b", "context=\"a,b\"")), e);
        ASSERT_STREQ(o.data, "lowerdir=/a:/b,context=\"a,b\"");
        rt_mount_opts_done(&o);
}

TEST(tmpcopyup_and_idmap)
{
        rt_mount_opts o;
        msp_err e;
        ASSERT_OK_ERR(parse(&o, &e, OPTS("tmpcopyup", "mode=1777")), e);
        ASSERT_TRUE(o.tmpcopyup);
        ASSERT_STREQ(o.data, "mode=1777");
        rt_mount_opts_done(&o);
        ASSERT_OK_ERR(parse(&o, &e, OPTS("tmpcopyup", "notmpcopyup")), e);
        ASSERT_FALSE(o.tmpcopyup);
        rt_mount_opts_done(&o);
        ASSERT_OK_ERR(parse(&o, &e, OPTS("rbind", "ridmap")), e);
        ASSERT_TRUE(o.idmap);
        ASSERT_TRUE(o.ridmap);
        rt_mount_opts_done(&o);
        ASSERT_OK_ERR(parse(&o, &e, OPTS("bind", "idmap=uids=0-1000-10;gids=0-1000-10")), e);
        ASSERT_TRUE(o.idmap);
        ASSERT_FALSE(o.ridmap);
        ASSERT_NULL(o.data);
        rt_mount_opts_done(&o);
}

TEST(ignored_hints)
{
        rt_mount_opts o;
        msp_err e;
        ASSERT_OK_ERR(parse(&o, &e, OPTS("defaults", "x-systemd.automount", "z", "Z", "U")), e);
        ASSERT_EQ_U64(o.flags_set, 0);
        ASSERT_NULL(o.data);
        rt_mount_opts_done(&o);
}

TEST(unknown_flag_is_an_error)
{
        rt_mount_opts o;
        msp_err e;
        int r = parse(&o, &e, OPTS("nosuid", "mode=755", "nosiud"));
        ASSERT_EQ_INT(r, -EINVAL);
        ASSERT_STREQ(e.msg, "mount '/data': unknown mount option 'nosiud'");
        r = parse(&o, &e, OPTS("ro", ""));
        ASSERT_EQ_INT(r, -EINVAL);
        ASSERT_TRUE(strstr(e.msg, "/data") != NULL);
        r = parse(&o, &e, OPTS("ro,nosuid"));
        ASSERT_EQ_INT(r, -EINVAL);
        ASSERT_TRUE(strstr(e.msg, "'ro,nosuid'") != NULL);
        /* case matters: "RO" is not "ro" */
        ASSERT_EQ_INT(parse(&o, &e, OPTS("RO")), -EINVAL);
}

TEST(attr_translation)
{
        rt_mount_opts o;
        msp_err e;
        uint64_t set, clr;

        ASSERT_OK_ERR(parse(&o, &e, OPTS("bind", "ro", "nosuid", "nodev", "noexec")), e);
        rt_mount_opts_attr(&o, &set, &clr);
        ASSERT_EQ_U64(set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                   MOUNT_ATTR_NOEXEC);
        ASSERT_EQ_U64(clr, 0);
        rt_mount_opts_done(&o);

        ASSERT_OK_ERR(parse(&o, &e, OPTS("rw", "suid", "exec", "dev", "nosymfollow")), e);
        rt_mount_opts_attr(&o, &set, &clr);
        ASSERT_EQ_U64(set, MOUNT_ATTR_NOSYMFOLLOW);
        ASSERT_EQ_U64(clr, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                   MOUNT_ATTR_NOEXEC);
        rt_mount_opts_done(&o);

        /* no atime option: the atime field is left alone */
        ASSERT_OK_ERR(parse(&o, &e, OPTS("nodiratime")), e);
        rt_mount_opts_attr(&o, &set, &clr);
        ASSERT_EQ_U64(set, MOUNT_ATTR_NODIRATIME);
        ASSERT_EQ_U64(clr & MOUNT_ATTR__ATIME, 0);
        rt_mount_opts_done(&o);

        ASSERT_OK_ERR(parse(&o, &e, OPTS("noatime")), e);
        rt_mount_opts_attr(&o, &set, &clr);
        ASSERT_EQ_U64(set, MOUNT_ATTR_NOATIME);
        ASSERT_EQ_U64(clr, MOUNT_ATTR__ATIME);
        rt_mount_opts_done(&o);

        ASSERT_OK_ERR(parse(&o, &e, OPTS("strictatime")), e);
        rt_mount_opts_attr(&o, &set, &clr);
        ASSERT_EQ_U64(set, MOUNT_ATTR_STRICTATIME);
        ASSERT_EQ_U64(clr, MOUNT_ATTR__ATIME);
        rt_mount_opts_done(&o);

        ASSERT_OK_ERR(parse(&o, &e, OPTS("noatime", "atime")), e);
        rt_mount_opts_attr(&o, &set, &clr);
        ASSERT_EQ_U64(set, MOUNT_ATTR_RELATIME);
        ASSERT_EQ_U64(clr, MOUNT_ATTR__ATIME);
        rt_mount_opts_done(&o);
}

TEST(sb_flags)
{
        rt_mount_opts o;
        msp_err e;
        const char *names[8];

        ASSERT_OK_ERR(parse(&o, &e, OPTS("sync", "dirsync", "lazytime", "ro", "nosuid")), e);
        int n = rt_mount_opts_sb_flags(&o, names, 8);
        ASSERT_EQ_INT(n, 3);
        ASSERT_STREQ(names[0], "sync");
        ASSERT_STREQ(names[1], "dirsync");
        ASSERT_STREQ(names[2], "lazytime");
        ASSERT_EQ_INT(rt_mount_opts_sb_flags(&o, names, 1), 1);
        rt_mount_opts_done(&o);
        ASSERT_OK_ERR(parse(&o, &e, OPTS("sync", "async")), e);
        ASSERT_EQ_INT(rt_mount_opts_sb_flags(&o, names, 8), 0);
        rt_mount_opts_done(&o);
}

TEST(every_features_name_parses)
{
        /* the names runc lists in `features` mountOptions: all must be accepted */
        static const char *const names[] = {
                "async", "atime", "bind", "defaults", "dev", "diratime", "dirsync", "exec",
                "iversion", "lazytime", "loud", "mand", "noatime", "nodev", "nodiratime",
                "noexec", "noiversion", "nolazytime", "nomand", "norelatime", "nostrictatime",
                "nosuid", "nosymfollow", "private", "ratime", "rbind", "rdev", "rdiratime",
                "relatime", "remount", "rexec", "rnoatime", "rnodev", "rnodiratime", "rnoexec",
                "rnorelatime", "rnostrictatime", "rnosuid", "rnosymfollow", "ro", "rprivate",
                "rrelatime", "rro", "rrw", "rshared", "rslave", "rstrictatime", "rsuid",
                "rsymfollow", "runbindable", "rw", "shared", "silent", "slave", "strictatime",
                "suid", "symfollow", "sync", "tmpcopyup", "unbindable", "idmap", "ridmap",
        };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                rt_mount_opts o;
                msp_err e;
                const char *one[] = { names[i], NULL };
                ASSERT_OK_ERR(parse(&o, &e, one), e);
                ASSERT_NULL(o.data);
                rt_mount_opts_done(&o);
        }
}

int
main(void)
{
        RUN(empty_list);
        RUN(basic_flags);
        RUN(last_one_wins);
        RUN(bind_and_rbind);
        RUN(propagation);
        RUN(recursive_attrs);
        RUN(recursive_atime_is_an_enum);
        RUN(data_string);
        RUN(tmpcopyup_and_idmap);
        RUN(ignored_hints);
        RUN(unknown_flag_is_an_error);
        RUN(attr_translation);
        RUN(sb_flags);
        RUN(every_features_name_parses);
        return tap_done();
}
