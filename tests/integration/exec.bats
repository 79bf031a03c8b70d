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

@test "exec: a missing binary is podman's 127 phrase, a non-executable file 126" {
        start_sleeper
        run msp exec "$CID" /no/such/binary
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"no such file or directory"* || "$output" == *"No such file or directory"* ]]
        run msp exec "$CID" nosuchcmd
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"executable file \`nosuchcmd\` not found in \$PATH"* ]]
        run msp exec "$CID" /etc/passwd
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"ermission denied"* ]]
        # the container is untouched
        [ "$(state_field "$CID" status)" = running ]
        finish
}

@test "exec: same pid, net, mnt, ipc, uts namespaces as the init; joins its cgroup" {
        start_sleeper
        init=$(state_field "$CID" pid)
        run msp exec "$CID" /bin/msp-helper ns -- pid
        echo "$output"
        [ "$status" -eq 0 ]
        for ns in pid net mnt ipc uts cgroup user; do
                [ "$(value ns.$ns)" = "$(stat -L -c %i /proc/$init/ns/$ns)" ]
        done
        [ "$(value ns.pid)" != "$(host_ns pid)" ]
        # a pid inside the container's pid namespace (the init is 1)
        [ "$(value pid)" -gt 1 ]
        # the cgroup, read from the host while it runs
        msp exec --detach --pid-file "$BATS_TEST_TMPDIR/p" "$CID" /bin/sleep 100000 \
                >/dev/null 2>&1 </dev/null
        p=$(cat "$BATS_TEST_TMPDIR/p")
        [ "$(grep '^0::' /proc/$p/cgroup)" = "$(grep '^0::' /proc/$init/cgroup)" ]
        [ "$(grep ':memory:' /proc/$p/cgroup)" = "$(grep ':memory:' /proc/$init/cgroup)" ]
        grep -q "$CGROUP_PREFIX/$CID" /proc/$p/cgroup
        finish
}

@test "exec: --env, --cwd, --user, --additional-gids" {
        start_sleeper
        run msp exec --env FOO=bar --env PATH=/bin:/usr/bin --cwd /tmp --user 1000:1000 \
                --additional-gids 5 --additional-gids 7 "$CID" /bin/msp-helper env -- cwd -- ids
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value env.FOO)" = bar ]
        [ "$(value env.PATH)" = /bin:/usr/bin ]
        [ "$(value cwd)" = /tmp ]
        [ "$(value uid)" = 1000 ]
        [ "$(value gid)" = 1000 ]
        [ "$(value euid)" = 1000 ]
        [ "$(value groups)" = 5,7 ]
        # without flags: the config's
        run msp exec "$CID" /bin/msp-helper cwd -- ids
        [ "$(value cwd)" = / ]
        [ "$(value uid)" = 0 ]
        finish
}

@test "exec: --cwd a directory only root may search (/root 0700) with --user 42, as runc" {
        chmod 0700 "$BUNDLE/rootfs/root"
        start_sleeper
        run msp exec --cwd /root --user 42:42 "$CID" /bin/msp-helper cwd -- ids
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value cwd)" = /root ]
        [ "$(value euid)" = 42 ]
        finish
}

@test "exec: the process gets a session keyring of its own, like the init (not the caller's)" {
        host=$("$MSP_HELPER" keyring | sed -n 's/^keyring.session=//p')
        [ -n "$host" ]
        set_args /bin/msp-helper keyring -- sleep-forever
        create_bg "$CID"
        msp start "$CID"
        run msp exec "$CID" /bin/msp-helper keyring
        echo "host $host, exec: $output"
        [ "$status" -eq 0 ]
        exec1=$(value keyring.session)
        [ -n "$exec1" ]
        [ "$exec1" != "$host" ]
        run msp exec "$CID" /bin/msp-helper keyring
        [ "$(value keyring.session)" != "$exec1" ]
        [ "$(value keyring.session)" != "$host" ]
        finish
}

@test "exec: after create --no-new-keyring, the process keeps the caller's session keyring (runc too)" {
        host=$("$MSP_HELPER" keyring | sed -n 's/^keyring.session=//p')
        [ -n "$host" ]
        set_args /bin/msp-helper keyring -- sleep-forever
        create_bg "$CID" --no-new-keyring
        msp start "$CID"
        run msp exec "$CID" /bin/msp-helper keyring
        echo "host $host, exec: $output"
        [ "$status" -eq 0 ]
        [ "$(value keyring.session)" = "$host" ]
        finish
}

