#!/usr/bin/env bats
# The OCI lifecycle: create, start, state, kill, delete, run, list, and the state machine.

load helpers

setup() {
        setup_bundle
}

teardown() {
        teardown_containers
}

@test "run: prints the process output and returns its exit status" {
        set_args /bin/sh -c 'echo hello from inside; exit 3'
        run msp run -b "$BUNDLE" "$CID"
        [ "$status" -eq 3 ]
        [ "$output" = "hello from inside" ]
        assert_nothing_left "$CID"
}

@test "run: the prepared busybox bundle says hello" {
        run msp run -b "$BUNDLE" "$CID"
        [ "$status" -eq 0 ]
        [[ "$output" == *"hello from msp: this is msp-demo"* ]]
        assert_nothing_left "$CID"
}

@test "run: a process killed by a signal gives 128+signal" {
        # pid 1 of a pid namespace ignores signals it has no handler for, even from
        # itself: kill it from outside.
        fifo="$BATS_TEST_TMPDIR/ready"
        mkfifo "$fifo"
        set_args /bin/sh -c 'echo ready; exec sleep 1000'
        msp run -b "$BUNDLE" "$CID" >"$fifo" &
        runpid=$!
        read -r -t 10 line <"$fifo"
        [ "$line" = ready ]
        msp kill "$CID" KILL
        wait "$runpid" || st=$?
        [ "${st:-0}" -eq 137 ]
        assert_nothing_left "$CID"
}

@test "create, start, state, kill, delete: the state machine" {
        set_args /bin/sleep 1000
        create_bg "$CID" --pid-file "$BATS_TEST_TMPDIR/pid"
        [ "$(state_field "$CID" status)" = created ]
        pid=$(state_field "$CID" pid)
        [ "$pid" -gt 0 ]
        [ "$(cat "$BATS_TEST_TMPDIR/pid")" = "$pid" ]
        [ "$(state_field "$CID" id)" = "$CID" ]
        [ "$(state_field "$CID" bundle)" = "$BUNDLE" ]
        # The user program has not run yet: the init is parked, not sleep.
        [ "$(cat /proc/"$pid"/comm)" != sleep ]

        run msp start "$CID"
        [ "$status" -eq 0 ]
        [ "$(state_field "$CID" status)" = running ]
        [ "$(cat /proc/"$pid"/comm)" = sleep ]

        # start on a running container fails and changes nothing
        run msp start "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"not created"* ]]
        [ "$(state_field "$CID" status)" = running ]

        # delete without --force refuses a running container
        run msp delete "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"running"* ]]
        [ "$(state_field "$CID" status)" = running ]

        run msp kill "$CID" KILL
        [ "$status" -eq 0 ]
        # The init was reparented when create exited; an unreaped zombie counts as stopped.
        wait_pid_exit "$pid"
        [ "$(state_field "$CID" status)" = stopped ]
        [ "$(state_field "$CID" pid)" = 0 ]

        run msp kill "$CID" TERM
        [ "$status" -ne 0 ]

        run msp delete "$CID"
        [ "$status" -eq 0 ]
        assert_nothing_left "$CID"
        run msp state "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"does not exist"* ]]
}

@test "kill: signal names and numbers" {
        set_args /bin/sh -c 'trap "exit 42" USR1; while :; do sleep 0.1; done'
        create_bg "$CID"
        msp start "$CID"
        pid=$(state_field "$CID" pid)
        run msp kill "$CID" SIGBOGUS
        [ "$status" -ne 0 ]
        [[ "$output" == *"unknown signal"* ]]
        run msp kill "$CID" 10   # SIGUSR1
        [ "$status" -eq 0 ]
        wait_pid_exit "$pid"
        [ "$(state_field "$CID" status)" = stopped ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "delete: a created container can be deleted (as runc allows)" {
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        run msp delete "$CID"
        [ "$status" -eq 0 ]
        [ ! -e /proc/"$pid" ] || [ "$(awk '{print $3}' /proc/"$pid"/stat)" = Z ]
        assert_nothing_left "$CID"
}

@test "delete --force: a running container is killed and removed" {
        set_args /bin/sleep 1000
        msp run -d -b "$BUNDLE" "$CID" >/dev/null 2>&1 </dev/null
        [ "$(state_field "$CID" status)" = running ]
        run msp delete --force "$CID"
        [ "$status" -eq 0 ]
        assert_nothing_left "$CID"
}

@test "delete --force of a container that does not exist succeeds" {
        run msp delete --force nosuchcontainer
        [ "$status" -eq 0 ]
        run msp delete nosuchcontainer
        [ "$status" -ne 0 ]
        [[ "$output" == *"does not exist"* ]]
}

@test "list: table, quiet and json" {
        set_args /bin/sleep 1000
        create_bg "$CID"
        run msp list
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == ID*PID*STATUS*BUNDLE* ]]
        [[ "${lines[1]}" == "$CID"*created* ]]
        run msp list -q
        [ "$output" = "$CID" ]
        run msp list --format json
        [ "$(echo "$output" | jq -r '.[0].id')" = "$CID" ]
        [ "$(echo "$output" | jq -r '.[0].status')" = created ]
        msp delete "$CID"
}

