#!/usr/bin/env bats
# linux.seccomp, tested by attack from inside the container: every blocked syscall is
# first shown to work without the rule (or a neighbouring call is shown to work under
# it), then refused with the configured errno or killed with the configured signal.
# The helper's `syscall NAME` probes run in a forked child, so a kill is reported as
# syscall.NAME=SIGSYS.

load helpers

: "${MSP_SECCOMP_AGENT:=$BATS_TEST_DIRNAME/../../build/tests/helper/msp-seccomp-agent}"

setup() {
        setup_bundle
        # RLIMIT_CORE 1: the processes killed with SIGSYS dump no core, neither to a file
        # (under a page) nor to a core_pattern pipe on the host (1 is the kernel's "skip")
        # /tmp a fresh tmpfs: each container of a test (cold, then warm) starts alike
        update_config '.process.noNewPrivileges = true |
                .process.rlimits += [{"type": "RLIMIT_CORE", "soft": 1, "hard": 1}] |
                .mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
                             "options": ["nosuid", "nodev", "mode=1777"]}]'
}

teardown() {
        if [ -n "${RO_MOUNT:-}" ]; then
                umount "$RO_MOUNT" || true
        fi
        if [ -n "${AGENT_PID:-}" ]; then
                kill "$AGENT_PID" 2>/dev/null || true
                wait_pid_exit "$AGENT_PID" 5 || true
        fi
        teardown_containers
}

# seccomp JSON: set linux.seccomp.
seccomp() {
        update_config ".linux.seccomp = $1"
}

# seccomp_from FILE FILTER: set linux.seccomp to FILTER applied to FILE (jq).
seccomp_from() {
        local tmp="$BUNDLE/config.json.tmp"
        jq --slurpfile p "$1" ".linux.seccomp = (\$p[0] | $2)" "$BUNDLE/config.json" >"$tmp"
        mv "$tmp" "$BUNDLE/config.json"
}

# The compiled-filter cache (runtime/lib/seccomp-cache.h) lives beside the state root, in
# $BATS_TEST_TMPDIR/msp-cache, which is new for each test, so a test's first container compiles its filter. Every container
# below runs twice: cold (compiled, then cached) and warm (the program from the cache);
# both runs must behave alike, and the assertions check the warm run.

# has_seccomp: the bundle's config has a linux.seccomp object.
has_seccomp() {
        [ "$(jq -r '.linux.seccomp | type' "$BUNDLE/config.json")" = object ]
}

# run_cold_warm: `msp run` the bundle twice (--debug to a log); the first must compile the
# filter, the second take it from the cache. Same exit status, same output (msp's own
# stderr notes aside); $status and $output are the warm run's.
run_cold_warm() {
        local cold_log="$BATS_TEST_TMPDIR/cold.log" warm_log="$BATS_TEST_TMPDIR/warm.log"
        rm -f "$cold_log" "$warm_log"
        run msp --debug --log "$cold_log" run -b "$BUNDLE" "$CID" </dev/null
        local cold_status=$status cold_output
        cold_output=$(printf '%s\n' "$output" | grep -v '^msp: ' || true)
        run msp --debug --log "$warm_log" run -b "$BUNDLE" "$CID" </dev/null
        if has_seccomp; then
                grep -q 'seccomp: compiled filter cached as' "$cold_log" ||
                        { echo "cold run did not compile and cache:"; cat "$cold_log"; return 1; }
                grep -q 'seccomp: cached filter' "$warm_log" ||
                        { echo "warm run did not use the cache:"; cat "$warm_log"; return 1; }
        fi
        local warm_output
        warm_output=$(printf '%s\n' "$output" | grep -v '^msp: ' || true)
        if [ "$status" != "$cold_status" ] || [ "$warm_output" != "$cold_output" ]; then
                printf 'cold (%s):\n%s\nwarm (%s):\n%s\n' "$cold_status" "$cold_output" \
                        "$status" "$warm_output"
                return 1
        fi
}

# helper_run ARGS...: as in helpers.bash, but cold and warm (run_cold_warm).
helper_run() {
        set_args /bin/msp-helper "$@"
        run_cold_warm
}

# Errnos used as markers: none of the probes returns them on its own.
EDQUOT=122
EOPNOTSUPP=95

@test "seccomp: without a filter the probes succeed (the control for this file)" {
        helper_run seccomp -- write /tmp/f -- mkdir /tmp/d -- syscall keyctl -- syscall add_key -- unshare-files
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value Seccomp)" = 0 ]
        [ "$(value mkdir)" = ok ]
        [ "$(value syscall.keyctl)" = ok ]
        [ "$(value syscall.add_key)" = ok ]
        [ "$(value unshare-files)" = ok ]
        assert_nothing_left "$CID"
}