@test "exec: --user values other than UID[:GID] are refused, naming the value" {
        start_sleeper
        for u in 1000:abc -1 1000:1000:5 root "" " 1" 1000: :1000 4294967295 99999999999; do
                run msp exec --user "$u" "$CID" /bin/true
                echo "$u: $output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"--user '$u'"* ]]
        done
        finish
}

@test "exec: capabilities from the config, --cap adds one; no_new_privs; no runtime fds" {
        update_config '.process.capabilities = {"bounding": ["CAP_CHOWN", "CAP_KILL"],
                "effective": ["CAP_CHOWN"], "permitted": ["CAP_CHOWN"]}'
        start_sleeper
        run msp exec "$CID" /bin/msp-helper caps -- nnp -- fds
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value CapEff)" = "$(cap_mask CAP_CHOWN)" ]
        [ "$(value CapBnd)" = "$(cap_mask CAP_CHOWN CAP_KILL)" ]
        [ "$(value nnp)" = 1 ]
        [[ "$output" != *fd.* ]]
        run msp exec --cap CAP_NET_RAW "$CID" /bin/msp-helper caps
        echo "$output"
        [ "$(value CapEff)" = "$(cap_mask CAP_CHOWN CAP_NET_RAW)" ]
        [ "$(value CapBnd)" = "$(cap_mask CAP_CHOWN CAP_KILL CAP_NET_RAW)" ]
        run msp exec --cap CAP_NOPE "$CID" /bin/true
        [ "$status" -ne 0 ]
        [[ "$output" == *CAP_NOPE* ]]
        finish
}

@test "exec: --no-new-privs sets it when the config does not" {
        update_config '.process.noNewPrivileges = false'
        start_sleeper
        run msp exec "$CID" /bin/msp-helper nnp
        [ "$(value nnp)" = 0 ]
        run msp exec --no-new-privs "$CID" /bin/msp-helper nnp
        [ "$(value nnp)" = 1 ]
        finish
}

@test "exec: the config's seccomp filter applies to the exec'd process" {
        update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 122}]}'
        start_sleeper
        run msp exec "$CID" /bin/msp-helper seccomp -- write /tmp/f -- mkdir /tmp/d
        echo "$output"
        [ "$(value Seccomp)" = 2 ]
        [ "$(value write)" = ok ]
        [ "$(value mkdir)" = EDQUOT ]
        finish
}

@test "exec: the seccomp program from the state root's cache: cold, then warm, enforced alike" {
        update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 122}]}'
        start_sleeper
        # create cached the program; without the cache the first exec compiles it
        [ -d "$(dirname "$STATE_ROOT")/msp-cache/seccomp" ]
        rm -rf "$(dirname "$STATE_ROOT")/msp-cache"
        for round in cold warm; do
                run msp --debug --log "$BATS_TEST_TMPDIR/$round.log" exec "$CID" \
                        /bin/msp-helper seccomp -- write /tmp/f -- mkdir /tmp/d
                echo "$round: $output"
                # the helper exits 1: a probe was refused (msp itself fails with 1 too, but
                # then without the probes' lines)
                [ "$status" -eq 1 ]
                [ "$(value Seccomp)" = 2 ]
                [ "$(value write)" = ok ]
                [ "$(value mkdir)" = EDQUOT ]
        done
        cat "$BATS_TEST_TMPDIR/cold.log" "$BATS_TEST_TMPDIR/warm.log"
        run grep -c 'seccomp: compiled filter cached as' "$BATS_TEST_TMPDIR/cold.log"
        [ "$output" = 1 ]
        run grep -c 'seccomp: cached filter' "$BATS_TEST_TMPDIR/warm.log"
        [ "$output" = 1 ]
        run grep -c 'seccomp: compiled' "$BATS_TEST_TMPDIR/warm.log"
        [ "$output" = 0 ]
        [ "$(stat -c '%a %u' "$(dirname "$STATE_ROOT")/msp-cache/seccomp")" = "700 0" ]
        finish
}

@test "exec --detach --pid-file: a live pid in the container's pid namespace" {
        start_sleeper
        init=$(state_field "$CID" pid)
        # not under bats' run: the detached process would hold its output pipe
        msp exec --detach --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CID" /bin/sleep 100000 \
                </dev/null >/dev/null 2>&1
        p=$(cat "$BATS_TEST_TMPDIR/exec.pid")
        [ -d "/proc/$p" ]
        [ "$(stat -L -c %i /proc/$p/ns/pid)" = "$(stat -L -c %i /proc/$init/ns/pid)" ]
        # as the container sees it: NSpid has two levels, the inner one > 1
        inner=$(awk '/^NSpid:/ {print $3}' /proc/$p/status)
        [ "$inner" -gt 1 ]
        [ "$(awk '/^NSpid:/ {print $2}' /proc/$p/status)" = "$p" ]
        run msp ps --format json "$CID"
        echo "$output"
        [[ "$output" == *"$p"* ]]
        finish
        wait_pid_exit "$p" 5
}

