#!/usr/bin/env bats
# process.terminal with --console-socket: the pty master goes to the socket (as conmon
# receives it), the process gets the slave as stdio, controlling terminal and
# /dev/console. msp-console-recv plays conmon: it receives the master, optionally types
# into it, and copies what the container writes. Last, without process.terminal on the
# caller's own terminal (on_pty): what reaches the process, and what must not.

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

# ---- without process.terminal, on the caller's terminal (on_pty: an interactive shell's) ----
# msp gives the process pipes for those of its fds 0-2 that are terminals and copies
# them (runtime/lib/relay.h), and the process leads a session of its own, as with runc:
# code in the container cannot push keystrokes that the shell would run after msp
# returns (TIOCSTI), through its stdio or /dev/tty.

INJECT=$'echo INJECTED\r'          # \r: the Enter key (set_args splits at \n)

# no_terminal_reached: the facts of `msp-helper tiocsti -- tty` in $output say that no
# terminal was reachable, and nothing was left in the caller's terminal input.
no_terminal_reached() {
        echo "$output"
        od -c "$BATS_TEST_TMPDIR/pending"
        for fd in 0 1 2; do
                [ "$(value tiocsti.$fd)" = ENOTTY ]
        done
        [ "$(value tiocsti.devtty)" = ENXIO ]
        [ ! -s "$BATS_TEST_TMPDIR/pending" ]
}

# start_sleeper_without_terminal: a running container $CID to exec into.
start_sleeper_without_terminal() {
        update_config '.process.terminal = false'
        set_args /bin/sleep 1000
        create_bg "$CID"
        msp start "$CID"
}

@test "no terminal, run on the caller's terminal: TIOCSTI and /dev/tty reach nothing, as runc" {
        update_config '.process.terminal = false'
        set_args /bin/msp-helper tiocsti "$INJECT" -- tty
        run on_pty --raw -- "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID"
        [ "$status" -eq 0 ]
        no_terminal_reached
        [ "$(value tty.1)" = 0 ]
        assert_nothing_left "$CID"
        # runc on the same bundle
        run on_pty --raw -- runc --root "$BATS_TEST_TMPDIR/runc" run -b "$BUNDLE" "$CID"
        [ "$status" -eq 0 ]
        no_terminal_reached
}