@test "seccomp: errnoRet per rule, EPERM when a rule has none; other syscalls still work" {
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": '$EDQUOT'},
                {"names": ["keyctl"], "action": "SCMP_ACT_ERRNO"}]}'
        helper_run seccomp -- write /tmp/f -- read /tmp/f -- mkdir /tmp/d -- syscall keyctl
        echo "$output"
        [ "$status" -eq 1 ]
        # filter mode, one filter
        [ "$(value Seccomp)" = 2 ]
        [ "$(value write)" = ok ]
        [ "$(value read)" = ok ]
        [ "$(value mkdir)" = EDQUOT ]
        [ "$(value syscall.keyctl)" = EPERM ]
        assert_nothing_left "$CID"
}

@test "seccomp: defaultErrnoRet is what an unlisted syscall returns" {
        # podman's allow list with our own default errno: add_key is not in it, keyctl is
        seccomp_from "$REPO/tests/fixtures/podman-limits.json" \
                ".linux.seccomp | .defaultErrnoRet = $EOPNOTSUPP"
        helper_run write /tmp/f -- mkdir /tmp/d -- syscall keyctl -- syscall add_key
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$(value write)" = ok ]
        [ "$(value mkdir)" = ok ]
        [ "$(value syscall.keyctl)" = ok ]
        [ "$(value syscall.add_key)" = EOPNOTSUPP ]
        assert_nothing_left "$CID"
}

@test "seccomp: SCMP_ACT_KILL_PROCESS kills with SIGSYS: msp run exits 159" {
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_KILL_PROCESS"}]}'
        helper_run write /tmp/f -- mkdir /tmp/d -- write /tmp/g
        echo "$output"
        [ "$(value write)" = ok ]
        # 128 + SIGSYS (31); nothing after the mkdir ran
        [ "$status" -eq 159 ]
        [[ "$output" != *mkdir=* ]]
        [ "$(printf '%s\n' "$output" | grep -c '^write=')" -eq 1 ]
        assert_nothing_left "$CID"
}

@test "seccomp: SCMP_ACT_KILL, KILL_THREAD and TRAP deliver SIGSYS; LOG allows" {
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["keyctl"], "action": "SCMP_ACT_KILL"},
                {"names": ["add_key"], "action": "SCMP_ACT_KILL_THREAD"},
                {"names": ["bpf"], "action": "SCMP_ACT_TRAP"},
                {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_LOG"}]}'
        helper_run mkdir /tmp/d -- syscall keyctl -- syscall add_key -- syscall bpf
        echo "$output"
        [ "$(value mkdir)" = ok ]
        [ "$(value syscall.keyctl)" = SIGSYS ]
        [ "$(value syscall.add_key)" = SIGSYS ]
        [ "$(value syscall.bpf)" = SIGSYS ]
        assert_nothing_left "$CID"
}

@test "seccomp: argument conditions (MASKED_EQ on unshare's flags, EQ on keyctl's operation)" {
        # CLONE_NEWUSER = 0x10000000; KEYCTL_GET_KEYRING_ID = 0, KEYCTL_JOIN_SESSION_KEYRING = 1
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": '$EDQUOT',
                 "args": [{"index": 0, "value": 268435456, "valueTwo": 268435456, "op": "SCMP_CMP_MASKED_EQ"}]},
                {"names": ["keyctl"], "action": "SCMP_ACT_ERRNO", "errnoRet": '$EOPNOTSUPP',
                 "args": [{"index": 0, "value": 0, "op": "SCMP_CMP_EQ"}]}]}'
        # allowed first: unshare without CLONE_NEWUSER
        helper_run unshare-files -- syscall unshare -- syscall keyctl
        echo "$output"
        [ "$(value unshare-files)" = ok ]
        [ "$(value syscall.unshare)" = EDQUOT ]
        [ "$(value syscall.keyctl)" = EOPNOTSUPP ]
        assert_nothing_left "$CID"
}

@test "seccomp: every comparison operator, matching and not (add_key's plen argument is 1)" {
        # op value [valueTwo] -> whether add_key(..., plen=1, ...) matches
        cases=(
                "SCMP_CMP_NE 0 - yes" "SCMP_CMP_NE 1 - no"
                "SCMP_CMP_LT 2 - yes" "SCMP_CMP_LT 1 - no"
                "SCMP_CMP_LE 1 - yes" "SCMP_CMP_LE 0 - no"
                "SCMP_CMP_EQ 1 - yes" "SCMP_CMP_EQ 2 - no"
                "SCMP_CMP_GE 1 - yes" "SCMP_CMP_GE 2 - no"
                "SCMP_CMP_GT 0 - yes" "SCMP_CMP_GT 1 - no"
                "SCMP_CMP_MASKED_EQ 1 1 yes" "SCMP_CMP_MASKED_EQ 1 0 no"
        )
        for c in "${cases[@]}"; do
                read -r op v v2 match <<<"$c"
                arg="{\"index\": 3, \"value\": $v, \"op\": \"$op\"}"
                [ "$v2" = - ] || arg="{\"index\": 3, \"value\": $v, \"valueTwo\": $v2, \"op\": \"$op\"}"
                seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                        {"names": ["add_key"], "action": "SCMP_ACT_ERRNO", "errnoRet": '$EDQUOT', "args": ['"$arg"']}]}'
                helper_run syscall add_key
                want=ok
                [ "$match" = no ] || want=EDQUOT
                [ "$(value syscall.add_key)" = "$want" ] || { echo "$c: $output"; false; }
                assert_nothing_left "$CID"
        done
}

