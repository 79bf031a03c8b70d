/* Parses every fixture in tests/fixtures and checks concrete fields.
 * The fixtures directory comes from argv[1] or $OCI_FIXTURES. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include "oci/spec.h"
#include "oci/state.h"
#include "tests/lib/tap.h"

static const char *fixtures;

static bool
has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

static char *
read_fixture(const char *name, size_t *ret_len)
{
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", fixtures, name);
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *buf = malloc(OCI_CONFIG_MAX_BYTES);
        size_t n = buf ? fread(buf, 1, OCI_CONFIG_MAX_BYTES, f) : 0;
        fclose(f);
        *ret_len = n;
        return buf;
}

/* Parses a fixture with the parser its name calls for (see tests/fixtures/README.md). */
static oci_spec *
load(const char *name)
{
        msp_err err = { 0 };
        oci_spec *spec = NULL;
        int r;
        if (has_prefix(name, "process-") || has_prefix(name, "resources-") ||
            has_prefix(name, "state-")) {
                size_t len = 0;
                _cleanup_free_ char *data = read_fixture(name, &len);
                oci_state *st = NULL;
                if (!data)
                        r = msp_err_sys(&err, errno, "%s: read", name);
                else if (has_prefix(name, "process-"))
                        r = oci_process_parse_data(name, data, len, &spec, &err);
                else if (has_prefix(name, "resources-"))
                        r = oci_resources_parse_data(name, data, len, &spec, &err);
                else
                        r = oci_state_parse_data(name, data, len, &st, &err);
                if (st) {
                        /* a stand-in so that callers see success */
                        oci_state_free(st);
                        spec = calloc(1, sizeof *spec);
                }
        } else {
                char path[PATH_MAX];
                snprintf(path, sizeof path, "%s/%s", fixtures, name);
                r = oci_spec_parse_file(path, &spec, &err);
        }
        if (r < 0) {
                tap_diag("%s: %s", name, err.msg);
                return NULL;
        }
        return spec;
}

static oci_spec *
parse(const char *json)
{
        msp_err err = { 0 };
        oci_spec *spec = NULL;
        if (oci_spec_parse_data("inline.json", json, strlen(json), &spec, &err) < 0) {
                tap_diag("%s", err.msg);
                return NULL;
        }
        return spec;
}

static uint64_t
capbit(const char *name)
{
        int c = oci_cap_from_name(name);
        return c < 0 ? 0 : UINT64_C(1) << c;
}

static const oci_rlimit *
find_rlimit(const oci_process *p, int resource)
{
        for (size_t i = 0; i < p->n_rlimits; i++)
                if (p->rlimits[i].resource == resource)
                        return &p->rlimits[i];
        return NULL;
}

/* ---- every fixture parses ---- */

TEST(every_fixture_parses)
{
        DIR *d = opendir(fixtures);
        ASSERT_NOT_NULL(d);
        int n = 0, bad = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                size_t len = strlen(de->d_name);
                if (len < 5 || strcmp(de->d_name + len - 5, ".json") != 0)
                        continue;
                oci_spec *spec = load(de->d_name);
                if (!spec)
                        bad++;
                oci_spec_free(spec);
                n++;
        }
        closedir(d);
        ASSERT_EQ_INT(bad, 0);
        ASSERT_TRUE(n >= 11);
}

/* ---- runc / crun ---- */

TEST(runc_spec)
{
        _cleanup_spec_ oci_spec *s = load("runc-spec.json");
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(s->oci_version, "1.0.2-dev");
        ASSERT_NOT_NULL(s->process);
        ASSERT_TRUE(s->process->terminal);
        ASSERT_EQ_INT(s->process->args.n, 1);
        ASSERT_STREQ(s->process->args.v[0], "sh");
        ASSERT_NULL(s->process->args.v[1]);
        ASSERT_EQ_INT(s->process->env.n, 2);
        ASSERT_STREQ(s->process->cwd, "/");
        uint64_t caps = capbit("CAP_AUDIT_WRITE") | capbit("CAP_KILL") |
                        capbit("CAP_NET_BIND_SERVICE");
        ASSERT_TRUE(s->process->has_capabilities);
        ASSERT_EQ_U64(s->process->capabilities.bounding, caps);
        ASSERT_EQ_U64(s->process->capabilities.ambient, caps);
        ASSERT_EQ_U64(s->process->capabilities.inheritable, 0);
        ASSERT_EQ_INT(s->process->n_rlimits, 1);
        ASSERT_EQ_INT(s->process->rlimits[0].resource, RLIMIT_NOFILE);
        ASSERT_EQ_U64(s->process->rlimits[0].soft, 1024);
        ASSERT_TRUE(s->process->no_new_privileges);
        ASSERT_STREQ(s->root_path, "rootfs");
        ASSERT_TRUE(s->root_readonly);
        ASSERT_STREQ(s->hostname, "runc");
        ASSERT_EQ_INT(s->n_mounts, 7);
        ASSERT_STREQ(s->mounts[2].destination, "/dev/pts");
        ASSERT_EQ_INT(s->mounts[2].options.n, 6);
        ASSERT_NULL(s->mounts[0].options.v);
        ASSERT_FALSE(s->has_hooks);
        ASSERT_NOT_NULL(s->linux_);
        const oci_linux *l = s->linux_;
        ASSERT_EQ_INT(l->n_namespaces, 5);
        ASSERT_EQ_INT(l->namespaces[0].type, OCI_NS_PID);
        ASSERT_EQ_INT(l->namespaces[1].type, OCI_NS_NETWORK);
        ASSERT_EQ_INT(l->namespaces[4].type, OCI_NS_MOUNT);
        ASSERT_NULL(l->namespaces[1].path);
        ASSERT_EQ_INT(l->masked_paths.n, 10);
        ASSERT_STREQ(l->masked_paths.v[9], "/proc/scsi");
        ASSERT_EQ_INT(l->readonly_paths.n, 5);
        ASSERT_NOT_NULL(l->resources);
        ASSERT_EQ_INT(l->resources->n_devices, 1);
        ASSERT_FALSE(l->resources->devices[0].allow);
        ASSERT_EQ_INT(l->resources->devices[0].type, 'a');
        ASSERT_FALSE(l->resources->devices[0].has_major);
        ASSERT_STREQ(l->resources->devices[0].access, "rwm");
        ASSERT_NULL(l->seccomp);
        ASSERT_FALSE(l->has_rootfs_propagation);
}