@test "run --detach then --keep: the container stays until deleted" {
        set_args /bin/true
        run msp run --keep -b "$BUNDLE" "$CID"
        [ "$status" -eq 0 ]
        [ "$(state_field "$CID" status)" = stopped ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "run: signals sent to msp are forwarded to the container" {
        set_args /bin/sh -c 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.05; done'
        fifo="$BATS_TEST_TMPDIR/out"
        mkfifo "$fifo"
        # "$MSP" itself, not the msp() wrapper: $! must be msp's pid, not a subshell's.
        "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" >"$fifo" 3>&- &
        runpid=$!
        exec 5<"$fifo"
        read -r -t 10 line <&5
        [ "$line" = ready ]
        kill -TERM "$runpid"
        read -r -t 10 line <&5
        [ "$line" = got-term ]
        wait "$runpid" || st=$?
        [ "${st:-0}" -eq 7 ]
        exec 5<&-
        assert_nothing_left "$CID"
}

@test "run: while the process runs, state says running and --pid-file holds its pid" {
        set_args /bin/sh -c 'echo ready; while :; do sleep 0.05; done'
        fifo="$BATS_TEST_TMPDIR/out"
        mkfifo "$fifo"
        "$MSP" --root "$STATE_ROOT" run --pid-file "$BATS_TEST_TMPDIR/pid" -b "$BUNDLE" "$CID" \
                >"$fifo" 3>&- &
        runpid=$!
        exec 5<"$fifo"
        read -r -t 10 line <&5
        [ "$line" = ready ]
        # The payload may run before run has marked it so (run takes the init's exec
        # for "ready" and then removes exec.fifo): wait for that removal (inotify).
        /usr/bin/python3 - "$STATE_ROOT/$CID" <<'PY'
import ctypes, os, select, sys, time
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_CLOEXEC)
libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x200)  # IN_DELETE
deadline = time.monotonic() + 10
while os.path.exists(os.path.join(sys.argv[1], "exec.fifo")):
    r, _, _ = select.select([fd], [], [], max(0, deadline - time.monotonic()))
    if not r:
        sys.exit(1)
    os.read(fd, 4096)
PY
        [ "$(state_field "$CID" status)" = running ]
        [ "$(cat "$BATS_TEST_TMPDIR/pid")" = "$(state_field "$CID" pid)" ]
        msp kill "$CID" KILL
        wait "$runpid" || st=$?
        [ "${st:-0}" -eq 137 ]
        exec 5<&-
        assert_nothing_left "$CID"
}

@test "state and kill of concurrent containers do not block each other" {
        set_args /bin/sleep 1000
        create_bg "$CID-a"
        update_config ".linux.cgroupsPath = \"/$CGROUP_PREFIX/$CID-b\""
        create_bg "$CID-b"
        [ "$(state_field "$CID-a" status)" = created ]
        [ "$(state_field "$CID-b" status)" = created ]
        msp delete "$CID-a"
        msp delete "$CID-b"
        assert_nothing_left "$CID-a"
        assert_nothing_left "$CID-b"
}

@test "spec writes a config that msp accepts, and refuses to overwrite it" {
        dir="$BATS_TEST_TMPDIR/specdir"
        mkdir "$dir"
        run msp spec --bundle "$dir"
        [ "$status" -eq 0 ]
        [ "$(jq -r .ociVersion "$dir/config.json")" != null ]
        [ "$(jq -r '.process.args[0]' "$dir/config.json")" = sh ]
        run msp spec --bundle "$dir"
        [ "$status" -ne 0 ]
        [[ "$output" == *exists* ]]
        run msp spec --rootless --bundle "$BATS_TEST_TMPDIR"
        [ "$status" -eq 0 ]
        [ "$(jq -r '.linux.namespaces | map(.type) | index("user") != null' "$BATS_TEST_TMPDIR/config.json")" = true ]
}

