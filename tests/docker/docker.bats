#!/usr/bin/env bats
# Docker (Debian's dockerd 20.10 and containerd 1.6, io.containerd.runc.v2 shim) driving
# the built msp as `--runtime msp`: what a user sees from the everyday commands, the
# same as with runc where they are compared, and that nothing of a container is left
# afterwards. Root; private daemons and state (helpers.bash, ../engines/lib.bash).

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
        dk_setup_file
}

teardown_file() {
        dk_teardown_file
}

teardown() {
        dk_teardown
}

@test "docker knows msp from daemon.json; run --rm prints and leaves nothing" {
        run dk info --format '{{json .Runtimes.msp}}'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(echo "$output" | jq -r .path)" = "$MSP" ]
        run dk_run --name hello --rm "$DK_IMAGE" echo hello from msp
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "hello from msp" ]
        dk_run --name rt -d "$DK_IMAGE" sleep 100 >/dev/null
        [ "$(dk inspect -f '{{.HostConfig.Runtime}}' rt)" = msp ]
        id=$(dk inspect -f '{{.Id}}' rt)
        # the shim ran msp with docker's runtime root: its state dir is there
        [ -f "$(DK_RUNTIME_ROOT)/$id/state.json" ] || ls -la "$(DK_RUNTIME_ROOT)/$id"
        [ -d "$(DK_RUNTIME_ROOT)/$id" ]
        dk rm -f rt >/dev/null
        assert_gone "$id"
}

@test "exit codes: the program's, 127 missing, 126 not executable, 125 runtime error (as runc)" {
        for rt in msp runc; do
                run dk run --rm --runtime "$rt" "$DK_IMAGE" sh -c 'echo to-stderr >&2; exit 3'
                [ "$status" -eq 3 ]
                [ "$output" = to-stderr ]
                run -127 dk run --rm --runtime "$rt" "$DK_IMAGE" /no/such/program
                echo "$rt: $output"
                [[ "$output" == *"/no/such/program"* ]]
                run -127 dk run --rm --runtime "$rt" "$DK_IMAGE" nosuchcommand
                echo "$rt: $output"
                [[ "$output" == *nosuchcommand*'$PATH'* ]]
                run -126 dk run --rm --runtime "$rt" "$DK_IMAGE" /etc/noexec
                echo "$rt: $output"
                [[ "$output" == *"/etc/noexec"*"permission denied"* ]]
                # a bind mount below a regular file fails in the runtime: docker says 125
                run -125 dk run --rm --runtime "$rt" -v /etc/hostname:/etc/passwd/x "$DK_IMAGE" true
                echo "$rt: $output"
                [[ "$output" == *"/etc/passwd/x"* ]]
        done
        [ -z "$(dk ps -aq)" ]
        [ -z "$(eng_cgroups_left)" ]
}

@test "stdin: a pipe reaches the program and its EOF ends it" {
        run dk_run --rm -i "$DK_IMAGE" sh -c 'cat; echo "end of input"'  <<<"line one"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf 'line one\nend of input')" ]
        # wc sees exactly the bytes sent
        run dk_run --rm -i "$DK_IMAGE" wc -c < <(head -c 100000 /dev/zero)
        [ "$status" -eq 0 ]
        [ "$(echo "$output" | tr -d ' ')" = 100000 ]
}

@test "tty: -t gives a terminal; -it through a real pty, with its size and exit code" {
        run dk_run --rm -t "$DK_IMAGE" sh -c 'tty; exit 2'
        echo "$output"
        [ "$status" -eq 2 ]
        [[ "$output" == "/dev/pts/0"* ]]
        run pty_run --rows 31 --cols 97 -- "$DOCKER" -H "unix://$ENG_DIR/docker.sock" \
                run --runtime msp -it --rm "$DK_IMAGE" sh -c "tty; $WINSIZE; exit 5"
        echo "$output"
        [ "$status" -eq 5 ]
        [[ "$output" == *"/dev/pts/0"* ]]
        [[ "$output" == *"31 97"* ]]
}

