#!/usr/bin/env bats
# Rootless mode (docs/ROOTLESS.md): msp run by the unprivileged test user of
# tests/helper/test-user.sh (through setpriv, no capabilities), the container in a new
# user namespace whose only mapping is that user. Container root is then the caller's uid
# on the host: it cannot do anything the caller cannot. This host mounts cgroup v1
# (hybrid): a rootless container gets no cgroup, as with runc, and a limit that needs
# one is refused. Each behaviour is compared with runc 1.1.5 run the same way.

load helpers

setup_file() {
        command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
        eval "$("$REPO/tests/helper/test-user.sh" ensure)"
        export MSP_TEST_UID MSP_TEST_GID MSP_TEST_SUBID_START MSP_TEST_SUBID_COUNT
}

setup() {
        command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
        RL_UID=$MSP_TEST_UID
        RL_GID=$MSP_TEST_GID
        setup_bundle
        # a copy the user can reach (the build tree may be under a private directory)
        RL_MSP="$BATS_TEST_TMPDIR/msp"
        install -m 0755 "$MSP" "$RL_MSP"
        RL_RUN="$BATS_TEST_TMPDIR/xdg"
        # the command prefix of rl_as, for commands that run it themselves (on_pty)
        RL_AS=(env XDG_RUNTIME_DIR="$RL_RUN" setpriv --reuid="$RL_UID" --regid="$RL_GID"
               --clear-groups --inh-caps=-all)
        mkdir -p "$RL_RUN"
        chown -R "$RL_UID:$RL_GID" "$BUNDLE" "$RL_RUN"
        make_traversable "$BUNDLE"
        STATE_ROOT="$RL_RUN/msp"
        # The rootless default config, written by the user: its own ids are the mapping.
        (cd "$BUNDLE" && rm config.json && rl_msp spec --rootless)
        [ "$(jq -c .linux.uidMappings "$BUNDLE/config.json")" = \
                "[{\"containerID\":0,\"hostID\":$RL_UID,\"size\":1}]" ]
        update_config '.process.terminal = false | .root.readonly = false'
}

teardown() {
        # as root: whatever the user's msp or runc left behind
        teardown_containers
        [ -d "${RL_RUN:-/nonexistent}/runc" ] &&
                for id in $(ls "$RL_RUN/runc"); do
                        runc --root "$RL_RUN/runc" delete --force "$id" >/dev/null 2>&1 || true
                done
        return 0
}

# rl_as CMD ARGS...: CMD as the unprivileged user, XDG_RUNTIME_DIR the test's own. The
# bounding set stays full, as a login's: the setuid newuidmap/newgidmap get their
# capabilities from it.
rl_as() {
        "${RL_AS[@]}" "$@" 3>&-
}

# rl_msp ARGS...: msp as the unprivileged user, state under its XDG_RUNTIME_DIR.
rl_msp() {
        rl_as "$RL_MSP" "$@"
}

# rl_runc ARGS...: runc 1.1.5 the same way (its rootless default root is
# $XDG_RUNTIME_DIR/runc).
rl_runc() {
        rl_as /usr/sbin/runc "$@"
}

# Nothing of the container's anywhere: state dir, a cgroup of its name in any hierarchy
# (rootless placement is below the caller's own cgroup, not under the test prefix),
# mounts.
rl_assert_nothing_left() {
        assert_nothing_left "$1"
        local cg
        # (find fails when another suite's cgroup goes away under it: not ours)
        cg=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "$1" 2>/dev/null || true)
        [ -z "$cg" ] || { echo "cgroups left: $cg"; return 1; }
}

@test "rootless: an unprivileged user runs a container; its root is the user on the host" {
        set_args /bin/sh -c 'id -u; cat /proc/self/uid_map; echo made-inside >/made; stat -c %u /made'
        run rl_msp --cgroup-manager disabled run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = 0 ]
        [ "$(echo ${lines[1]})" = "0 $RL_UID 1" ]
        [ "${lines[2]}" = 0 ]
        # on the host, what container root made belongs to the user
        [ "$(stat -c %u:%g "$BUNDLE/rootfs/made")" = "$RL_UID:$RL_GID" ]
        # the state lived under the user's runtime dir (the default root when rootless)
        [ "$(stat -c '%u %a' "$RL_RUN/msp")" = "$RL_UID 700" ]
        rl_assert_nothing_left "$CID"
}

