#!/usr/bin/env bats
# Rootless mode, first step (docs/SECURITY_MODEL.md, "Rootless"): msp run by an
# unprivileged user (uid 65534 through setpriv, no capabilities), the container in a new
# user namespace whose only mapping is that user, with --cgroup-manager disabled. Container
# root is then the caller's uid on the host: it cannot do anything the caller cannot.

load helpers

RL_UID=65534
RL_GID=65534

setup() {
        command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
        setup_bundle
        # a copy the user can reach (the build tree may be under a private directory)
        RL_MSP="$BATS_TEST_TMPDIR/msp"
        install -m 0755 "$MSP" "$RL_MSP"
        RL_RUN="$BATS_TEST_TMPDIR/xdg"
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
        # as root: whatever the user's msp left behind
        teardown_containers
}

# rl_msp ARGS...: msp as the unprivileged user, state under its XDG_RUNTIME_DIR.
rl_msp() {
        XDG_RUNTIME_DIR="$RL_RUN" setpriv --reuid="$RL_UID" --regid="$RL_GID" --clear-groups \
                --inh-caps=-all --bounding-set=-all "$RL_MSP" "$@" 3>&-
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
        assert_nothing_left "$CID"
}

@test "rootless: create, start, state, kill and delete as the user; no cgroup is made" {
        set_args /bin/sleep 1000
        rl_msp --cgroup-manager disabled create -b "$BUNDLE" "$CID" \
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
        assert_nothing_left "$CID"
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
        run rl_msp --cgroup-manager disabled run -b "$BUNDLE" "$CID" </dev/null
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
        assert_nothing_left "$CID"
}

@test "rootless: without --cgroup-manager disabled, create fails naming the cgroup it cannot make" {
        set_args /bin/true
        run rl_msp create -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"create cgroup '"*"': Permission denied"* ]]
        assert_nothing_left "$CID"
}

# exec as the user: the runtime cannot join the container's pid namespace from outside
# its user namespace; a middle process joins the user namespace first, then the others
# (as runc does rootless).
@test "rootless: exec as the user: output, exit status, the init's namespaces, a second exec; nothing left" {
        set_args /bin/sleep 1000
        rl_msp --cgroup-manager disabled create -b "$BUNDLE" "$CID" \
                >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; false; }
        rl_msp start "$CID"
        init=$(rl_msp state "$CID" | jq -r .pid)
        run rl_msp --cgroup-manager disabled exec "$CID" /bin/sh -c 'id -u; cat /proc/self/uid_map; echo hello-rootless'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = 0 ]
        [ "$(echo ${lines[1]})" = "0 $RL_UID 1" ]
        [ "${lines[2]}" = hello-rootless ]
        run rl_msp --cgroup-manager disabled exec "$CID" /bin/sh -c 'exit 7'
        [ "$status" -eq 7 ]
        # the second exec, detached: in every namespace of the init, a child of no one
        # outside the container
        rl_msp --cgroup-manager disabled exec --detach --pid-file "$RL_RUN/exec.pid" \
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
        run rl_msp --cgroup-manager disabled exec "$CID" /no/such/binary
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"no such file or directory"* ]]
        [ "$(rl_msp state "$CID" | jq -r .status)" = running ]
        rl_msp kill "$CID" KILL
        wait_pid_exit "$init"
        wait_pid_exit "$p"
        rl_msp delete "$CID"
        [ -z "$(leftover_cgroups)" ]
        [ -z "$(pgrep -u "$RL_UID" -f 'sleep 1000')" ]
        assert_nothing_left "$CID"
}

@test "rootless: exec --process FILE: oomScoreAdj raised as the user may; lowering it is refused naming the field" {
        set_args /bin/sleep 1000
        rl_msp --cgroup-manager disabled create -b "$BUNDLE" "$CID" \
                >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; false; }
        rl_msp start "$CID"
        init=$(rl_msp state "$CID" | jq -r .pid)
        cat >"$RL_RUN/process.json" <<'JSON'
{"terminal": false, "user": {"uid": 0, "gid": 0}, "args": ["/bin/sh", "-c", "cat /proc/self/oom_score_adj; id -u"],
 "env": ["PATH=/bin"], "cwd": "/", "oomScoreAdj": 567, "noNewPrivileges": true}
JSON
        chown "$RL_UID:$RL_GID" "$RL_RUN/process.json"
        run rl_msp --cgroup-manager disabled exec --process "$RL_RUN/process.json" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = 567 ]
        [ "${lines[1]}" = 0 ]
        # lowering it needs CAP_SYS_RESOURCE on the host: refused, naming the field
        jq '.oomScoreAdj = -500' "$RL_RUN/process.json" >"$RL_RUN/low.json"
        chown "$RL_UID:$RL_GID" "$RL_RUN/low.json"
        run rl_msp --cgroup-manager disabled exec --process "$RL_RUN/low.json" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"process.oomScoreAdj"* ]]
        [ "$(rl_msp state "$CID" | jq -r .status)" = running ]
        rl_msp kill "$CID" KILL
        wait_pid_exit "$init"
        rl_msp delete "$CID"
        assert_nothing_left "$CID"
}
