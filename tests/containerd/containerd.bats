#!/usr/bin/env bats
# containerd (Debian's 1.6) driving the built msp through the io.containerd.runc.v2 shim
# with msp as the runc binary (`ctr run --runc-binary`: the BinaryName option a CRI
# runtime handler sets, contrib/containerd/): tasks, exec, terminals, limits, events,
# containerd restarts, and that nothing of a container is left afterwards; compared with
# runc where useful. Root; a private containerd (helpers.bash, ../engines/lib.bash).

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
        ct_setup_file
}

teardown_file() {
        ct_teardown_file
}

teardown() {
        ct_teardown
}

@test "ctr run --rm with msp: output, exit status, msp's state while it runs, nothing after" {
        run ct_run --rm "$CT_IMAGE" hello echo hello from msp
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "hello from msp" ]
        run ct_run --rm "$CT_IMAGE" three sh -c 'echo to-stderr >&2; exit 3'
        [ "$status" -eq 3 ]
        [ "$output" = to-stderr ]
        ct_run -d "$CT_IMAGE" st sleep 1000
        ct_wait_status st RUNNING
        # the shim ran msp with its root: msp's state of the container is there
        [ -d "$(CT_MSP_ROOT)/$ENG_CGROUP/st" ]
        "$MSP" --root "$(CT_MSP_ROOT)/$ENG_CGROUP" state st | jq -e '.status == "running"'
        ct_remove st
        assert_gone st
        assert_gone hello
        assert_gone three
}

@test "a program that cannot start: ctr fails naming it, nothing is left (as runc)" {
        for rt in msp runc; do
                run ct_run_with "$rt" --rm "$CT_IMAGE" "nox-$rt" /no/such/program
                echo "$rt: $output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"/no/such/program"* ]]
                run ct_run_with "$rt" --rm "$CT_IMAGE" "noexec-$rt" /etc/noexec
                echo "$rt: $output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"/etc/noexec"*"permission denied"* ]]
                assert_gone "nox-$rt"
                assert_gone "noexec-$rt"
        done
}

@test "stdin: a pipe reaches the program" {
        # ctr 1.6 does not pass the pipe's EOF on (with runc as well): read a line, not to EOF
        run ct_run --rm "$CT_IMAGE" stdin sh -c 'read -r l; echo "got: $l"' <<<"line one"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "got: line one" ]
}

@test "tty: ctr run -t on a real pty, its size and exit status" {
        run pty_run --rows 27 --cols 91 -- "$CTR" -a "$(CTD_SOCK)" -n "$ENG_CGROUP" run -t --rm \
                --runc-binary "$MSP" --runc-root "$(CT_MSP_ROOT)" "$CT_IMAGE" tty1 \
                sh -c "tty; $WINSIZE; exit 6"
        echo "$output"
        [ "$status" -eq 6 ]
        [[ "$output" == *"/dev/pts/0"* ]]
        [[ "$output" == *"27 91"* ]]
        assert_gone tty1
}

@test "exec: exit status, --user, --cwd, -t, -d; same pid namespace" {
        ct_run -d "$CT_IMAGE" ex sleep 1000
        ct_wait_status ex RUNNING
        # -d first: here a detached exec after the --user/--cwd/-t ones found no /tmp, with
        # runc as well (ctr's, not the runtime's; not pursued)
        ct task exec -d --exec-id e0 ex sh -c 'echo detached >/tmp/d'
        eng_wait 10 ct task exec --exec-id e00 ex test -s /tmp/d
        [ "$(ct task exec --exec-id e000 ex cat /tmp/d)" = detached ]
        run ct task exec --exec-id e1 ex sh -c 'echo in-exec; exit 3'
        [ "$status" -eq 3 ]
        [ "$output" = in-exec ]
        run ct task exec --exec-id e2 --user 1000 --cwd /tmp ex sh -c 'id -u; pwd'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf '1000\n/tmp')" ]
        run pty_run --rows 24 --cols 70 -- "$CTR" -a "$(CTD_SOCK)" -n "$ENG_CGROUP" task exec -t \
                --exec-id e3 ex sh -c "tty; $WINSIZE; exit 4"
        echo "$output"
        [ "$status" -eq 4 ]
        [[ "$output" == *"/dev/pts/"* ]]
        [[ "$output" == *"24 70"* ]]
        [ "$(ct task exec --exec-id e7 ex sh -c 'tr "\0" " " </proc/1/cmdline')" = "sleep 1000 " ]
        run ct task exec --exec-id e8 ex /no/such/program
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"/no/such/program"* ]]
        # the exec'd processes are in the container's cgroup
        run ct task ps ex
        echo "$output"
        ct_remove ex
        assert_gone ex
}