@test "seccomp: unknown syscall names are skipped (--debug says so) and the rest applies" {
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["msp_no_such_syscall", "mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": '$EDQUOT'}]}'
        set_args /bin/msp-helper write /tmp/f -- mkdir /tmp/d
        # cold, then warm: the note is kept with the cached program
        for round in compiled cached; do
                run "$MSP" --debug --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" 3>&- </dev/null
                echo "$round: $output"
                [ "$status" -eq 1 ]
                [[ "$output" == *"unknown syscall 'msp_no_such_syscall', skipped"* ]]
                [ "$(value write)" = ok ]
                [ "$(value mkdir)" = EDQUOT ]
                assert_nothing_left "$CID"
        done
        [[ "$output" == *"seccomp: cached filter"* ]]
}

@test "seccomp: podman's real profile (tests/fixtures/podman-limits.json) loads and blocks per its rules" {
        seccomp_from "$REPO/tests/fixtures/podman-limits.json" '.linux.seccomp'
        set_args /bin/sh -c 'ls / >/dev/null && cat /etc/passwd >/dev/null && echo normal=ok; exec msp-helper mkdir /tmp/d -- syscall keyctl -- syscall add_key -- syscall io_uring_setup -- syscall bpf -- syscall userfaultfd -- syscall chroot -- syscall settimeofday -- syscall personality'
        run_cold_warm
        echo "$output"
        [ "$(value normal)" = ok ]
        [ "$(value mkdir)" = ok ]
        # podman 4.3 allows keyctl (and unshare, mount: the missing capabilities stop those)
        [ "$(value syscall.keyctl)" = ok ]
        # not in the allow list: the default, ENOSYS
        [ "$(value syscall.add_key)" = ENOSYS ]
        [ "$(value syscall.io_uring_setup)" = ENOSYS ]
        # explicit EPERM groups
        [ "$(value syscall.bpf)" = EPERM ]
        [ "$(value syscall.userfaultfd)" = EPERM ]
        [ "$(value syscall.chroot)" = EPERM ]
        [ "$(value syscall.settimeofday)" = EPERM ]
        # personality(0xffffffff) is a query podman allows
        [ "$(value syscall.personality)" = ok ]
        assert_nothing_left "$CID"
}

@test "seccomp: contrib/profiles/seccomp-default.json blocks the sandbox escapes while sh, cat, ls work" {
        seccomp_from "$REPO/contrib/profiles/seccomp-default.json" '.'
        set_args /bin/sh -c 'ls / >/dev/null && cat /etc/passwd >/dev/null && echo hi | cat >/tmp/f && echo normal=ok; exec msp-helper mkdir /tmp/d -- unshare-files -- syscall bpf -- syscall userfaultfd -- syscall perf_event_open -- syscall keyctl -- syscall add_key -- syscall io_uring_setup -- syscall unshare -- syscall mount -- syscall ptrace'
        run_cold_warm
        echo "$output"
        [ "$(value normal)" = ok ]
        [ "$(value mkdir)" = ok ]
        [ "$(value unshare-files)" = ok ]
        for s in bpf userfaultfd perf_event_open keyctl add_key io_uring_setup mount ptrace; do
                [ "$(value syscall.$s)" = EPERM ] || { echo "syscall $s not refused"; false; }
        done
        # unshare(CLONE_NEWUSER) falls through to the default: ENOSYS
        [ "$(value syscall.unshare)" = ENOSYS ]
        assert_nothing_left "$CID"
}

@test "seccomp: noNewPrivileges false with a non-root user: loaded before the capability drop" {
        update_config '.process.noNewPrivileges = false | .process.user = {"uid": 1000, "gid": 1000}'
        # control: the user can write and create directories in /tmp
        helper_run nnp -- ids -- mkdir /tmp/d
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value uid)" = 1000 ]
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": '$EDQUOT'}]}'
        helper_run nnp -- seccomp -- ids -- write /tmp/f -- mkdir /tmp/d
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$(value nnp)" = 0 ]
        [ "$(value Seccomp)" = 2 ]
        [ "$(value uid)" = 1000 ]
        [ "$(value write)" = ok ]
        [ "$(value mkdir)" = EDQUOT ]
        assert_nothing_left "$CID"
}