TEST(runc_spec_rootless)
{
        _cleanup_spec_ oci_spec *s = load("runc-spec-rootless.json");
        ASSERT_NOT_NULL(s);
        const oci_linux *l = s->linux_;
        ASSERT_NULL(l->resources);
        ASSERT_EQ_INT(l->n_uid_mappings, 1);
        ASSERT_EQ_INT(l->uid_mappings[0].container_id, 0);
        ASSERT_EQ_INT(l->uid_mappings[0].size, 1);
        ASSERT_EQ_INT(l->n_gid_mappings, 1);
        ASSERT_EQ_INT(l->n_namespaces, 5);
        ASSERT_EQ_INT(l->namespaces[4].type, OCI_NS_USER);
        ASSERT_STREQ(s->mounts[5].destination, "/sys");
        ASSERT_STREQ(s->mounts[5].type, "none");
        ASSERT_STREQ(s->mounts[5].options.v[0], "rbind");
}

TEST(crun_spec)
{
        _cleanup_spec_ oci_spec *s = load("crun-spec.json");
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(s->oci_version, "1.0.0");
        ASSERT_STREQ(s->hostname, "crun");
        ASSERT_EQ_U64(s->process->capabilities.inheritable, 0);
        ASSERT_EQ_U64(s->process->capabilities.permitted, capbit("CAP_AUDIT_WRITE") |
                      capbit("CAP_KILL") | capbit("CAP_NET_BIND_SERVICE"));
}

/* ---- podman ---- */

TEST(podman_limits)
{
        _cleanup_spec_ oci_spec *s = load("podman-limits.json");
        ASSERT_NOT_NULL(s);
        const oci_resources *res = s->linux_->resources;
        ASSERT_NOT_NULL(res);
        ASSERT_TRUE(res->has_memory);
        ASSERT_TRUE(res->memory.has_limit);
        ASSERT_EQ_INT(res->memory.limit, 67108864);
        ASSERT_TRUE(res->memory.has_swap);
        ASSERT_EQ_INT(res->memory.swap, 134217728);
        ASSERT_FALSE(res->memory.has_reservation);
        ASSERT_TRUE(res->has_pids);
        ASSERT_EQ_INT(res->pids_limit, 50);
        ASSERT_FALSE(res->has_cpu);
        /* --cap-drop ALL: "capabilities": {} */
        ASSERT_TRUE(s->process->has_capabilities);
        ASSERT_EQ_U64(s->process->capabilities.bounding, 0);
        ASSERT_EQ_U64(s->process->capabilities.effective, 0);
        ASSERT_FALSE(s->process->terminal);
        ASSERT_TRUE(s->process->user.has_umask);
        ASSERT_EQ_INT(s->process->user.umask, 18);
        ASSERT_TRUE(s->root_readonly);
        ASSERT_STREQ(s->root_path, "/tmp/rfs");
        ASSERT_TRUE(strncmp(s->linux_->cgroups_path, "/libpod_parent/libpod-", 22) == 0);
        ASSERT_EQ_INT(s->linux_->sysctl.n, 1);
        ASSERT_STREQ(s->linux_->sysctl.v[0].key, "net.ipv4.ping_group_range");
        ASSERT_STREQ(s->linux_->sysctl.v[0].value, "0 0");
        ASSERT_NOT_NULL(s->linux_->namespaces[1].path);
        ASSERT_TRUE(strncmp(s->linux_->namespaces[1].path, "/run/netns/", 11) == 0);
        ASSERT_NOT_NULL(s->linux_->seccomp);
        ASSERT_EQ_INT(s->linux_->seccomp->n_syscalls, 22);
        ASSERT_EQ_INT(s->n_mounts, 13);
        ASSERT_EQ_INT(s->linux_->masked_paths.n, 11);
        ASSERT_EQ_INT(s->linux_->readonly_paths.n, 6);
}

