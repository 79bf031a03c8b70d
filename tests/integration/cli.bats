#!/usr/bin/env bats
# The command line as runc 1.1.5 (urfave/cli) takes it, each case checked against runc by
# hand: options after the container ID (every command but exec and ps, whose options end
# at the ID), exec's exit statuses (runc-exec(8)), ps options handed to ps(1), signal 0,
# /dev/fd paths, help for the commands msp does not implement, list order.

load helpers

setup() {
        setup_bundle
        if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then V2=1; else V2=0; fi
}

teardown() {
        teardown_containers
}

pids_max() {
        if [ "$V2" = 1 ]; then
                cat "/sys/fs/cgroup/$CGROUP_PREFIX/$CID/pids.max"
        else
                cat "/sys/fs/cgroup/pids/$CGROUP_PREFIX/$CID/pids.max"
        fi
}

@test "cli: options after the container ID (update, events, kill, delete)" {
        start_sleeper
        run msp update "$CID" --pids-limit 77
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(pids_max)" = 77 ]
        # a value that looks like an option stays the option's value
        run msp update "$CID" --pids-limit -1
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(pids_max)" = max ]
        run msp events "$CID" --stats
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(echo "$output" | jq -r .type)" = stats ]
        # after "--" everything is an operand, as with runc
        run msp update "$CID" -- --pids-limit 5
        [ "$status" -eq 1 ]
        [ "$(pids_max)" = max ]
        # an unknown option after the ID is still a usage error
        run msp state "$CID" --bogus
        [ "$status" -eq 1 ]
        run msp kill "$CID" KILL --all
        echo "$output"
        [ "$status" -eq 0 ]
        wait_pid_exit "$(state_field "$CID" pid)" 2>/dev/null || true
        run msp delete "$CID" --force
        echo "$output"
        [ "$status" -eq 0 ]
        assert_nothing_left "$CID"
}

@test "cli: create and run take their options after the ID" {
        set_args /bin/true
        run msp run "$CID" --bundle "$BUNDLE"
        echo "$output"
        [ "$status" -eq 0 ]
        assert_nothing_left "$CID"
}