@test "seccomp: flags LOG and SPEC_ALLOW load; an unknown flag or architecture is refused" {
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "flags": ["SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "SECCOMP_FILTER_FLAG_TSYNC"],
                "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
                "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": '$EDQUOT'}]}'
        helper_run write /tmp/f -- mkdir /tmp/d
        echo "$output"
        [ "$(value write)" = ok ]
        [ "$(value mkdir)" = EDQUOT ]
        assert_nothing_left "$CID"

        update_config '.linux.seccomp.flags = ["SECCOMP_FILTER_FLAG_NO_SUCH"]'
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *SECCOMP_FILTER_FLAG_NO_SUCH* ]]
        assert_nothing_left "$CID"
}

@test "seccomp: SCMP_ACT_NOTIFY on write or without listenerPath is refused at create" {
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'"$BATS_TEST_TMPDIR"'/agent.sock",
                "syscalls": [{"names": ["write"], "action": "SCMP_ACT_NOTIFY"}]}'
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"cannot be used for 'write'"* ]]
        assert_nothing_left "$CID"

        # nothing listens on listenerPath: create fails, naming it
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'"$BATS_TEST_TMPDIR"'/agent.sock",
                "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}'
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"listenerPath '$BATS_TEST_TMPDIR/agent.sock'"* ]]
        assert_nothing_left "$CID"
}

# notify_log ROUND: the debug log of a NOTIFY round; the warm round must have used the
# cache (the cold one of the test compiled).
check_round_log() {
        local want='seccomp: compiled filter cached as'
        [ "$1" = warm ] && want='seccomp: cached filter'
        grep -q "$want" "$BATS_TEST_TMPDIR/$1.log" ||
                { echo "$1 round: no '$want'"; cat "$BATS_TEST_TMPDIR/$1.log"; return 1; }
}

@test "seccomp: SCMP_ACT_NOTIFY hands the listener and the state to the agent at listenerPath" {
        sock="$BATS_TEST_TMPDIR/agent.sock"
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'"$sock"'",
                "listenerMetadata": "msp-test \"meta\"",
                "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}'
        set_args /bin/msp-helper write /tmp/f -- mkdir /tmp/d -- mkdir /tmp/e
        # cold (compiled), then warm (from the cache): the listener reaches the agent alike
        for round in cold warm; do
                AGENT_PID=$("$MSP_SECCOMP_AGENT" -o "$BATS_TEST_TMPDIR/agent.out" -e $EDQUOT "$sock" 3>&-)
                "$MSP" --root "$STATE_ROOT" --debug --log "$BATS_TEST_TMPDIR/$round.log" create \
                        -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/$CID.out" 2>&1 </dev/null 3>&- ||
                        { cat "$BATS_TEST_TMPDIR/$CID.out"; false; }
                check_round_log "$round"
                pid=$(state_field "$CID" pid)
                msp start "$CID"
                wait_pid_exit "$AGENT_PID"
                wait_pid_exit "$pid"
                cat "$BATS_TEST_TMPDIR/agent.out"
                output=$(cat "$BATS_TEST_TMPDIR/agent.out")
                [ "$(value metadata)" = 'msp-test \"meta\"' ]
                # the pid as the runtime sees it, in the ContainerProcessState and its state
                [ "$(value pid)" = "$pid" ]
                [ "$(value notif.pid)" = "$pid" ]
                [ "$(value state.pid)" = "$pid" ]
                [ "$(value state.id)" = "$CID" ]
                # the filter goes in before create returns (as runc's), also with
                # noNewPrivileges, so that startContainer hooks run under it
                [ "$(value status)" = creating ]
                [ "$(value fds)" = '["seccompFd"]' ]
                [ "$(value fd)" = ok ]
                [ "$(value answered)" = ok ]
                # the container: the first mkdir got the agent's answer; the second found the
                # agent gone (the listener closed), which the kernel answers with ENOSYS
                output=$(cat "$BATS_TEST_TMPDIR/$CID.out" | grep -v '^msp: ')
                echo "$output"
                [ "$(value write)" = ok ]
                [ "$(printf '%s\n' "$output" | grep '^mkdir=' | head -n1)" = mkdir=EDQUOT ]
                [ "$(printf '%s\n' "$output" | grep '^mkdir=' | tail -n1)" = mkdir=ENOSYS ]
                msp delete "$CID"
                AGENT_PID=
                assert_nothing_left "$CID"
        done
}

