#!/usr/bin/env bats
# Rootless podman (Debian's, with conmon, slirp4netns and newuidmap) as an unprivileged
# user driving the built msp. Every scenario runs with runc first (the control), then
# with msp, on the same image and options. Run as root: it makes the test user
# (tests/helper/test-user.sh) and a private podman state (helpers.bash).

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
        pr_setup_file
}

teardown_file() {
        pr_teardown_file
}

teardown() {
        pr_teardown
}

@test "rootless podman uses msp: podman info names it, rootless true" {
        run pm info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}} {{.Host.Security.Rootless}}'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "msp $PR_MSP true" ]
}

s_id() {
        run pm run --rm "$PR_IMAGE" sh -c 'id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = 0 ] && [ "${lines[1]}" = 0 ]
        # root is the user; 1..65536 are the subordinate range of /etc/subuid, /etc/subgid
        [ "$(echo "${lines[2]}" | awk '{print $1, $2, $3}')" = "0 $MSP_TEST_UID 1" ]
        [ "$(echo "${lines[3]}" | awk '{print $1, $2, $3}')" = "1 $MSP_TEST_SUBID_START $MSP_TEST_SUBID_COUNT" ]
        [ "$(echo "${lines[4]}" | awk '{print $1, $2, $3}')" = "0 $MSP_TEST_GID 1" ]
        [ "$(echo "${lines[5]}" | awk '{print $1, $2}')" = "1 $MSP_TEST_SUBID_START" ]
        # files the container's root and its uid 1000 make belong to the user and to
        # the range's id 999 on the host
        run pm run --rm -v "$PR_DIR/vol:/vol" "$PR_IMAGE" \
                sh -c "touch /vol/root-$PR_RT /vol/u1000-$PR_RT && chown 1000:1000 /vol/u1000-$PR_RT"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(stat -c '%u %g' "$PR_DIR/vol/root-$PR_RT")" = "$MSP_TEST_UID $MSP_TEST_GID" ]
        [ "$(stat -c '%u %g' "$PR_DIR/vol/u1000-$PR_RT")" = \
                "$((MSP_TEST_SUBID_START + 999)) $((MSP_TEST_SUBID_START + 999))" ]
        assert_clean
}

@test "run --rm id: root in the container is the user, the rest the subuid range" {
        for_runtimes s_id
}

s_exit_codes() {
        run pm run --rm "$PR_IMAGE" sh -c 'echo out; echo to-stderr >&2; exit 1'
        [ "$status" -eq 1 ]
        [ "$output" = "$(printf 'out\nto-stderr')" ]
        # 125: podman's own error (no such image, no pull)
        run -125 pm run --rm --pull never localhost/msp-no-such-image:x true
        echo "$output"
        [ "$status" -eq 125 ]
        # 126: a file that is not executable; 127: a missing one (absolute or via $PATH)
        run -126 pm run --rm "$PR_IMAGE" /etc/noexec
        echo "$output"
        [ "$status" -eq 126 ]
        [[ "$output" == *"permission denied"* ]]
        run -127 pm run --rm "$PR_IMAGE" /no/such/program
        echo "$output"
        [ "$status" -eq 127 ]
        [[ "$output" == *"/no/such/program"*"no such file or directory"* ]]
        run -127 pm run --rm "$PR_IMAGE" nosuchcommand
        echo "$output"
        [ "$status" -eq 127 ]
        [[ "$output" == *"nosuchcommand"* ]]
        assert_clean
}

@test "exit codes: 1 from the process, 125 podman's, 126 not executable, 127 missing" {
        for_runtimes s_exit_codes
}

s_tty() {
        # -t without a terminal on podman's side: the container still gets a pty
        run pm run --rm -t "$PR_IMAGE" sh -c 'tty; test -t 0 && echo stdin-is-tty'
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"/dev/pts/0"* ]]
        [[ "$output" == *stdin-is-tty* ]]
        # -it on a real terminal: the size is passed on, the exit code comes back
        run pty_run --rows 31 --cols 97 -- "$PR_DIR/pm" run -it --rm "$PR_IMAGE" \
                sh -c "tty; $WINSIZE; exit 5"
        echo "$output"
        [ "$status" -eq 5 ]
        [[ "$output" == *"/dev/pts/0"* ]]
        [[ "$output" == *"31 97"* ]]
        assert_clean
}