@test "--memory-limit: over it the kernel kills the task, status 137, a /tasks/oom event (as runc)" {
        ct_events_start
        for rt in msp runc; do
                run ct_run_with "$rt" --rm --memory-limit $((32 << 20)) "$CT_IMAGE" "oom-$rt" \
                        sh -c 'x=0123456789; while :; do x=$x$x; done'
                echo "$rt: $output"
                [ "$status" -eq 137 ]
                eng_wait 10 grep -F "/tasks/oom {\"container_id\":\"oom-$rt\"}" "$BATS_TEST_TMPDIR/events" ||
                        { cat "$BATS_TEST_TMPDIR/events"; false; }
        done
}

@test "--cpus, --memory-limit: the limits are in the task's cgroup; metrics report them" {
        ct_run -d --cpus 0.5 --memory-limit $((48 << 20)) "$CT_IMAGE" lim sleep 1000
        ct_wait_status lim RUNNING
        [ "$(cat "$(ct_cgroup_file lim memory memory.limit_in_bytes memory.max)")" = $((48 << 20)) ]
        [[ "$(cat "$(ct_cgroup_file lim cpu cpu.cfs_quota_us cpu.max)")" == 50000* ]]
        run ct task metrics --format json lim
        echo "$output" | head -c 2000
        [ "$status" -eq 0 ]
        echo "$output" | jq -e '(.memory.usage.limit // .memory.max) == 50331648 and (.pids.current // 0) >= 1' >/dev/null
        ct_remove lim
}

@test "capabilities: containerd's default set, --cap-drop, --cap-add (as runc)" {
        for rt in msp runc; do
                run ct_run_with "$rt" --rm "$CT_IMAGE" "caps-$rt" sh -c 'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status'
                echo "$rt: $output"
                [ "$(echo "$output" | awk '{print $2}' | sort -u)" = 00000000a80425fb ]
                run ct_run_with "$rt" --rm --cap-drop CAP_CHOWN --cap-add CAP_NET_ADMIN "$CT_IMAGE" \
                        "caps2-$rt" sh -c 'grep -E "^CapEff" /proc/self/status; chown 1000 /tmp'
                echo "$rt: $output"
                [ "$status" -ne 0 ]
                # a80425fb - CHOWN (bit 0) + NET_ADMIN (bit 12)
                [[ "$output" == *"CapEff:"*00000000a80435fa* ]]
                [[ "$output" == *"Operation not permitted"* ]]
        done
}

@test "seccomp: --seccomp loads containerd's default profile, without it none (as runc)" {
        for rt in msp runc; do
                run ct_run_with "$rt" --rm --seccomp "$CT_IMAGE" "sc-$rt" \
                        sh -c 'grep "^Seccomp:" /proc/self/status; unshare -U true'
                echo "$rt: $output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"Seccomp:"*2* ]]
                [[ "$output" == *"Operation not permitted"* ]]
                run ct_run_with "$rt" --rm "$CT_IMAGE" "nosc-$rt" \
                        sh -c 'grep "^Seccomp:" /proc/self/status; unshare -U true && echo unshared'
                echo "$rt: $output"
                [ "$status" -eq 0 ]
                [[ "${lines[0]}" == *"Seccomp:"*0 ]]
                [ "${lines[1]}" = unshared ]
        done
}

@test "mounts and devices: bind rw and ro, tmpfs, --read-only, --device" {
        mkdir -p "$BATS_TEST_TMPDIR/vol"
        echo host-data >"$BATS_TEST_TMPDIR/vol/f"
        run ct_run --rm --mount "type=bind,src=$BATS_TEST_TMPDIR/vol,dst=/data,options=rbind:rw" \
                "$CT_IMAGE" m1 sh -c 'cat /data/f; echo new >/data/g'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = host-data ]
        [ "$(cat "$BATS_TEST_TMPDIR/vol/g")" = new ]
        run ct_run --rm --mount "type=bind,src=$BATS_TEST_TMPDIR/vol,dst=/data,options=rbind:ro" \
                "$CT_IMAGE" m2 sh -c 'echo x >/data/h'
        [ "$status" -ne 0 ]
        [[ "$output" == *"Read-only file system"* ]]
        run ct_run --rm --mount "type=tmpfs,src=tmpfs,dst=/scratch,options=size=1m" "$CT_IMAGE" m3 \
                sh -c 'grep " /scratch " /proc/mounts; echo data >/scratch/f && cat /scratch/f'
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == "tmpfs /scratch tmpfs "*"size=1024k"* ]]
        [ "${lines[1]}" = data ]
        run ct_run --rm --read-only "$CT_IMAGE" m4 touch /newfile
        [ "$status" -ne 0 ]
        [[ "$output" == *"Read-only file system"* ]]
        run ct_run --rm --device /dev/null "$CT_IMAGE" m5 sh -c 'echo x >/dev/null && echo written'
        [ "$output" = written ]
        for id in m1 m2 m3 m4 m5; do
                assert_gone "$id"
        done
}