@test "features: valid JSON with the OCI version range and msp's Landlock section" {
        run msp features
        [ "$status" -eq 0 ]
        [ "$(echo "$output" | jq -r .ociVersionMin)" = 1.0.0 ]
        [ "$(echo "$output" | jq -r '.linux.namespaces | index("user") != null')" = true ]
        [ "$(echo "$output" | jq -r '.linux.capabilities | index("CAP_SYS_ADMIN") != null')" = true ]
        [ "$(echo "$output" | jq -r '.linux.seccomp.enabled')" = true ]
        [ "$(echo "$output" | jq -r '.linux.landlock.abi')" -ge 1 ]
}

@test "features: linux.apparmor.enabled and linux.selinux.enabled as the kernel's LSM list says" {
        # The kernel's own list, from a securityfs mounted in a private mount namespace
        # (this host does not mount it).
        lsms=$(unshare -m sh -c 'mount -t securityfs none /sys/kernel/security &&
                cat /sys/kernel/security/lsm')
        echo "kernel LSMs: $lsms"
        [ -n "$lsms" ]
        run msp features
        [ "$status" -eq 0 ]
        echo "$output" | jq -c '.linux | {apparmor, selinux}'
        for lsm in apparmor selinux; do
                want=false
                tr , '\n' <<<"$lsms" | grep -qx "$lsm" && want=true
                [ "$(jq -r ".linux.$lsm.enabled" <<<"$output")" = "$want" ]
        done
}

@test "--version and help" {
        run "$MSP" --version
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == "msp version "* ]]
        # the spec version is the newest one features reports
        [ "${lines[1]}" = "spec: $("$MSP" features | jq -r .ociVersionMax)" ]
        run "$MSP" help create
        [ "$status" -eq 0 ]
        [[ "$output" == *"--console-socket"* ]]
        run "$MSP" create --help
        [ "$status" -eq 0 ]
        run "$MSP" nosuchcommand
        [ "$status" -ne 0 ]
}

# Every option a command's getopt table takes is in its --help and in msp(8), which are
# printed from one table (runtime/cmd/commands.c): a new flag without help fails here.
@test "help: every option of every command is listed in its --help and in the manual page" {
        local man
        man=$("$MSP" help --man)
        [[ "$man" == ".TH MSP 8"* ]]
        if command -v groff >/dev/null; then
                run groff -man -ww -z <<<"$man"
                [ "$status" -eq 0 ] && [ -z "$output" ]
        fi
        for src in "$REPO"/runtime/cmd/*.c; do
                cmd=$(basename "$src" .c)
                [ "$cmd" = commands ] && continue
                cmds=$cmd
                [ "$cmd" = create ] && cmds="create run"
                for name in $(grep -o '{ "[a-z-]*", [a-z_]*_argument' "$src" | cut -d'"' -f2); do
                        [ "$name" = help ] && continue
                        for c in $cmds; do
                                [ "$cmd" = create ] && [ "$c" = create ] &&
                                        { [ "$name" = detach ] || [ "$name" = keep ]; } && continue
                                help=$("$MSP" "$c" --help)
                                [[ "$help" == *"--$name"* ]] || { echo "$c --help lacks --$name"; false; }
                                # roff writes each '-' as '\-'
                                [[ "$man" == *"\\-\\-${name//-/\\-}"* ]] || { echo "msp(8) lacks --$name"; false; }
                        done
                done
        done
        # the global options too
        for name in $(sed -n '/^main(/,/^}/p' "$REPO/runtime/main.c" |
                      grep -o '{ "[a-z-]*", [a-z_]*_argument' | cut -d'"' -f2); do
                [[ "$("$MSP" --help)" == *"--$name"* ]] || { echo "msp --help lacks --$name"; false; }
        done
}

@test "run: a terminal without --console-socket is proxied to msp's stdio, as runc does" {
        update_config '.process.terminal = true'
        set_args /bin/sh -c 'test -t 0 && test -t 1 && echo "tty: $(tty)"; read line; echo "got: $line"'
        run bash -c "echo from-stdin | '$MSP' --root '$STATE_ROOT' run -b '$BUNDLE' '$CID' 3>&-"
        [ "$status" -eq 0 ]
        [[ "$output" == *"tty: /dev/pts/0"* ]]
        [[ "$output" == *"got: from-stdin"* ]]
        assert_nothing_left "$CID"
        # detached, a terminal needs somewhere to send the pty
        run msp run --detach -b "$BUNDLE" "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"console-socket"* ]]
        assert_nothing_left "$CID"
}
