#!/usr/bin/env bats
# A new user namespace: container ids 0-65535 are host ids 100000-165535. Root inside is
# an unprivileged uid outside, its capabilities count only for what the namespace owns.

load helpers

setup() {
        setup_bundle
        update_config '.linux.namespaces += [{"type": "user"}] |
                .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
                .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
        # the mapped root must own its image and be able to reach it
        chown -R 100000:100000 "$BUNDLE/rootfs"
        make_traversable "$BUNDLE"
}

teardown() {
        teardown_containers
}

# all_caps: every capability in every set but ambient, as a privileged container has.
all_caps() {
        local caps
        caps=$(json_list CAP_CHOWN CAP_DAC_OVERRIDE CAP_FOWNER CAP_KILL CAP_SETUID CAP_SETGID \
                CAP_SYS_ADMIN CAP_SYS_TIME CAP_MKNOD CAP_DAC_READ_SEARCH CAP_NET_ADMIN CAP_SYS_CHROOT)
        update_config ".process.capabilities = {\"bounding\": $caps, \"effective\": $caps, \"permitted\": $caps}"
}

@test "uid 0 inside is uid 100000 outside" {
        set_args /bin/msp-helper ids -- read /proc/self/uid_map -- read /proc/self/gid_map -- ns
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        # the parked init already runs as the mapped root
        [ "$(awk '/^Uid:/ { print $2, $3, $4, $5 }' /proc/"$pid"/status)" = "100000 100000 100000 100000" ]
        [ "$(awk '/^Gid:/ { print $2, $3, $4, $5 }' /proc/"$pid"/status)" = "100000 100000 100000 100000" ]
        [ "$(readlink /proc/"$pid"/ns/user)" != "$(readlink /proc/self/ns/user)" ]
        msp start "$CID"
        wait_pid_exit "$pid"
        output=$(cat "$BATS_TEST_TMPDIR/$CID.out")
        echo "$output"
        [ "$(value uid)" = 0 ]
        [ "$(value gid)" = 0 ]
        maps=$(printf '%s\n' "$output" | sed -n 's/^content=//p' | tr -s ' ' | sed 's/^ //')
        [ "$maps" = "$(printf '0 100000 65536\n0 100000 65536')" ]
        [ "$(value ns.user)" != "$(host_ns user)" ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "a non-root user inside: uid 1000 is 101000 outside, with its additionalGids" {
        update_config '.process.user = {"uid": 1000, "gid": 1000, "additionalGids": [5, 100]}'
        set_args /bin/msp-helper ids
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        [ "$(awk '/^Uid:/ { print $2 }' /proc/"$pid"/status)" = 101000 ]
        [ "$(awk '/^Groups:/ { print $2, $3 }' /proc/"$pid"/status)" = "100005 100100" ]
        msp start "$CID"
        wait_pid_exit "$pid"
        output=$(cat "$BATS_TEST_TMPDIR/$CID.out")
        echo "$output"
        [ "$(value uid)" = 1000 ]
        [ "$(value groups)" = 5,100 ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "files created in a bind-mounted directory get the mapped owner" {
        shared="$BATS_TEST_TMPDIR/shared"
        mkdir -m 1777 "$shared"
        update_config ".mounts += [{\"destination\": \"/shared\", \"type\": \"bind\", \"source\": \"$shared\", \"options\": [\"rbind\", \"rw\"]}]"
        helper_run write /shared/by-root
        [ "$status" -eq 0 ]
        [ "$(stat -c %u:%g "$shared/by-root")" = 100000:100000 ]
        update_config '.process.user = {"uid": 1000, "gid": 1000}'
        helper_run write /shared/by-user -- stat /shared/by-root
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(stat -c %u:%g "$shared/by-user")" = 101000:101000 ]
        # and inside, the files show their container ids
        [ "$(value stat.uid)" = 0 ]
        assert_nothing_left "$CID"
}

@test "bind sources under a parent the mapped root cannot enter: the runtime opens them" {
        # 0700 root-owned parents: host uid 100000 cannot look up anything below them.
        mkdir -m 0700 "$BATS_TEST_TMPDIR/private"
        mkdir -m 0755 "$BATS_TEST_TMPDIR/private/dir"
        echo reached-dir >"$BATS_TEST_TMPDIR/private/dir/f"
        echo reached-file >"$BATS_TEST_TMPDIR/private/file"
        chmod 0644 "$BATS_TEST_TMPDIR/private/dir/f" "$BATS_TEST_TMPDIR/private/file"
        update_config ".mounts += [
                {\"destination\": \"/dir\", \"type\": \"bind\", \"source\": \"$BATS_TEST_TMPDIR/private/dir\", \"options\": [\"rbind\", \"ro\"]},
                {\"destination\": \"/file\", \"source\": \"$BATS_TEST_TMPDIR/private/file\", \"options\": [\"bind\"]}]"
        helper_run read /dir/f -- read /file -- write /dir/new
        echo "$output"
        [ "${lines[1]}" = content=reached-dir ]
        [ "${lines[3]}" = content=reached-file ]
        [ "${lines[4]}" = write=EROFS ]
        assert_nothing_left "$CID"
}

@test "a bind source that does not exist still fails create by name" {
        update_config ".mounts += [{\"destination\": \"/x\", \"type\": \"bind\", \"source\": \"$BATS_TEST_TMPDIR/missing\", \"options\": [\"rbind\"]}]"
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"source '$BATS_TEST_TMPDIR/missing': No such file or directory"* ]]
        assert_nothing_left "$CID"
}

@test "capabilities are real inside the namespace only" {
        all_caps
        mkdir -p "$BUNDLE/rootfs/mnt"
        chown 100000:100000 "$BUNDLE/rootfs/mnt"
        # a host file of the real root: not mapped, so no capability inside reaches it
        echo host-secret >"$BATS_TEST_TMPDIR/host-file"
        chmod 0600 "$BATS_TEST_TMPDIR/host-file"
        update_config ".mounts += [{\"destination\": \"/host-file\", \"type\": \"bind\", \"source\": \"$BATS_TEST_TMPDIR/host-file\", \"options\": [\"bind\", \"ro\"]}]"
        set_args /bin/sh -c 'mount -t tmpfs -o size=1m none /mnt && echo mounted=$(grep -c " /mnt tmpfs " /proc/mounts); exec msp-helper caps -- syscall sethostname -- syscall unshare-mnt -- mknod /tmp/null c 1 3 -- syscall settimeofday -- syscall open_by_handle_at -- read /host-file -- stat /host-file'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        # inside: a tmpfs mount in its own mount namespace, its own hostname
        [ "$(value mounted)" = 1 ]
        [ "$(value CapEff)" = "$(cap_mask CAP_CHOWN CAP_DAC_OVERRIDE CAP_FOWNER CAP_KILL CAP_SETUID CAP_SETGID \
                CAP_SYS_ADMIN CAP_SYS_TIME CAP_MKNOD CAP_DAC_READ_SEARCH CAP_NET_ADMIN CAP_SYS_CHROOT)" ]
        [ "$(value syscall.sethostname)" = ok ]
        [ "$(value syscall.unshare-mnt)" = ok ]
        # outside: device nodes, the clock, file handles, the host's files
        [ "$(value mknod)" = EPERM ]
        [ "$(value syscall.settimeofday)" = EPERM ]
        [ "$(value syscall.open_by_handle_at)" = EPERM ]
        [ "$(value read)" = EACCES ]
        [ "$(value stat.uid)" = 65534 ]
        assert_nothing_left "$CID"
}

@test "default devices work in a user namespace (bound from the host)" {
        helper_run stat /dev/null -- write /dev/null -- read /dev/zero -- stat /dev/tty
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[3]}" = stat.rdev=1:3 ]
        [ "$(value write)" = ok ]
        [ "$(value read)" = ok ]
        printf '%s\n' "$output" | grep -qx stat.rdev=5:0
        assert_nothing_left "$CID"
}

@test "mounts in a user namespace: proc, sysfs of its own netns, read-only cgroup" {
        set_args /bin/sh -c 'ls /sys/class/net; exec msp-helper mounts -- write /sys/fs/cgroup/x -- pid'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "${lines[0]}" = lo ]
        printf '%s\n' "$output" | grep -q '^mount=/proc proc '
        printf '%s\n' "$output" | grep -q '^mount=/sys sysfs ro,'
        [ "$(value write)" = EROFS ]
        [ "$(value pid)" = 1 ]
        assert_nothing_left "$CID"
}

@test "mounts in a user namespace: the cgroup mount is read-only without a cgroup namespace, even when the config leaves out ro" {
        # what shows there are the host's (the user's) cgroups: CVE-2023-25809
        update_config '(.mounts[] | select(.destination == "/sys/fs/cgroup") | .options) |= map(select(. != "ro"))'
        set_args /bin/sh -c 'grep " /sys/fs/cgroup" /proc/self/mountinfo; exec msp-helper write /sys/fs/cgroup/x -- write /sys/fs/cgroup/pids/x'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$(printf '%s\n' "$output" | sed -n 's/^write=//p' | sort -u)" = EROFS ]
        [ -z "$(printf '%s\n' "$output" | grep ' /sys/fs/cgroup[^ ]* rw,')" ]
        printf '%s\n' "$output" | grep -q ' /sys/fs/cgroup/pids ro,'
        assert_nothing_left "$CID"
}

@test "a rootfs the mapped root cannot reach fails create by name, leaving nothing" {
        chmod 0700 "$BUNDLE"
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"$BUNDLE/rootfs"* ]]
        [[ "$output" == *"ermission denied"* ]]
        assert_nothing_left "$CID"
}