@test "exec: exit codes, -u, -w, -e, -t, -d, a failed exec is 126 (as runc)" {
        dk_run -d --name ex "$DK_IMAGE" sleep 1000 >/dev/null
        run dk exec ex sh -c 'echo in-exec; exit 3'
        [ "$status" -eq 3 ]
        [ "$output" = in-exec ]
        run dk exec -u 1000:1000 -w /tmp -e FOO=bar ex sh -c 'id -u; id -g; pwd; echo $FOO'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf '1000\n1000\n/tmp\nbar')" ]
        run dk exec -t ex sh -c 'tty; exit 4'
        echo "$output"
        [ "$status" -eq 4 ]
        [[ "$output" == /dev/pts/* ]]
        run pty_run --rows 22 --cols 66 -- "$DOCKER" -H "unix://$ENG_DIR/docker.sock" \
                exec -it ex sh -c "$WINSIZE"
        [[ "$output" == *"22 66"* ]]
        # -d: the exec'd process runs on after docker exec returned
        dk exec -d ex sh -c 'sleep 0.2; echo detached >/tmp/d'
        eng_wait 10 dk exec ex test -s /tmp/d
        [ "$(dk exec ex cat /tmp/d)" = detached ]
        # the exec'd process is in the container's pid namespace
        [ "$(dk exec ex sh -c 'tr "\0" " " </proc/1/cmdline')" = "sleep 1000 " ]
        # docker 20.10 reports every failed exec start as 126 (with runc too); the message
        # names the program
        dk_run -d --runtime runc --name ex-runc "$DK_IMAGE" sleep 1000 >/dev/null
        for c in ex ex-runc; do
                run -126 dk exec "$c" nosuchcommand
                echo "$c: $output"
                [[ "$output" == *nosuchcommand*'$PATH'* ]]
                run -126 dk exec "$c" /etc/noexec
                echo "$c: $output"
                [[ "$output" == *"/etc/noexec"*"permission denied"* ]]
        done
        dk rm -f ex-runc >/dev/null
        dk rm -f ex >/dev/null
}

@test "--memory: over the limit the kernel kills it: exit 137, State.OOMKilled true (as runc)" {
        for rt in msp runc; do
                run dk run --runtime "$rt" --name "oom-$rt" --memory 32m --memory-swap 32m "$DK_IMAGE" \
                        sh -c 'x=0123456789; while :; do x=$x$x; done'
                echo "$rt: $output"
                [ "$status" -eq 137 ]
                run dk inspect -f '{{.State.ExitCode}} {{.State.OOMKilled}}' "oom-$rt"
                echo "$rt: $output"
                [ "$output" = "137 true" ]
                dk rm "oom-$rt" >/dev/null
        done
}

@test "--pids-limit, --cpus, --memory: the limits are in the container's cgroup and hold" {
        dk_run -d --name lim --pids-limit 5 --cpus 0.5 --memory 48m "$DK_IMAGE" sleep 1000 >/dev/null
        [ "$(cat "$(cgroup_file lim pids pids.max pids.max)")" = 5 ]
        [ "$(cat "$(cgroup_file lim memory memory.limit_in_bytes memory.max)")" = $((48 << 20)) ]
        [[ "$(cat "$(cgroup_file lim cpu cpu.cfs_quota_us cpu.max)")" == 50000* ]]
        run dk exec lim sh -c 'for i in 1 2 3 4 5 6 7; do sleep 100 & done; echo all-forked'
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"can't fork"* ]]
        [[ "$output" != *all-forked* ]]
        dk rm -f lim >/dev/null
}

@test "capabilities: docker's default set, --cap-drop ALL, --cap-add (as runc)" {
        for rt in msp runc; do
                run dk run --rm --runtime "$rt" "$DK_IMAGE" sh -c 'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status'
                echo "$rt: $output"
                [ "$(echo "$output" | awk '{print $2}' | sort -u)" = 00000000a80425fb ]
                run dk run --rm --runtime "$rt" --cap-drop ALL --cap-add NET_ADMIN "$DK_IMAGE" \
                        sh -c 'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status'
                # CAP_NET_ADMIN is bit 12
                [ "$(echo "$output" | awk '{print $2}' | sort -u)" = 0000000000001000 ]
                run dk run --rm --runtime "$rt" --cap-drop CHOWN "$DK_IMAGE" chown 1000 /tmp
                [ "$status" -ne 0 ]
                [[ "$output" == *"Operation not permitted"* ]]
        done
}

@test "seccomp: docker's default profile filters, unconfined does not (as runc)" {
        for rt in msp runc; do
                run dk run --rm --runtime "$rt" "$DK_IMAGE" sh -c 'grep "^Seccomp:" /proc/self/status; unshare -U true'
                echo "$rt: $output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"Seccomp:"*2* ]]
                [[ "$output" == *"Operation not permitted"* ]]
                run dk run --rm --runtime "$rt" --security-opt seccomp=unconfined "$DK_IMAGE" \
                        sh -c 'grep "^Seccomp:" /proc/self/status; unshare -U true && echo unshared'
                echo "$rt: $output"
                [ "$status" -eq 0 ]
                [[ "${lines[0]}" == *"Seccomp:"*0 ]]
                [ "${lines[1]}" = unshared ]
        done
}

@test "--device: the node is there and usable" {
        run dk_run --rm --device /dev/null:/dev/extra-null "$DK_IMAGE" \
                sh -c 'ls -l /dev/extra-null; echo x >/dev/extra-null && echo written'
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == c* ]]
        [ "${lines[1]}" = written ]
}

@test "mounts: -v rw and ro, --tmpfs with a size, --read-only root, a named volume" {
        mkdir -p "$BATS_TEST_TMPDIR/vol"
        echo host-data >"$BATS_TEST_TMPDIR/vol/f"
        run dk_run --rm -v "$BATS_TEST_TMPDIR/vol:/data" "$DK_IMAGE" sh -c 'cat /data/f; echo new >/data/g'
        [ "$status" -eq 0 ]
        [ "$output" = host-data ]
        [ "$(cat "$BATS_TEST_TMPDIR/vol/g")" = new ]
        run dk_run --rm -v "$BATS_TEST_TMPDIR/vol:/data:ro" "$DK_IMAGE" sh -c 'echo x >/data/h'
        [ "$status" -ne 0 ]
        [[ "$output" == *"Read-only file system"* ]]
        [ ! -e "$BATS_TEST_TMPDIR/vol/h" ]
        run dk_run --rm --tmpfs /scratch:size=1m "$DK_IMAGE" \
                sh -c 'grep " /scratch " /proc/mounts; echo data >/scratch/f && cat /scratch/f'
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == "tmpfs /scratch tmpfs "*"size=1024k"* ]]
        [ "${lines[1]}" = data ]
        run dk_run --rm --read-only "$DK_IMAGE" sh -c 'touch /newfile'
        [ "$status" -ne 0 ]
        [[ "$output" == *"Read-only file system"* ]]
        dk_run --rm -v mspvol:/v "$DK_IMAGE" sh -c 'echo kept >/v/f'
        run dk_run --rm -v mspvol:/v:ro "$DK_IMAGE" cat /v/f
        [ "$output" = kept ]
        dk volume rm mspvol >/dev/null
}

@test "pause/unpause: the cgroup is frozen, inspect says paused, exec is refused" {
        dk_run -d --name frozen "$DK_IMAGE" sh -c 'while :; do echo tick >/tmp/t; sleep 0.1; done' >/dev/null
        wait_status frozen running
        dk pause frozen >/dev/null
        [ "$(dk inspect -f '{{.State.Status}} {{.State.Paused}}' frozen)" = "paused true" ]
        f=$(cgroup_file frozen freezer freezer.state cgroup.freeze)
        [[ "$(cat "$f")" == FROZEN || "$(cat "$f")" == 1 ]]
        run dk exec frozen true
        [ "$status" -ne 0 ]
        dk unpause frozen >/dev/null
        [ "$(dk inspect -f '{{.State.Status}} {{.State.Paused}}' frozen)" = "running false" ]
        [[ "$(cat "$f")" == THAWED || "$(cat "$f")" == 0 ]]
        dk exec frozen true
        dk rm -f frozen >/dev/null
}

@test "stop: a TERM handler ends at once with its status; without one KILL after the timeout" {
        dk_run -d --name stubborn "$DK_IMAGE" sh -c 'echo ready; while :; do sleep 0.2; done' >/dev/null
        dk_run -d --name polite "$DK_IMAGE" \
                sh -c 'trap "echo got-term; exit 42" TERM; echo ready; while :; do sleep 0.2; done' >/dev/null
        wait_log stubborn ready
        wait_log polite ready
        start=$(date +%s%N)
        dk stop -t 2 stubborn >/dev/null
        elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
        echo "stubborn: ${elapsed} ms"
        [ "$elapsed" -ge 1900 ] && [ "$elapsed" -lt 15000 ]
        [ "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' stubborn)" = "exited 137" ]
        start=$(date +%s%N)
        dk stop -t 10 polite >/dev/null
        elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
        echo "polite: ${elapsed} ms"
        [ "$elapsed" -lt 5000 ]
        [ "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' polite)" = "exited 42" ]
        wait_log polite got-term
        dk rm stubborn polite >/dev/null
}

@test "kill -s USR1 reaches the handler; kill is KILL" {
        dk_run -d --name sig "$DK_IMAGE" sh -c 'trap "exit 7" USR1; echo ready; while :; do sleep 0.2; done' >/dev/null
        wait_log sig ready
        dk kill -s USR1 sig >/dev/null
        wait_status sig exited
        [ "$(dk inspect -f '{{.State.ExitCode}}' sig)" = 7 ]
        dk_run -d --name sig2 "$DK_IMAGE" sleep 1000 >/dev/null
        dk kill sig2 >/dev/null
        wait_status sig2 exited
        [ "$(dk inspect -f '{{.State.ExitCode}}' sig2)" = 137 ]
        dk rm sig sig2 >/dev/null
}

@test "top and stats: the processes, memory use and limit" {
        dk_run -d --name topme --memory 64m "$DK_IMAGE" sleep 1000 >/dev/null
        run dk top topme
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "${lines[1]}" == *"sleep 1000"* ]]
        [ "${#lines[@]}" -eq 2 ]
        run dk stats --no-stream --format '{{.Name}} {{.MemUsage}} {{.PIDs}}' topme
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == "topme "*" / 64MiB 1" ]]
        dk rm -f topme >/dev/null
}

@test "healthcheck: the check runs in the container and turns healthy" {
        dk_run -d --name hc --health-cmd 'test -f /tmp/ready' --health-interval 1s --health-retries 30 \
                "$DK_IMAGE" sh -c 'sleep 1; touch /tmp/ready; exec sleep 1000' >/dev/null
        eng_wait 30 sh -c "[ \"\$(DOCKER_CONFIG=$ENG_DIR/client $DOCKER -H unix://$ENG_DIR/docker.sock inspect -f '{{.State.Health.Status}}' hc)\" = healthy ]"
        run dk inspect -f '{{.State.Health.Status}} {{(index .State.Health.Log 0).ExitCode}}' hc
        echo "$output"
        [[ "$output" == "healthy "* ]]
        dk rm -f hc >/dev/null
}

@test "cp: into and out of a running container and a stopped one" {
        echo into >"$BATS_TEST_TMPDIR/in"
        dk_run -d --name cpme "$DK_IMAGE" sh -c 'echo out >/tmp/out; exec sleep 1000' >/dev/null
        eng_wait 10 dk exec cpme test -f /tmp/out
        dk cp "$BATS_TEST_TMPDIR/in" cpme:/tmp/in
        [ "$(dk exec cpme cat /tmp/in)" = into ]
        dk cp cpme:/tmp/out "$BATS_TEST_TMPDIR/out"
        [ "$(cat "$BATS_TEST_TMPDIR/out")" = out ]
        dk stop -t 0 cpme >/dev/null
        dk cp cpme:/tmp/in "$BATS_TEST_TMPDIR/in2"
        [ "$(cat "$BATS_TEST_TMPDIR/in2")" = into ]
        dk rm cpme >/dev/null
}

@test "--init: docker-init is pid 1 and the program its child" {
        run dk_run --rm --init "$DK_IMAGE" sh -c 'tr "\0" " " </proc/1/cmdline'
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == "/sbin/docker-init -- sh -c"* ]]
}

@test "--rm: no container, msp state dir, exec dir, cgroup or mount is left" {
        dk_run --rm --name gone1 --memory 32m "$DK_IMAGE" true
        run -127 dk_run --rm --name gone2 "$DK_IMAGE" /no/such/program
        dk_run -d --rm --name gone3 "$DK_IMAGE" sleep 1000 >/dev/null
        id3=$(dk inspect -f '{{.Id}}' gone3)
        dk stop -t 0 gone3 >/dev/null
        assert_gone "$id3"
        [ -z "$(dk ps -aq)" ]
        [ -z "$(eng_cgroups_left)" ]
        # every container dir of the runtime root is a live container's (none now)
        [ -z "$(find "$(DK_RUNTIME_ROOT)" -mindepth 1 -maxdepth 1 -type d ! -name '.*')" ]
}

@test "dockerd restart with --live-restore: a running container stays reachable" {
        dk_run -d --name live "$DK_IMAGE" sh -c 'echo $$ >/tmp/pid; exec sleep 1000' >/dev/null
        wait_status live running
        pid=$(dk inspect -f '{{.State.Pid}}' live)
        dk_stop_daemon
        kill -0 "$pid"
        dk_start_daemon
        [ "$(dk inspect -f '{{.State.Status}} {{.State.Pid}}' live)" = "running $pid" ]
        [ "$(dk exec live echo still-here)" = still-here ]
        dk stop -t 1 live >/dev/null
        [ "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' live)" = "exited 137" ]
        dk rm live >/dev/null
}

@test "containerd restart: dockerd reconnects, the container runs on and stops cleanly" {
        dk_run -d --name ctdrestart "$DK_IMAGE" sleep 1000 >/dev/null
        wait_status ctdrestart running
        pid=$(dk inspect -f '{{.State.Pid}}' ctdrestart)
        ctd_stop
        kill -0 "$pid"
        ctd_start
        eng_wait 30 dk exec ctdrestart true
        [ "$(dk exec ctdrestart echo reached)" = reached ]
        [ "$(dk inspect -f '{{.State.Pid}}' ctdrestart)" = "$pid" ]
        dk rm -f ctdrestart >/dev/null
        id=$(dk ps -aq)
        [ -z "$id" ]
}

@test "update: --memory, --cpus, --restart on a running container; all or nothing (as runc)" {
        for rt in msp runc; do
                dk run -d --runtime "$rt" --name "upd-$rt" --memory 64m --memory-swap 128m --cpus 0.5 \
                        "$DK_IMAGE" sleep 1000 >/dev/null
                mem=$(cgroup_file "upd-$rt" memory memory.limit_in_bytes memory.max)
                cpu=$(cgroup_file "upd-$rt" cpu cpu.cfs_quota_us cpu.max)
                run dk update --memory 100m --memory-swap 200m "upd-$rt"
                echo "$rt: $output"
                [ "$status" -eq 0 ]
                [ "$(cat "$mem")" = $((100 << 20)) ]
                # the shim sends zeros for the fields not given: they stay as they were
                [[ "$(cat "$cpu")" == 50000* ]]
                run dk update --cpus 1.5 "upd-$rt"
                [ "$status" -eq 0 ]
                [[ "$(cat "$cpu")" == 150000* ]]
                [ "$(cat "$mem")" = $((100 << 20)) ]
                run dk update --restart always "upd-$rt"
                echo "$rt: $output"
                [ "$status" -eq 0 ]
                [ "$(dk inspect -f '{{.HostConfig.RestartPolicy.Name}}' "upd-$rt")" = always ]
                # below the usage is refused by the kernel: nothing changes
                run dk update --memory 4k --cpus 0.25 "upd-$rt"
                echo "$rt: $output"
                [ "$status" -ne 0 ]
                [ "$(cat "$mem")" = $((100 << 20)) ]
                [[ "$(cat "$cpu")" == 150000* ]]
                dk rm -f "upd-$rt" >/dev/null
        done
}

@test "mknod in a default container: any node can be made, only allowed ones opened (as runc)" {
        for rt in msp runc; do
                run dk run --rm --runtime "$rt" "$DK_IMAGE" \
                        sh -c 'mknod /tmp/mem c 1 1 && echo made-mem; mknod /tmp/loop b 7 0 && echo made-loop
                               mknod /tmp/null c 1 3 && echo x >/tmp/null && echo wrote-null
                               head -c1 /tmp/mem || echo denied-mem'
                echo "$rt: $output"
                [ "$status" -eq 0 ]
                [[ "$output" == *made-mem*made-loop* ]]
                [[ "$output" == *wrote-null* ]]
                [[ "$output" == *"/tmp/mem: Operation not permitted"* ]]
                [[ "$output" == *denied-mem* ]]
        done
}

@test "/sys/fs/cgroup inside shows the container's own cgroup, not the host's tree (as runc)" {
        dk_run -d --name cgview --memory 40m "$DK_IMAGE" sleep 1000 >/dev/null
        dk run -d --runtime runc --name cgview-runc --memory 40m "$DK_IMAGE" sleep 1000 >/dev/null
        for c in cgview cgview-runc; do
                run dk exec "$c" cat /sys/fs/cgroup/memory/memory.limit_in_bytes
                echo "$c: $output"
                [ "$output" = $((40 << 20)) ]
                # no other container's directory, no docker parent
                run dk exec "$c" sh -c 'find /sys/fs/cgroup/memory -mindepth 1 -type d'
                echo "$c: $output"
                [ -z "$output" ]
                run dk exec "$c" sh -c 'echo 1 >/sys/fs/cgroup/memory/memory.limit_in_bytes'
                [ "$status" -ne 0 ]
                [[ "$output" == *"Read-only file system"* ]]
        done
        dk rm -f cgview cgview-runc >/dev/null
        # with a cgroup namespace of its own the view is the same
        for rt in msp runc; do
                run dk run --rm --runtime "$rt" --cgroupns private --memory 40m "$DK_IMAGE" \
                        sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes; find /sys/fs/cgroup/memory -mindepth 1 -type d | wc -l'
                echo "$rt: $output"
                [ "$status" -eq 0 ]
                [ "${lines[0]}" = $((40 << 20)) ]
                [ "${lines[1]}" = 0 ]
        done
}

@test "--ulimit: soft and hard limits below the host's hard limit (as runc)" {
        for rt in msp runc; do
                run dk run --rm --runtime "$rt" --ulimit nofile=512:1024 --ulimit nproc=300:400 "$DK_IMAGE" \
                        sh -c 'ulimit -n; ulimit -Hn; ulimit -u; ulimit -Hu'
                echo "$rt: $output"
                [ "$status" -eq 0 ]
                [ "$output" = "$(printf '512\n1024\n300\n400')" ]
        done
}

@test "the runtime root docker shares between runtimes holds only containers: runc list works" {
        dk_run -d --name shared "$DK_IMAGE" sleep 1000 >/dev/null
        dk run -d --runtime runc --name shared-runc "$DK_IMAGE" sleep 1000 >/dev/null
        run "$RUNC" --root "$(DK_RUNTIME_ROOT)" list -q
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${#lines[@]}" -eq 2 ]
        run "$MSP" --root "$(DK_RUNTIME_ROOT)" list -q
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"$(dk inspect -f '{{.Id}}' shared)"* ]]
        [ -z "$(find "$(DK_RUNTIME_ROOT)" -mindepth 1 -maxdepth 1 ! -type d)" ]
        [ -z "$(find "$(DK_RUNTIME_ROOT)" -mindepth 1 -maxdepth 1 -name '.*')" ]
        dk rm -f shared shared-runc >/dev/null
}