@test "rootless: create, start, state, kill and delete as the user, no flag needed; no cgroup is made" {
        set_args /bin/sleep 1000
        rl_msp create -b "$BUNDLE" "$CID" \
                >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; false; }
        rl_msp start "$CID"
        [ "$(rl_msp state "$CID" | jq -r .status)" = running ]
        pid=$(rl_msp state "$CID" | jq -r .pid)
        [ "$(stat -c %u /proc/"$pid")" = "$RL_UID" ]
        [ -z "$(leftover_cgroups)" ]
        rl_msp kill "$CID" KILL
        wait_pid_exit "$pid"
        rl_msp delete "$CID"
        rl_assert_nothing_left "$CID"
}

# Without a cgroup, ps and kill --all find the container's processes through its pid
# namespace (runc 1.1.5 fails both rootless: "lstat : no such file or directory"); pause
# says why it cannot.
@test "rootless: ps, list, kill --all and pause without a cgroup; nothing left (runc fails ps and kill --all)" {
        set_args /bin/sleep 1000
        rl_msp create -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; false; }
        rl_msp start "$CID"
        init=$(rl_msp state "$CID" | jq -r .pid)
        rl_msp exec --detach --pid-file "$RL_RUN/exec.pid" "$CID" /bin/sleep 999 </dev/null
        p=$(cat "$RL_RUN/exec.pid")
        run rl_msp ps --format json "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(echo "$output" | jq -c 'sort')" = "$(printf '%s\n' "$init" "$p" | jq -s -c 'sort')" ]
        run rl_msp list --format json
        [ "$(echo "$output" | jq -r ".[] | select(.id == \"$CID\") | .status")" = running ]
        run rl_msp pause "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"cannot pause container '$CID': it has no cgroup"*"rootless without a delegated cgroup v2 subtree"* ]]
        [ "$(rl_msp state "$CID" | jq -r .status)" = running ]
        rl_msp kill --all "$CID" KILL
        wait_pid_exit "$init"
        wait_pid_exit "$p"
        run rl_msp ps --format json "$CID"
        [ "$status" -eq 0 ]
        [ "$output" = "[]" ]
        rl_msp delete "$CID"
        rl_assert_nothing_left "$CID"
}

# A container process may make its own pid namespace (unshare -p, here with the
# namespaced CAP_SYS_ADMIN of container root): without a cgroup, ps and kill --all find
# it through NS_GET_PARENT from its namespace up to the container's. The init (a plain
# sleep, pid 1: TERM is ignored) stays; the nested pid 1 handles TERM and exits. runc
# 1.1.5 fails ps and kill --all rootless without a cgroup, nested or not.
@test "rootless: ps lists and kill --all signals a process in a nested pid namespace (runc fails both)" {
        update_config '.process.capabilities.bounding += ["CAP_SYS_ADMIN"]
                | .process.capabilities.effective += ["CAP_SYS_ADMIN"]
                | .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
        set_args /bin/sh -c '/bin/msp-helper pidns-fork -- sleep-forever & exec sleep 1000'
        rl_msp create -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; false; }
        rl_msp start "$CID"
        timeout 5 tail -n +1 -f "$BATS_TEST_TMPDIR/create.out" | grep -qxm1 ready=1
        init=$(rl_msp state "$CID" | jq -r .pid)
        fork=$(awk '{ print $1 }' "/proc/$init/task/$init/children")
        nested=$(awk '{ print $1 }' "/proc/$fork/task/$fork/children")
        [ -n "$nested" ]
        [ "$(readlink "/proc/$nested/ns/pid")" != "$(readlink "/proc/$init/ns/pid")" ]
        run rl_msp ps --format json "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(jq -c 'sort' <<<"$output")" = "$(printf '%s\n' $init $fork $nested | jq -s -c 'sort')" ]

        rl_msp kill --all "$CID" TERM
        wait_pid_exit "$nested"
        wait_pid_exit "$fork"
        grep -qx signal=15 "$BATS_TEST_TMPDIR/create.out"
        # (the init, a sleep, reaps nothing: the two stay as zombies until it exits)
        for p in $(rl_msp ps --format json "$CID" | jq '.[]'); do
                [ "$p" = "$init" ] || grep -qx 'State:.Z (zombie)' "/proc/$p/status"
        done
        rl_msp kill "$CID" KILL
        wait_pid_exit "$init"
        rl_msp delete "$CID"
        rl_assert_nothing_left "$CID"

        rl_runc run -d -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/runc.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/runc.out"; false; }
        run rl_runc ps "$CID"
        echo "runc ps: $output"
        [ "$status" -ne 0 ]
        run rl_runc kill --all "$CID" TERM
        echo "runc kill --all: $output"
        [ "$status" -ne 0 ]
        rl_runc delete --force "$CID"
}