TEST(podman_tty_user)
{
        _cleanup_spec_ oci_spec *s = load("podman-tty-user.json");
        ASSERT_NOT_NULL(s);
        const oci_process *p = s->process;
        ASSERT_TRUE(p->terminal);
        ASSERT_EQ_INT(p->user.uid, 1000);
        ASSERT_EQ_INT(p->user.gid, 1000);
        ASSERT_EQ_INT(p->user.n_additional_gids, 1);
        ASSERT_EQ_INT(p->user.additional_gids[0], 1000);
        ASSERT_TRUE(p->no_new_privileges);
        ASSERT_EQ_INT(p->n_rlimits, 2);
        const oci_rlimit *nofile = find_rlimit(p, RLIMIT_NOFILE);
        ASSERT_NOT_NULL(nofile);
        ASSERT_EQ_U64(nofile->soft, 10000);
        ASSERT_EQ_U64(nofile->hard, 20000);
        const oci_rlimit *nproc = find_rlimit(p, RLIMIT_NPROC);
        ASSERT_NOT_NULL(nproc);
        ASSERT_EQ_U64(nproc->hard, 1000);
        ASSERT_EQ_U64(p->capabilities.bounding & capbit("CAP_SYS_CHROOT"),
                      capbit("CAP_SYS_CHROOT"));
        ASSERT_EQ_U64(p->capabilities.bounding & capbit("CAP_SYS_ADMIN"), 0);
        ASSERT_EQ_INT(s->annotations.n, 8);
        ASSERT_STREQ(s->annotations.v[0].key, "io.container.manager");
        ASSERT_STREQ(s->annotations.v[0].value, "libpod");
        ASSERT_EQ_INT(s->n_mounts, 12);
        ASSERT_STREQ(s->mounts[0].destination, "/scratch");
        ASSERT_STREQ(s->mounts[0].options.v[4], "tmpcopyup");

        const oci_seccomp *sc = s->linux_->seccomp;
        ASSERT_NOT_NULL(sc);
        ASSERT_EQ_INT(sc->default_action, OCI_SECCOMP_ERRNO);
        ASSERT_TRUE(sc->has_default_errno_ret);
        ASSERT_EQ_INT(sc->default_errno_ret, 38);
        ASSERT_EQ_INT(sc->architectures.n, 3);
        ASSERT_STREQ(sc->architectures.v[0], "SCMP_ARCH_X86_64");
        ASSERT_EQ_INT(sc->n_syscalls, 22);
        ASSERT_EQ_INT(sc->syscalls[0].action, OCI_SECCOMP_ERRNO);
        ASSERT_EQ_INT(sc->syscalls[0].errno_ret, 1);
        ASSERT_EQ_INT(sc->syscalls[1].action, OCI_SECCOMP_ALLOW);
        ASSERT_FALSE(sc->syscalls[1].has_errno_ret);
        ASSERT_TRUE(sc->syscalls[1].names.n > 300);
        /* personality(0xffffffff) */
        ASSERT_STREQ(sc->syscalls[6].names.v[0], "personality");
        ASSERT_EQ_INT(sc->syscalls[6].n_args, 1);
        ASSERT_EQ_U64(sc->syscalls[6].args[0].value, 4294967295u);
        ASSERT_EQ_INT(sc->syscalls[6].args[0].op, OCI_SECCOMP_OP_EQ);
        /* socket(AF_NETLINK, *, NETLINK_AUDIT) -> EINVAL */
        const oci_seccomp_syscall *sock = &sc->syscalls[18];
        ASSERT_STREQ(sock->names.v[0], "socket");
        ASSERT_EQ_INT(sock->errno_ret, 22);
        ASSERT_EQ_INT(sock->n_args, 2);
        ASSERT_EQ_INT(sock->args[1].index, 2);
        ASSERT_EQ_U64(sock->args[1].value, 9);
        ASSERT_EQ_INT(sc->syscalls[19].args[0].op, OCI_SECCOMP_OP_NE);
        ASSERT_EQ_INT(sc->flags, 0);
        ASSERT_NULL(sc->listener_path);
}

TEST(podman_cpu_env)
{
        _cleanup_spec_ oci_spec *s = load("podman-cpu-env.json");
        ASSERT_NOT_NULL(s);
        const oci_resources *res = s->linux_->resources;
        ASSERT_TRUE(res->has_cpu);
        ASSERT_TRUE(res->cpu.has_quota);
        ASSERT_EQ_INT(res->cpu.quota, 50000);
        ASSERT_EQ_U64(res->cpu.period, 100000);
        ASSERT_FALSE(res->cpu.has_shares);
        ASSERT_NULL(res->cpu.cpus);
        ASSERT_EQ_INT(res->pids_limit, 2048);
        ASSERT_STREQ(s->process->env.v[2], "FOO=bar");
        ASSERT_STREQ(s->process->cwd, "/tmp");
        ASSERT_STREQ(s->hostname, "box");
        const oci_rlimit *nofile = find_rlimit(s->process, RLIMIT_NOFILE);
        ASSERT_NOT_NULL(nofile);
        ASSERT_EQ_U64(nofile->soft, 100);
        ASSERT_EQ_U64(nofile->hard, 200);
        ASSERT_NULL(s->linux_->namespaces[1].path);
}

/* ---- full.json: every field ---- */

TEST(full_process)
{
        _cleanup_spec_ oci_spec *s = load("full.json");
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(s->oci_version, "1.3.0");
        const oci_process *p = s->process;
        ASSERT_TRUE(p->terminal);
        ASSERT_TRUE(p->has_console_size);
        ASSERT_EQ_INT(p->console_height, 40);
        ASSERT_EQ_INT(p->console_width, 120);
        ASSERT_EQ_INT(p->user.uid, 1000);
        ASSERT_EQ_INT(p->user.gid, 1001);
        ASSERT_EQ_INT(p->user.umask, 18);
        ASSERT_EQ_INT(p->user.n_additional_gids, 3);
        ASSERT_EQ_U64(p->user.additional_gids[2], 4294967295u);
        ASSERT_STREQ(p->user.username, "alice");
        ASSERT_EQ_INT(p->args.n, 3);
        ASSERT_STREQ(p->args.v[2], "value with spaces");
        ASSERT_STREQ(p->command_line, "app.exe --flag");
        ASSERT_STREQ(p->env.v[2], "EQ=a=b");
        ASSERT_STREQ(p->cwd, "/srv/app");
        ASSERT_EQ_U64(p->capabilities.bounding, capbit("CAP_CHOWN") | capbit("CAP_KILL") |
                      (UINT64_C(1) << 40));
        ASSERT_EQ_U64(p->capabilities.effective, capbit("CAP_KILL"));
        ASSERT_EQ_U64(p->capabilities.inheritable, 0);
        ASSERT_EQ_U64(p->capabilities.permitted, capbit("CAP_CHOWN") | capbit("CAP_KILL"));
        ASSERT_EQ_U64(p->capabilities.ambient, capbit("CAP_NET_BIND_SERVICE"));
        ASSERT_EQ_INT(p->n_rlimits, 3);
        ASSERT_EQ_INT(p->rlimits[1].resource, RLIMIT_CORE);
        ASSERT_EQ_U64(p->rlimits[1].hard, UINT64_MAX);
        ASSERT_EQ_U64(p->rlimits[1].soft, UINT64_MAX);
        ASSERT_EQ_INT(p->rlimits[2].resource, RLIMIT_RTTIME);
        ASSERT_TRUE(p->no_new_privileges);
        ASSERT_STREQ(p->apparmor_profile, "msp-default");
        ASSERT_STREQ(p->selinux_label, "system_u:system_r:container_t:s0:c1,c2");
        ASSERT_TRUE(p->has_oom_score_adj);
        ASSERT_EQ_INT(p->oom_score_adj, -500);
        ASSERT_TRUE(p->has_io_priority);
        ASSERT_EQ_INT(p->io_priority.klass, 2);
        ASSERT_EQ_INT(p->io_priority.priority, 4);
        ASSERT_TRUE(p->has_scheduler);
        ASSERT_EQ_INT(p->scheduler.policy, 6);
        ASSERT_EQ_INT(p->scheduler.nice, -5);
        ASSERT_EQ_INT(p->scheduler.flags, 0x01 | 0x40);
        ASSERT_EQ_U64(p->scheduler.runtime, 10000000);
        ASSERT_EQ_U64(p->scheduler.deadline, 30000000);
        ASSERT_EQ_U64(p->scheduler.period, UINT64_MAX);
        ASSERT_STREQ(p->exec_cpu_affinity_initial, "0-1");
        ASSERT_STREQ(p->exec_cpu_affinity_final, "2-3,7");
}