@test "pause/resume: the cgroup is frozen and thawed" {
        ct_run -d "$CT_IMAGE" frozen sh -c 'while :; do echo tick >/tmp/t; sleep 0.1; done'
        ct_wait_status frozen RUNNING
        ct task pause frozen
        [ "$(ct_task_status frozen)" = PAUSED ]
        f=$(ct_cgroup_file frozen freezer freezer.state cgroup.freeze)
        [[ "$(cat "$f")" == FROZEN || "$(cat "$f")" == 1 ]]
        ct task resume frozen
        [ "$(ct_task_status frozen)" = RUNNING ]
        [[ "$(cat "$f")" == THAWED || "$(cat "$f")" == 0 ]]
        ct_remove frozen
}

@test "kill: TERM reaches a handler (its status), KILL ends a process without one (137)" {
        ct_run -d "$CT_IMAGE" polite sh -c 'trap "exit 42" TERM; while :; do sleep 0.2; done'
        ct_run -d "$CT_IMAGE" stubborn sh -c 'while :; do sleep 0.2; done'
        ct_wait_status polite RUNNING
        ct_wait_status stubborn RUNNING
        ct task kill polite
        ct_wait_status polite STOPPED 5
        [ "$(ct_exit_status polite)" = 42 ]
        # pid 1 without a handler ignores TERM
        ct task kill stubborn
        ! ct_wait_status stubborn STOPPED 1
        ct task kill -s KILL stubborn
        ct_wait_status stubborn STOPPED 5
        [ "$(ct_exit_status stubborn)" = 137 ]
        ct container delete polite stubborn
        assert_gone polite
        assert_gone stubborn
}

@test "containerd restart: the task runs on under its shim, is reachable after, stops cleanly" {
        ct_run -d "$CT_IMAGE" live sleep 1000
        ct_wait_status live RUNNING
        pid=$(ct task ls | awk '$1 == "live" { print $2 }')
        ctd_stop
        kill -0 "$pid"
        ctd_start
        ct_wait_status live RUNNING
        [ "$(ct task exec --exec-id after live echo reached)" = reached ]
        [ "$(ct task ls | awk '$1 == "live" { print $2 }')" = "$pid" ]
        ct task kill -s KILL live
        ct_wait_status live STOPPED 5
        [ "$(ct_exit_status live)" = 137 ]
        ct container delete live
        assert_gone live
}

@test "contrib/containerd/config.toml loads into containerd's default config: CRI handler msp with msp as BinaryName" {
        # A second containerd with the CRI plugin on: `containerd config default` moved
        # into $ENG_DIR/cri, plus the shipped snippet pointing at the built msp.
        local d="$ENG_DIR/cri"
        mkdir -p "$d"
        "$CONTAINERD" config default |
                sed -e "s|\"/run/containerd/containerd.sock\"|\"$d.sock\"|" \
                    -e "s|\"/var/lib/containerd\"|\"$d/root\"|" -e "s|\"/run/containerd\"|\"$d/state\"|" \
                    -e "s|\"/opt/containerd\"|\"$d/opt\"|" >"$d/config.toml"
        sed -e "s|\"/usr/local/bin/msp\"|\"$MSP\"|" -e "s|\"/run/containerd/msp\"|\"$d/msp\"|" \
                "$REPO/contrib/containerd/config.toml" >>"$d/config.toml"
        ! grep -E '"/(run|var/lib|opt)/containerd' "$d/config.toml"
        setsid "$CONTAINERD" --config "$d/config.toml" </dev/null >"$d.log" 2>&1 3>&- &
        pid=$!
        eng_wait 20 "$CTR" -a "$d.sock" version || { eng_stop_pid "$pid"; cat "$d.log"; false; }
        run "$CTR" -a "$d.sock" plugins ls
        eng_stop_pid "$pid"
        echo "$output" | grep -E '[[:space:]]cri[[:space:]]'
        echo "$output" | grep -E '[[:space:]]cri[[:space:]].*[[:space:]]ok[[:space:]]*$'
        grep -o 'msp:{Type:io.containerd.runc.v2 [^}]*}' "$d.log" | tee "$d.msp"
        grep -F "BinaryName:$MSP " "$d.msp"
        grep -F "Root:$d/msp " "$d.msp"
}