@test "-t and -it: a pty in the container, its size, the exit code" {
        for_runtimes s_tty
}

s_stdin() {
        run pm run --rm -i "$PR_IMAGE" sh -c 'read a; read b; echo "got $a $b"; cat | wc -l' \
                < <(printf 'one\ntwo\nx\ny\nz\n')
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf 'got one two\n3')" ]
        # without -i the container's stdin is empty
        run pm run --rm "$PR_IMAGE" sh -c 'cat | wc -c' < <(echo ignored)
        [ "$status" -eq 0 ]
        [ "$output" = 0 ]
        assert_clean
}

@test "-i: stdin reaches the container and ends at EOF" {
        for_runtimes s_stdin
}

s_exec() {
        pm run -d --name "ex-$PR_RT" "$PR_IMAGE" sleep 1000 >/dev/null
        run pm exec "ex-$PR_RT" sh -c 'echo in-exec; exit 3'
        [ "$status" -eq 3 ]
        [ "$output" = in-exec ]
        run -127 pm exec "ex-$PR_RT" nosuchcommand
        [ "$status" -eq 127 ]
        run -126 pm exec "ex-$PR_RT" /etc/noexec
        [ "$status" -eq 126 ]
        run pm exec -u 1000:1000 -w /tmp -e FOO=bar "ex-$PR_RT" sh -c 'id -u; id -g; pwd; echo $FOO'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf '1000\n1000\n/tmp\nbar')" ]
        # in the container's pid namespace
        run pm exec "ex-$PR_RT" sh -c 'cat /proc/1/cmdline | tr "\0" " "'
        [ "$output" = "sleep 1000 " ]
        run pm exec -t "ex-$PR_RT" tty
        echo "$output"
        [[ "$output" == *"/dev/pts/"* ]]
        run pty_run --rows 33 --cols 111 -- "$PR_DIR/pm" exec -it "ex-$PR_RT" sh -c "tty; $WINSIZE; exit 4"
        echo "$output"
        [ "$status" -eq 4 ]
        [[ "$output" == *"33 111"* ]]
        pm rm -f -t 0 "ex-$PR_RT" >/dev/null
        assert_clean
}

@test "exec: exit codes, -u, -w, -e, -t, -it" {
        for_runtimes s_exec
}

s_stop_kill() {
        # pid 1 without a handler ignores TERM: stop falls back to KILL after -t
        pm run -d --name "stubborn-$PR_RT" "$PR_IMAGE" sh -c 'echo ready; while :; do sleep 0.2; done' >/dev/null
        wait_log "stubborn-$PR_RT" ready
        start=$(date +%s%N)
        run pm stop -t 2 "stubborn-$PR_RT"
        elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
        echo "$output; ${elapsed} ms"
        [ "$status" -eq 0 ]
        [ "$elapsed" -ge 1900 ] && [ "$elapsed" -lt 15000 ]
        [ "$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' "stubborn-$PR_RT")" = "exited 137" ]
        # a process that handles TERM gets it at once and exits with its own status
        pm run -d --name "polite-$PR_RT" "$PR_IMAGE" \
                sh -c 'trap "echo got-term; exit 42" TERM; echo ready; while :; do sleep 0.2; done' >/dev/null
        wait_log "polite-$PR_RT" ready
        start=$(date +%s%N)
        pm stop -t 30 "polite-$PR_RT" >/dev/null
        elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
        echo "polite: ${elapsed} ms"
        [ "$elapsed" -lt 10000 ]
        [ "$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' "polite-$PR_RT")" = "exited 42" ]
        # kill -s: the signal reaches the process; kill alone is KILL
        pm run -d --name "sig-$PR_RT" "$PR_IMAGE" \
                sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready; while :; do sleep 0.2; done' >/dev/null
        wait_log "sig-$PR_RT" ready
        pm kill -s USR1 "sig-$PR_RT" >/dev/null
        wait_status "sig-$PR_RT" exited
        [ "$(pm inspect -f '{{.State.ExitCode}}' "sig-$PR_RT")" = 7 ]
        pm run -d --name "killed-$PR_RT" "$PR_IMAGE" sleep 1000 >/dev/null
        pm kill "killed-$PR_RT" >/dev/null
        wait_status "killed-$PR_RT" exited
        [ "$(pm inspect -f '{{.State.ExitCode}}' "killed-$PR_RT")" = 137 ]
        pm rm "stubborn-$PR_RT" "polite-$PR_RT" "sig-$PR_RT" "killed-$PR_RT" >/dev/null
        assert_clean
}