# The attack: container root tries what only host root could do. A host directory is
# bind-mounted read-write; in it a root-owned 0644 file and a root-only 0600 file, and a
# file of the user's (the control: it is writable).
@test "rootless: container root cannot write or read root's host files; only the user's id is mapped" {
        shared="$BATS_TEST_TMPDIR/shared"
        mkdir -p "$shared"
        echo root-file >"$shared/root-644"
        echo root-secret >"$shared/root-600"
        chmod 644 "$shared/root-644"
        chmod 600 "$shared/root-600"
        echo user-file >"$shared/user"
        chown "$RL_UID:$RL_GID" "$shared/user"
        chmod 777 "$shared"
        make_traversable "$shared"
        before=$(cd "$shared" && sha256sum root-644 root-600)
        update_config ".mounts += [{destination: \"/shared\", type: \"bind\", source: \"$shared\",
                options: [\"rbind\", \"rw\"]}]"
        set_args /bin/msp-helper write /shared/user -- write /shared/root-644 -- \
                read /shared/root-600 -- stat /shared/user -- stat /shared/root-644
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "${lines[0]}" = write=ok ]
        [ "${lines[1]}" = write=EACCES ]
        [ "${lines[2]}" = read=EACCES ]
        # the user's file is container root's; host root's shows as the overflow uid (no
        # host id but the user's is mapped)
        [ "$(printf '%s\n' "$output" | grep '^stat.uid=' | sed -n 1p)" = stat.uid=0 ]
        [ "$(printf '%s\n' "$output" | grep '^stat.uid=' | sed -n 2p)" = \
                "stat.uid=$(cat /proc/sys/kernel/overflowuid)" ]
        [ "$(cd "$shared" && sha256sum root-644 root-600)" = "$before" ]
        [ "$(cat "$shared/user")" = msp-helper ]
        rl_assert_nothing_left "$CID"
}

@test "rootless: a config without a user namespace is refused saying how to get one; nothing left (runc refuses too)" {
        # the prepared busybox bundle's config, written for root
        cp "$REPO/bundles/busybox/config.json" "$BUNDLE/config.json"
        chown "$RL_UID:$RL_GID" "$BUNDLE/config.json"
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"linux.namespaces: a rootless container needs a user namespace"* ]]
        [[ "$output" == *"msp spec --rootless"* ]]
        rl_assert_nothing_left "$CID"
        [ -z "$(ls -A "$RL_RUN/msp" 2>/dev/null)" ]
        run rl_runc run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"rootless container requires user namespaces"* ]]
}

@test "rootless: a limit that needs a cgroup is refused naming the field and why; runc refuses it too" {
        set_args /bin/true
        for res in '{"memory": {"limit": 104857600}}' '{"pids": {"limit": 100}}' \
                '{"cpu": {"shares": 512}}'; do
                update_config ".linux.resources = $res"
                field=$(jq -r '.linux.resources | keys[0]' "$BUNDLE/config.json")
                run rl_msp run -b "$BUNDLE" "$CID" </dev/null
                echo "$output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"linux.resources.$field: rootless, the limit needs a cgroup"* ]]
                [[ "$output" == *"cgroup v1 hierarchies (hybrid)"* ]]
                rl_assert_nothing_left "$CID"
                run rl_runc run -b "$BUNDLE" "$CID" </dev/null
                echo "$output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"cannot set $field limit"* ]]
        done
}