@test "exec --process FILE: a process.json like podman writes" {
        start_sleeper
        cat >"$BATS_TEST_TMPDIR/process.json" <<'JSON'
{"terminal": false, "user": {"uid": 1000, "gid": 1000}, "args": ["/bin/msp-helper", "ids", "--", "env", "--", "cwd", "--", "exit", "4"],
 "env": ["PATH=/bin", "FROM_PROCESS=yes"], "cwd": "/tmp",
 "capabilities": {"bounding": ["CAP_KILL"]}, "noNewPrivileges": true}
JSON
        run msp exec --process "$BATS_TEST_TMPDIR/process.json" "$CID"
        echo "$output"
        [ "$status" -eq 4 ]
        [ "$(value uid)" = 1000 ]
        [ "$(value env.FROM_PROCESS)" = yes ]
        [ "$(value cwd)" = /tmp ]
        # --process and a command together are refused
        run msp exec --process "$BATS_TEST_TMPDIR/process.json" "$CID" /bin/true
        [ "$status" -ne 0 ]
        finish
}

@test "exec into a stopped or missing container fails clearly" {
        set_args /bin/true
        create_bg "$CID"
        msp start "$CID"
        for i in $(seq 50); do
                [ "$(state_field "$CID" status)" = stopped ] && break
                sleep 0.1
        done
        run msp exec "$CID" /bin/true
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"is stopped, not running"* ]]
        run msp exec nosuch-container /bin/true
        [ "$status" -ne 0 ]
        [[ "$output" == *"does not exist"* ]]
        finish
}

@test "exec into a paused container needs --ignore-paused" {
        start_sleeper
        msp pause "$CID"
        run msp exec "$CID" /bin/true
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"paused"* ]]
        msp resume "$CID"
        finish
}

@test "exec --ignore-paused: set up, then frozen in the container's cgroup until resumed" {
        start_sleeper
        msp pause "$CID"
        # not under bats' run: the detached process would hold its output pipe
        timeout 10 "$MSP" --root "$STATE_ROOT" exec --detach --ignore-paused \
                --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$CID" /bin/sh -c 'echo ran >/tmp/ran' \
                </dev/null >/dev/null 2>&1 3>&-
        p=$(cat "$BATS_TEST_TMPDIR/exec.pid")
        [ -d "/proc/$p" ]
        # in the container's (frozen) cgroup and not yet run
        grep -q "$CGROUP_PREFIX/$CID\$" "/proc/$p/cgroup"
        [ ! -e "$BUNDLE/rootfs/tmp/ran" ]
        [ "$(state_field "$CID" status)" = paused ]
        # errors found during setup still reach the caller
        run timeout 10 "$MSP" --root "$STATE_ROOT" exec --ignore-paused "$CID" /no/such/binary 3>&-
        echo "$output"
        [ "$status" -ne 0 ] && [ "$status" -ne 124 ]
        [[ "$output" == *"no such file or directory"* ]]
        msp resume "$CID"
        wait_pid_exit "$p" 10
        [ "$(cat "$BUNDLE/rootfs/tmp/ran")" = ran ]
        finish
}

@test "exec --process: oomScoreAdj applies to the exec'd process" {
        start_sleeper
        cat >"$BATS_TEST_TMPDIR/process.json" <<'JSON'
{"terminal": false, "user": {"uid": 0, "gid": 0}, "args": ["/bin/cat", "/proc/self/oom_score_adj"],
 "env": ["PATH=/bin"], "cwd": "/", "oomScoreAdj": 567, "noNewPrivileges": true}
JSON
        run msp exec --process "$BATS_TEST_TMPDIR/process.json" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = 567 ]
        finish
}

