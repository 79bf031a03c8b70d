#!/usr/bin/env bats
# Cgroup limits really enforced (OOM kill, pids, CPU quota, devices) and the commands
# that act on a live cgroup: update, pause/resume, ps, events, kill --all. Mode-aware:
# v1 files on a hybrid or legacy host, v2 files on a unified one. Every test ends with
# assert_nothing_left: no state dir, no cgroup in any hierarchy, no mount.

load helpers

setup() {
        setup_bundle
        if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then V2=1; else V2=0; fi
}

teardown() {
        teardown_containers
}

# cg_dir CONTROLLER: the container's cgroup directory holding that controller's files.
cg_dir() {
        if [ "$V2" = 1 ]; then
                echo "/sys/fs/cgroup/$CGROUP_PREFIX/$CID"
        else
                echo "/sys/fs/cgroup/$1/$CGROUP_PREFIX/$CID"
        fi
}

# cg_read CONTROLLER V1_FILE V2_FILE
cg_read() {
        if [ "$V2" = 1 ]; then cat "$(cg_dir "$1")/$3"; else cat "$(cg_dir "$1")/$2"; fi
}

# CPU time used by the cgroup so far, in nanoseconds.
cpu_usage_ns() {
        if [ "$V2" = 1 ]; then
                echo $(( $(awk '$1 == "usage_usec" { print $2 }' "$(cg_dir cpu)/cpu.stat") * 1000 ))
        else
                cat "$(cg_dir cpuacct)/cpuacct.usage"
        fi
}

# wait_grows_for FILE SIZE SECONDS: block until FILE is larger than SIZE bytes (inotify
# through tail -f, no polling), at most SECONDS. Fails when it did not grow.
wait_grows_for() {
        timeout "$3" tail -c +$(( $2 + 1 )) -f "$1" 2>/dev/null | head -c 1 >/dev/null
        [ "$(stat -c %s "$1")" -gt "$2" ]
}

# wait_grows FILE SIZE: the same, at most 5 s.
wait_grows() {
        wait_grows_for "$1" "$2" 5
}

# wait_line FILE TEXT: block until FILE has the line TEXT (at most 5 s).
wait_line() {
        timeout 5 tail -n +1 -f "$1" 2>/dev/null | grep -qxm1 "$2"
}

