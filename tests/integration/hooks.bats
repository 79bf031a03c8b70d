#!/usr/bin/env bats
# OCI hooks: each kind runs at its moment, in the namespaces the spec gives it, with the
# state JSON on stdin, its args and env (and nothing of the runtime's env), under its
# timeout. Hooks record what they see in $OUT (bind-mounted at /hooklog for the hooks
# and the process that run inside the container).

load helpers

setup() {
        setup_bundle
        OUT="$BATS_TEST_TMPDIR/hooklog"
        mkdir "$OUT"
        # hook.sh KIND ARGS...: record stdin, namespaces, root, cwd, args and env; append
        # KIND to the order file. Written for the host and copied into the image.
        cat >"$BATS_TEST_TMPDIR/hook.sh" <<'EOF'
#!/bin/sh
kind=$1
shift
out=${HOOK_OUT:-/hooklog}
cat >"$out/$kind.json"
readlink /proc/self/ns/pid >"$out/$kind.pidns"
readlink /proc/self/ns/mnt >"$out/$kind.mntns"
readlink /proc/self/root >"$out/$kind.root"
pwd >"$out/$kind.cwd"
echo "$*" >"$out/$kind.args"
env | sort >"$out/$kind.env"
# The fds the hook has, less the one ls opens for the listing.
ls /proc/self/fd | tr '\n' ' ' >"$out/$kind.fds"
[ -e /only-in-the-image ] && echo yes >"$out/$kind.in-image"
echo "$kind" >>"$out/order"
EOF
        cp "$BATS_TEST_TMPDIR/hook.sh" "$BUNDLE/rootfs/hook-in-image.sh"
        touch "$BUNDLE/rootfs/only-in-the-image"
        update_config ".mounts += [{\"destination\": \"/hooklog\", \"type\": \"bind\", \"source\": \"$OUT\", \"options\": [\"rbind\", \"rw\"]}]"
}

teardown() {
        teardown_containers
}

# host_hook KIND: a hook entry running hook.sh from the host's side.
host_hook() {
        echo "{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"$BATS_TEST_TMPDIR/hook.sh\", \"$1\", \"arg-one\", \"arg two\"],
               \"env\": [\"PATH=/usr/bin:/bin\", \"HOOK_OUT=$OUT\", \"HOOK_KIND=$1\"]}"
}

# all_hooks: every kind, prestart twice (order within a kind).
all_hooks() {
        update_config ".hooks = {
                \"prestart\": [$(host_hook prestart), $(host_hook prestart-2)],
                \"createRuntime\": [$(host_hook createRuntime)],
                \"createContainer\": [$(host_hook createContainer)],
                \"startContainer\": [{\"path\": \"/hook-in-image.sh\", \"args\": [\"hook-in-image.sh\", \"startContainer\", \"inside\"],
                                      \"env\": [\"PATH=/bin\", \"HOOK_KIND=startContainer\"]}],
                \"poststart\": [$(host_hook poststart)],
                \"poststop\": [$(host_hook poststop)]}"
        chmod 0755 "$BUNDLE/rootfs/hook-in-image.sh"
}

order() {
        tr '\n' ' ' <"$OUT/order"
}

@test "hooks run in order, each at its moment" {
        all_hooks
        set_args /bin/sh -c 'echo process >>/hooklog/order'
        create_bg "$CID"
        cat "$BATS_TEST_TMPDIR/$CID.out"
        [ "$(order)" = "prestart prestart-2 createRuntime createContainer " ]
        [ "$(state_field "$CID" status)" = created ]
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        # poststart has run when start returns, after startContainer (and the exec)
        o=$(order)
        [[ "$o" == "prestart prestart-2 createRuntime createContainer startContainer "* ]]
        [[ "$o" == *" poststart "* ]]
        wait_pid_exit "$pid"
        o=$(order)
        echo "$o"
        [[ "$o" == *" process "* || "$o" == *" process " ]]
        [ ! -e "$OUT/poststop.json" ]
        msp delete "$CID"
        [ "$(tail -n1 "$OUT/order")" = poststop ]
        [ "$(wc -l <"$OUT/order")" -eq 8 ]
        assert_nothing_left "$CID"
}