TEST(full_landlock)
{
        _cleanup_spec_ oci_spec *s = load("full.json");
        ASSERT_NOT_NULL(s);
        const oci_landlock *ll = s->process->landlock;
        ASSERT_NOT_NULL(ll);
        ASSERT_EQ_U64(ll->handled_access_fs, 0xffff);
        ASSERT_EQ_U64(ll->handled_access_net, OCI_LL_NET_BIND_TCP | OCI_LL_NET_CONNECT_TCP);
        ASSERT_EQ_U64(ll->scoped, OCI_LL_SCOPE_ABSTRACT_UNIX_SOCKET | OCI_LL_SCOPE_SIGNAL);
        ASSERT_EQ_INT(ll->n_path_beneath, 2);
        ASSERT_EQ_U64(ll->path_beneath[0].allowed_access,
                      OCI_LL_FS_EXECUTE | OCI_LL_FS_READ_FILE | OCI_LL_FS_READ_DIR);
        ASSERT_EQ_INT(ll->path_beneath[0].paths.n, 2);
        ASSERT_STREQ(ll->path_beneath[0].paths.v[1], "/bin");
        ASSERT_EQ_U64(ll->path_beneath[1].allowed_access, OCI_LL_FS_WRITE_FILE |
                      OCI_LL_FS_READ_FILE | OCI_LL_FS_MAKE_REG | OCI_LL_FS_TRUNCATE);
        ASSERT_EQ_INT(ll->n_network_port, 2);
        ASSERT_EQ_U64(ll->network_port[0].allowed_access, OCI_LL_NET_CONNECT_TCP);
        ASSERT_EQ_INT(ll->network_port[0].n_ports, 4);
        ASSERT_EQ_U64(ll->network_port[0].ports[0], 80);
        ASSERT_EQ_U64(ll->network_port[0].ports[1], 443);
        ASSERT_EQ_U64(ll->network_port[0].ports[2], 0);
        ASSERT_EQ_U64(ll->network_port[0].ports[3], 65535);
        ASSERT_EQ_U64(ll->network_port[1].ports[0], 8080);
        ASSERT_FALSE(ll->enable_best_effort);
        ASSERT_TRUE(ll->log_same_exec_off);
        ASSERT_TRUE(ll->log_new_exec_on);
        ASSERT_TRUE(ll->log_subdomains_off);
}

TEST(full_top_level)
{
        _cleanup_spec_ oci_spec *s = load("full.json");
        ASSERT_NOT_NULL(s);
        ASSERT_STREQ(s->root_path, "/var/lib/msp/rootfs");
        ASSERT_TRUE(s->root_readonly);
        ASSERT_STREQ(s->hostname, "full");
        ASSERT_STREQ(s->domainname, "example.org");
        ASSERT_EQ_INT(s->n_mounts, 3);
        ASSERT_NULL(s->mounts[1].type);
        ASSERT_STREQ(s->mounts[1].source, "/srv/data");
        ASSERT_EQ_INT(s->mounts[1].n_uid_mappings, 1);
        ASSERT_EQ_INT(s->mounts[1].uid_mappings[0].host_id, 100000);
        ASSERT_EQ_INT(s->mounts[1].uid_mappings[0].size, 65536);
        ASSERT_EQ_INT(s->mounts[1].n_gid_mappings, 1);
        ASSERT_EQ_INT(s->mounts[1].gid_mappings[0].host_id, 200000);
        ASSERT_NOT_NULL(s->mounts[2].options.v);
        ASSERT_EQ_INT(s->mounts[2].options.n, 0);
        ASSERT_TRUE(s->has_hooks);
        const oci_hooks *h = &s->hooks;
        ASSERT_EQ_INT(h->prestart.n, 1);
        ASSERT_STREQ(h->prestart.v[0].path, "/usr/bin/prestart");
        ASSERT_EQ_INT(h->prestart.v[0].args.n, 2);
        ASSERT_STREQ(h->prestart.v[0].env.v[0], "X=1");
        ASSERT_TRUE(h->prestart.v[0].has_timeout);
        ASSERT_EQ_INT(h->prestart.v[0].timeout, 5);
        ASSERT_EQ_INT(h->create_runtime.n, 2);
        ASSERT_FALSE(h->create_runtime.v[0].has_timeout);
        ASSERT_EQ_INT(h->create_runtime.v[1].timeout, 1);
        ASSERT_EQ_INT(h->create_container.n, 1);
        ASSERT_EQ_INT(h->start_container.n, 1);
        ASSERT_EQ_INT(h->poststart.v[0].timeout, 2147483647);
        ASSERT_EQ_INT(h->poststop.n, 1);
        ASSERT_EQ_INT(h->poststop.v[0].env.n, 0);
        ASSERT_EQ_INT(s->annotations.n, 2);
        ASSERT_STREQ(s->annotations.v[1].key, "empty");
        ASSERT_STREQ(s->annotations.v[1].value, "");
}

