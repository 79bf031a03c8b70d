#!/usr/bin/env bats
# Every real config in tests/fixtures/ (made by runc, crun and podman) runs under msp with
# the busybox rootfs, and each gets what it configures. The configs are used as written
# except for what points at the machine they were made on: root.path, namespace paths,
# bind-mount sources and the cgroup path; process.terminal is off (terminal.bats covers
# terminals) and process.args runs msp-helper.

load helpers

FIXTURES="$BATS_TEST_DIRNAME/../fixtures"

setup() {
        setup_bundle
}

teardown() {
        teardown_containers
}

# use_fixture NAME HELPER_ARGS...: the bundle's config becomes tests/fixtures/NAME.json,
# rewritten as described above (by python: jq 1.6 would round 2^64-1 in full.json).
use_fixture() {
        local name=$1
        shift
        mkdir -p "$BATS_TEST_TMPDIR/sources"
        /usr/bin/python3 - "$FIXTURES/$name.json" "$BUNDLE/config.json" "$BATS_TEST_TMPDIR/sources" \
                "/$CGROUP_PREFIX/$CID" /bin/msp-helper "$@" <<'PY'
import json, os, sys
src, dst, sources, cgpath, *args = sys.argv[1:]
with open(src) as f:
    c = json.load(f)
c["root"]["path"] = "rootfs"
c["process"]["terminal"] = False
c["process"]["args"] = args
lx = c.setdefault("linux", {})
lx["cgroupsPath"] = cgpath
for ns in lx.get("namespaces", []):
    ns.pop("path", None)
for i, m in enumerate(c.get("mounts", [])):
    opts = m.get("options", [])
    if m.get("type") != "bind" and "bind" not in opts and "rbind" not in opts:
        continue
    if os.path.exists(m.get("source", "")):
        continue
    # a fresh file or directory for a bind source that does not exist here
    p = os.path.join(sources, str(i))
    d = m["destination"]
    if d.startswith("/etc/") or os.path.basename(d).startswith("."):
        with open(p, "w") as f:
            f.write("fixture file for %s\n" % d)
    else:
        os.mkdir(p)
    m["source"] = p
with open(dst, "w") as f:
    json.dump(c, f, indent=1)
PY
}

# helper_run_config: `msp run` the bundle as it is; $output is what the helper printed.
# Status 1 is the helper saying that something it tried was refused.
helper_run_config() {
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -le 1 ]
        assert_nothing_left "$CID"
}

# start_fixture (after create_bg and looking at the created container): start it, wait for the helper to exit; $output is what it printed.
start_fixture() {
        local pid
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        wait_pid_exit "$pid" 10
        output=$(cat "$BATS_TEST_TMPDIR/$CID.out")
        echo "$output"
        msp delete "$CID"
        assert_nothing_left "$CID"
}

# fixture_caps NAME SET: the cap_mask of one capability set of the fixture.
fixture_caps() {
        # shellcheck disable=SC2046
        cap_mask $(jq -r ".process.capabilities.$2 // [] | .[]" "$FIXTURES/$1.json")
}

# fixture_rlimit NAME TYPE: "soft hard" as the fixture sets it.
fixture_rlimit() {
        jq -r ".process.rlimits[] | select(.type == \"$2\") | \"\(.soft) \(.hard)\"" "$FIXTURES/$1.json"
}

check_runc_like() {
        local name=$1
        [ "$(value hostname)" = "$(jq -r .hostname "$FIXTURES/$name.json")" ]
        [ "$(value pid)" = 1 ]
        [ "$(value nnp)" = 1 ]
        [ "$(value write)" = EROFS ]           # root.readonly
        [ "$(value CapBnd)" = "$(fixture_caps "$name" bounding)" ]
        [ "$(value CapEff)" = "$(fixture_caps "$name" effective)" ]
        [ "$(value CapPrm)" = "$(fixture_caps "$name" permitted)" ]
        [ "$(value CapInh)" = "$(fixture_caps "$name" inheritable)" ]
        [ "$(value RLIMIT_NOFILE)" = "$(fixture_rlimit "$name" RLIMIT_NOFILE)" ]
        # the config's environment, and HOME from the image's /etc/passwd when it sets none (runc's rule)
        [ "$(printf '%s\n' "$output" | grep '^env\.')" = "$(jq -r '.process.env + (if any(.process.env[]; startswith("HOME=")) then [] else ["HOME=/root"] end) | .[] | "env." + .' "$FIXTURES/$name.json")" ]
        printf '%s\n' "$output" | grep -q '^mount=/proc proc '
        printf '%s\n' "$output" | grep -q '^mount=/dev/pts devpts '
        printf '%s\n' "$output" | grep -q '^mount=/sys sysfs ro,'
}

@test "runc-spec.json: hostname, read-only root, capabilities, rlimits, env" {
        use_fixture runc-spec hostname -- pid -- nnp -- write /x -- caps -- rlimits -- env -- mounts -- ns
        helper_run_config
        check_runc_like runc-spec
        [ "$(value ns.net)" != "$(host_ns net)" ]
}

@test "crun-spec.json: hostname, read-only root, capabilities, rlimits, env" {
        use_fixture crun-spec hostname -- pid -- nnp -- write /x -- caps -- rlimits -- env -- mounts -- ns
        helper_run_config
        check_runc_like crun-spec
        [ "$(value ns.net)" != "$(host_ns net)" ]
}