@test "hooks get the state JSON on stdin, as seen from where they run" {
        all_hooks
        update_config '.annotations = {"org.example.key": "value/with \"quotes\""}'
        set_args /bin/true
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        wait_pid_exit "$pid"
        msp delete "$CID"
        for k in prestart prestart-2 createRuntime createContainer startContainer poststart poststop; do
                echo "$k: $(cat "$OUT/$k.json")"
                [ "$(jq -r .id "$OUT/$k.json")" = "$CID" ]
                [ "$(jq -r .bundle "$OUT/$k.json")" = "$BUNDLE" ]
                [ "$(jq -r .ociVersion "$OUT/$k.json")" != null ]
                [ "$(jq -r '.annotations["org.example.key"]' "$OUT/$k.json")" = 'value/with "quotes"' ]
        done
        for k in prestart prestart-2 createRuntime createContainer startContainer; do
                [ "$(jq -r .status "$OUT/$k.json")" = created ]
        done
        [ "$(jq -r .status "$OUT/poststart.json")" = running ]
        [ "$(jq -r .status "$OUT/poststop.json")" = stopped ]
        # the pid as the runtime sees it, or as the container does
        for k in prestart createRuntime poststart; do
                [ "$(jq -r .pid "$OUT/$k.json")" = "$pid" ]
        done
        [ "$(jq -r .pid "$OUT/createContainer.json")" = 1 ]
        [ "$(jq -r .pid "$OUT/startContainer.json")" = 1 ]
        assert_nothing_left "$CID"
}

@test "hooks run in the namespaces the spec gives them" {
        all_hooks
        set_args /bin/msp-helper sleep-forever
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        cpid=$(readlink /proc/"$pid"/ns/pid)
        cmnt=$(readlink /proc/"$pid"/ns/mnt)
        hpid=$(readlink /proc/self/ns/pid)
        hmnt=$(readlink /proc/self/ns/mnt)
        [ "$cpid" != "$hpid" ]
        msp start "$CID"
        msp kill "$CID" KILL
        wait_pid_exit "$pid"
        msp delete "$CID"
        # runtime namespace: prestart, createRuntime, poststart, poststop
        for k in prestart createRuntime poststart poststop; do
                [ "$(cat "$OUT/$k.pidns")" = "$hpid" ]
                [ "$(cat "$OUT/$k.mntns")" = "$hmnt" ]
                [ "$(cat "$OUT/$k.root")" = / ]
                [ ! -e "$OUT/$k.in-image" ]
        done
        # createContainer: the container's namespaces, before pivot_root (host paths)
        [ "$(cat "$OUT/createContainer.pidns")" = "$cpid" ]
        [ "$(cat "$OUT/createContainer.mntns")" = "$cmnt" ]
        [ "$(cat "$OUT/createContainer.mntns")" != "$hmnt" ]
        [ ! -e "$OUT/createContainer.in-image" ]
        # startContainer: inside the container, its path resolved in the image
        [ ! -e /hook-in-image.sh ]
        [ "$(cat "$OUT/startContainer.pidns")" = "$cpid" ]
        [ "$(cat "$OUT/startContainer.mntns")" = "$cmnt" ]
        [ "$(cat "$OUT/startContainer.in-image")" = yes ]
        assert_nothing_left "$CID"
}

@test "hooks get their args and env, and nothing of the runtime's env" {
        all_hooks
        set_args /bin/true
        export MSP_TEST_LEAK=should-not-be-seen
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        wait_pid_exit "$pid"
        msp delete "$CID"
        for k in prestart createRuntime createContainer poststart poststop; do
                [ "$(cat "$OUT/$k.args")" = "arg-one arg two" ]
                grep -qx "HOOK_KIND=$k" "$OUT/$k.env"
                grep -qx "PATH=/usr/bin:/bin" "$OUT/$k.env"
                ! grep -q MSP_TEST_LEAK "$OUT/$k.env"
        done
        [ "$(cat "$OUT/startContainer.args")" = inside ]
        grep -qx HOOK_KIND=startContainer "$OUT/startContainer.env"
        ! grep -q MSP_TEST_LEAK "$OUT/startContainer.env"
        assert_nothing_left "$CID"
}

@test "hooks get stdio and no other fd of the caller's (7 and 8 here)" {
        all_hooks
        set_args /bin/true
        exec 7>"$BATS_TEST_TMPDIR/fd7" 8<"$BUNDLE/config.json"
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        wait_pid_exit "$pid"
        msp delete "$CID"
        exec 7>&- 8<&-
        for k in prestart createRuntime createContainer startContainer poststart poststop; do
                echo "$k: $(cat "$OUT/$k.fds")"
                [ "$(cat "$OUT/$k.fds")" = "0 1 2 3 " ]
        done
        assert_nothing_left "$CID"
}