@test "no terminal, exec on the caller's terminal: TIOCSTI and /dev/tty reach nothing" {
        start_sleeper_without_terminal
        run on_pty --raw -- "$MSP" --root "$STATE_ROOT" exec "$CID" \
                /bin/msp-helper tiocsti "$INJECT" -- tty
        [ "$status" -eq 0 ]
        no_terminal_reached
        [ "$(value tty.1)" = 0 ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "no terminal, stdio redirected but the caller's session has a terminal: /dev/tty is not it" {
        start_sleeper_without_terminal
        run on_pty --raw -- sh -c '"$0" --root "$1" exec "$2" /bin/msp-helper tiocsti "$3" \
                </dev/null >"$4" 2>&1' "$MSP" "$STATE_ROOT" "$CID" "$INJECT" "$BATS_TEST_TMPDIR/redir"
        [ "$status" -eq 0 ]
        output=$(cat "$BATS_TEST_TMPDIR/redir")
        no_terminal_reached
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "no terminal, run on the caller's terminal: input and its EOF, output order and size, exit status" {
        update_config '.process.terminal = false'
        local script='while read -r l; do echo "got=[$l]"; done; echo eof;'
        script+=' for i in 1 2 3; do echo out$i; echo err$i >&2; done;'
        script+=' yes line | head -n 20000; echo end; exit 6'
        set_args /bin/sh -c "$script"
        run on_pty --send $'one\ntwo\n\x04' -- "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID"
        [ "$status" -eq 6 ]
        [[ "$output" == *"got=[one]"*"got=[two]"*eof* ]]
        # stdout and stderr are the same terminal: one pipe keeps their order
        [[ "$output" == *$'out1\nerr1\nout2\nerr2\nout3\nerr3\n'* ]]
        # all of it, up to what the process wrote last
        [ "$(grep -cx line <<<"$output")" -eq 20000 ]
        [ "$(tail -n1 <<<"$output")" = end ]
        assert_nothing_left "$CID"
        run on_pty --send $'one\ntwo\n\x04' -- runc --root "$BATS_TEST_TMPDIR/runc" run -b "$BUNDLE" "$CID"
        [ "$status" -eq 6 ]
        [[ "$output" == *"got=[one]"*"got=[two]"*eof* ]]
}

@test "no terminal, on the caller's terminal: Ctrl-C reaches the process through msp (run, exec)" {
        update_config '.process.terminal = false'
        set_args /bin/sh -c 'trap "echo got-int; exit 3" INT; echo ready; while :; do sleep 10 & wait $!; done'
        run on_pty --send-after ready $'\x03' -- "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 3 ]
        [[ "$output" == *got-int* ]]
        assert_nothing_left "$CID"
        start_sleeper_without_terminal
        run on_pty --send-after ready $'\x03' -- "$MSP" --root "$STATE_ROOT" exec "$CID" \
                /bin/sh -c 'echo ready; exec sleep 100'
        echo "$output"
        [ "$status" -eq 130 ]
        msp delete --force "$CID"
}

@test "no terminal: piped and redirected stdio reaches the process as it is (no relay)" {
        update_config '.process.terminal = false'
        set_args /bin/sh -c 'cat; readlink /proc/self/fd/0; stat -L -c %i /proc/self/fd/1; exit 4'
        run bash -c 'echo piped | { readlink /proc/self/fd/0 >"$5"; "$0" --root "$1" run -b "$2" "$3" >"$4"; }' \
                "$MSP" "$STATE_ROOT" "$BUNDLE" "$CID" "$BATS_TEST_TMPDIR/out" "$BATS_TEST_TMPDIR/in"
        cat "$BATS_TEST_TMPDIR/out"
        [ "$status" -eq 4 ]
        mapfile -t got <"$BATS_TEST_TMPDIR/out"
        [ "${got[0]}" = piped ]
        [ "${got[1]}" = "$(cat "$BATS_TEST_TMPDIR/in")" ]
        [ "${got[2]}" = "$(stat -c %i "$BATS_TEST_TMPDIR/out")" ]
        assert_nothing_left "$CID"
}

# detached_on_pty RUNTIME [GLOBAL OPTIONS]: `run -d` of the bundle as a shell's job on a
# fresh pty; the job waits for the detached init by pidfd before it ends. The
# container's report is in $output.
detached_on_pty() {
        run on_pty --raw -- bash -c '"${@:3}" run -d --pid-file "$0" -b "$1" "$2" &&
                /usr/bin/python3 -c "import os, select, sys
fd = os.pidfd_open(int(open(sys.argv[1]).read()))
sys.exit(0 if select.select([fd], [], [], 10)[0] else 1)" "$0"' \
                "$BATS_TEST_TMPDIR/pid" "$BUNDLE" "$CID" "$@"
        [ "$status" -eq 0 ]
        output=$(cat "$BUNDLE/rootfs/out")
        echo "$output"
        od -c "$BATS_TEST_TMPDIR/pending"
}

@test "no terminal, run -d on the caller's terminal: stdio handed over as is, TIOCSTI still EPERM (as runc)" {
        update_config '.process.terminal = false'
        set_args /bin/sh -c 'msp-helper tiocsti "$0" -- tty >/out' "$INJECT"
        local -a rt
        for name in msp runc; do
                rt=("$MSP" --root "$STATE_ROOT")
                [ $name = msp ] || rt=(runc --root "$BATS_TEST_TMPDIR/runc")
                detached_on_pty "${rt[@]}"
                # fds 0 and 2 are the caller's terminal, as given; it is not the process's
                # controlling terminal (its own session), so TIOCSTI needs CAP_SYS_ADMIN
                [ "$(value tty.0)" = 1 ]
                [ "$(value tiocsti.0)" = EPERM ]
                [ "$(value tiocsti.2)" = EPERM ]
                [ "$(value tiocsti.devtty)" = ENXIO ]
                [ ! -s "$BATS_TEST_TMPDIR/pending" ]
                "${rt[@]}" delete --force "$CID" 3>&-
        done
        assert_nothing_left "$CID"
}