@test "runc-spec-rootless.json: the user namespace mapping as configured" {
        use_fixture runc-spec-rootless read /proc/self/uid_map -- read /proc/self/gid_map -- ids -- hostname -- mounts -- ns
        helper_run_config
        want_uid=$(jq -r '.linux.uidMappings[0] | "\(.containerID) \(.hostID) \(.size)"' "$FIXTURES/runc-spec-rootless.json")
        want_gid=$(jq -r '.linux.gidMappings[0] | "\(.containerID) \(.hostID) \(.size)"' "$FIXTURES/runc-spec-rootless.json")
        maps=$(printf '%s\n' "$output" | sed -n 's/^content=//p' | tr -s ' ' | sed 's/^ //')
        [ "$maps" = "$(printf '%s\n%s' "$want_uid" "$want_gid")" ]
        [ "$(value uid)" = 0 ]
        [ "$(value hostname)" = runc ]
        [ "$(value ns.user)" != "$(host_ns user)" ]
        # /sys is a read-only bind of the host's (no network namespace of its own)
        printf '%s\n' "$output" | grep -q '^mount=/sys sysfs ro,'
}

@test "runc-spec-rootless.json mapped to host uid 1000: the process runs as 1000 outside" {
        use_fixture runc-spec-rootless ids -- read /proc/self/uid_map
        update_config '.linux.uidMappings[0].hostID = 1000 | .linux.gidMappings[0].hostID = 1000'
        make_traversable "$BUNDLE"
        create_bg "$CID"
        # the parked init has already switched to the process' user
        pid=$(state_field "$CID" pid)
        [ "$(awk '/^Uid:/ { print $2 }' /proc/"$pid"/status)" = 1000 ]
        [ "$(awk '/^Gid:/ { print $2 }' /proc/"$pid"/status)" = 1000 ]
        start_fixture
        [ "$(value uid)" = 0 ]
        [ "$(value content | tr -s ' ' | sed 's/^ //')" = "0 1000 1" ]
}

@test "podman-limits.json: memory and pids limits, read-only root, no capabilities" {
        use_fixture podman-limits write /x -- write /tmp/x -- caps -- rlimits -- syscall mount
        create_bg "$CID"
        mem="/sys/fs/cgroup/memory/$CGROUP_PREFIX/$CID"
        pids="/sys/fs/cgroup/pids/$CGROUP_PREFIX/$CID"
        [ "$(cat "$mem/memory.limit_in_bytes")" = 67108864 ]
        [ "$(cat "$pids/pids.max")" = 50 ]
        pid=$(state_field "$CID" pid)
        grep -qx "$pid" "$mem/cgroup.procs"
        start_fixture
        [ "$(value write)" = EROFS ]
        # /tmp is a tmpfs in podman's config: writable
        printf '%s\n' "$output" | grep -qx write=ok
        [ "$(value CapEff)" = 0000000000000000 ]
        [ "$(value CapBnd)" = 0000000000000000 ]
        [ "$(value RLIMIT_NOFILE)" = "$(fixture_rlimit podman-limits RLIMIT_NOFILE)" ]
        [ "$(value RLIMIT_NPROC)" = "$(fixture_rlimit podman-limits RLIMIT_NPROC)" ]
        [ "$(value syscall.mount)" = EPERM ]
}

@test "podman-cpu-env.json: hostname, env, cwd, nofile, cpu quota" {
        use_fixture podman-cpu-env hostname -- env -- cwd -- rlimits -- caps
        create_bg "$CID"
        cpu="/sys/fs/cgroup/cpu/$CGROUP_PREFIX/$CID"
        [ "$(cat "$cpu/cpu.cfs_quota_us")" = 50000 ]
        [ "$(cat "$cpu/cpu.cfs_period_us")" = 100000 ]
        [ "$(cat "/sys/fs/cgroup/pids/$CGROUP_PREFIX/$CID/pids.max")" = 2048 ]
        start_fixture
        [ "$(value hostname)" = box ]
        [ "$(value env.FOO)" = bar ]
        [ "$(value env.HOSTNAME)" = box ]
        [ "$(value cwd)" = /tmp ]
        [ "$(value RLIMIT_NOFILE)" = "100 200" ]
        [ "$(value CapBnd)" = "$(fixture_caps podman-cpu-env bounding)" ]
        [ "$(value CapEff)" = "$(fixture_caps podman-cpu-env effective)" ]
}

@test "podman-tty-user.json: uid and gid 1000, tmpfs /scratch, no_new_privs" {
        use_fixture podman-tty-user ids -- nnp -- write /scratch/x -- stat /scratch/x -- mounts -- caps
        helper_run_config
        [ "$(value uid)" = 1000 ]
        [ "$(value gid)" = 1000 ]
        [ "$(value groups)" = 1000 ]
        [ "$(value nnp)" = 1 ]
        [ "$(value write)" = ok ]
        [ "$(value stat.uid)" = 1000 ]
        printf '%s\n' "$output" | grep -q '^mount=/scratch tmpfs '
        # a non-root process keeps no capabilities after execve (no ambient set)
        [ "$(value CapEff)" = 0000000000000000 ]
        [ "$(value CapBnd)" = "$(fixture_caps podman-tty-user bounding)" ]
}

@test "full.json: create refuses the fields msp does not support, by name" {
        use_fixture full pid
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"not supported"* ]]
        [[ "$output" == *"execCPUAffinity"* || "$output" == *apparmor* || "$output" == *selinux* || "$output" == *intelRdt* || "$output" == *netDevices* ||
           "$output" == *memoryPolicy* || "$output" == *mountLabel* ]]
        assert_nothing_left "$CID"
}

@test "full.json runs" {
        skip "full.json asks for intelRdt, netDevices, memoryPolicy, mountLabel (SELinux), execCPUAffinity and idmapped mounts, which msp refuses by design"
}