@test "seccomp: exec with SCMP_ACT_NOTIFY: the exec'd process's listener reaches the agent, cold and warm" {
        sock="$BATS_TEST_TMPDIR/agent.sock"
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'"$sock"'",
                "listenerMetadata": "msp-exec",
                "flags": ["SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"],
                "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}'
        set_args /bin/sleep 100000
        # the init's listener goes to a first agent, which is then stopped
        AGENT_PID=$("$MSP_SECCOMP_AGENT" -o "$BATS_TEST_TMPDIR/init-agent.out" "$sock" 3>&-)
        create_bg "$CID"
        msp start "$CID"
        init=$(state_field "$CID" pid)
        kill "$AGENT_PID"
        wait_pid_exit "$AGENT_PID"
        AGENT_PID=
        rm -f "$sock"
        grep -qx 'fd=ok' "$BATS_TEST_TMPDIR/init-agent.out"
        # without the cache the first exec compiles the program
        rm -rf "$(dirname "$STATE_ROOT")/msp-cache"
        for round in cold warm; do
                AGENT_PID=$("$MSP_SECCOMP_AGENT" -o "$BATS_TEST_TMPDIR/agent.out" -e $EDQUOT "$sock" 3>&-)
                run msp --debug --log "$BATS_TEST_TMPDIR/$round.log" exec "$CID" \
                        /bin/msp-helper write /tmp/f -- mkdir /tmp/d -- mkdir /tmp/e
                echo "$round: $output"
                # the helper exits 1: a probe was refused (msp itself fails with 1 too, but
                # then without the probes' lines)
                [ "$status" -eq 1 ]
                [ "$(value write)" = ok ]
                [ "$(printf '%s\n' "$output" | grep '^mkdir=' | head -n1)" = mkdir=EDQUOT ]
                [ "$(printf '%s\n' "$output" | grep '^mkdir=' | tail -n1)" = mkdir=ENOSYS ]
                wait_pid_exit "$AGENT_PID"
                AGENT_PID=
                check_round_log "$round"
                output=$(cat "$BATS_TEST_TMPDIR/agent.out")
                echo "$output"
                # the exec'd process, as the runtime sees it, not the init
                pid=$(value pid)
                [ -n "$pid" ]
                [ "$pid" != "$init" ]
                [ "$(value notif.pid)" = "$pid" ]
                [ "$(value state.pid)" = "$pid" ]
                [ "$(value state.id)" = "$CID" ]
                [ "$(value metadata)" = msp-exec ]
                [ "$(value fds)" = '["seccompFd"]' ]
                [ "$(value fd)" = ok ]
                [ "$(value answered)" = ok ]
        done
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "seccomp: features lists the actions, operators and the flags this kernel supports" {
        run msp features
        [ "$status" -eq 0 ]
        [ "$(jq -r .linux.seccomp.enabled <<<"$output")" = true ]
        jq -e '.linux.seccomp.actions | index("SCMP_ACT_NOTIFY") and index("SCMP_ACT_KILL_PROCESS")' <<<"$output"
        jq -e '.linux.seccomp.operators | index("SCMP_CMP_MASKED_EQ")' <<<"$output"
        jq -e '.linux.seccomp.supportedFlags | index("SECCOMP_FILTER_FLAG_LOG")' <<<"$output"
}

@test "seccomp: NOTIFY with TSYNC and WAIT_KILLABLE_RECV: the agent can fake success" {
        sock="$BATS_TEST_TMPDIR/agent.sock"
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'"$sock"'",
                "flags": ["SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"],
                "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}'
        set_args /bin/msp-helper mkdir /tmp/d -- stat /tmp/d
        for round in cold warm; do
                AGENT_PID=$("$MSP_SECCOMP_AGENT" -o "$BATS_TEST_TMPDIR/agent.out" -e 0 "$sock" 3>&-)
                run msp --debug --log "$BATS_TEST_TMPDIR/$round.log" run -b "$BUNDLE" "$CID" </dev/null
                echo "$round: $output"
                wait_pid_exit "$AGENT_PID"
                cat "$BATS_TEST_TMPDIR/agent.out"
                AGENT_PID=
                check_round_log "$round"
                # the agent answered 0 without doing anything: mkdir "worked", nothing was made
                [ "$(value mkdir)" = ok ]
                [ "$(value stat)" = ENOENT ]
                grep -qx 'answered=ok' "$BATS_TEST_TMPDIR/agent.out"
                grep -qx 'metadata=' "$BATS_TEST_TMPDIR/agent.out"
                assert_nothing_left "$CID"
        done
}

@test "seccomp: NOTIFY with noNewPrivileges false (filter loaded at create, before the user switch)" {
        sock="$BATS_TEST_TMPDIR/agent.sock"
        update_config '.process.noNewPrivileges = false | .process.user = {"uid": 1000, "gid": 1000}'
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": "'"$sock"'",
                "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_NOTIFY"}]}'
        set_args /bin/msp-helper ids -- write /tmp/f -- mkdir /tmp/d
        for round in cold warm; do
                AGENT_PID=$("$MSP_SECCOMP_AGENT" -o "$BATS_TEST_TMPDIR/agent.out" -e $EDQUOT "$sock" 3>&-)
                "$MSP" --root "$STATE_ROOT" --debug --log "$BATS_TEST_TMPDIR/$round.log" create \
                        -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/$CID.out" 2>&1 </dev/null 3>&- ||
                        { cat "$BATS_TEST_TMPDIR/$CID.out"; false; }
                check_round_log "$round"
                pid=$(state_field "$CID" pid)
                msp start "$CID"
                wait_pid_exit "$AGENT_PID"
                wait_pid_exit "$pid"
                AGENT_PID=
                cat "$BATS_TEST_TMPDIR/agent.out"
                output=$(cat "$BATS_TEST_TMPDIR/agent.out")
                [ "$(value pid)" = "$pid" ]
                [ "$(value notif.pid)" = "$pid" ]
                # sent during create, before the container was started
                [ "$(value status)" = creating ]
                [ "$(value answered)" = ok ]
                output=$(cat "$BATS_TEST_TMPDIR/$CID.out")
                echo "$output"
                [ "$(value uid)" = 1000 ]
                [ "$(value write)" = ok ]
                [ "$(value mkdir)" = EDQUOT ]
                msp delete "$CID"
                assert_nothing_left "$CID"
        done
}

