#!/usr/bin/env bats
# What Docker, containerd and Kubernetes rely on from the runtime, checked against runc
# 1.1.5's behaviour on the same input: the device cgroup rules (runc's implicit list,
# no rule for a linux.devices node), /sys/fs/cgroup inside a container on a v1/hybrid
# host, `update` as the containerd shim sends it (zeros mean "unchanged", all or
# nothing), and a state root that holds only container directories.

load helpers

setup() {
        setup_bundle
        if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then V2=1; else V2=0; fi
}

teardown() {
        teardown_containers
}

# v1_dir CONTROLLER: the container's cgroup in that v1 hierarchy.
v1_dir() {
        echo "/sys/fs/cgroup/$1/$CGROUP_PREFIX/$CID"
}

need_v1() {
        [ "$V2" = 0 ] || skip "needs cgroup v1 controllers (this host is cgroup v2 only)"
}

add_caps() {
        local c
        for c in "$@"; do
                update_config ".process.capabilities.bounding += [\"$c\"]
                        | .process.capabilities.effective += [\"$c\"]
                        | .process.capabilities.permitted += [\"$c\"]"
        done
}

@test "devices: the cgroup list is the config's rules plus exactly runc's implicit ones" {
        need_v1
        # Docker's list: deny everything; runc appends mknod of any c/b node and null,
        # random, full, tty, zero, urandom, pts, ptmx, tun (no console, no linux.devices)
        update_config '.linux.resources.devices = [{"allow": false, "access": "rwm"},
                {"allow": true, "type": "c", "major": 42, "minor": 1, "access": "r"}]'
        run_detached sleep 100
        # the kernel's list, sorted: what runc 1.1.5 leaves there for this config
        run sort "$(v1_dir devices)/devices.list"
        echo "$output"
        [ "$output" = "b *:* m
c *:* m
c 10:200 rwm
c 136:* rwm
c 1:3 rwm
c 1:5 rwm
c 1:7 rwm
c 1:8 rwm
c 1:9 rwm
c 42:1 r
c 5:0 rwm
c 5:2 rwm" ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "devices: a linux.devices node gets no allow rule: /dev/kmsg denied by the config stays EPERM" {
        update_config '.linux.resources.devices = [{"allow": false, "access": "rwm"},
                {"allow": false, "type": "c", "major": 1, "minor": 11, "access": "rwm"}]
                | .linux.devices = [{"path": "/dev/kmsg", "type": "c", "major": 1, "minor": 11,
                                     "fileMode": 420, "uid": 0, "gid": 0}]'
        add_caps CAP_SYSLOG
        set_args /bin/msp-helper read /dev/kmsg -- read /dev/null
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "${lines[0]}" = read=EPERM ]
        [ "${lines[1]}" = read=ok ]
        assert_nothing_left "$CID"
}

@test "devices: mknod works in a Docker-style container, also past an explicit mknod deny (as runc)" {
        # runc appends "c *:* m" and "b *:* m" after the config's rules: creating a node
        # is always allowed (CAP_MKNOD decides), opening it is what the rules decide.
        update_config '.linux.resources.devices = [{"allow": false, "access": "rwm"},
                {"allow": false, "type": "c", "major": 42, "minor": 0, "access": "m"}]'
        add_caps CAP_MKNOD
        set_args /bin/msp-helper mknod /dev/d0 c 42 0 -- mknod /tmp/d1 c 42 1 -- \
                mknod /tmp/b0 b 7 200 -- read /dev/d0 -- read /dev/zero
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "${lines[0]}" = mknod=ok ]
        [ "${lines[1]}" = mknod=ok ]
        [ "${lines[2]}" = mknod=ok ]
        [ "${lines[3]}" = read=EPERM ]
        [ "${lines[4]}" = read=ok ]
        assert_nothing_left "$CID"
}

# lim FILE: a v1 memory or cpu file of the container.
v1_read() {
        cat "$(v1_dir "$1")/$2"
}

# A running container with memory 64 MiB (+64 MiB swap), cpu shares 512, quota 20 ms
# per 100 ms.
start_limited() {
        update_config '.linux.resources.memory = {"limit": 67108864, "swap": 134217728}
                | .linux.resources.cpu = {"shares": 512, "quota": 20000, "period": 100000}'
        run_detached sleep 100
}