# create_times_out KIND: a hook of KIND that sleeps past its 1 s timeout. The sleep's
# argument is unique to this run (other runs of this suite may be going on).
create_times_out() {
        local secs="31.$$"
        update_config ".hooks = {\"$1\": [{\"path\": \"/bin/sleep\", \"args\": [\"sleep\", \"$secs\"], \"timeout\": 1}]}"
        start=$(date +%s%N)
        run msp create -b "$BUNDLE" "$CID" </dev/null
        elapsed_ms=$((($(date +%s%N) - start) / 1000000))
        echo "$status $elapsed_ms ms: $output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"$1 hook"*"timed out"* ]]
        [ "$elapsed_ms" -ge 900 ]
        [ "$elapsed_ms" -lt 5000 ]
        assert_nothing_left "$CID"
        ! pgrep -a -f "sleep $secs"
}

@test "timeout: a createRuntime hook that overruns fails create within the timeout" {
        create_times_out createRuntime
}

@test "timeout: a createContainer hook that overruns fails create within the timeout" {
        create_times_out createContainer
}

@test "a failing poststop hook is only a warning; the hooks after it still run" {
        # runtime.md: the remaining hooks and lifecycle continue as if it had succeeded
        marker="$BATS_TEST_TMPDIR/after"
        update_config '.hooks = {"poststop": [{"path": "/bin/sh", "args": ["sh", "-c", "exit 4"]},
                {"path": "/bin/sh", "args": ["sh", "-c", "echo ran >>'"$marker"'"]}]}'
        set_args /bin/true
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"poststop hook"*"status 4"* ]]
        [ "$(cat "$marker")" = ran ]
        assert_nothing_left "$CID"
        set_args /bin/sleep 1000
        create_bg "$CID"
        run msp delete "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"poststop hook"* ]]
        [ "$(cat "$marker")" = "$(printf 'ran\nran')" ]
        assert_nothing_left "$CID"
}