@test "cli: ps hands what follows the ID to ps(1) and keeps the container's rows" {
        start_sleeper
        pid=$(state_field "$CID" pid)
        run msp ps "$CID" -o pid,comm
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${#lines[@]}" -eq 2 ]
        [[ "${lines[0]}" == *PID*COMMAND* ]]
        [ "$(echo "${lines[1]}" | awk '{print $1, $2}')" = "$pid sleep" ]
        run msp ps "$CID" -e -x
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${#lines[@]}" -eq 2 ]
        [ "$(echo "${lines[1]}" | awk '{print $1}')" = "$pid" ]
        # ps(1) output without a PID column cannot be filtered
        run msp ps "$CID" -o comm
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"no PID column"* ]]
        # options end at the ID: --format after it is ps(1)'s (which refuses it), as runc
        run msp ps "$CID" --format json
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"ps(1) exited with status 1"* ]]
        run msp ps --format json "$CID"
        [ "$status" -eq 0 ]
        [ "$output" = "[$pid]" ]
        run msp ps --help
        [ "$status" -eq 0 ]
        [[ "$output" == "Usage: msp [global options] ps"* ]]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "cli: the container's escape sequences and newlines reach no output of msp (ps, ps(1) rows, errors, the JSON log)" {
        # The attack: an argv (the container's own, and an exec'd name) with an OSC title,
        # a screen clear and a newline followed by a forged ps row.
        evil=$'\e]0;pwned\a\e[2J\n0        1        0        S    /bin/forged'
        tmp="$BUNDLE/config.json.tmp"
        jq --arg e "$evil" '.process.args = ["/bin/msp-helper", "sleep-forever", "--", $e]' \
                "$BUNDLE/config.json" >"$tmp"
        mv "$tmp" "$BUNDLE/config.json"
        create_bg "$CID"
        msp start "$CID"
        pid=$(state_field "$CID" pid)
        printable() { [[ "$1" != *[$'\e\a\r']* ]]; }
        run msp ps "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        printable "$output"
        [ "${#lines[@]}" -eq 2 ]
        [ "$(echo "${lines[1]}" | awk '{print $2}')" = "$pid" ]
        [[ "${lines[1]}" == *"sleep-forever -- ?]0;pwned??[2J?0        1        0        S    /bin/forged" ]]
        run msp ps "$CID" -o pid,args
        echo "$output"
        [ "$status" -eq 0 ]
        printable "$output"
        [ "${#lines[@]}" -eq 2 ]
        [[ "${lines[1]}" == *"$pid "*"?]0;pwned"* ]]
        # An error quoting it: one line on stderr, and the JSON log stays one valid line.
        run "$MSP" --root "$STATE_ROOT" --log "$BATS_TEST_TMPDIR/log.json" --log-format json \
                exec "$CID" "$evil" 3>&-
        echo "$output"
        [ "$status" -ne 0 ]
        printable "$output"
        [ "${#lines[@]}" -eq 1 ]
        [[ "$output" == *"?]0;pwned??[2J?0        1"* ]]
        printable "$(cat "$BATS_TEST_TMPDIR/log.json")"
        [ "$(wc -l <"$BATS_TEST_TMPDIR/log.json")" -eq 1 ]
        jq -e '.msg | contains("?]0;pwned")' "$BATS_TEST_TMPDIR/log.json"
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "cli: exec exits 255 when msp fails, 1 when the command line does not parse" {
        start_sleeper
        run msp exec "$CID" /no/such/binary
        echo "$output"
        [ "$status" -eq 255 ]
        run msp exec no-such-container /bin/true
        echo "$output"
        [ "$status" -eq 255 ]
        [[ "$output" == *"does not exist"* ]]
        run msp exec "$CID"
        [ "$status" -eq 255 ]
        run msp exec --user nobody "$CID" /bin/true
        [ "$status" -eq 255 ]
        run msp exec
        [ "$status" -eq 1 ]
        run msp exec --bogus "$CID" /bin/true
        [ "$status" -eq 1 ]
        run msp exec --preserve-fds x "$CID" /bin/true
        [ "$status" -eq 1 ]
        # after the ID everything is the command, --help too
        run msp exec "$CID" /bin/echo --help
        [ "$status" -eq 0 ]
        [ "$output" = --help ]
        run msp exec --help
        [ "$status" -eq 0 ]
        [[ "$output" == "Usage: msp [global options] exec"* ]]
        msp pause "$CID"
        run msp exec "$CID" /bin/true
        echo "$output"
        [ "$status" -eq 255 ]
        [[ "$output" == *paused* ]]
        msp resume "$CID"
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "cli: exec with a pid file it cannot write fails and leaves no process" {
        start_sleeper
        init=$(state_field "$CID" pid)
        # Not under `run`: a process left running would hold its output pipe open. The
        # foreground case is bounded: a runtime that does not kill it waits for the sleep.
        rc=0
        msp exec -d --pid-file /nonexistent/dir/pid "$CID" /bin/sleep 4242 \
                </dev/null >"$BATS_TEST_TMPDIR/err" 2>&1 || rc=$?
        cat "$BATS_TEST_TMPDIR/err"
        [ "$rc" -eq 255 ]
        [ "$(msp ps --format json "$CID")" = "[$init]" ]
        rc=0
        timeout -s KILL 20 "$MSP" --root "$STATE_ROOT" exec --pid-file /nonexistent/dir/pid \
                "$CID" /bin/sleep 4243 </dev/null >"$BATS_TEST_TMPDIR/err" 2>&1 3>&- || rc=$?
        cat "$BATS_TEST_TMPDIR/err"
        [ "$rc" -eq 255 ]
        [ "$(msp ps --format json "$CID")" = "[$init]" ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "cli: paths under /dev/fd: --pid-file and exec --process, update --resources from a pipe" {
        set_args /bin/sleep 100000
        msp create -b "$BUNDLE" --pid-file /dev/fd/5 "$CID" 5>"$BATS_TEST_TMPDIR/pid" \
                >"$BATS_TEST_TMPDIR/out" 2>&1 </dev/null
        [ "$(cat "$BATS_TEST_TMPDIR/pid")" = "$(state_field "$CID" pid)" ]
        msp start "$CID"
        run msp exec --process <(echo '{"args":["/bin/echo","from-a-pipe"],"cwd":"/"}') "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = from-a-pipe ]
        run msp exec --pid-file /dev/fd/6 "$CID" /bin/true 6>"$BATS_TEST_TMPDIR/epid"
        [ "$status" -eq 0 ]
        [ "$(cat "$BATS_TEST_TMPDIR/epid")" -gt 0 ]
        run msp update --resources <(echo '{"pids":{"limit":55}}') "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(pids_max)" = 55 ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "cli: kill ID 0 says whether the container runs" {
        start_sleeper
        run msp kill "$CID" 0
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(state_field "$CID" status)" = running ]
        msp kill "$CID" KILL
        wait_pid_exit "$(state_field "$CID" pid)" 2>/dev/null || true
        for _ in $(seq 50); do
                [ "$(state_field "$CID" status)" = stopped ] && break
                sleep 0.1
        done
        run msp kill "$CID" 0
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"not running"* ]]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "cli: checkpoint and restore: --help exits 0, the command fails clearly" {
        for c in checkpoint restore; do
                run msp "$c" --help
                [ "$status" -eq 0 ]
                [[ "$output" == "Usage: msp [global options] $c"* ]]
                run msp "$c" -h
                [ "$status" -eq 0 ]
                run msp "$c" some-id
                echo "$output"
                [ "$status" -eq 1 ]
                [[ "$output" == *"$c: not supported"* ]]
        done
}

@test "cli: list is sorted by container ID" {
        set_args /bin/sleep 100000
        for id in "$CID-c" "$CID-a" "$CID-b"; do
                update_config ".linux.cgroupsPath = \"/$CGROUP_PREFIX/$id\""
                create_bg "$id"
        done
        run msp list -q
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf '%s\n' "$CID-a" "$CID-b" "$CID-c")" ]
        run msp list --format json
        [ "$(echo "$output" | jq -r '.[].id' | tr '\n' ' ')" = "$CID-a $CID-b $CID-c " ]
        for id in "$CID-c" "$CID-a" "$CID-b"; do
                msp delete --force "$id"
        done
        for id in "$CID-c" "$CID-a" "$CID-b"; do
                assert_nothing_left "$id"
        done
}

@test "cli: --debug traces create, start, exec and delete, in text and json; nothing without it" {
        update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
                "syscalls": [{"names": ["kexec_load"], "action": "SCMP_ACT_ERRNO"}]}
                | .hooks = {"prestart": [{"path": "/bin/true", "args": ["true", "pre"]}],
                            "poststop": [{"path": "/bin/true"}]}'
        set_args /bin/sleep 100000
        log="$BATS_TEST_TMPDIR/debug.log"
        "$MSP" --root "$STATE_ROOT" --debug --log "$log" create -b "$BUNDLE" "$CID" \
                </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 3>&-
        "$MSP" --root "$STATE_ROOT" --debug --log "$log" start "$CID" 3>&-
        "$MSP" --root "$STATE_ROOT" --debug --log "$log" exec "$CID" /bin/true 3>&-
        cat "$log"
        for want in "create '$CID': bundle '$BUNDLE'" \
                    "create '$CID': namespaces: new pid,network,mount,ipc,uts" \
                    "create '$CID': cgroup '/$CGROUP_PREFIX/$CID'" \
                    "mount\[0\] 'proc' on '/proc': mounted" \
                    "init: pivot_root into" \
                    "seccomp: .*instructions" \
                    "prestart hook\[0\]: /bin/true pre" \
                    "create '$CID': init pid [0-9]* parked" \
                    "start '$CID': releasing init pid" \
                    "exec in '$CID': joins the namespaces of pid [0-9]*: pid,network,mount,ipc,uts" \
                    "exec in '$CID': pid [0-9]* runs '/bin/true'"; do
                grep -q "^[0-9T:.-]*Z debug: $want" "$log" || { echo "missing: $want"; false; }
        done
        json="$BATS_TEST_TMPDIR/debug.json"
        "$MSP" --root "$STATE_ROOT" --debug --log "$json" --log-format json delete --force "$CID" 3>&-
        cat "$json"
        # one JSON object a line, each a debug one here
        [ "$(jq -r .level "$json" | sort -u)" = debug ]
        jq -r .msg "$json" | grep -q '^poststop hook\[0\]: /bin/true'
        # without --debug: nothing
        quiet="$BATS_TEST_TMPDIR/quiet.log"
        set_args /bin/true
        "$MSP" --root "$STATE_ROOT" --log "$quiet" run -b "$BUNDLE" "$CID" </dev/null 3>&-
        [ ! -s "$quiet" ]
        assert_nothing_left "$CID"
}