@test "memory: a hog is OOM-killed at linux.resources.memory.limit (32 MiB)" {
        update_config '.linux.resources.memory = {"limit": 33554432}'
        set_args /bin/msp-helper oom
        run msp run --keep -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 137 ]
        [ "$(state_field "$CID" status)" = stopped ]
        [ "$(cg_read memory memory.limit_in_bytes memory.max)" = 33554432 ]
        if [ "$V2" = 1 ]; then
                kills=$(awk '$1 == "oom_kill" { print $2 }' "$(cg_dir memory)/memory.events")
        else
                kills=$(awk '$1 == "oom_kill" { print $2 }' "$(cg_dir memory)/memory.oom_control")
        fi
        [ "$kills" -ge 1 ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "pids: a fork bomb stops at pids.limit 20 and the container still exits" {
        update_config '.linux.resources.pids = {"limit": 20}'
        set_args /bin/msp-helper forkbomb 1000
        run msp run --keep -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"fork=EAGAIN"* ]]
        forks=$(sed -n 's/^forks=//p' <<<"$output")
        [ "$forks" -ge 10 ] && [ "$forks" -lt 20 ]
        [ "$(cat "$(cg_dir pids)/pids.max")" = 20 ]
        [ "$(awk '$1 == "max" { print $2 }' "$(cg_dir pids)/pids.events")" -ge 1 ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "cpu: a 20% quota holds a busy loop near its share" {
        update_config '.linux.resources.cpu = {"quota": 20000, "period": 100000}'
        run_detached /bin/msp-helper spin 60
        pid=$(state_field "$CID" pid)
        # Measured from the host over ~1 s: the bound is loose (20% quota, < 40% allowed).
        u0=$(cpu_usage_ns); t0=$(date +%s%N)
        sleep 1
        u1=$(cpu_usage_ns); t1=$(date +%s%N)
        pct=$(( (u1 - u0) * 100 / (t1 - t0) ))
        echo "cpu share over $(( (t1 - t0) / 1000000 )) ms: $pct%"
        [ "$pct" -lt 40 ]
        [ "$pct" -ge 5 ]
        msp kill "$CID" KILL
        wait_pid_exit "$pid"
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "update: --memory, --pids-limit and --resources change live limits" {
        update_config '.linux.resources.memory = {"limit": 33554432} | .linux.resources.pids = {"limit": 40}'
        run_detached /bin/sleep 1000
        msp update --memory 64m --pids-limit 50 "$CID"
        [ "$(cg_read memory memory.limit_in_bytes memory.max)" = 67108864 ]
        [ "$(cat "$(cg_dir pids)/pids.max")" = 50 ]
        msp update --memory 1.5g "$CID"
        [ "$(cg_read memory memory.limit_in_bytes memory.max)" = 1610612736 ]

        echo '{"pids": {"limit": 77}, "cpu": {"shares": 512}, "memory": {"limit": 100663296}}' \
                >"$BATS_TEST_TMPDIR/res.json"
        msp update --resources "$BATS_TEST_TMPDIR/res.json" "$CID"
        [ "$(cat "$(cg_dir pids)/pids.max")" = 77 ]
        [ "$(cg_read memory memory.limit_in_bytes memory.max)" = 100663296 ]
        if [ "$V2" = 0 ]; then
                [ "$(cat "$(cg_dir cpu)/cpu.shares")" = 512 ]
        fi
        # From stdin, with a flag overriding the file's field.
        echo '{"pids": {"limit": 88}}' | msp update -r - --pids-limit 99 "$CID"
        [ "$(cat "$(cg_dir pids)/pids.max")" = 99 ]
        msp update --pids-limit -1 "$CID"
        [ "$(cat "$(cg_dir pids)/pids.max")" = max ]

        run msp update --memory 12x "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"--memory: invalid value '12x'"* ]]
        run msp update "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"nothing to update"* ]]
        # A bad value is refused before anything is written.
        run msp update --cpu-idle 5 --pids-limit 10 "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"container '$CID'"*"cpu.idle"* ]]
        [ "$(cat "$(cg_dir pids)/pids.max")" = max ]

        pid=$(state_field "$CID" pid)
        msp kill "$CID" KILL
        wait_pid_exit "$pid"
        run msp update --memory 64m "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"cannot update container '$CID': it is stopped"* ]]
        msp delete "$CID"
        run msp update --memory 64m "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"container '$CID' does not exist"* ]]
        assert_nothing_left "$CID"
}

@test "update: the new limits are kept in the config copy; a later update and exec start from them" {
        update_config '.linux.resources.memory = {"limit": 33554432, "swappiness": 10} |
                .linux.resources.pids = {"limit": 40} |
                .linux.resources.devices = [{"allow": false, "access": "rwm"}]'
        run_detached /bin/sleep 1000
        copy="$STATE_ROOT/$CID/config.json"
        devices=$(jq -c .linux.resources.devices "$copy")
        msp update --memory 64m "$CID"
        # the flag's field changed, the other fields are the config's
        [ "$(jq -c .linux.resources.memory "$copy")" = '{"limit":67108864,"swappiness":10}' ]
        [ "$(jq .linux.resources.pids.limit "$copy")" = 40 ]
        # a later update (file plus flag) starts from that, not from the original config
        echo '{"cpu": {"shares": 512}, "devices": [{"allow": true, "access": "rwm"}]}' |
                msp update -r - --pids-limit 50 "$CID"
        [ "$(jq -c .linux.resources.memory "$copy")" = '{"limit":67108864,"swappiness":10}' ]
        [ "$(jq .linux.resources.pids.limit "$copy")" = 50 ]
        [ "$(jq .linux.resources.cpu.shares "$copy")" = 512 ]
        # update does not change device rules, so they are not recorded either
        [ "$(jq -c .linux.resources.devices "$copy")" = "$devices" ]
        # the rest of the config is unchanged, and the commands that read it still work
        [ "$(jq -c .process.args "$copy")" = '["/bin/sleep","1000"]' ]
        [ "$(state_field "$CID" status)" = running ]
        run msp exec "$CID" /bin/cat /proc/self/cgroup
        [ "$status" -eq 0 ]
        [[ "$output" == *"$CGROUP_PREFIX/$CID"* ]]
        [ "$(cat "$(cg_dir pids)/pids.max")" = 50 ]
        [ "$(cg_read memory memory.limit_in_bytes memory.max)" = 67108864 ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "memory.kernel and kernelTCP are accepted and ignored with a warning, in create and update (as runc)" {
        update_config '.linux.resources.memory = {"limit": 67108864, "kernel": 50593792, "kernelTCP": 50593792}'
        run_detached /bin/sleep 1000
        cat "$BATS_TEST_TMPDIR/$CID.out"
        grep -q 'warning: linux.resources.memory.kernel, kernelTCP: .*ignored' "$BATS_TEST_TMPDIR/$CID.out"
        [ "$(cg_read memory memory.limit_in_bytes memory.max)" = 67108864 ]
        if [ "$V2" = 0 ]; then
                [ "$(cat "$(cg_dir memory)/memory.kmem.tcp.limit_in_bytes")" != 50593792 ]
        fi
        run msp update --kernel-memory 50m --kernel-memory-tcp 50m --memory 96m "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"warning: linux.resources.memory.kernel, kernelTCP: "*"ignored"* ]]
        [ "$(cg_read memory memory.limit_in_bytes memory.max)" = 100663296 ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "pause freezes the processes (the counter stops), resume thaws them; state says paused" {
        mkdir "$BATS_TEST_TMPDIR/out"
        : >"$BATS_TEST_TMPDIR/out/count"
        update_config '.mounts += [{"destination": "/out", "type": "bind",
                "source": "'"$BATS_TEST_TMPDIR/out"'", "options": ["rbind", "rw"]}]'
        run_detached /bin/sh -c 'i=0; while :; do i=$((i + 1)); echo $i >>/out/count; sleep 0.02; done'
        f=$BATS_TEST_TMPDIR/out/count
        wait_grows "$f" 0

        msp pause "$CID"
        [ "$(state_field "$CID" status)" = paused ]
        if [ "$V2" = 1 ]; then
                [ "$(cat "$(cg_dir freezer)/cgroup.freeze")" = 1 ]
                grep -qx 'frozen 1' "$(cg_dir freezer)/cgroup.events"
        else
                [ "$(cat "$(cg_dir freezer)/freezer.state")" = FROZEN ]
        fi
        size=$(stat -c %s "$f")
        u0=$(cpu_usage_ns)
        # A 0.5 s window in which a running loop would append ~25 lines.
        run wait_grows_for "$f" "$size" 0.5
        [ "$status" -ne 0 ]
        [ "$(stat -c %s "$f")" -eq "$size" ]
        [ "$(cpu_usage_ns)" -eq "$u0" ]
        [ "$(msp list --format json | jq -r '.[] | select(.id == "'"$CID"'") | .status')" = paused ]

        run msp pause "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"cannot pause container '$CID': it is already paused"* ]]
        run msp start "$CID"
        [ "$status" -ne 0 ]

        msp resume "$CID"
        [ "$(state_field "$CID" status)" = running ]
        wait_grows "$f" "$size"
        run msp resume "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"cannot resume container '$CID': it is running, not paused"* ]]

        # delete --force of a paused container kills and thaws it.
        msp pause "$CID"
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "pause: kill works on a paused container; a created one cannot be paused" {
        set_args /bin/sleep 1000
        create_bg "$CID"
        run msp pause "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"cannot pause container '$CID': it is created, not running"* ]]
        msp start "$CID"
        pid=$(state_field "$CID" pid)
        msp pause "$CID"
        [ "$(state_field "$CID" status)" = paused ]
        msp kill "$CID" KILL
        wait_pid_exit "$pid"
        [ "$(state_field "$CID" status)" = stopped ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "ps lists the pids of the container's cgroup" {
        run_detached /bin/sh -c 'sleep 1000 & sleep 1000 & echo ready; wait'
        wait_line "$BATS_TEST_TMPDIR/$CID.out" ready
        init=$(state_field "$CID" pid)
        run msp ps --format json "$CID"
        [ "$status" -eq 0 ]
        [ "$(jq -r 'length' <<<"$output")" -eq 3 ]
        [ "$(jq -r 'map(type == "number") | all' <<<"$output")" = true ]
        [ "$(jq -c 'sort' <<<"$output")" = "$(sort -n "$(cg_dir pids)/cgroup.procs" | jq -sc .)" ]
        jq -e --argjson p "$init" 'index($p) != null' <<<"$output"

        run msp ps "$CID"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = "$(printf '%-8s %-8s %-8s %-4s %s' UID PID PPID STAT CMD)" ]
        [ "${#lines[@]}" -eq 4 ]
        [[ "$output" == *"sleep 1000"* ]]

        run msp ps --format yaml "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"--format: expected table or json"* ]]
        msp delete --force "$CID"
        run msp ps "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"container '$CID' does not exist"* ]]
        assert_nothing_left "$CID"
}

@test "events --stats prints one JSON sample with memory usage and pids.current" {
        update_config '.linux.resources.pids = {"limit": 30} | .linux.resources.memory = {"limit": 67108864}'
        run_detached /bin/sh -c 'sleep 1000 & wait'
        run msp events --stats "$CID"
        [ "$status" -eq 0 ]
        echo "$output"
        [ "${#lines[@]}" -eq 1 ]
        jq -e '.type == "stats"' <<<"$output"
        jq -e --arg id "$CID" '.id == $id' <<<"$output"
        jq -e '.data.memory.usage.usage > 0' <<<"$output"
        jq -e '.data.memory.usage.limit == 67108864' <<<"$output"
        jq -e '.data.pids.current >= 1 and .data.pids.limit == 30' <<<"$output"
        jq -e '.data.cpu.usage.total > 0' <<<"$output"

        # Without --stats: a stream that ends when the container stops.
        msp events --interval 100ms "$CID" >"$BATS_TEST_TMPDIR/events" 3>&- &
        evpid=$!
        wait_grows "$BATS_TEST_TMPDIR/events" 0
        pid=$(state_field "$CID" pid)
        msp kill "$CID" KILL
        wait_pid_exit "$evpid"
        wait "$evpid"
        head -n 1 "$BATS_TEST_TMPDIR/events" | jq -e '.type == "stats"'

        wait_pid_exit "$pid"
        run msp events --stats "$CID"
        [ "$status" -ne 0 ]
        [[ "$output" == *"container '$CID' is not running"* ]]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "devices: a denied device cannot be opened while allowed ones work" {
        # podman's list: deny everything, allow c 42:1 for reading only. msp appends
        # runc's defaults (null, zero, ..., and mknod of any c/b device).
        update_config '.linux.resources.devices = [{"allow": false, "access": "rwm"},
                {"allow": true, "type": "c", "major": 42, "minor": 1, "access": "r"}]
                | .process.capabilities.bounding += ["CAP_MKNOD"]
                | .process.capabilities.effective += ["CAP_MKNOD"]
                | .process.capabilities.permitted += ["CAP_MKNOD"]'
        # Major 42 has no driver: an open the cgroup lets through fails with ENXIO,
        # one it denies with EPERM.
        set_args /bin/msp-helper mknod /dev/d0 c 42 0 -- mknod /dev/d1 c 42 1 -- \
                read /dev/d0 -- read /dev/d1 -- write /dev/d1 -- read /dev/zero -- write /dev/null
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "${lines[0]}" = mknod=ok ]
        [ "${lines[1]}" = mknod=ok ]
        [ "${lines[2]}" = read=EPERM ]
        [ "${lines[3]}" = read=ENXIO ]
        [ "${lines[4]}" = write=EPERM ]
        [ "${lines[5]}" = read=ok ]
        [ "${lines[7]}" = write=ok ]
        assert_nothing_left "$CID"
}

@test "kill --all signals every process in the cgroup, also without a pid namespace" {
        update_config '.linux.namespaces |= map(select(.type != "pid"))'
        run_detached /bin/sh -c 'sleep 1000 & sleep 1000 & echo ready; exec sleep 1000'
        wait_line "$BATS_TEST_TMPDIR/$CID.out" ready
        init=$(state_field "$CID" pid)
        pids=$(msp ps --format json "$CID" | jq -r '.[]')
        [ "$(wc -w <<<"$pids")" -eq 3 ]

        # Without a pid namespace, killing the init leaves its children running.
        msp kill "$CID" KILL
        wait_pid_exit "$init"
        [ "$(state_field "$CID" status)" = stopped ]
        left=$(msp ps --format json "$CID" | jq -r '.[]')
        [ "$(wc -w <<<"$left")" -eq 2 ]

        # kill --all reaches them, each once.
        msp kill --all "$CID" TERM
        for p in $left; do wait_pid_exit "$p"; done
        [ "$(msp ps --format json "$CID")" = "[]" ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "kill --all: a handled signal reaches each process once; KILL on a paused container" {
        update_config '.linux.namespaces |= map(select(.type != "pid"))'
        mkdir "$BATS_TEST_TMPDIR/out"
        update_config '.mounts += [{"destination": "/out", "type": "bind",
                "source": "'"$BATS_TEST_TMPDIR/out"'", "options": ["rbind", "rw"]}]'
        run_detached /bin/sh -c 'trap "echo USR1 >>/out/log" USR1; while :; do sleep 0.05; done'
        : >"$BATS_TEST_TMPDIR/out/log"
        msp kill --all "$CID" USR1
        wait_grows "$BATS_TEST_TMPDIR/out/log" 0
        [ "$(wc -l <"$BATS_TEST_TMPDIR/out/log")" -eq 1 ]
        [ "$(state_field "$CID" status)" = running ]

        # A paused container: SIGKILL to all, then thawed so that the frozen tasks die.
        pids=$(msp ps --format json "$CID" | jq -r '.[]')
        msp pause "$CID"
        msp kill --all "$CID" KILL
        for p in $pids; do wait_pid_exit "$p"; done
        [ "$(state_field "$CID" status)" = stopped ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "cpuset (v1): an existing parent with empty cpus/mems gets the ancestors' values" {
        [ "$V2" = 0 ] || skip "cgroup v2 refuses no task for an empty cpuset (the effective values inherit)"
        [ -d /sys/fs/cgroup/cpuset ] || skip "no v1 cpuset hierarchy on this host"
        parent="/sys/fs/cgroup/cpuset/$CGROUP_PREFIX/empty-$CID"
        mkdir -p "$parent"
        # A v1 cpuset made by mkdir starts empty (unless the host sets clone_children).
        [ -z "$(cat "$parent/cpuset.cpus")" ] || skip "this host's new cpusets are not empty"
        update_config ".linux.cgroupsPath = \"/$CGROUP_PREFIX/empty-$CID/$CID\""
        set_args /bin/true
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(cat "$parent/cpuset.cpus")" = "$(cat /sys/fs/cgroup/cpuset/cpuset.cpus)" ]
        [ "$(cat "$parent/cpuset.mems")" = "$(cat /sys/fs/cgroup/cpuset/cpuset.mems)" ]
        # msp made the parent in the other hierarchies: they go with this test's one.
        rmdir /sys/fs/cgroup/*/"$CGROUP_PREFIX/empty-$CID"
        assert_nothing_left "$CID"
}

@test "pause, resume, update, ps, events: errors name the container" {
        for cmd in pause resume ps "events --stats" "update --memory 1m"; do
                run msp $cmd nosuch-$$
                [ "$status" -ne 0 ]
                [[ "$output" == *"container 'nosuch-$$' does not exist"* ]]
        done
        run msp pause
        [ "$status" -ne 0 ]
        [[ "$output" == *"a container ID is required"* ]]
}

@test "a frozen cgroup fails create and run at once, as runc (never a hang)" {
        if [ "$V2" = 1 ]; then
                base=/sys/fs/cgroup
                freeze() { echo "$2" >"$1/cgroup.freeze"; }
        else
                [ -d /sys/fs/cgroup/freezer ] || skip "no v1 freezer hierarchy on this host"
                base=/sys/fs/cgroup/freezer
                freeze() { if [ "$2" = 1 ]; then echo FROZEN >"$1/freezer.state"; else echo THAWED >"$1/freezer.state"; fi; }
        fi
        dir="$base/$CGROUP_PREFIX/$CID"
        mkdir -p "$dir"
        freeze "$dir" 1
        set_args /bin/true
        # Bounded, and not under `run`: an init left in the frozen cgroup would hold the
        # output pipe. Each case thaws before it checks, so a failure leaves no frozen task.
        for cmd in run create; do
                rc=0
                timeout -s KILL 30 "$MSP" --root "$STATE_ROOT" "$cmd" -b "$BUNDLE" "$CID" \
                        </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 3>&- || rc=$?
                cat "$BATS_TEST_TMPDIR/out"
                [ -d "$dir" ] && freeze "$dir" 0
                [ "$rc" -eq 1 ]
                grep -q "container's cgroup unexpectedly frozen: '$dir'" "$BATS_TEST_TMPDIR/out"
                [ ! -e "$STATE_ROOT/$CID" ]
                # the cgroup was there before: it stays
                [ -d "$dir" ]
                freeze "$dir" 1
        done
        freeze "$dir" 0
        rmdir "$dir"
        # a new leaf below a frozen parent would be frozen too
        freeze "$base/$CGROUP_PREFIX" 1
        rc=0
        timeout -s KILL 30 "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" \
                </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 3>&- || rc=$?
        cat "$BATS_TEST_TMPDIR/out"
        freeze "$base/$CGROUP_PREFIX" 0
        [ "$rc" -eq 1 ]
        grep -q "container's cgroup unexpectedly frozen" "$BATS_TEST_TMPDIR/out"
        assert_nothing_left "$CID"
}

@test "a cgroup frozen during create (here by a prestart hook) fails create, never a hang" {
        if [ "$V2" = 1 ]; then
                file="/sys/fs/cgroup/$CGROUP_PREFIX/$CID/cgroup.freeze" value=1
        else
                [ -d /sys/fs/cgroup/freezer ] || skip "no v1 freezer hierarchy on this host"
                file="/sys/fs/cgroup/freezer/$CGROUP_PREFIX/$CID/freezer.state" value=FROZEN
        fi
        update_config ".hooks = {\"prestart\": [{\"path\": \"/bin/sh\",
                \"args\": [\"sh\", \"-c\", \"echo $value > $file\"]}]}"
        set_args /bin/true
        rc=0
        timeout -s KILL 30 "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" \
                </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 3>&- || rc=$?
        cat "$BATS_TEST_TMPDIR/out"
        if [ "$rc" -ne 1 ] && [ -e "$file" ]; then
                # thaw what a hung runtime left frozen before failing
                if [ "$V2" = 1 ]; then echo 0 >"$file"; else echo THAWED >"$file"; fi
        fi
        [ "$rc" -eq 1 ]
        grep -q "container's cgroup unexpectedly frozen: '/$CGROUP_PREFIX/$CID' was frozen during create" \
                "$BATS_TEST_TMPDIR/out"
        assert_nothing_left "$CID"
}

@test "exec into a cgroup frozen behind msp's back fails (exit 255), never a hang; nothing is left" {
        # The container's own cgroup frozen makes it "paused", which exec refuses up front:
        # the frozen cgroup here is the --cgroup sub-cgroup the exec'd process joins.
        if [ "$V2" = 1 ]; then
                dir="$(cg_dir)/frozen" arg=frozen
                freeze() { echo "$1" >"$dir/cgroup.freeze"; }
        else
                [ -d /sys/fs/cgroup/freezer ] || skip "no v1 freezer hierarchy on this host"
                dir="$(cg_dir freezer)/frozen" arg=freezer:frozen
                freeze() { if [ "$1" = 1 ]; then echo FROZEN; else echo THAWED; fi >"$dir/freezer.state"; }
        fi
        run_detached /bin/sleep 1000
        mkdir "$dir"
        freeze 1
        rc=0
        timeout -s KILL 20 "$MSP" --root "$STATE_ROOT" exec --cgroup "$arg" "$CID" /bin/true \
                </dev/null >"$BATS_TEST_TMPDIR/out" 2>&1 || rc=$?
        cat "$BATS_TEST_TMPDIR/out"
        # a frozen v1 task dies of its SIGKILL only once thawed
        pids=$(cat "$dir/cgroup.procs")
        freeze 0
        for p in $pids; do wait_pid_exit "$p" 5; done
        [ "$rc" -eq 255 ]
        grep -q "container's cgroup unexpectedly frozen: '/$CGROUP_PREFIX/$CID/frozen' was frozen during exec" \
                "$BATS_TEST_TMPDIR/out"
        [ -z "$(cat "$dir/cgroup.procs")" ]
        rmdir "$dir"
        # the container is untouched
        [ "$(state_field "$CID" status)" = running ]
        msp exec "$CID" /bin/true
}

# Two state roots, one cgroup: the second container must not join the first one's cgroup
# (a `kill --all` or `delete` through either root would reach both). run_b: `msp run -d`
# through a second state root, its output in $BATS_TEST_TMPDIR/b.out (a container that
# starts keeps its stdio: bats' `run` would wait for it).
run_b() {
        status=0
        "$MSP" --root "$BATS_TEST_TMPDIR/state-b" run -d -b "$BUNDLE" "$CID" </dev/null \
                >"$BATS_TEST_TMPDIR/b.out" 2>&1 3>&- || status=$?
        "$MSP" --root "$BATS_TEST_TMPDIR/state-b" delete --force "$CID" >/dev/null 2>&1 3>&- || true
        output=$(cat "$BATS_TEST_TMPDIR/b.out")
        echo "$output"
}

@test "cgroup of another state root: a default path that exists is refused, the first container lives on" {
        update_config 'del(.linux.cgroupsPath)'
        run_detached sleep 1000
        init=$(state_field "$CID" pid)
        [ -d "/sys/fs/cgroup/unified/msp/$CID" ] || [ -d "/sys/fs/cgroup/msp/$CID" ]

        run_b
        [ "$status" -eq 1 ]
        [[ "$output" == *"cgroup '/msp/$CID' already exists"* ]]
        [ ! -e "$BATS_TEST_TMPDIR/state-b/$CID" ]
        [ "$(state_field "$CID" status)" = running ]
        [ "$(state_field "$CID" pid)" = "$init" ]
        msp delete --force "$CID"
        [ ! -e "/sys/fs/cgroup/unified/msp/$CID" ] && [ ! -e "/sys/fs/cgroup/msp/$CID" ]
}

@test "cgroup of another state root: a linux.cgroupsPath holding processes is refused (runc 1.2's rule)" {
        run_detached sleep 1000
        run_b
        [ "$status" -eq 1 ]
        [[ "$output" == *"container's cgroup is not empty: 1 process(es) found in '/$CGROUP_PREFIX/$CID'"* ]]
        [ ! -e "$BATS_TEST_TMPDIR/state-b/$CID" ]
        [ "$(state_field "$CID" status)" = running ]
        [ "$(msp ps --format json "$CID" | jq length)" -eq 1 ]

        # Once it is empty, the path may be used again (as runc allows an existing cgroup).
        msp delete --force "$CID"
        mkdir -p "/sys/fs/cgroup/unified/$CGROUP_PREFIX/$CID" 2>/dev/null ||
                mkdir -p "/sys/fs/cgroup/$CGROUP_PREFIX/$CID"
        run_b
        [ "$status" -eq 0 ]
}

# A container that may write its cgroup (a cgroup namespace, the cgroup mount rw and, for
# the hybrid host's cgroup2 hierarchy that msp does not mount, CAP_SYS_ADMIN to mount it
# itself) runs tests/helper/cg-writer.sh CHAIN...: a process in ".x" and one 17 levels
# deep, in every hierarchy, and the chains in its first one; then it prints "parked".
run_cg_writer() {
        update_config '.linux.namespaces += [{"type": "cgroup"}]
                | .mounts |= map(if .type == "cgroup" then .options = (.options - ["ro"] + ["rw"]) else . end)
                | .process.capabilities.bounding += ["CAP_SYS_ADMIN"]
                | .process.capabilities.effective += ["CAP_SYS_ADMIN"]
                | .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
        cp "$REPO/tests/helper/cg-writer.sh" "$BUNDLE/rootfs/cg-writer.sh"
        run_detached /bin/sh /cg-writer.sh "$@"
        wait_line "$BATS_TEST_TMPDIR/$CID.out" parked || { cat "$BATS_TEST_TMPDIR/$CID.out"; msp state "$CID"; return 1; }
        cat "$BATS_TEST_TMPDIR/$CID.out"
        if grep -E '^cg(park|nest)=E' "$BATS_TEST_TMPDIR/$CID.out"; then return 1; fi
        [ "$(grep -c '^ready=1' "$BATS_TEST_TMPDIR/$CID.out")" -eq 2 ]
}

# The pids in cgroup.procs of the container's cgroup's SUB path (in its pids hierarchy).
parked_pids() {
        cat "$(cg_dir pids)/$1/cgroup.procs"
}

@test "cgroup tree: ps lists and kill --all reaches processes in '.x' and 17 levels deep" {
        run_cg_writer .d:3
        dot=$(parked_pids .x)
        deep=$(parked_pids c/c/c/c/c/c/c/c/c/c/c/c/c/c/c/c/c)
        [ -n "$dot" ] && [ -n "$deep" ]
        run msp ps --format json "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        jq -e --argjson p "$dot" 'index($p) != null' <<<"$output"
        jq -e --argjson p "$deep" 'index($p) != null' <<<"$output"
        [ "$(jq length <<<"$output")" -eq 3 ]

        msp kill --all "$CID" TERM
        wait_pid_exit "$dot"
        wait_pid_exit "$deep"
        [ "$(msp ps --format json "$CID" | jq length)" -eq 1 ]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "cgroup tree: delete --force removes '.x', 17-, 200- and deeper-than-PATH_MAX chains with their processes" {
        # 2100 levels of "d/": a path longer than PATH_MAX (4096) from the hierarchy root.
        run_cg_writer .d:200 e:200 d:2100
        dot=$(parked_pids .x)
        run msp delete --force "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        wait_pid_exit "$dot"
        assert_nothing_left "$CID"
}