@test "a failing poststart hook fails start and stops the container" {
        update_config '.hooks = {"poststart": [{"path": "/bin/sh", "args": ["sh", "-c", "exit 5"]}]}'
        set_args /bin/msp-helper sleep-forever
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        run msp start "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"poststart hook"*"status 5"* ]]
        wait_pid_exit "$pid"
        [ "$(state_field "$CID" status)" = stopped ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "a failing startContainer hook: the process does not run" {
        update_config '.hooks = {"startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "exit 6"]}]}'
        set_args /bin/sh -c 'echo process >>/hooklog/order'
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        msp start "$CID" || true
        wait_pid_exit "$pid"
        [ ! -e "$OUT/order" ]
        [ "$(state_field "$CID" status)" = stopped ]
        msp delete "$CID"
        assert_nothing_left "$CID"
        # as with runc, `start` has returned by then; `run` sees the init fail
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -ne 0 ]
        [ ! -e "$OUT/order" ]
        assert_nothing_left "$CID"
}

@test "poststart runs once the process has been exec'd" {
        # poststart-comm.sh: the comm of the state's pid, when poststart runs
        cat >"$BATS_TEST_TMPDIR/poststart-comm.sh" <<'EOF'
pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
cat /proc/"$pid"/comm >"$1"
EOF
        # a slow startContainer hook: poststart must still wait for the exec
        update_config ".hooks = {
                \"startContainer\": [{\"path\": \"/bin/sleep\", \"args\": [\"sleep\", \"0.3\"]}],
                \"poststart\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"$BATS_TEST_TMPDIR/poststart-comm.sh\", \"$OUT/poststart.comm\"]}]}"
        set_args /bin/msp-helper sleep-forever
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        [ "$(cat "$OUT/poststart.comm")" = msp-helper ]
        msp kill "$CID" KILL
        wait_pid_exit "$pid"
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "a failing startContainer hook with poststart hooks: start fails, poststart does not run" {
        update_config ".hooks = {\"startContainer\": [{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"exit 6\"]}],
                                 \"poststart\": [$(host_hook poststart)]}"
        set_args /bin/sh -c 'echo process >>/hooklog/order'
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        run msp start "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"exited before it started"* ]]
        wait_pid_exit "$pid"
        [ ! -e "$OUT/order" ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "runtime hooks stay in the runtime's namespaces when the container joins others by path" {
        # an infra container whose pid, net, ipc and uts namespaces the next one joins
        update_config 'del(.mounts[] | select(.destination == "/hooklog"))'
        update_config ".linux.cgroupsPath = \"/$CGROUP_PREFIX/$CID-infra\""
        set_args /bin/msp-helper sleep-forever
        create_bg "$CID-infra"
        infra=$(state_field "$CID-infra" pid)
        msp start "$CID-infra"
        update_config ".linux.cgroupsPath = \"/$CGROUP_PREFIX/$CID\" |
                .mounts += [{\"destination\": \"/hooklog\", \"type\": \"bind\", \"source\": \"$OUT\", \"options\": [\"rbind\", \"rw\"]}] |
                .linux.namespaces = [{\"type\": \"mount\"}, {\"type\": \"time\"},
                        {\"type\": \"pid\", \"path\": \"/proc/$infra/ns/pid\"},
                        {\"type\": \"network\", \"path\": \"/proc/$infra/ns/net\"},
                        {\"type\": \"ipc\", \"path\": \"/proc/$infra/ns/ipc\"},
                        {\"type\": \"uts\", \"path\": \"/proc/$infra/ns/uts\"}]"
        ns_hook() {
                echo "{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\", \"readlink /proc/self/ns/pid /proc/self/ns/net /proc/self/ns/uts /proc/self/ns/time >$OUT/$1.ns\"]}"
        }
        update_config ".hooks = {\"prestart\": [$(ns_hook prestart)], \"createRuntime\": [$(ns_hook createRuntime)],
                \"poststart\": [$(ns_hook poststart)], \"poststop\": [$(ns_hook poststop)]}"
        set_args /bin/sh -c 'for n in pid net uts time; do readlink /proc/self/ns/$n; done'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        inside=$output
        host=$(readlink /proc/self/ns/pid /proc/self/ns/net /proc/self/ns/uts /proc/self/ns/time)
        [ "$(sed -n 1,3p <<<"$inside")" = "$(readlink /proc/"$infra"/ns/pid /proc/"$infra"/ns/net /proc/"$infra"/ns/uts)" ]
        [ "$(sed -n 4p <<<"$inside")" != "$(sed -n 4p <<<"$host")" ]
        for k in prestart createRuntime poststart poststop; do
                echo "$k: $(tr '\n' ' ' <"$OUT/$k.ns")"
                [ "$(cat "$OUT/$k.ns")" = "$host" ]
        done
        [ ! -e "$STATE_ROOT/$CID" ]
        msp kill "$CID-infra" KILL
        wait_pid_exit "$infra"
        msp delete "$CID-infra"
        assert_nothing_left "$CID"
        assert_nothing_left "$CID-infra"
}

# The hooks that run inside the container: createContainer before the seccomp filter
# (during create, privileged), startContainer under it, as with runc, with either
# noNewPrivileges.
@test "a startContainer hook runs under the container's seccomp filter, createContainer before it" {
        # probe KIND HELPER OUTDIR: createContainer runs before pivot_root (host paths)
        probe() {
                echo "{\"path\": \"/bin/sh\", \"args\": [\"sh\", \"-c\",
                       \"$2 mkdir $3/$1.d >$3/$1.out; true\"]}"
        }
        update_config ".mounts += [{\"destination\": \"/tmp\", \"type\": \"tmpfs\", \"source\": \"tmpfs\"}] |
                .hooks = {\"createContainer\": [$(probe createContainer "$MSP_HELPER" "$OUT")],
                          \"startContainer\": [$(probe startContainer /bin/msp-helper /hooklog)]} |
                .linux.seccomp = {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": [
                        {\"names\": [\"mkdir\", \"mkdirat\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 122}]}"
        for nnp in true false; do
                update_config ".process.noNewPrivileges = $nnp"
                rm -rf "$OUT"/*.out "$OUT"/*.d
                helper_run mkdir /tmp/process
                echo "noNewPrivileges=$nnp: $output"
                [ "$output" = mkdir=EDQUOT ]
                [ "$(cat "$OUT/createContainer.out")" = mkdir=ok ]
                [ "$(cat "$OUT/startContainer.out")" = mkdir=EDQUOT ]
                assert_nothing_left "$CID"
        done
}