@test "a terminal in a user namespace" {
        update_config '.process.terminal = true | .process.user = {"uid": 1000, "gid": 1000}'
        set_args /bin/sh -c 'msp-helper ids -- tty -- stat /dev/console; echo reopened >"$(tty)"'
        sock="$BATS_TEST_TMPDIR/console.sock"
        console_recv_bg "$sock"
        create_bg "$CID" --console-socket "$sock"
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        wait_pid_exit "$RECV_PID" 15
        wait_pid_exit "$pid"
        output=$(console_output)
        echo "$output"
        [ "$(value uid)" = 1000 ]
        [ "$(value tty.0)" = 1 ]
        [[ "$(value ttyname.0)" == /dev/pts/* ]]
        # the pty is the process user's, seen from inside as 1000
        [ "$(value stat.uid)" = 1000 ]
        [[ "$output" == *reopened* ]]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

# A user namespace made beforehand by an unprivileged id (as msp-mcp makes its sandboxes'),
# joined by path: the init is born in it, so the new pid namespace and the ones it
# unshares belong to it (proc mounts only then). runc 1.1 does the same.
@test "a user namespace joined by path with a new pid namespace: pid 1 inside, mappings checked" {
        setpriv --reuid=100000 --regid=100000 --clear-groups unshare --user sleep 300 &
        holder=$!
        for _ in $(seq 100); do
                [ "$(stat -L -c %i /proc/$holder/ns/user)" != "$(host_ns user)" ] && break
                sleep 0.05
        done
        echo "0 100000 65536" > /proc/$holder/uid_map
        echo "0 100000 65536" > /proc/$holder/gid_map
        update_config ".linux.namespaces = [.linux.namespaces[] | select(.type != \"user\")] +
                [{\"type\": \"user\", \"path\": \"/proc/$holder/ns/user\"}]"
        set_args /bin/msp-helper ids -- ns -- read /proc/self/stat
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value uid)" = 0 ]
        [ "$(value ns.user)" = "$(stat -L -c %i /proc/$holder/ns/user)" ]
        [ "$(value ns.pid)" != "$(host_ns pid)" ]
        [[ "$(printf '%s\n' "$output" | sed -n 's/^content=//p')" == "1 "* ]]
        # Mappings that are not the namespace's own are refused by field.
        update_config '.linux.uidMappings = [{"containerID": 0, "hostID": 200000, "size": 65536}]'
        run msp run -b "$BUNDLE" "$CID"
        kill "$holder"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"linux.uidMappings[0]: 0 200000 65536 is not a mapping of the joined user namespace"* ]]
        assert_nothing_left "$CID"
}