need_memsw() {
        need_v1
        [ -e /sys/fs/cgroup/memory/memory.memsw.limit_in_bytes ] ||
                skip "needs swap accounting (memory.memsw.limit_in_bytes; boot with swapaccount=1)"
}

# The document containerd's runc shim sends for `docker update --memory 100m
# --memory-swap 200m`: every field it knows, zero where the user gave nothing.
SHIM_UPDATE='{"memory":{"limit":104857600,"reservation":0,"swap":209715200,"kernel":0},"cpu":{"shares":0,"quota":0,"period":0},"blockIO":{"weight":0}}'

@test "update: zeros in the shim's document leave fields unchanged (-r -, --resources FILE, flags)" {
        need_memsw
        start_limited
        local soft
        soft=$(v1_read memory memory.soft_limit_in_bytes)
        run msp update -r - "$CID" <<<"$SHIM_UPDATE"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(v1_read memory memory.limit_in_bytes)" = 104857600 ]
        [ "$(v1_read memory memory.memsw.limit_in_bytes)" = 209715200 ]
        [ "$(v1_read memory memory.soft_limit_in_bytes)" = "$soft" ]
        [ "$(v1_read cpu cpu.shares)" = 512 ]
        [ "$(v1_read cpu cpu.cfs_quota_us)" = 20000 ]
        [ "$(v1_read cpu cpu.cfs_period_us)" = 100000 ]
        # the config copy keeps the old values where the document said 0
        run jq -c '.linux.resources | [.memory.limit, .memory.swap, .memory.reservation, .cpu.shares, .cpu.quota, .cpu.period, .blockIO.weight]' \
                "$STATE_ROOT/$CID/config.json"
        [ "$output" = '[104857600,209715200,null,512,20000,100000,null]' ]
        # the same from a file, with a new quota
        jq '.memory.limit = 83886080 | .cpu.quota = 30000' <<<"$SHIM_UPDATE" >"$BATS_TEST_TMPDIR/res.json"
        msp update --resources "$BATS_TEST_TMPDIR/res.json" "$CID"
        [ "$(v1_read memory memory.limit_in_bytes)" = 83886080 ]
        [ "$(v1_read cpu cpu.cfs_quota_us)" = 30000 ]
        [ "$(v1_read cpu cpu.shares)" = 512 ]
        # flags: 0 is "unchanged" too (runc's update flags)
        msp update --memory 0 --cpu-quota 0 --cpu-share 0 --cpu-period 0 --blkio-weight 0 "$CID"
        [ "$(v1_read memory memory.limit_in_bytes)" = 83886080 ]
        [ "$(v1_read cpu cpu.cfs_quota_us)" = 30000 ]
        [ "$(v1_read cpu cpu.shares)" = 512 ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "update: all or nothing: a value the kernel refuses restores what was already written" {
        need_memsw
        start_limited
        # memory is written before cpu; a 500 us quota is below the kernel's 1 ms minimum
        run msp update --memory 50m --memory-swap 100m --cpu-share 256 --cpu-quota 500 "$CID"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"linux.resources.cpu.quota"*"cpu.cfs_quota_us' = '500'"*"Invalid argument"* ]]
        [ "$(v1_read memory memory.limit_in_bytes)" = 67108864 ]
        [ "$(v1_read memory memory.memsw.limit_in_bytes)" = 134217728 ]
        [ "$(v1_read cpu cpu.shares)" = 512 ]
        [ "$(v1_read cpu cpu.cfs_quota_us)" = 20000 ]
        # nor is anything recorded
        run jq -c '.linux.resources | [.memory.limit, .cpu.shares, .cpu.quota]' "$STATE_ROOT/$CID/config.json"
        [ "$output" = '[67108864,512,20000]' ]
        # the same through -r -
        run msp update -r - "$CID" <<<'{"memory":{"limit":52428800,"swap":104857600},"cpu":{"quota":500}}'
        [ "$status" -eq 1 ]
        [ "$(v1_read memory memory.limit_in_bytes)" = 67108864 ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "update --memory -1 with a swap limit makes memory and swap unlimited (as runc)" {
        need_memsw
        start_limited
        run msp update --memory -1 "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        local unlimited
        unlimited=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)
        [ "$(v1_read memory memory.limit_in_bytes)" = "$unlimited" ]
        [ "$(v1_read memory memory.memsw.limit_in_bytes)" = "$unlimited" ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "state root: only container directories (the seccomp cache lives beside it); list skips foreign entries" {
        # Docker points every runtime at one root, where `runc list` reads each directory
        update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
                "syscalls": [{"names": ["keyctl"], "action": "SCMP_ACT_ERRNO"}]}'
        run_detached sleep 100
        msp exec "$CID" /bin/true
        [ "$(ls -A "$STATE_ROOT")" = "$CID" ]
        local cache
        cache="$(dirname "$STATE_ROOT")/msp-cache"
        [ "$(stat -c '%a %u' "$cache" "$cache/seccomp")" = "700 0
700 0" ]
        ls "$cache"/seccomp/*.bpf
        # what another runtime keeps in a shared root is not a container of msp's
        mkdir "$STATE_ROOT/other" "$STATE_ROOT/.hidden"
        echo '{"id": "other"}' >"$STATE_ROOT/other/state.json"
        run msp list -q
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$CID" ]
        rm -r "$STATE_ROOT/other" "$STATE_ROOT/.hidden"
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

# cg_view ARGS...: run a container that prints what it sees of /sys/fs/cgroup.
cg_view() {
        update_config '.linux.resources.memory = {"limit": 67108864} | .linux.resources.pids = {"limit": 50}'
        local show='ls /sys/fs/cgroup; echo "limit=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes)"'
        show+='; echo "pids=$(cat /sys/fs/cgroup/pids/pids.max)"'
        show+='; echo "subdirs=$(find /sys/fs/cgroup/memory/ -mindepth 1 -type d | wc -l)"'
        show+='; grep " /sys/fs/cgroup" /proc/self/mountinfo'
        set_args /bin/sh -c "$show"
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
}

@test "cgroup mount (v1, no cgroup namespace): each hierarchy shows only the container's own cgroup" {
        need_v1
        cg_view
        # the container's limits at each hierarchy's root, no other cgroup below it
        [ "$(value limit)" = 67108864 ]
        [ "$(value pids)" = 50 ]
        [ "$(value subdirs)" = 0 ]
        # runc mounts the v1 hierarchies only: no cgroup2 "unified" view of the host's tree
        [ -z "$(printf '%s\n' "$output" | grep -x unified)" ]
        printf '%s\n' "$output" | grep -qx memory
        # each hierarchy is a bind of the container's cgroup directory
        printf '%s\n' "$output" | grep -q " /$CGROUP_PREFIX/$CID /sys/fs/cgroup/memory ro,.* - cgroup "
        assert_nothing_left "$CID"
}

@test "cgroup mount (v1, cgroup namespace): each hierarchy's root is the container's cgroup" {
        need_v1
        update_config '.linux.namespaces += [{"type": "cgroup"}]'
        cg_view
        [ "$(value limit)" = 67108864 ]
        [ "$(value pids)" = 50 ]
        [ "$(value subdirs)" = 0 ]
        [ -z "$(printf '%s\n' "$output" | grep -x unified)" ]
        assert_nothing_left "$CID"
}

@test "cgroup mount: read-write when the config does not say ro (as runc), read-only when it does" {
        need_v1
        update_config '(.mounts[] | select(.destination == "/sys/fs/cgroup") | .options) |= map(select(. != "ro"))
                | .linux.resources.pids = {"limit": 50}'
        set_args /bin/sh -c 'echo 40 >/sys/fs/cgroup/pids/pids.max && echo write=ok; grep " /sys/fs/cgroup/pids " /proc/self/mountinfo'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$(value write)" = ok ]
        [[ "$output" == *" /sys/fs/cgroup/pids rw,"* ]]
        # with "ro": the tmpfs and every hierarchy read-only
        update_config '(.mounts[] | select(.destination == "/sys/fs/cgroup") | .options) += ["ro"]'
        set_args /bin/sh -c 'echo 40 >/sys/fs/cgroup/pids/pids.max && echo write=ok; touch /sys/fs/cgroup/x && echo touch=ok; true'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [[ "$output" != *write=ok* ]]
        [[ "$output" == *"Read-only file system"* ]]
        [[ "$output" != *touch=ok* ]]
        assert_nothing_left "$CID"
}