@test "rootless: device rules and a zero pids limit need no cgroup: the container runs (as with runc)" {
        set_args /bin/sh -c 'echo ran; ls /dev/null'
        update_config '.linux.resources = {"devices": [{"allow": false, "access": "rwm"}],
                "pids": {"limit": 0}}'
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = ran ]
        rl_assert_nothing_left "$CID"
        run rl_runc run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = ran ]
}

@test "rootless: an explicit linux.cgroupsPath the user may not make fails naming it, as with runc" {
        set_args /bin/true
        update_config ".linux.cgroupsPath = \"/$CGROUP_PREFIX/$CID\""
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"create cgroup '"*"/$CGROUP_PREFIX': Permission denied"* ]]
        rl_assert_nothing_left "$CID"
        run rl_runc run -b "$BUNDLE" "$CID" </dev/null
        [ "$status" -ne 0 ]
        [[ "$output" == *"permission denied"* ]]
}

@test "rootless: without XDG_RUNTIME_DIR a command that needs state names --root; with --root it runs" {
        set_args /bin/true
        run setpriv --reuid="$RL_UID" --regid="$RL_GID" --clear-groups --inh-caps=-all \
                --bounding-set=-all env -u XDG_RUNTIME_DIR "$RL_MSP" run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"XDG_RUNTIME_DIR is not set (set it, or pass --root DIR)"* ]]
        [ ! -e /run/msp/"$CID" ]
        run setpriv --reuid="$RL_UID" --regid="$RL_GID" --clear-groups --inh-caps=-all \
                --bounding-set=-all env -u XDG_RUNTIME_DIR "$RL_MSP" --root "$RL_RUN/msp" \
                run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        rl_assert_nothing_left "$CID"
}

# Several ids through newuidmap/newgidmap: container ids 0..65535 are the user's subordinate
# range (the rootfs owned by it, as a rootless image store has it). What container uid
# 1000 makes in a host directory belongs to subuid + 1000 on the host; setgroups stays
# allowed (as with runc), so supplementary groups apply.
rl_multi_id_bundle() {
        sub=$MSP_TEST_SUBID_START
        [ "$MSP_TEST_SUBID_COUNT" -ge 65536 ] || skip "the test user's subordinate range is smaller than 65536"
        chown -R "$sub:$sub" "$BUNDLE/rootfs"
        shared="$BATS_TEST_TMPDIR/shared"
        mkdir -p "$shared"
        chmod 1777 "$shared"
        make_traversable "$shared"
        update_config ".linux.uidMappings = [{containerID: 0, hostID: $sub, size: 65536}] |
                .linux.gidMappings = [{containerID: 0, hostID: $sub, size: 65536}] |
                .mounts += [{destination: \"/shared\", type: \"bind\", source: \"$shared\",
                        options: [\"rbind\", \"rw\"]}]"
}

@test "rootless: several-id mappings through newuidmap/newgidmap; container uid 1000's file is subuid+1000's on the host; podman's layout as with runc" {
        rl_multi_id_bundle
        update_config '.process.user = {uid: 1000, gid: 1000, additionalGids: [2000]}'
        set_args /bin/sh -c 'cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; id -u; id -G; echo x >/shared/f1000; stat -c %u:%g /shared/f1000'
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(echo ${lines[0]})" = "0 $sub 65536" ]
        [ "$(echo ${lines[1]})" = "0 $sub 65536" ]
        [ "${lines[2]}" = allow ]
        [ "${lines[3]}" = 1000 ]
        [ "${lines[4]}" = "1000 2000" ]
        [ "${lines[5]}" = 1000:1000 ]
        [ "$(stat -c %u:%g "$shared/f1000")" = "$((sub + 1000)):$((sub + 1000))" ]
        rl_assert_nothing_left "$CID"
        # runc 1.1.5 cannot run this one (it chowns its exec.fifo to container root, which
        # is not the caller). The layout rootless podman uses, container root the caller
        # and 1..65536 the range: msp and runc give container uid 1000 the same host id.
        update_config ".linux.uidMappings = [{containerID: 0, hostID: $RL_UID, size: 1},
                        {containerID: 1, hostID: $sub, size: 65536}] |
                .linux.gidMappings = [{containerID: 0, hostID: $RL_GID, size: 1},
                        {containerID: 1, hostID: $sub, size: 65536}] |
                .process.user = {uid: 1000, gid: 1000}"
        set_args /bin/sh -c 'cat /proc/self/setgroups; echo x >/shared/f1000'
        for rt in rl_msp rl_runc; do
                rm -f "$shared/f1000"
                run $rt run -b "$BUNDLE" "$CID" </dev/null
                echo "$rt: $output"
                [ "$status" -eq 0 ]
                [ "${lines[0]}" = allow ]
                [ "$(stat -c %u:%g "$shared/f1000")" = "$((sub + 999)):$((sub + 999))" ]
        done
        rl_assert_nothing_left "$CID"
}

@test "rootless: exec into a several-id container as container uid 1000; kill, delete leave nothing" {
        rl_multi_id_bundle
        set_args /bin/sleep 1000
        rl_msp create -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; false; }
        rl_msp start "$CID"
        init=$(rl_msp state "$CID" | jq -r .pid)
        [ "$(stat -c %u /proc/"$init")" = "$sub" ]
        run rl_msp exec --user 1000:1000 "$CID" /bin/sh -c 'id -u; echo y >/shared/e1000'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = 1000 ]
        [ "$(stat -c %u "$shared/e1000")" = "$((sub + 1000))" ]
        rl_msp kill "$CID" KILL
        wait_pid_exit "$init"
        rl_msp delete "$CID"
        rl_assert_nothing_left "$CID"
}