@test "stop: TERM, then KILL after -t; kill -s" {
        for_runtimes s_stop_kill
}

s_keep_id() {
        run pm run --rm --userns=keep-id -v "$PR_DIR/vol:/vol" "$PR_IMAGE" \
                sh -c "id -u; id -g; touch /vol/keep-id-$PR_RT; grep -c . /proc/self/uid_map"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = "$MSP_TEST_UID" ]
        [ "${lines[1]}" = "$MSP_TEST_GID" ]
        # the user's id maps to itself; the range fills the rest (3 lines with podman 4.3)
        [ "${lines[2]}" -ge 2 ]
        [ "$(stat -c '%u %g' "$PR_DIR/vol/keep-id-$PR_RT")" = "$MSP_TEST_UID $MSP_TEST_GID" ]
        assert_clean
}

@test "--userns=keep-id: the process runs as the user's own uid and gid" {
        for_runtimes s_keep_id
}

@test "--ulimit host: the container keeps the limits podman had, as with runc" {
        limits='ulimit -Sn; ulimit -Hn; ulimit -Su; ulimit -Hu'
        user=$(as_user /bin/busybox sh -c "$limits")
        run env PR_RT=runc "$PR_DIR/pm" run --rm --ulimit host "$PR_IMAGE" sh -c "$limits"
        [ "$status" -eq 0 ]
        runc_out=$output
        run pm run --rm --ulimit host "$PR_IMAGE" sh -c "$limits"
        echo "msp: $output; runc: $runc_out; the user's: $user"
        [ "$status" -eq 0 ]
        [ "$output" = "$runc_out" ]
        # no rlimits in the config: the files limit is the user's (podman itself sets
        # RLIMIT_NPROC for rootless containers, so only nofile is compared with the user's)
        [ "$(echo "$output" | head -n 2)" = "$(echo "$user" | head -n 2)" ]
        assert_clean
}

s_rm_leaves_nothing() {
        pm run -d --name "st-$PR_RT" "$PR_IMAGE" sleep 1000 >/dev/null
        id=$(pm inspect -f '{{.ID}}' "st-$PR_RT")
        # the runtime keeps its state under the user's $XDG_RUNTIME_DIR
        [ -d "$MSP_TEST_XDG/$PR_RT/$id" ]
        [ "$(stat -c %u "$MSP_TEST_XDG/$PR_RT/$id")" = "$MSP_TEST_UID" ]
        pm rm -f -t 0 "st-$PR_RT" >/dev/null
        [ ! -e "$MSP_TEST_XDG/$PR_RT/$id" ]
        run pm run --rm --name "rm-$PR_RT" "$PR_IMAGE" true
        [ "$status" -eq 0 ]
        run pm run --rm "$PR_IMAGE" sh -c 'exit 9'
        [ "$status" -eq 9 ]
        run pm ps -aq
        [ -z "$output" ]
        assert_clean
}

@test "--rm and rm -f leave nothing: no container, state, process or mount" {
        for_runtimes s_rm_leaves_nothing
}

s_network() {
        run pm run --rm --network slirp4netns "$PR_IMAGE" ip -4 -o addr show tap0
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"inet 10.0.2.100/"* ]]
        # a published port: slirp4netns forwards the user's 127.0.0.1:PORT to the container
        port=$((20000 + RANDOM % 20000))
        pm run -d --name "web-$PR_RT" --network slirp4netns -p "127.0.0.1:$port:8080" "$PR_IMAGE" \
                httpd -f -p 8080 -h /etc >/dev/null
        fetch='import sys, urllib.request as u; sys.stdout.write(u.urlopen(sys.argv[1], timeout=2).read().decode())'
        got=
        for _ in $(seq 50); do
                got=$(as_user /usr/bin/python3 -c "$fetch" "http://127.0.0.1:$port/group" 2>/dev/null) && break
                sleep 0.1
        done
        echo "got: $got"
        [ "$got" = "$(printf 'root:x:0:\nuser:x:1000:')" ]
        pm rm -f -t 0 "web-$PR_RT" >/dev/null
        assert_clean
}

@test "network: slirp4netns gives tap0 10.0.2.100 and forwards a published port" {
        for_runtimes s_network
}