@test "exec --tty --console-socket: the pty master goes to the socket, stdio is the pty" {
        start_sleeper
        SOCK="$BATS_TEST_TMPDIR/console.sock"
        console_recv_bg "$SOCK"
        msp exec --tty --detach --console-socket "$SOCK" --pid-file "$BATS_TEST_TMPDIR/p" \
                "$CID" /bin/msp-helper tty </dev/null >/dev/null 2>&1
        wait_pid_exit "$RECV_PID" 15
        RECV_PID=
        output=$(console_output)
        echo "$output"
        grep -q '^pty=' "$BATS_TEST_TMPDIR/console.err"
        for fd in 0 1 2; do
                [ "$(value tty.$fd)" = 1 ]
        done
        [[ "$(value ttyname.0)" == /dev/pts/* ]]
        finish
}

@test "exec: Landlock from the config restricts the exec'd process" {
        update_config '.process.landlock = {"handledAccess": {"handledAccessFS": ["write_file", "make_reg"]},
                "rules": {"pathBeneath": [{"allowedAccess": ["write_file", "make_reg"], "paths": ["/tmp"]}]}}'
        start_sleeper
        run msp exec "$CID" /bin/msp-helper write /tmp/ok -- write /etc/nope
        echo "$output"
        [ "$(value write)" = ok ]
        [[ "$output" == *"write=EACCES"* ]]
        [ ! -e "$BUNDLE/rootfs/etc/nope" ]
        finish
}

@test "exec: --console-socket without a terminal is refused, as at create (runc: the same)" {
        start_sleeper
        run msp exec --detach --console-socket "$BATS_TEST_TMPDIR/none.sock" "$CID" /bin/true
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"--console-socket given but process.terminal is false"* ]]
        finish
}

@test "exec: a terminal without --console-socket is proxied to msp's stdio" {
        start_sleeper
        run bash -c "echo from-stdin | '$MSP' --root '$STATE_ROOT' exec --tty '$CID' /bin/sh -c 'test -t 0 && test -t 1 && echo \"tty: \$(tty)\"; read line; echo \"got: \$line\"' 3>&-"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"tty: /dev/pts/"* ]]
        [[ "$output" == *"got: from-stdin"* ]]
        # detached, a terminal needs somewhere to send the pty
        run msp exec --tty --detach "$CID" /bin/true
        [ "$status" -ne 0 ]
        [[ "$output" == *"console-socket"* ]]
        finish
}

@test "exec into a container with its own user namespace: ids mapped, same namespaces" {
        update_config '.linux.namespaces += [{"type": "user"}] |
                .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
                .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
        chown -R 100000:100000 "$BUNDLE/rootfs"
        make_traversable "$BUNDLE"
        start_sleeper
        init=$(state_field "$CID" pid)
        run msp exec --user 1000:1000 "$CID" /bin/msp-helper ids -- ns -- read /proc/self/uid_map
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value uid)" = 1000 ]
        for ns in user pid mnt net; do
                [ "$(value ns.$ns)" = "$(stat -L -c %i /proc/$init/ns/$ns)" ]
        done
        msp exec --detach --pid-file "$BATS_TEST_TMPDIR/p" "$CID" /bin/sleep 100000 \
                </dev/null >/dev/null 2>&1
        p=$(cat "$BATS_TEST_TMPDIR/p")
        [ "$(awk '/^Uid:/ {print $2}' /proc/$p/status)" = 100000 ]
        finish
}

@test "exec --cgroup SUB: joins a sub-cgroup of the container's; '..' is refused" {
        start_sleeper
        for d in /sys/fs/cgroup/*/"$CGROUP_PREFIX/$CID"; do
                mkdir "$d/sub"
                # a v1 cpuset starts empty: nothing could join it
                if [ -e "$d/cpuset.cpus" ]; then
                        cat "$d/cpuset.cpus" >"$d/sub/cpuset.cpus"
                        cat "$d/cpuset.mems" >"$d/sub/cpuset.mems"
                fi
        done
        msp exec --cgroup sub --detach --pid-file "$BATS_TEST_TMPDIR/p" "$CID" /bin/sleep 100000 \
                </dev/null >/dev/null 2>&1
        p=$(cat "$BATS_TEST_TMPDIR/p")
        grep -q "^0::/$CGROUP_PREFIX/$CID/sub\$" /proc/$p/cgroup
        grep -q ":pids:/$CGROUP_PREFIX/$CID/sub\$" /proc/$p/cgroup
        run msp exec --cgroup ../x "$CID" /bin/true
        [ "$status" -ne 0 ]
        [[ "$output" == *"--cgroup '../x'"* ]]
        finish
}

# exec_cgroups ARG...: /proc/self/cgroup of `msp exec ARG... $CID cat /proc/self/cgroup`.
exec_cgroups() {
        run msp exec "$@" "$CID" /bin/cat /proc/self/cgroup
        echo "$output"
        [ "$status" -eq 0 ]
}

@test "exec --cgroup: '/' and '' are the container's cgroup; CONTROLLER[,CONTROLLER]:PATH (v1) moves only those" {
        start_sleeper
        for arg in / ''; do
                exec_cgroups --cgroup "$arg"
                [[ "$output" == *"/$CGROUP_PREFIX/$CID"* ]]
                [[ "$output" != *"/$CGROUP_PREFIX/$CID/"* ]]
        done
        if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
                run msp exec --cgroup pids:sub "$CID" /bin/true
                [ "$status" -ne 0 ]
                [[ "$output" == *"--cgroup 'pids:sub': unknown controller 'pids'"* ]]
                finish
                return
        fi
        for c in pids memory systemd; do mkdir "/sys/fs/cgroup/$c/$CGROUP_PREFIX/$CID/sub"; done
        mkdir "/sys/fs/cgroup/pids/$CGROUP_PREFIX/$CID/other"
        exec_cgroups --cgroup pids,memory:/sub --cgroup name=systemd:sub --cgroup pids:other
        grep -qx "[0-9]*:pids:/$CGROUP_PREFIX/$CID/other" <<<"$output"
        grep -qx "[0-9]*:memory:/$CGROUP_PREFIX/$CID/sub" <<<"$output"
        grep -qx "[0-9]*:name=systemd:/$CGROUP_PREFIX/$CID/sub" <<<"$output"
        grep -qx "[0-9]*:freezer:/$CGROUP_PREFIX/$CID" <<<"$output"
        # errors name the argument, and nothing is started
        for arg in a:b:c xyz:sub cpu:../.. ../x; do
                run msp exec --cgroup "$arg" "$CID" /bin/true
                echo "$output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"--cgroup '$arg'"* ]]
        done
        run msp exec --cgroup sub --cgroup pids:sub "$CID" /bin/true
        [ "$status" -ne 0 ]
        [[ "$output" == *"must be the only --cgroup"* ]]
        run msp exec --cgroup freezer:sub "$CID" /bin/true
        [ "$status" -ne 0 ]
        [[ "$output" == *"freezer/$CGROUP_PREFIX/$CID/sub"*"No such file or directory"* ]]
        [ "$(msp ps --format json "$CID" | jq length)" = 1 ]
        finish
}

# ---- LSM labels of the exec'd process (the init's are in escape.bats) ----

# no_exec_left: the container holds its init only, and no `sleep 4242` runs anywhere.
no_exec_left() {
        run msp ps --format json "$CID"
        echo "ps: $output"
        [ "$(jq length <<<"$output")" -eq 1 ]
        [ -z "$(pgrep -f 'sleep 4242')" ]
}

@test "exec: an AppArmor profile or SELinux label the host does not run fails exec, naming field and value; nothing is left" {
        lsm_active apparmor && skip "AppArmor is active on this host: the refusal does not apply (the tests/vm guest tests the label)"
        lsm_active selinux && skip "SELinux is active on this host: the refusal does not apply"
        start_sleeper
        # Control: without a label, exec runs.
        run msp exec "$CID" /bin/sh -c 'echo unlabelled'
        [ "$status" -eq 0 ]
        [ "$output" = unlabelled ]
        # The flags, as runc has them.
        run msp exec --apparmor msp-test-profile "$CID" /bin/sleep 4242
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"exec: process.apparmorProfile 'msp-test-profile': AppArmor is not enabled on this host (active LSMs: "* ]]
        no_exec_left
        run msp exec --process-label system_u:system_r:container_t:s0 "$CID" /bin/sleep 4242
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"exec: process.selinuxLabel 'system_u:system_r:container_t:s0': SELinux is not enabled on this host"* ]]
        no_exec_left
        # The label in --process FILE, as podman writes it.
        for field in apparmorProfile selinuxLabel; do
                jq -n --arg f "$field" '{terminal: false, user: {uid: 0, gid: 0},
                        args: ["/bin/sleep", "4242"], env: ["PATH=/bin"], cwd: "/",
                        noNewPrivileges: true} | .[$f] = "msp-test-label"' \
                        >"$BATS_TEST_TMPDIR/process.json"
                run msp exec --process "$BATS_TEST_TMPDIR/process.json" "$CID"
                echo "$field: $output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"exec: process.$field 'msp-test-label': "*" is not enabled on this host"* ]]
                no_exec_left
        done
        [ "$(state_field "$CID" status)" = running ]
        finish
}