@test "rootless: a mapping outside the user's subordinate ranges is refused naming the field and the mapping; nothing left" {
        set_args /bin/true
        out=$((MSP_TEST_SUBID_START + MSP_TEST_SUBID_COUNT + 1000))
        update_config ".linux.uidMappings += [{containerID: 1, hostID: $out, size: 10}]"
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"linux.uidMappings: mapping [0 $RL_UID 1, 1 $out 10] refused by newuidmap"* ]]
        [[ "$output" == *"/etc/subuid"* ]]
        rl_assert_nothing_left "$CID"
        [ -z "$(pgrep -u "$RL_UID" -f "$RL_MSP")" ]
        run rl_runc run -b "$BUNDLE" "$CID" </dev/null
        [ "$status" -ne 0 ]
        # the gid side, with the uid side allowed
        update_config ".linux.uidMappings = [{containerID: 0, hostID: $RL_UID, size: 1}] |
                .linux.gidMappings += [{containerID: 1, hostID: $out, size: 10}]"
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"linux.gidMappings: mapping [0 $RL_GID 1, 1 $out 10] refused by newgidmap"* ]]
        rl_assert_nothing_left "$CID"
}

# The bundle `msp spec` writes for root, given a user namespace with the user's ids and no
# network namespace: what needs root degrades as in runc's and crun's rootless modes.
rl_root_config() {
        (cd "$BUNDLE" && rm config.json && rl_msp spec)
        update_config ".process.terminal = false | .root.readonly = false | del(.linux.resources) |
                .linux.namespaces = [{type: \"pid\"}, {type: \"ipc\"}, {type: \"uts\"},
                        {type: \"mount\"}, {type: \"user\"}] |
                .linux.uidMappings = [{containerID: 0, hostID: $RL_UID, size: 1}] |
                .linux.gidMappings = [{containerID: 0, hostID: $RL_GID, size: 1}]"
}

@test "rootless: a config written for root degrades: sysfs and cgroupfs bound read-only, device nodes bound from the host" {
        rl_root_config
        [ -c /dev/fuse ] && update_config '.linux.devices = [{path: "/dev/fuse", type: "c",
                major: 10, minor: 229, fileMode: 438, uid: 0, gid: 0}]'
        set_args /bin/sh -c 'awk "\$5 == \"/sys\" || \$5 == \"/sys/fs/cgroup\" { print \$5, \$6, \$(NF-2) }" /proc/self/mountinfo; stat -c "%n %F %t:%T" /dev/null; [ ! -e /dev/fuse ] || stat -c "%n %F %t:%T" /dev/fuse'
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        # the host's sysfs (no network namespace of its own: no new sysfs), read-only
        printf '%s\n' "$output" | grep -q '^/sys ro,[^ ]* sysfs$'
        # cgroupfs read-only (no cgroup namespace: the host's cgroups, CVE-2023-25809)
        ! printf '%s\n' "$output" | grep -q '^/sys/fs/cgroup rw'
        printf '%s\n' "$output" | grep -qx '/dev/null character special file 1:3'
        if [ -c /dev/fuse ]; then
                printf '%s\n' "$output" | grep -qx '/dev/fuse character special file a:e5'
        fi
        rl_assert_nothing_left "$CID"
        # runc 1.1.5 (which also refuses devpts' gid=5, msp drops it) mounts sysfs and
        # fails: it does not fall back to a bind
        update_config '.mounts |= map(if .type == "devpts" then .options -= ["gid=5"] else . end)'
        run rl_runc run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *sysfs* ]]
}