TEST(full_linux)
{
        _cleanup_spec_ oci_spec *s = load("full.json");
        ASSERT_NOT_NULL(s);
        const oci_linux *l = s->linux_;
        static const char *const ns_order[] = { "pid", "network", "mount", "ipc",
                                                "uts", "user", "cgroup", "time" };
        ASSERT_EQ_INT(l->n_namespaces, 8);
        for (int i = 0; i < 8; i++)
                ASSERT_STREQ(oci_ns_type_name(l->namespaces[i].type), ns_order[i]);
        ASSERT_STREQ(l->namespaces[1].path, "/run/netns/full");
        ASSERT_EQ_INT(l->n_uid_mappings, 1);
        ASSERT_EQ_INT(l->n_gid_mappings, 2);
        ASSERT_EQ_U64(l->gid_mappings[1].host_id, 4294967295u);
        ASSERT_EQ_INT(l->n_devices, 4);
        ASSERT_EQ_INT(l->devices[0].type, 'c');
        ASSERT_STREQ(l->devices[0].path, "/dev/fuse");
        ASSERT_EQ_INT(l->devices[0].major, 10);
        ASSERT_EQ_INT(l->devices[0].minor, 229);
        ASSERT_TRUE(l->devices[0].has_file_mode);
        ASSERT_EQ_INT(l->devices[0].file_mode, 0666);
        ASSERT_TRUE(l->devices[0].has_uid);
        ASSERT_TRUE(l->devices[0].has_gid);
        ASSERT_EQ_INT(l->devices[1].type, 'b');
        ASSERT_FALSE(l->devices[1].has_file_mode);
        ASSERT_FALSE(l->devices[1].has_uid);
        ASSERT_EQ_INT(l->devices[2].type, 'u');
        ASSERT_EQ_INT(l->devices[3].type, 'p');
        ASSERT_STREQ(l->cgroups_path, "/msp/full");
        ASSERT_EQ_INT(l->sysctl.n, 2);
        ASSERT_STREQ(l->sysctl.v[1].key, "kernel.shm_rmid_forced");
        ASSERT_TRUE(l->has_rootfs_propagation);
        ASSERT_EQ_U64(l->rootfs_propagation, MS_SLAVE | MS_REC);
        ASSERT_EQ_INT(l->masked_paths.n, 2);
        ASSERT_EQ_INT(l->readonly_paths.n, 1);
        ASSERT_STREQ(l->mount_label, "system_u:object_r:container_file_t:s0:c1,c2");
        ASSERT_NOT_NULL(l->intel_rdt);
        ASSERT_STREQ(l->intel_rdt->clos_id, "guaranteed");
        ASSERT_STREQ(l->intel_rdt->l3_cache_schema, "L3:0=7f0;1=1f");
        ASSERT_STREQ(l->intel_rdt->mem_bw_schema, "MB:0=20;1=70");
        ASSERT_EQ_INT(l->intel_rdt->schemata.n, 2);
        ASSERT_TRUE(l->intel_rdt->enable_cmt && l->intel_rdt->enable_mbm);
        ASSERT_TRUE(l->intel_rdt->enable_monitoring);
        ASSERT_NOT_NULL(l->personality);
        ASSERT_STREQ(l->personality->domain, "LINUX32");
        ASSERT_EQ_INT(l->personality->flags.n, 0);
        ASSERT_TRUE(l->time_boottime.present);
        ASSERT_EQ_INT(l->time_boottime.secs, -86400);
        ASSERT_EQ_INT(l->time_boottime.nanosecs, 999999999);
        ASSERT_TRUE(l->time_monotonic.present);
        ASSERT_EQ_INT(l->time_monotonic.secs, INT64_MAX);
        ASSERT_EQ_INT(l->n_net_devices, 2);
        ASSERT_STREQ(l->net_devices[0].host_name, "eth1");
        ASSERT_STREQ(l->net_devices[0].name, "ceth1");
        ASSERT_STREQ(l->net_devices[1].host_name, "dummy0");
        ASSERT_NULL(l->net_devices[1].name);
        ASSERT_NOT_NULL(l->memory_policy);
        ASSERT_STREQ(l->memory_policy->mode, "MPOL_INTERLEAVE");
        ASSERT_STREQ(l->memory_policy->nodes, "0-1");
        ASSERT_STREQ(l->memory_policy->flags.v[0], "MPOL_F_STATIC_NODES");
}