@test "seccomp: the cache is 0700 root-owned beside the state root; a tampered program is ignored and rewritten" {
        seccomp_from "$REPO/contrib/profiles/seccomp-default.json" '.'
        set_args /bin/msp-helper mkdir /tmp/d -- syscall keyctl -- syscall bpf
        run_cold_warm
        echo "$output"
        [ "$(value mkdir)" = ok ]
        [ "$(value syscall.keyctl)" = EPERM ]
        [ "$(value syscall.bpf)" = EPERM ]
        [ "$(stat -c '%a %u' "$(dirname "$STATE_ROOT")/msp-cache" "$(dirname "$STATE_ROOT")/msp-cache/seccomp")" = "700 0
700 0" ]
        files=("$(dirname "$STATE_ROOT")"/msp-cache/seccomp/*.bpf)
        [ "${#files[@]}" -eq 1 ]
        [ "$(stat -c '%a %u %h' "${files[0]}")" = "600 0 1" ]
        # an allow-everything program under this profile's name (a valid file of another
        # profile): the key differs, so it is ignored, and the compiled filter replaces it
        cp "${files[0]}" "$BATS_TEST_TMPDIR/default.bpf"
        seccomp '{"defaultAction": "SCMP_ACT_ALLOW"}'
        run_cold_warm
        allow=$(ls "$(dirname "$STATE_ROOT")"/msp-cache/seccomp/*.bpf | grep -vxF "${files[0]}")
        mv "$allow" "${files[0]}"
        seccomp_from "$REPO/contrib/profiles/seccomp-default.json" '.'
        run msp --debug --log "$BATS_TEST_TMPDIR/swap.log" run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        cat "$BATS_TEST_TMPDIR/swap.log"
        grep -q 'no usable cached filter.*Stale' "$BATS_TEST_TMPDIR/swap.log"
        [ "$(value syscall.keyctl)" = EPERM ]
        [ "$(value syscall.bpf)" = EPERM ]
        cmp "${files[0]}" "$BATS_TEST_TMPDIR/default.bpf"
        # a symlink in its place is not followed, and replaced
        ln -sf "$BATS_TEST_TMPDIR/default.bpf" "$BATS_TEST_TMPDIR/link.bpf"
        mv -T "$BATS_TEST_TMPDIR/link.bpf" "${files[0]}"
        run msp --debug --log "$BATS_TEST_TMPDIR/link.log" run -b "$BUNDLE" "$CID" </dev/null
        grep -q 'no usable cached filter.*Too many levels of symbolic links' "$BATS_TEST_TMPDIR/link.log"
        [ "$(value syscall.bpf)" = EPERM ]
        [ ! -L "${files[0]}" ]
        assert_nothing_left "$CID"
}

@test "seccomp: a loose or read-only msp-cache beside the state root: no cache, the filter still applies" {
        seccomp_from "$REPO/contrib/profiles/seccomp-default.json" '.'
        set_args /bin/msp-helper mkdir /tmp/d -- syscall bpf
        # a msp-cache that is not 0700 is never used (nor repaired)
        mkdir -p "$(dirname "$STATE_ROOT")/msp-cache"
        chmod 0755 "$(dirname "$STATE_ROOT")/msp-cache"
        for i in 1 2; do
                run msp --debug --log "$BATS_TEST_TMPDIR/loose.log" run -b "$BUNDLE" "$CID" </dev/null
                echo "$output"
                [ "$(value mkdir)" = ok ]
                [ "$(value syscall.bpf)" = EPERM ]
        done
        grep -q 'no filter cache (Operation not permitted), compiling' "$BATS_TEST_TMPDIR/loose.log"
        [ ! -e "$(dirname "$STATE_ROOT")/msp-cache/seccomp" ]
        # a read-only msp-cache (a read-only bind of a sound 0700 directory)
        mkdir "$BATS_TEST_TMPDIR/ro"
        chmod 0700 "$BATS_TEST_TMPDIR/ro" "$(dirname "$STATE_ROOT")/msp-cache"
        mount --bind "$BATS_TEST_TMPDIR/ro" "$(dirname "$STATE_ROOT")/msp-cache"
        RO_MOUNT="$(dirname "$STATE_ROOT")/msp-cache"
        mount -o remount,bind,ro "$(dirname "$STATE_ROOT")/msp-cache"
        for i in 1 2; do
                run msp --debug --log "$BATS_TEST_TMPDIR/ro.log" run -b "$BUNDLE" "$CID" </dev/null
                echo "$output"
                [ "$(value mkdir)" = ok ]
                [ "$(value syscall.bpf)" = EPERM ]
        done
        grep -q 'no filter cache (Read-only file system), compiling' "$BATS_TEST_TMPDIR/ro.log"
        umount "$RO_MOUNT"
        RO_MOUNT=
        assert_nothing_left "$CID"
}

# rootless_bundle: the bundle as user 65534's (`spec --rootless`) with the contrib
# profile; as_user runs a copy of msp as that user, its state root in $xdg/msp.
rootless_bundle() {
        uid=65534 rl_msp="$BATS_TEST_TMPDIR/msp" xdg="$BATS_TEST_TMPDIR/xdg"
        install -m 0755 "$MSP" "$rl_msp"
        mkdir -p "$xdg"
        chown -R "$uid:$uid" "$BUNDLE" "$xdg"
        make_traversable "$BUNDLE"
        STATE_ROOT="$xdg/msp"
        as_user() {
                XDG_RUNTIME_DIR="$xdg" setpriv --reuid="$uid" --regid="$uid" --clear-groups \
                        --inh-caps=-all --bounding-set=-all "$rl_msp" "$@" 3>&-
        }
        (cd "$BUNDLE" && rm config.json && as_user spec --rootless)
        update_config '.process.terminal = false | .root.readonly = false | .process.noNewPrivileges = true'
        seccomp_from "$REPO/contrib/profiles/seccomp-default.json" '.'
}

# cache_is_users LOG COMPILED HITS: LOG says the program was compiled and cached COMPILED
# times and taken from the cache HITS times; the cache beside the user's state root is the
# user's, 0700, its program file 0600 with one link.
cache_is_users() {
        cat "$1"
        [ "$(grep -c 'seccomp: no usable cached filter .*, compiling' "$1")" -eq "$2" ]
        [ "$(grep -c 'seccomp: compiled filter cached as ' "$1")" -eq "$2" ]
        [ "$(grep -c 'seccomp: cached filter ' "$1")" -eq "$3" ]
        local cache
        cache="$(dirname "$STATE_ROOT")/msp-cache"
        [ "$(stat -c '%a %u' "$cache" "$cache/seccomp")" = "700 $uid
700 $uid" ]
        [ "$(stat -c '%a %u %h' "$cache"/seccomp/*.bpf)" = "600 $uid 1" ]
}

# run_twice_as_user SYSCALL...: `run` the bundle twice as the user, with the debug log;
# each time the write works and every SYSCALL named is refused with EPERM.
run_twice_as_user() {
        for i in 1 2; do
                run as_user --debug --log "$xdg/debug.log" --cgroup-manager disabled run \
                        -b "$BUNDLE" "$CID" </dev/null
                echo "$output"
                [ "$(value write)" = ok ]
                for s in "$@"; do
                        [ "$(value "syscall.$s")" = EPERM ]
                done
        done
}

@test "seccomp: rootless (an unprivileged user): the user's own cache, the filter applies cold and warm" {
        command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
        rootless_bundle
        set_args /bin/msp-helper write /f -- syscall bpf -- syscall keyctl
        run_twice_as_user bpf keyctl
        cache_is_users "$xdg/debug.log" 1 1
        assert_nothing_left "$CID"
}

@test "seccomp: rootless (an unprivileged user): a cache the user does not own is not used" {
        command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
        rootless_bundle
        set_args /bin/msp-helper write /f -- syscall bpf
        # root's 0700 cache where the user's would be: the user can neither use nor replace it
        install -d -m 0700 "$xdg/msp-cache"
        run_twice_as_user bpf
        cat "$xdg/debug.log"
        [ "$(grep -c 'seccomp: no filter cache (Permission denied), compiling' "$xdg/debug.log")" -eq 2 ]
        [ "$(stat -c '%a %u' "$xdg/msp-cache")" = "700 0" ]
        [ ! -e "$xdg/msp-cache/seccomp" ]
        assert_nothing_left "$CID"
}

@test "seccomp: rootless exec: the user's own cache, the filter applies cold and warm" {
        command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
        rootless_bundle
        set_args /bin/sleep 100000
        as_user --cgroup-manager disabled create -b "$BUNDLE" "$CID" \
                >"$BATS_TEST_TMPDIR/$CID.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/$CID.out"; false; }
        as_user --cgroup-manager disabled start "$CID"
        for i in 1 2; do
                run as_user --debug --log "$xdg/debug.log" --cgroup-manager disabled exec "$CID" \
                        /bin/msp-helper write /f -- syscall bpf -- syscall keyctl
                echo "$output"
                [ "$(value write)" = ok ]
                [ "$(value syscall.bpf)" = EPERM ]
                [ "$(value syscall.keyctl)" = EPERM ]
        done
        # create compiled and cached it (without --debug)
        cache_is_users "$xdg/debug.log" 0 2
        as_user --cgroup-manager disabled delete --force "$CID"
        assert_nothing_left "$CID"
}

# tests/fixtures/seccomp/allowlist-2017.json: an allow-list in the style of Docker's
# profiles before openat2, close_range, faccessat2, pidfd_open and clone3 existed (the
# OCI validation suite's default is of that kind). With epoll_pwait2 added, the profile
# knows syscalls above those, so they get the default EPERM, not ENOSYS: what the
# runtime still does after loading the filter must not need any of them.
@test "seccomp: an allow-list older than openat2 and close_range: create, start and exec, with and without noNewPrivileges, uid 42 in /root (0700)" {
        chmod 0700 "$BUNDLE/rootfs/root"
        for nnp in false true; do
                for extra in "" epoll_pwait2; do
                        echo "noNewPrivileges=$nnp extra=$extra"
                        seccomp_from "$REPO/tests/fixtures/seccomp/allowlist-2017.json" \
                                "if \"$extra\" == \"\" then . else .syscalls[0].names += [\"$extra\"] end"
                        update_config ".process.noNewPrivileges = $nnp |
                                .process.user = {\"uid\": 42, \"gid\": 42} | .process.cwd = \"/root\""
                        set_args /bin/msp-helper sleep-forever
                        create_bg "$CID"
                        msp start "$CID"
                        run msp exec "$CID" /bin/msp-helper cwd -- ids -- seccomp -- nnp
                        echo "$output"
                        [ "$status" -eq 0 ]
                        [ "$(value cwd)" = /root ]
                        [ "$(value euid)" = 42 ]
                        [ "$(value Seccomp)" = 2 ]
                        pid=$(state_field "$CID" pid)
                        [ "$(readlink "/proc/$pid/cwd")" = /root ]
                        [ "$(awk '/^Uid:/ { print $3 }' "/proc/$pid/status")" = 42 ]
                        msp delete --force "$CID"
                        assert_nothing_left "$CID"
                done
        done
}

# The OCI validation suite's linux_seccomp: a profile that refuses getcwd (and, here,
# fchdir and chdir too). The runtime enters process.cwd as root before any filter, so
# neither filter position (noNewPrivileges false: before the user switch) needs them.
@test "seccomp: a profile refusing getcwd, chdir and fchdir: the process still starts in process.cwd" {
        for nnp in false true; do
                echo "noNewPrivileges=$nnp"
                seccomp '{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                        {"names": ["getcwd", "chdir", "fchdir"], "action": "SCMP_ACT_ERRNO"}]}'
                update_config ".process.noNewPrivileges = $nnp | .process.cwd = \"/tmp\""
                set_args /bin/msp-helper sleep-forever
                create_bg "$CID"
                msp start "$CID"
                pid=$(state_field "$CID" pid)
                [ "$(readlink "/proc/$pid/cwd")" = /tmp ]
                [ "$(awk '/^Seccomp:/ { print $2 }' "/proc/$pid/status")" = 2 ]
                msp delete --force "$CID"
                assert_nothing_left "$CID"
        done
}

# runc's rule: a number above the highest syscall the profile names (per architecture)
# is a syscall the profile predates, answered ENOSYS so that libc falls back; an older
# syscall the profile leaves out still gets the default errno. The allow-list's highest
# x86-64 syscall is pwritev2 (328).
@test "seccomp: syscalls newer than the profile get ENOSYS, older unlisted ones the default errno (as runc)" {
        [ "$(uname -m)" = x86_64 ] || skip "the probed numbers are x86-64's"
        set_args /bin/msp-helper nr 139 -- nr 332 -- nr 435 -- nr 441 -- nr 451 -- nr 462
        seccomp_from "$REPO/tests/fixtures/seccomp/allowlist-2017.json" .
        run_cold_warm
        echo "$output"
        # sysfs(2), 139: older than the profile, not listed
        [ "$(value nr.139)" = EPERM ]
        for n in 332 435 441 451 462; do
                [ "$(value nr.$n)" = ENOSYS ]
        done
        # with a default errno of its own: the same split
        seccomp_from "$REPO/tests/fixtures/seccomp/allowlist-2017.json" ". | .defaultErrnoRet = $EOPNOTSUPP"
        run_cold_warm
        echo "$output"
        [ "$(value nr.139)" = EOPNOTSUPP ]
        [ "$(value nr.441)" = ENOSYS ]
        # a profile that names epoll_pwait2 (441) knows every number up to it (and
        # allows that one: with zero arguments it refuses maxevents 0)
        seccomp_from "$REPO/tests/fixtures/seccomp/allowlist-2017.json" '.syscalls[0].names += ["epoll_pwait2"]'
        run_cold_warm
        echo "$output"
        [ "$(value nr.435)" = EPERM ]
        [ "$(value nr.441)" = EINVAL ]
        [ "$(value nr.451)" = ENOSYS ]
        assert_nothing_left "$CID"
}