@test "rootless: an rlimit above the hard limit is refused naming it; mqueue without an ipc namespace binds the host's or says why" {
        rl_root_config
        set_args /bin/true
        hard=$(rl_as sh -c 'ulimit -Hn')
        update_config ".process.rlimits = [{type: \"RLIMIT_NOFILE\", soft: 1024, hard: $((hard + 1))}]"
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"process.rlimits: RLIMIT_NOFILE hard $((hard + 1)) is above the hard limit $hard"* ]]
        rl_assert_nothing_left "$CID"
        run rl_runc run -b "$BUNDLE" "$CID" </dev/null
        [ "$status" -ne 0 ]
        # mqueue in the ipc namespace of the host
        update_config '.process.rlimits = [] | .linux.namespaces -= [{type: "ipc"}]'
        run rl_msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        if [ -d /dev/mqueue ] && mountpoint -q /dev/mqueue; then
                [ "$status" -eq 0 ]
        else
                [ "$status" -ne 0 ]
                [[ "$output" == *"a user namespace without an ipc namespace may not mount mqueue, and the host has no /dev/mqueue to bind (add an ipc namespace)"* ]]
        fi
        rl_assert_nothing_left "$CID"
}

# exec as the user: the runtime cannot join the container's pid namespace from outside
# its user namespace; a middle process joins the user namespace first, then the others
# (as runc does rootless).
@test "rootless: exec as the user: output, exit status, the init's namespaces, a second exec; nothing left" {
        set_args /bin/sleep 1000
        rl_msp create -b "$BUNDLE" "$CID" \
                >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; false; }
        rl_msp start "$CID"
        init=$(rl_msp state "$CID" | jq -r .pid)
        run rl_msp exec "$CID" /bin/sh -c 'id -u; cat /proc/self/uid_map; echo hello-rootless'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = 0 ]
        [ "$(echo ${lines[1]})" = "0 $RL_UID 1" ]
        [ "${lines[2]}" = hello-rootless ]
        run rl_msp exec "$CID" /bin/sh -c 'exit 7'
        [ "$status" -eq 7 ]
        # the second exec, detached: in every namespace of the init, a child of no one
        # outside the container
        rl_msp exec --detach --pid-file "$RL_RUN/exec.pid" \
                "$CID" /bin/sleep 1000 </dev/null
        p=$(cat "$RL_RUN/exec.pid")
        for ns in user pid mnt ipc uts cgroup; do
                [ "$(stat -L -c %i /proc/$p/ns/$ns)" = "$(stat -L -c %i /proc/$init/ns/$ns)" ]
        done
        [ "$(stat -c %u /proc/$p)" = "$RL_UID" ]
        # a pid inside the container's pid namespace, not 1
        nspid=$(awk '/^NSpid:/ { print $NF }' /proc/$p/status)
        [ "$nspid" -gt 1 ]
        # a missing binary: the error comes back, the container is untouched
        run rl_msp exec "$CID" /no/such/binary
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"no such file or directory"* ]]
        [ "$(rl_msp state "$CID" | jq -r .status)" = running ]
        rl_msp kill "$CID" KILL
        wait_pid_exit "$init"
        wait_pid_exit "$p"
        rl_msp delete "$CID"
        [ -z "$(leftover_cgroups)" ]
        # (the user may run other containers: only this test's processes are checked)
        [ ! -e /proc/"$init" ] && [ ! -e /proc/"$p" ]
        rl_assert_nothing_left "$CID"
}