TEST(full_resources)
{
        _cleanup_spec_ oci_spec *s = load("full.json");
        ASSERT_NOT_NULL(s);
        const oci_resources *r = s->linux_->resources;
        ASSERT_EQ_INT(r->n_devices, 3);
        ASSERT_TRUE(r->devices[1].allow);
        ASSERT_EQ_INT(r->devices[1].type, 'c');
        ASSERT_TRUE(r->devices[1].has_major && r->devices[1].has_minor);
        ASSERT_EQ_INT(r->devices[1].minor, 229);
        ASSERT_STREQ(r->devices[1].access, "rw");
        ASSERT_TRUE(r->devices[2].has_major);
        ASSERT_FALSE(r->devices[2].has_minor);
        const oci_memory *m = &r->memory;
        ASSERT_EQ_INT(m->limit, 536870912);
        ASSERT_EQ_INT(m->reservation, 268435456);
        ASSERT_EQ_INT(m->swap, -1);
        ASSERT_EQ_INT(m->kernel, 1048576);
        ASSERT_EQ_INT(m->kernel_tcp, 2097152);
        ASSERT_EQ_U64(m->swappiness, 60);
        ASSERT_TRUE(m->has_disable_oom_killer && m->disable_oom_killer);
        ASSERT_TRUE(m->has_use_hierarchy);
        ASSERT_FALSE(m->use_hierarchy);
        ASSERT_TRUE(m->has_check_before_update && m->check_before_update);
        const oci_cpu *c = &r->cpu;
        ASSERT_EQ_U64(c->shares, 1024);
        ASSERT_EQ_INT(c->quota, -1);
        ASSERT_EQ_U64(c->burst, 5000);
        ASSERT_EQ_INT(c->realtime_runtime, 950000);
        ASSERT_EQ_U64(c->realtime_period, 1000000);
        ASSERT_STREQ(c->cpus, "0-3");
        ASSERT_STREQ(c->mems, "0");
        ASSERT_TRUE(c->has_idle);
        ASSERT_EQ_INT(c->idle, 1);
        ASSERT_TRUE(r->has_pids);
        ASSERT_EQ_INT(r->pids_limit, -1);
        const oci_blockio *b = &r->blockio;
        ASSERT_EQ_INT(b->weight, 500);
        ASSERT_EQ_INT(b->leaf_weight, 300);
        ASSERT_EQ_INT(b->n_weight_device, 2);
        ASSERT_EQ_INT(b->weight_device[0].leaf_weight, 50);
        ASSERT_FALSE(b->weight_device[1].has_weight);
        ASSERT_EQ_U64(b->throttle_read_bps.v[0].rate, 1048576);
        ASSERT_EQ_U64(b->throttle_write_bps.v[0].rate, UINT64_MAX);
        ASSERT_EQ_U64(b->throttle_read_iops.v[0].rate, 100);
        ASSERT_EQ_INT(b->throttle_write_iops.n, 2);
        ASSERT_EQ_INT(b->throttle_write_iops.v[1].minor, 16);
        ASSERT_EQ_INT(r->n_hugepage_limits, 2);
        ASSERT_STREQ(r->hugepage_limits[1].page_size, "1GB");
        ASSERT_TRUE(r->has_network && r->has_net_class_id);
        ASSERT_EQ_INT(r->net_class_id, 1048577);
        ASSERT_EQ_INT(r->n_net_priorities, 2);
        ASSERT_STREQ(r->net_priorities[0].name, "eth0");
        ASSERT_EQ_INT(r->net_priorities[0].priority, 500);
        ASSERT_EQ_INT(r->n_rdma, 2);
        ASSERT_STREQ(r->rdma[0].device, "mlx5_1");
        ASSERT_EQ_INT(r->rdma[0].hca_handles, 3);
        ASSERT_FALSE(r->rdma[1].has_hca_handles);
        ASSERT_EQ_INT(r->rdma[1].hca_objects, 1);
        ASSERT_EQ_INT(r->unified.n, 2);
        ASSERT_STREQ(r->unified.v[1].value, "default 100");
}

TEST(full_seccomp)
{
        _cleanup_spec_ oci_spec *s = load("full.json");
        ASSERT_NOT_NULL(s);
        const oci_seccomp *sc = s->linux_->seccomp;
        ASSERT_EQ_INT(sc->default_action, OCI_SECCOMP_ERRNO);
        ASSERT_EQ_INT(sc->default_errno_ret, 38);
        ASSERT_EQ_INT(sc->architectures.n, 2);
        ASSERT_EQ_INT(sc->flags, OCI_SECCOMP_FLAG_TSYNC | OCI_SECCOMP_FLAG_LOG |
                      OCI_SECCOMP_FLAG_SPEC_ALLOW | OCI_SECCOMP_FLAG_WAIT_KILLABLE_RECV);
        ASSERT_STREQ(sc->listener_path, "/run/seccomp-agent.sock");
        ASSERT_STREQ(sc->listener_metadata, "full-metadata");
        ASSERT_EQ_INT(sc->n_syscalls, 10);
        ASSERT_EQ_U64(sc->syscalls[1].args[0].value, UINT64_MAX);
        const oci_seccomp_syscall *clone = &sc->syscalls[2];
        ASSERT_EQ_INT(clone->n_args, 2);
        ASSERT_EQ_INT(clone->args[0].index, 5);
        ASSERT_EQ_INT(clone->args[0].op, OCI_SECCOMP_OP_MASKED_EQ);
        ASSERT_EQ_U64(clone->args[0].value, 2114060288);
        ASSERT_EQ_INT(clone->args[1].op, OCI_SECCOMP_OP_NE);
        static const oci_seccomp_action actions[] = {
                OCI_SECCOMP_KILL,  OCI_SECCOMP_KILL_PROCESS, OCI_SECCOMP_KILL_THREAD,
                OCI_SECCOMP_TRAP,  OCI_SECCOMP_TRACE,        OCI_SECCOMP_LOG,
                OCI_SECCOMP_NOTIFY,
        };
        for (int i = 0; i < 7; i++)
                ASSERT_EQ_INT(sc->syscalls[3 + i].action, actions[i]);
        ASSERT_EQ_INT(sc->syscalls[7].errno_ret, 4);
        const oci_seccomp_syscall *log = &sc->syscalls[8];
        ASSERT_EQ_INT(log->args[0].op, OCI_SECCOMP_OP_LT);
        ASSERT_EQ_INT(log->args[1].op, OCI_SECCOMP_OP_LE);
        ASSERT_EQ_INT(log->args[2].op, OCI_SECCOMP_OP_GE);
        ASSERT_EQ_INT(log->args[3].op, OCI_SECCOMP_OP_GT);
}

TEST(landlock_min)
{
        _cleanup_spec_ oci_spec *s = load("landlock-min.json");
        ASSERT_NOT_NULL(s);
        const oci_landlock *ll = s->process->landlock;
        ASSERT_NOT_NULL(ll);
        ASSERT_TRUE(s->process->no_new_privileges);
        ASSERT_EQ_U64(ll->handled_access_fs, 0x7fff);   /* ABI 3: all but ioctl_dev */
        ASSERT_EQ_U64(ll->handled_access_net, 3);
        ASSERT_EQ_U64(ll->scoped, 0);
        ASSERT_EQ_INT(ll->n_path_beneath, 2);
        ASSERT_EQ_INT(ll->path_beneath[0].paths.n, 4);
        ASSERT_EQ_INT(ll->n_network_port, 1);
        ASSERT_EQ_U64(ll->network_port[0].ports[1], 443);
        ASSERT_TRUE(ll->enable_best_effort);
}

