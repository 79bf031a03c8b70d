#!/usr/bin/env bats
# process.terminal with --console-socket: the pty master goes to the socket (as conmon
# receives it), the process gets the slave as stdio, controlling terminal and
# /dev/console. msp-console-recv plays conmon: it receives the master, optionally types
# into it, and copies what the container writes.

load helpers

setup() {
        setup_bundle
        SOCK="$BATS_TEST_TMPDIR/console.sock"
        update_config '.process.terminal = true'
}

teardown() {
        if [ -n "${RECV_PID:-}" ]; then
                kill -9 "$RECV_PID" 2>/dev/null || true
        fi
        teardown_containers
}

# start_and_wait: start the created container, wait for the receiver to see the hang-up.
start_and_wait() {
        msp start "$CID"
        wait_pid_exit "$RECV_PID" 15
        RECV_PID=
        console_output
        cat "$BATS_TEST_TMPDIR/console.err"
}

@test "create + start: the pty master arrives; stdio is the terminal /dev/pts/N" {
        set_args /bin/msp-helper tty -- stat /dev/console -- exec /bin/sh -c 'echo via-dev-tty >/dev/tty'
        console_recv_bg "$SOCK"
        create_bg "$CID" --console-socket "$SOCK"
        [ "$(state_field "$CID" status)" = created ]
        start_and_wait
        output=$(console_output)
        n=$(sed -n 's/^pty=//p' "$BATS_TEST_TMPDIR/console.err")
        [ -n "$n" ]
        # one data byte travels with the fd (crun's ' ')
        grep -q '^payload=' "$BATS_TEST_TMPDIR/console.err"
        for fd in 0 1 2; do
                [ "$(value tty.$fd)" = 1 ]
                [ "$(value ttyname.$fd)" = "/dev/pts/$n" ]
        done
        # /dev/console is the same pty (unix98 slaves are major 136)
        [ "$(value stat.rdev)" = "136:$n" ]
        # it is the controlling terminal
        [[ "$output" == *via-dev-tty* ]]
        [ ! -e "$SOCK" ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "a read-only /dev: /dev/console and /dev/pts still work (ro is applied last)" {
        update_config '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"]'
        set_args /bin/msp-helper tty -- stat /dev/console -- write /dev/x
        console_recv_bg "$SOCK"
        create_bg "$CID" --console-socket "$SOCK"
        start_and_wait
        output=$(console_output)
        n=$(sed -n 's/^pty=//p' "$BATS_TEST_TMPDIR/console.err")
        [ "$(value ttyname.0)" = "/dev/pts/$n" ]
        [ "$(value stat.rdev)" = "136:$n" ]
        [ "$(value write)" = EROFS ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "consoleSize sets the window size" {
        update_config '.process.consoleSize = {"height": 33, "width": 101}'
        set_args /bin/stty size
        console_recv_bg "$SOCK"
        create_bg "$CID" --console-socket "$SOCK"
        start_and_wait
        [ "$(console_output)" = "33 101" ]
        grep -qx 'winsize=33 101' "$BATS_TEST_TMPDIR/console.err"
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "input typed into the master reaches the process" {
        set_args /bin/sh -c 'read -r line; echo "got=[$line]"'
        console_recv_bg "$SOCK" -i "$(printf 'hello tty\n')"$'\n'
        create_bg "$CID" --console-socket "$SOCK"
        start_and_wait
        output=$(console_output)
        echo "$output"
        # the terminal echoes the input, then the process answers
        [[ "$output" == *"got=[hello tty]"* ]]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "run with a terminal: output, input and the exit status" {
        set_args /bin/sh -c 'read -r line; echo "got=[$line]"; msp-helper tty; exit 7'
        console_recv_bg "$SOCK" -i $'from-run\n'
        run msp run --console-socket "$SOCK" -b "$BUNDLE" "$CID" </dev/null
        echo "run: $status $output"
        [ "$status" -eq 7 ]
        # msp's own stdio is not the terminal: nothing of the container's went there
        [ -z "$output" ]
        wait_pid_exit "$RECV_PID" 15
        RECV_PID=
        output=$(console_output)
        echo "$output"
        [[ "$output" == *"got=[from-run]"* ]]
        [ "$(value tty.0)" = 1 ]
        [ "$(value tty.1)" = 1 ]
        assert_nothing_left "$CID"
}

@test "a terminal for a non-root user (read-only root): the pty is the user's" {
        update_config '.process.user = {"uid": 1000, "gid": 1000} | .root.readonly = true'
        set_args /bin/sh -c 'msp-helper ids -- tty -- stat /dev/console; echo reopened >"$(tty)"'
        console_recv_bg "$SOCK"
        create_bg "$CID" --console-socket "$SOCK"
        start_and_wait
        output=$(console_output)
        [ "$(value uid)" = 1000 ]
        [ "$(value tty.0)" = 1 ]
        n=$(sed -n 's/^pty=//p' "$BATS_TEST_TMPDIR/console.err")
        [ "$(value ttyname.1)" = "/dev/pts/$n" ]
        # the slave belongs to the process' user (the tty group stays), so it can
        # reopen its terminal by name, as with runc and crun
        [ "$(value stat.rdev)" = "136:$n" ]
        [ "$(value stat.uid)" = 1000 ]
        [[ "$output" == *reopened* ]]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "--console-socket without process.terminal is refused" {
        update_config '.process.terminal = false'
        console_recv_bg "$SOCK" -t 5
        run msp create --console-socket "$SOCK" -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"process.terminal"* ]]
        assert_nothing_left "$CID"
}

@test "a console socket nobody listens on fails create and leaves nothing" {
        run msp create --console-socket "$BATS_TEST_TMPDIR/nobody.sock" -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"nobody.sock"* ]]
        assert_nothing_left "$CID"
}