@test "rootless: exec --process FILE: oomScoreAdj raised as the user may; lowering it is refused naming the field" {
        set_args /bin/sleep 1000
        rl_msp create -b "$BUNDLE" "$CID" \
                >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; false; }
        rl_msp start "$CID"
        init=$(rl_msp state "$CID" | jq -r .pid)
        cat >"$RL_RUN/process.json" <<'JSON'
{"terminal": false, "user": {"uid": 0, "gid": 0}, "args": ["/bin/sh", "-c", "cat /proc/self/oom_score_adj; id -u"],
 "env": ["PATH=/bin"], "cwd": "/", "oomScoreAdj": 567, "noNewPrivileges": true}
JSON
        chown "$RL_UID:$RL_GID" "$RL_RUN/process.json"
        run rl_msp exec --process "$RL_RUN/process.json" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = 567 ]
        [ "${lines[1]}" = 0 ]
        # lowering it needs CAP_SYS_RESOURCE on the host: refused, naming the field
        jq '.oomScoreAdj = -500' "$RL_RUN/process.json" >"$RL_RUN/low.json"
        chown "$RL_UID:$RL_GID" "$RL_RUN/low.json"
        run rl_msp exec --process "$RL_RUN/low.json" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"process.oomScoreAdj"* ]]
        [ "$(rl_msp state "$CID" | jq -r .status)" = running ]
        rl_msp kill "$CID" KILL
        wait_pid_exit "$init"
        rl_msp delete "$CID"
        rl_assert_nothing_left "$CID"
}

# A user without subordinate ranges (msp-mcp's one-id fallback): the caller is root of a
# user namespace the user made with only its own id mapped, so its setgroups says "deny",
# and so does every namespace made in it (the kernel's rule). runc 1.1.5 then leaves
# supplementary groups alone, and so does msp; additionalGids it cannot apply are refused
# naming the field (runc runs without them).
rl_one_id() {
        rl_as unshare --user --map-root-user --mount "$@"
}

@test "rootless: in a user namespace of the user's one id (setgroups deny) run and exec work as with runc; additionalGids are refused naming the field" {
        update_config '.linux.uidMappings = [{containerID: 0, hostID: 0, size: 1}] |
                .linux.gidMappings = [{containerID: 0, hostID: 0, size: 1}]'
        set_args /bin/sh -c 'cat /proc/self/setgroups; id -u; id -g'
        run rl_one_id "$RL_MSP" run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf 'deny\n0\n0')" ]
        rl_assert_nothing_left "$CID"
        run rl_one_id /usr/sbin/runc run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf 'deny\n0\n0')" ]
        # exec goes through the same final steps (one namespace of the user's for all of it)
        set_args /bin/sleep 1000
        run rl_one_id sh -c "m=$RL_MSP; \$m create -b $BUNDLE $CID && \$m start $CID &&
                \$m exec $CID /bin/sh -c 'cat /proc/self/setgroups; id -u'; s=\$?;
                \$m delete --force $CID; exit \$s" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf 'deny\n0')" ]
        rl_assert_nothing_left "$CID"
        update_config '.process.user.additionalGids = [0]'
        set_args /bin/true
        run rl_one_id "$RL_MSP" run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"process.user.additionalGids requested, but setgroups is denied in this user namespace"* ]]
        rl_assert_nothing_left "$CID"
}

# --systemd-cgroup makes the container's cgroup a transient scope of the user's systemd
# manager, asked for over D-Bus as runc does; none runs here (PID 1 is not systemd).
@test "rootless: --systemd-cgroup without a reachable user manager bus is refused naming why; nothing left (runc refuses too)" {
        set_args /bin/true
        for cgpath in "" "user.slice:libpod:$CID"; do
                update_config ".linux.cgroupsPath = \"$cgpath\""
                for flag in --systemd-cgroup "--cgroup-manager=systemd"; do
                        run rl_msp "$flag" run -b "$BUNDLE" "$CID" </dev/null
                        echo "$output"
                        [ "$status" -ne 0 ]
                        unit=msp-$CID.scope
                        [ -z "$cgpath" ] || unit=libpod-$CID.scope
                        [[ "$output" == *"--systemd-cgroup: rootless, the container's cgroup is the user's systemd manager's, and none is reachable: start unit $unit: connect '$RL_RUN/bus': No such file or directory (no user manager runs"* ]]
                        rl_assert_nothing_left "$CID"
                done
                run rl_runc --systemd-cgroup run -b "$BUNDLE" "$CID" </dev/null
                echo "$output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"systemd not running on this host, cannot use systemd cgroups manager"* ]]
        done
        # without DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR there is no bus to look for
        run setpriv --reuid="$RL_UID" --regid="$RL_GID" --clear-groups --inh-caps=-all \
                env -u XDG_RUNTIME_DIR -u DBUS_SESSION_BUS_ADDRESS "$RL_MSP" --root "$RL_RUN/msp" \
                --systemd-cgroup run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"none is reachable: neither DBUS_SESSION_BUS_ADDRESS (a unix:path= address) nor XDG_RUNTIME_DIR is set"* ]]
        rl_assert_nothing_left "$CID"
}