TEST(bare_document_fixtures)
{
        size_t len = 0;
        _cleanup_free_ char *data = read_fixture("process-exec.json", &len);
        ASSERT_NOT_NULL(data);
        msp_err err = { 0 };
        _cleanup_spec_ oci_spec *p = NULL;
        ASSERT_OK_ERR(oci_process_parse_data("process-exec.json", data, len, &p, &err), err);
        ASSERT_EQ_INT(p->process->user.uid, 1000);
        ASSERT_EQ_INT(p->process->user.n_additional_gids, 2);
        ASSERT_STREQ(p->process->args.v[0], "/bin/ps");
        ASSERT_EQ_INT(p->process->oom_score_adj, 100);

        _cleanup_free_ char *rdata = read_fixture("resources-update.json", &len);
        ASSERT_NOT_NULL(rdata);
        _cleanup_spec_ oci_spec *r = NULL;
        ASSERT_OK_ERR(oci_resources_parse_data("resources-update.json", rdata, len, &r, &err),
                      err);
        ASSERT_EQ_INT(r->linux_->resources->memory.limit, 268435456);
        ASSERT_EQ_INT(r->linux_->resources->cpu.quota, 20000);
        ASSERT_EQ_INT(r->linux_->resources->blockio.throttle_read_bps.n, 1);

        _cleanup_free_ char *sdata = read_fixture("state-private.json", &len);
        ASSERT_NOT_NULL(sdata);
        oci_state *st = NULL;
        ASSERT_OK_ERR(oci_state_parse_data("state-private.json", sdata, len, &st, &err), err);
        ASSERT_EQ_INT(st->pid, 4242);
        ASSERT_EQ_U64(st->pid_start_time, UINT64_MAX);
        ASSERT_STREQ(st->annotations.v[0].key, "org.example/key");
        oci_state_free(st);
}

/* ---- numbers, nulls, versions, bare documents ---- */

TEST(uint64_max_exact)
{
        _cleanup_spec_ oci_spec *s = parse(
                "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},\"process\":{\"cwd\":\"/\","
                "\"args\":[\"x\"],\"rlimits\":[{\"type\":\"RLIMIT_AS\",\"hard\":18446744073709551615,"
                "\"soft\":18446744073709551614}]},\"linux\":{\"resources\":{\"memory\":{\"limit\":"
                "9223372036854775807,\"swap\":-9223372036854775808}}}}");
        ASSERT_NOT_NULL(s);
        ASSERT_EQ_U64(s->process->rlimits[0].hard, UINT64_MAX);
        ASSERT_EQ_U64(s->process->rlimits[0].soft, UINT64_MAX - 1);
        ASSERT_EQ_INT(s->linux_->resources->memory.limit, INT64_MAX);
        ASSERT_EQ_INT(s->linux_->resources->memory.swap, INT64_MIN);
}

TEST(nulls_are_absent)
{
        _cleanup_spec_ oci_spec *s = parse(
                "{\"ociVersion\":\"1.1.0\",\"root\":{\"path\":\"r\",\"readonly\":null},"
                "\"hostname\":null,\"mounts\":null,\"hooks\":null,\"annotations\":null,"
                "\"process\":{\"cwd\":\"/\",\"args\":[\"x\"],\"env\":null,\"capabilities\":null,"
                "\"user\":{\"uid\":1,\"gid\":2,\"umask\":null}},\"linux\":null}");
        ASSERT_NOT_NULL(s);
        ASSERT_NULL(s->hostname);
        ASSERT_EQ_INT(s->n_mounts, 0);
        ASSERT_FALSE(s->has_hooks);
        ASSERT_FALSE(s->process->has_capabilities);
        ASSERT_FALSE(s->process->user.has_umask);
        ASSERT_NULL(s->process->env.v);
        ASSERT_NULL(s->linux_);
}

TEST(versions_accepted)
{
        static const char *const ok[] = { "1.0.0", "1.0.2-dev", "1.1.0", "1.2.1", "1.3.0",
                                          "1.3.7+build.5", "1.0.0-rc5" };
        for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
                char buf[256];
                snprintf(buf, sizeof buf, "{\"ociVersion\":\"%s\",\"root\":{\"path\":\"r\"}}", ok[i]);
                _cleanup_spec_ oci_spec *s = parse(buf);
                ASSERT_NOT_NULL(s);
                ASSERT_STREQ(s->oci_version, ok[i]);
                ASSERT_NULL(s->process);
        }
}

TEST(propagation_flags)
{
        static const struct {
                const char *name;
                unsigned long flags;
        } t[] = {
                { "shared", MS_SHARED },           { "slave", MS_SLAVE },
                { "private", MS_PRIVATE },         { "unbindable", MS_UNBINDABLE },
                { "rshared", MS_SHARED | MS_REC }, { "rslave", MS_SLAVE | MS_REC },
                { "rprivate", MS_PRIVATE | MS_REC }, { "runbindable", MS_UNBINDABLE | MS_REC },
        };
        for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
                char buf[256];
                snprintf(buf, sizeof buf, "{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
                         "\"linux\":{\"rootfsPropagation\":\"%s\"}}", t[i].name);
                _cleanup_spec_ oci_spec *s = parse(buf);
                ASSERT_NOT_NULL(s);
                ASSERT_TRUE(s->linux_->has_rootfs_propagation);
                ASSERT_EQ_U64(s->linux_->rootfs_propagation, t[i].flags);
        }
        _cleanup_spec_ oci_spec *s = parse("{\"ociVersion\":\"1.0.0\",\"root\":{\"path\":\"r\"},"
                                           "\"linux\":{\"rootfsPropagation\":\"\"}}");
        ASSERT_NOT_NULL(s);
        ASSERT_FALSE(s->linux_->has_rootfs_propagation);
}

TEST(landlock_defaults)
{
        _cleanup_spec_ oci_spec *s = parse(
                "{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"r\"},\"process\":{\"cwd\":\"/\","
                "\"args\":[\"x\"],\"landlock\":{\"handledAccess\":{\"handledAccessFS\":"
                "[\"read_file\"]}}}}");
        ASSERT_NOT_NULL(s);
        const oci_landlock *ll = s->process->landlock;
        ASSERT_NOT_NULL(ll);
        ASSERT_TRUE(ll->enable_best_effort);
        ASSERT_EQ_U64(ll->handled_access_fs, OCI_LL_FS_READ_FILE);
        ASSERT_EQ_U64(ll->handled_access_net, 0);
        ASSERT_EQ_INT(ll->n_path_beneath, 0);
        ASSERT_FALSE(ll->log_new_exec_on);
}

