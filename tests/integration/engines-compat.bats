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

# run_detached ARG...: a running container with these process.args.
run_detached() {
        set_args "$@"
        msp run -d -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/$CID.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/$CID.out"; return 1; }
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
