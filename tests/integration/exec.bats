#!/usr/bin/env bats
# exec: one more process in a running container. It must land in every namespace and the
# cgroup of the container's init and carry the config's restrictions (capabilities,
# seccomp, no_new_privs, Landlock); errors before execve come back as exec's own.

load helpers

setup() {
        setup_bundle
        update_config '.process.noNewPrivileges = true'
}

teardown() {
        teardown_containers
        if [ -n "${RECV_PID:-}" ]; then
                kill "$RECV_PID" 2>/dev/null || true
        fi
}

# start_sleeper: create + start $CID running a long sleep (stdio to a file).
start_sleeper() {
        set_args /bin/sleep 100000
        create_bg "$CID"
        msp start "$CID"
        [ "$(state_field "$CID" status)" = running ]
}

# finish: delete the container and prove nothing is left.
finish() {
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "exec: output and exit status 0 and 3" {
        start_sleeper
        run msp exec "$CID" /bin/sh -c 'echo hello-from-exec'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = hello-from-exec ]
        run msp exec "$CID" /bin/sh -c 'exit 3'
        [ "$status" -eq 3 ]
        # killed by a signal: 128 + n
        run msp exec "$CID" /bin/sh -c 'kill -TERM $$'
        [ "$status" -eq 143 ]
        finish
}