@test "rootless: a stale LISTEN_FDS hands on none of the user's fds; ps prints the container's escape sequences as '?'" {
        # The attack (escape.bats has it as root): fd 3 of the user's shell is a directory
        # fd of the host's /, LISTEN_FDS=1 is stale (LISTEN_PID is not msp's).
        update_config '.process.env = ["PATH=/bin"]'
        set_args /bin/msp-helper env -- fds -- stat /proc/self/fd/3/etc/hostname
        stale() {
                XDG_RUNTIME_DIR="$RL_RUN" LISTEN_FDS=1 LISTEN_PID=1 setpriv --reuid="$RL_UID" \
                        --regid="$RL_GID" --clear-groups --inh-caps=-all \
                        "$RL_MSP" run -b "$BUNDLE" "$CID" </dev/null 3</
        }
        run stale
        echo "$output"
        [ "$(printf '%s\n' "$output" | grep -c '^fd\.\|^env\.LISTEN_')" -eq 0 ]
        [ "$(value stat)" = ENOENT ]
        rl_assert_nothing_left "$CID"
        # An argv with an OSC title, a screen clear and a newline forging a row.
        evil=$'\e]0;pwned\a\e[2J\n0        1        0        S    /bin/forged'
        tmp="$BUNDLE/config.json.tmp"
        jq --arg e "$evil" '.process.args = ["/bin/msp-helper", "sleep-forever", "--", $e]' \
                "$BUNDLE/config.json" >"$tmp"
        mv "$tmp" "$BUNDLE/config.json"
        rl_msp create -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; false; }
        rl_msp start "$CID"
        run rl_msp ps "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" != *[$'\e\a\r']* ]]
        [ "${#lines[@]}" -eq 2 ]
        [[ "${lines[1]}" == *"sleep-forever -- ?]0;pwned??[2J?0        1"* ]]
        rl_msp delete --force "$CID"
        rl_assert_nothing_left "$CID"
}

@test "rootless: no terminal, run and exec on the caller's terminal: TIOCSTI and /dev/tty reach nothing, as runc" {
        local inject=$'echo INJECTED\r'
        set_args /bin/msp-helper tiocsti "$inject"
        for rt in "$RL_MSP" /usr/sbin/runc; do
                run on_pty --raw -- "${RL_AS[@]}" "$rt" run -b "$BUNDLE" "$CID"
                echo "$rt: $status $output"
                od -c "$BATS_TEST_TMPDIR/pending"
                [ "$status" -eq 0 ]
                [ "$(value tiocsti.0)" = ENOTTY ]
                [ "$(value tiocsti.1)" = ENOTTY ]
                [ "$(value tiocsti.devtty)" = ENXIO ]
                [ ! -s "$BATS_TEST_TMPDIR/pending" ]
        done
        rl_assert_nothing_left "$CID"
        set_args /bin/sleep 1000
        rl_msp run -d -b "$BUNDLE" "$CID" </dev/null >/dev/null 2>&1
        run on_pty --raw -- "${RL_AS[@]}" "$RL_MSP" exec "$CID" /bin/msp-helper tiocsti "$inject"
        echo "$output"
        od -c "$BATS_TEST_TMPDIR/pending"
        [ "$status" -eq 0 ]
        [ "$(value tiocsti.0)" = ENOTTY ]
        [ "$(value tiocsti.devtty)" = ENXIO ]
        [ ! -s "$BATS_TEST_TMPDIR/pending" ]
        rl_msp delete --force "$CID"
        rl_assert_nothing_left "$CID"
}