TEST(process_document)
{
        const char *json = "{\"terminal\":false,\"user\":{\"uid\":7,\"gid\":8},\"args\":"
                           "[\"/bin/ls\",\"-l\"],\"env\":[\"A=b\"],\"cwd\":\"/root\","
                           "\"capabilities\":{\"bounding\":[\"CAP_SYS_ADMIN\"]}}";
        msp_err err = { 0 };
        _cleanup_spec_ oci_spec *s = NULL;
        ASSERT_OK_ERR(oci_process_parse_data("process.json", json, strlen(json), &s, &err), err);
        ASSERT_NULL(s->oci_version);
        ASSERT_NULL(s->linux_);
        ASSERT_NOT_NULL(s->process);
        ASSERT_EQ_INT(s->process->user.uid, 7);
        ASSERT_STREQ(s->process->args.v[1], "-l");
        ASSERT_EQ_U64(s->process->capabilities.bounding, capbit("CAP_SYS_ADMIN"));
}

TEST(resources_document)
{
        const char *json = "{\"memory\":{\"limit\":1048576,\"swap\":2097152},\"cpu\":{\"shares\":"
                           "512,\"cpus\":\"1\"},\"pids\":{\"limit\":10},\"blockIO\":{\"weight\":"
                           "100},\"unified\":{\"pids.max\":\"5\"}}";
        msp_err err = { 0 };
        _cleanup_spec_ oci_spec *s = NULL;
        ASSERT_OK_ERR(oci_resources_parse_data("resources.json", json, strlen(json), &s, &err),
                      err);
        ASSERT_NULL(s->process);
        ASSERT_NOT_NULL(s->linux_);
        const oci_resources *r = s->linux_->resources;
        ASSERT_NOT_NULL(r);
        ASSERT_EQ_INT(r->memory.limit, 1048576);
        ASSERT_EQ_U64(r->cpu.shares, 512);
        ASSERT_EQ_INT(r->pids_limit, 10);
        ASSERT_EQ_INT(r->blockio.weight, 100);
        ASSERT_STREQ(r->unified.v[0].key, "pids.max");
}

TEST(name_tables)
{
        ASSERT_EQ_INT(oci_cap_count(), 41);
        ASSERT_EQ_INT(oci_cap_from_name("CAP_CHOWN"), 0);
        ASSERT_EQ_INT(oci_cap_from_name("CAP_SYS_ADMIN"), 21);
        ASSERT_EQ_INT(oci_cap_from_name("CAP_CHECKPOINT_RESTORE"), 40);
        ASSERT_EQ_INT(oci_cap_from_name("CAP_FOO"), -EINVAL);
        ASSERT_STREQ(oci_cap_name(38), "CAP_PERFMON");
        ASSERT_NULL(oci_cap_name(41));
        ASSERT_NULL(oci_cap_name(-1));
        ASSERT_EQ_INT(oci_rlimit_from_name("RLIMIT_NOFILE"), RLIMIT_NOFILE);
        ASSERT_EQ_INT(oci_rlimit_from_name("RLIMIT_RTTIME"), RLIMIT_RTTIME);
        ASSERT_EQ_INT(oci_rlimit_from_name("NOFILE"), -EINVAL);
        ASSERT_STREQ(oci_rlimit_name(RLIMIT_MEMLOCK), "RLIMIT_MEMLOCK");
        ASSERT_STREQ(oci_ns_type_name(OCI_NS_TIME), "time");
        ASSERT_NULL(oci_ns_type_name(OCI_NS_TYPE_MAX));
        ASSERT_STREQ(oci_seccomp_action_name(OCI_SECCOMP_NOTIFY), "SCMP_ACT_NOTIFY");
        ASSERT_STREQ(oci_seccomp_op_name(OCI_SECCOMP_OP_MASKED_EQ), "SCMP_CMP_MASKED_EQ");
        ASSERT_STREQ(oci_seccomp_flag_name(3), "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV");
        ASSERT_NULL(oci_seccomp_flag_name(4));
        ASSERT_STREQ(oci_landlock_fs_right_name(0), "execute");
        ASSERT_STREQ(oci_landlock_fs_right_name(15), "ioctl_dev");
        ASSERT_NULL(oci_landlock_fs_right_name(16));
        ASSERT_STREQ(oci_landlock_net_right_name(1), "connect");
        ASSERT_NULL(oci_landlock_net_right_name(2));
        ASSERT_STREQ(oci_landlock_scope_name(1), "signal");
        ASSERT_STREQ(oci_memory_policy_mode_name(2), "MPOL_BIND");
        ASSERT_STREQ(oci_memory_policy_flag_name(0), "MPOL_F_NUMA_BALANCING");
}

int
main(int argc, char **argv)
{
        fixtures = argc > 1 ? argv[1] : getenv("OCI_FIXTURES");
        if (!fixtures) {
                printf("1..0 # SKIP no fixtures directory (argv[1] or $OCI_FIXTURES)\n");
                return 0;
        }
        RUN(every_fixture_parses);
        RUN(runc_spec);
        RUN(runc_spec_rootless);
        RUN(crun_spec);
        RUN(podman_limits);
        RUN(podman_tty_user);
        RUN(podman_cpu_env);
        RUN(full_process);
        RUN(full_landlock);
        RUN(full_top_level);
        RUN(full_linux);
        RUN(full_resources);
        RUN(full_seccomp);
        RUN(landlock_min);
        RUN(bare_document_fixtures);
        RUN(uint64_max_exact);
        RUN(nulls_are_absent);
        RUN(versions_accepted);
        RUN(propagation_flags);
        RUN(landlock_defaults);
        RUN(process_document);
        RUN(resources_document);
        RUN(name_tables);
        return tap_done();
}
