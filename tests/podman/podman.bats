#!/usr/bin/env bats
# podman (Debian's, with conmon) driving the built msp: what a user sees from the
# everyday commands, and that nothing of a container is left afterwards (container,
# msp state, conmon, cgroup, mount). Root; private podman state (helpers.bash).

bats_require_minimum_version 1.5.0
load helpers

setup_file() {
        pm_setup_file
}

teardown_file() {
        pm_teardown_file
}

teardown() {
        pm_teardown
}

@test "podman uses msp: podman info names it, msp --version answers" {
        run pm info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Path}}'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "msp $MSP" ]
        run pm info --format '{{.Host.OCIRuntime.Version}}'
        [[ "$output" == *"msp version"* ]]
}

@test "run --rm: output and exit codes 0 and 1" {
        run pm_run --rm "$PM_IMAGE" echo hello from msp
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "hello from msp" ]
        run pm_run --rm "$PM_IMAGE" sh -c 'echo to-stderr >&2; exit 1'
        [ "$status" -eq 1 ]
        [ "$output" = to-stderr ]
        assert_clean
}

@test "run --rm: a missing executable is exit 127, a non-executable file 126" {
        run -127 pm_run --rm "$PM_IMAGE" /no/such/program
        echo "$output"
        [ "$status" -eq 127 ]
        [[ "$output" == *"/no/such/program"*"no such file or directory"* ]]
        run -127 pm_run --rm "$PM_IMAGE" nosuchcommand
        echo "$output"
        [ "$status" -eq 127 ]
        [[ "$output" == *"executable file \`nosuchcommand\` not found in \$PATH"* ]]
        run pm_run --rm "$PM_IMAGE" /etc/noexec
        echo "$output"
        [ "$status" -eq 126 ]
        [[ "$output" == *"permission denied"* ]]
        assert_clean
}

@test "podman reads msp's errors as JSON lines from --log (runtime_supports_json)" {
        run -127 pm_run --name badexec "$PM_IMAGE" /no/such/program
        [ "$status" -eq 127 ]
        id=$(pm inspect -f '{{.ID}}' badexec)
        log=$(find "$PM_DIR/runroot" -path "*/$id/userdata/oci-log")
        [ -n "$log" ]
        cat "$log"
        # every line one object with msg, level and time; the error names the program
        jq -e -s 'length >= 1 and all(.[]; (.msg | type == "string") and (.level | type == "string")
                and (.time | type == "string"))' "$log" >/dev/null
        jq -r 'select(.level == "error") | .msg' "$log" | grep -F '/no/such/program' >/dev/null
        pm rm badexec >/dev/null
        assert_clean
}

@test "run -d, logs, ps, inspect; rm -f of a running container" {
        pm_run -d --name daemon "$PM_IMAGE" sh -c 'echo out-line; echo err-line >&2; exec sleep 1000' >/dev/null
        wait_log daemon err-line
        run pm logs daemon
        [[ "$output" == *out-line* ]]
        [[ "$output" == *err-line* ]]
        run pm ps --format '{{.Names}} {{.Status}}'
        echo "$output"
        [[ "$output" == "daemon Up"* ]]
        [ "$(pm inspect -f '{{.State.Status}} {{.State.Running}}' daemon)" = "running true" ]
        pid=$(pm inspect -f '{{.State.Pid}}' daemon)
        [ -d "/proc/$pid" ]
        run pm rm -f -t 1 daemon
        [ "$status" -eq 0 ]
        run pm ps -aq
        [ -z "$output" ]
        assert_clean
}

@test "exec: output, exit codes 3, 127, 126, --user, --workdir, --env, oomScoreAdj" {
        pm_run -d --name ex --oom-score-adj 321 "$PM_IMAGE" sleep 1000 >/dev/null
        run pm exec ex sh -c 'echo in-exec; exit 3'
        [ "$status" -eq 3 ]
        [ "$output" = in-exec ]
        run -127 pm exec ex nosuchcommand
        echo "$output"
        [ "$status" -eq 127 ]
        run pm exec ex /etc/noexec
        echo "$output"
        [ "$status" -eq 126 ]
        run pm exec --user 1000:1000 --workdir /tmp --env FOO=bar ex sh -c 'id -u; id -g; pwd; echo $FOO'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf '1000\n1000\n/tmp\nbar')" ]
        # the exec'd process is in the container's pid namespace: ps sees pid 1 = sleep
        run pm exec ex sh -c 'cat /proc/1/cmdline | tr "\0" " "'
        [ "$output" = "sleep 1000 " ]
        # podman's process.json carries the container's oomScoreAdj
        run pm exec ex cat /proc/self/oom_score_adj
        [ "$output" = 321 ]
        pm rm -f -t 0 ex >/dev/null
        assert_clean
}

@test "exec -it through a real pty: a terminal, its size, the exit code" {
        pm_run -d --name ext "$PM_IMAGE" sleep 1000 >/dev/null
        run pty_run --rows 33 --cols 111 -- podman --root "$PM_DIR/root" --runroot "$PM_DIR/runroot" \
                --storage-driver vfs exec -it ext sh -c "tty; $WINSIZE; exit 4"
        echo "$output"
        [ "$status" -eq 4 ]
        [[ "$output" == *"/dev/pts/"* ]]
        [[ "$output" == *"33 111"* ]]
        pm rm -f -t 0 ext >/dev/null
        assert_clean
}

@test "run -it --rm through a real pty: a terminal, its size, the exit code" {
        run pty_run --rows 30 --cols 100 -- podman --root "$PM_DIR/root" --runroot "$PM_DIR/runroot" \
                --storage-driver vfs run -it --rm --network none --cgroup-parent "/$PM_CGROUP" \
                "${PM_ULIMITS[@]}" "$PM_IMAGE" sh -c "tty; $WINSIZE; exit 5"
        echo "$output"
        [ "$status" -eq 5 ]
        [[ "$output" == *"/dev/pts/0"* ]]
        [[ "$output" == *"30 100"* ]]
        assert_clean
}

@test "stop: TERM first, KILL after the timeout when TERM is ignored" {
        # pid 1 without a handler ignores TERM: stop must fall back to KILL (137)
        pm_run -d --name stubborn "$PM_IMAGE" sh -c 'echo ready; while :; do sleep 0.2; done' >/dev/null
        wait_log stubborn ready
        start=$(date +%s%N)
        run pm stop -t 1 stubborn
        elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
        echo "$output; ${elapsed} ms"
        [ "$status" -eq 0 ]
        [ "$elapsed" -ge 900 ] && [ "$elapsed" -lt 15000 ]
        [ "$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' stubborn)" = "exited 137" ]
        # a process that handles TERM ends with its own status, at once
        pm_run -d --name polite "$PM_IMAGE" sh -c 'trap "echo got-term; exit 42" TERM; echo ready; while :; do sleep 0.2; done' >/dev/null
        wait_log polite ready
        pm stop -t 10 polite >/dev/null
        [ "$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' polite)" = "exited 42" ]
        wait_log polite got-term
        pm rm stubborn polite >/dev/null
        assert_clean
}

@test "stop of a --pid=host container signals every process in it (kill --all)" {
        # The shell runs a background sleep, prints its host pid, and ignores TERM; with
        # no pid namespace only `msp kill --all` reaches the background process.
        pm_run -d --name hostpid --pid=host "$PM_IMAGE" \
                sh -c 'trap "" TERM; sleep 1000 & echo "bg=$!"; while :; do sleep 0.2; done' >/dev/null
        wait_log hostpid bg=
        bg=$(pm logs hostpid 2>&1 | sed -n 's/^bg=//p')
        [ -d "/proc/$bg" ]
        grep -q "$PM_CGROUP" "/proc/$bg/cgroup"
        run pm stop -t 1 hostpid
        [ "$status" -eq 0 ]
        [ "$(pm inspect -f '{{.State.Status}}' hostpid)" = exited ]
        for _ in $(seq 50); do
                [ -d "/proc/$bg" ] || break
                sleep 0.1
        done
        [ ! -d "/proc/$bg" ]
        pm rm hostpid >/dev/null
        assert_clean
}

@test "kill -s: the signal reaches the process; kill defaults to KILL" {
        pm_run -d --name sig "$PM_IMAGE" sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready; while :; do sleep 0.2; done' >/dev/null
        wait_log sig ready
        pm kill -s USR1 sig >/dev/null
        wait_status sig exited
        [ "$(pm inspect -f '{{.State.ExitCode}}' sig)" = 7 ]
        wait_log sig got-usr1
        pm_run -d --name sig2 "$PM_IMAGE" sleep 1000 >/dev/null
        pm kill sig2 >/dev/null
        wait_status sig2 exited
        [ "$(pm inspect -f '{{.State.ExitCode}}' sig2)" = 137 ]
        pm rm sig sig2 >/dev/null
        assert_clean
}

@test "pause/unpause: the cgroup is frozen, ps and inspect say paused" {
        pm_run -d --name frozen "$PM_IMAGE" sh -c 'while :; do echo tick >/tmp/t; sleep 0.1; done' >/dev/null
        wait_status frozen running
        pm pause frozen >/dev/null
        [ "$(pm inspect -f '{{.State.Status}} {{.State.Paused}}' frozen)" = "paused true" ]
        # (podman 4.3's ps lists paused containers only with -a)
        run pm ps -a --format '{{.Names}} {{.Status}}'
        echo "$output"
        [[ "$output" == "frozen Paused"* ]]
        f=$(cgroup_file frozen freezer freezer.state cgroup.freeze)
        echo "$f: $(cat "$f")"
        [[ "$(cat "$f")" == FROZEN || "$(cat "$f")" == 1 ]]
        # podman refuses exec into a paused container
        run pm exec frozen true
        [ "$status" -ne 0 ]
        pm unpause frozen >/dev/null
        [ "$(pm inspect -f '{{.State.Status}} {{.State.Paused}}' frozen)" = "running false" ]
        [[ "$(cat "$f")" == THAWED || "$(cat "$f")" == 0 ]]
        pm rm -f -t 0 frozen >/dev/null
        assert_clean
}

@test "top: lists the container's processes" {
        pm_run -d --name topme "$PM_IMAGE" sleep 1000 >/dev/null
        wait_status topme running
        run pm top topme
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "${lines[1]}" == *"sleep 1000"* ]]
        [ "${#lines[@]}" -eq 2 ]
        pm rm -f -t 0 topme >/dev/null
        assert_clean
}

@test "update --memory, --cpus: the new limits are in the container's cgroup" {
        pm_run -d --name upd --memory 64m --cpus 0.5 "$PM_IMAGE" sleep 1000 >/dev/null
        f=$(cgroup_file upd memory memory.limit_in_bytes memory.max)
        [ "$(cat "$f")" = $((64 * 1024 * 1024)) ]
        cpu=$(cgroup_file upd cpu cpu.cfs_quota_us cpu.max)
        [[ "$(cat "$cpu")" == 50000* ]]
        run pm update --memory 128m upd
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(cat "$f")" = $((128 * 1024 * 1024)) ]
        run pm update --cpus 1 upd
        [ "$status" -eq 0 ]
        [[ "$(cat "$cpu")" == 100000* ]]
        pm rm -f -t 0 upd >/dev/null
        assert_clean
}

@test "--memory: a process over the limit is OOM-killed, exit 137" {
        run pm_run --name oom --memory 32m --memory-swap 32m "$PM_IMAGE" \
                sh -c 'x=0123456789; while :; do x=$x$x; done'
        echo "$output"
        [ "$status" -eq 137 ]
        [ "$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' oom)" = "exited 137" ]
        oomkilled=$(pm inspect -f '{{.State.OOMKilled}}' oom)
        echo "OOMKilled: $oomkilled"
        # conmon reports OOMKilled from memory.events on cgroup v2; the conmon of Debian 12
        # does not on v1/hybrid hosts (runc gives false there as well).
        if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
                [ "$oomkilled" = true ]
        fi
        pm rm oom >/dev/null
        assert_clean
}

@test "--pids-limit: forks past the limit fail, the cgroup has the limit" {
        pm_run -d --name pids --pids-limit 5 "$PM_IMAGE" sleep 1000 >/dev/null
        f=$(cgroup_file pids pids pids.max pids.max)
        [ "$(cat "$f")" = 5 ]
        run pm exec pids sh -c 'for i in 1 2 3 4 5 6 7; do sleep 100 & done; echo all-forked'
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"can't fork"* ]]
        [[ "$output" != *all-forked* ]]
        pm rm -f -t 0 pids >/dev/null
        assert_clean
}

@test "--read-only: / cannot be written, /tmp can (podman's tmpfs)" {
        run pm_run --rm --read-only "$PM_IMAGE" sh -c 'touch /newfile'
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"Read-only file system"* ]]
        run pm_run --rm --read-only "$PM_IMAGE" sh -c 'touch /tmp/f && echo tmp-ok'
        [ "$status" -eq 0 ]
        [ "$output" = tmp-ok ]
        assert_clean
}

@test "--cap-drop ALL leaves no capability; --cap-add adds exactly one" {
        run pm_run --rm --cap-drop ALL "$PM_IMAGE" sh -c 'grep -E "^Cap(Eff|Prm|Bnd)" /proc/self/status'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(echo "$output" | awk '{print $2}' | sort -u)" = 0000000000000000 ]
        # CAP_NET_RAW is bit 13
        run pm_run --rm --cap-drop ALL --cap-add NET_RAW "$PM_IMAGE" sh -c 'grep "^CapEff" /proc/self/status'
        [ "$(echo "$output" | awk '{print $2}')" = 0000000000002000 ]
        # and the effect: without CAP_CHOWN chown fails
        run pm_run --rm --cap-drop ALL "$PM_IMAGE" sh -c 'chown 1000 /tmp'
        [ "$status" -ne 0 ]
        assert_clean
}

@test "--user 1000:1000: the process runs as that user" {
        run pm_run --rm --user 1000:1000 "$PM_IMAGE" sh -c 'id -u; id -g; touch /etc/x'
        echo "$output"
        [ "$status" -ne 0 ]
        [ "${lines[0]}" = 1000 ]
        [ "${lines[1]}" = 1000 ]
        [[ "$output" == *"Permission denied"* ]]
        assert_clean
}

@test "--security-opt seccomp=FILE: the profile is enforced" {
        cat >"$BATS_TEST_TMPDIR/seccomp.json" <<'JSON'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
JSON
        run pm_run --rm --security-opt "seccomp=$BATS_TEST_TMPDIR/seccomp.json" "$PM_IMAGE" \
                sh -c 'mkdir /tmp/d'
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"Operation not permitted"* ]]
        run pm_run --rm "$PM_IMAGE" sh -c 'mkdir /tmp/d && echo made'
        [ "$output" = made ]
        assert_clean
}

@test "--security-opt no-new-privileges sets no_new_privs" {
        run pm_run --rm --security-opt no-new-privileges "$PM_IMAGE" grep NoNewPrivs /proc/self/status
        echo "$output"
        [[ "$output" == *"NoNewPrivs:"*1 ]]
        run pm_run --rm "$PM_IMAGE" grep NoNewPrivs /proc/self/status
        [[ "$output" == *"NoNewPrivs:"*0 ]]
        assert_clean
}

@test "--network none: only the loopback device, in a network namespace of its own" {
        run pm_run --rm "$PM_IMAGE" sh -c 'ls /sys/class/net; readlink /proc/self/ns/net'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = lo ]
        [ "${#lines[@]}" -eq 2 ]
        [ "${lines[1]}" != "$(readlink /proc/self/ns/net)" ]
        assert_clean
}

@test "--tmpfs: a writable tmpfs with the given size" {
        run pm_run --rm --tmpfs /scratch:size=1m "$PM_IMAGE" \
                sh -c 'grep " /scratch " /proc/mounts; echo data >/scratch/f && cat /scratch/f'
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == "tmpfs /scratch tmpfs "*"size=1024k"* ]]
        [ "${lines[1]}" = data ]
        assert_clean
}

@test "--cgroups=disabled: runs without a cgroup of its own (msp --cgroup-manager disabled)" {
        run pm run --rm --network none "${PM_ULIMITS[@]}" --cgroups=disabled "$PM_IMAGE" \
                sh -c 'echo no-cgroup; cat /proc/self/cgroup'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = no-cgroup ]
        [[ "$output" != *libpod-* ]]
        assert_clean
}

@test "start: a stopped container runs again, with the same log" {
        pm_run -d --name again "$PM_IMAGE" sh -c 'echo run-$$-$(cat /proc/uptime | cut -d" " -f1); exit 3' >/dev/null
        wait_status again exited
        [ "$(pm inspect -f '{{.State.ExitCode}}' again)" = 3 ]
        pm start again >/dev/null
        for _ in $(seq 100); do
                [ "$(pm logs again | grep -c '^run-')" -ge 2 ] && break
                sleep 0.1
        done
        wait_status again exited
        [ "$(pm logs again | grep -c '^run-')" -eq 2 ]
        [ "$(pm inspect -f '{{.State.ExitCode}}' again)" = 3 ]
        pm rm again >/dev/null
        assert_clean
}

@test "-v bind volumes (rw and :ro), --hostname, -e, -w, --init (catatonit)" {
        mkdir -p "$BATS_TEST_TMPDIR/vol"
        echo host-data >"$BATS_TEST_TMPDIR/vol/f"
        run pm_run --rm -v "$BATS_TEST_TMPDIR/vol:/data" "$PM_IMAGE" sh -c 'cat /data/f; echo new >/data/g'
        [ "$status" -eq 0 ]
        [ "$output" = host-data ]
        [ "$(cat "$BATS_TEST_TMPDIR/vol/g")" = new ]
        run pm_run --rm -v "$BATS_TEST_TMPDIR/vol:/data:ro" "$PM_IMAGE" sh -c 'echo x >/data/h'
        [ "$status" -ne 0 ]
        [[ "$output" == *"Read-only file system"* ]]
        [ ! -e "$BATS_TEST_TMPDIR/vol/h" ]
        run pm_run --rm --hostname box -e GREETING=hi -w /tmp "$PM_IMAGE" sh -c 'hostname; echo $GREETING; pwd'
        [ "$output" = "$(printf 'box\nhi\n/tmp')" ]
        run pm_run --rm --init "$PM_IMAGE" sh -c 'tr "\0" " " </proc/1/cmdline'
        echo "$output"
        [[ "$output" == "/run/podman-init -- sh -c"* ]]
        assert_clean
}

@test "--uidmap/--gidmap: a user namespace, root inside is 100000 outside" {
        run pm_run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 "$PM_IMAGE" \
                sh -c 'id -u; cat /proc/self/uid_map'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = 0 ]
        [ "$(echo "${lines[1]}" | awk '{print $1, $2, $3}')" = "0 100000 65536" ]
        assert_clean
}

@test "wait, restart, exec -d" {
        pm_run -d --name waited "$PM_IMAGE" sh -c 'sleep 1; exit 9' >/dev/null
        run pm wait waited
        [ "$output" = 9 ]
        pm_run -d --name restarted "$PM_IMAGE" sleep 1000 >/dev/null
        pid1=$(pm inspect -f '{{.State.Pid}}' restarted)
        run pm restart -t 0 restarted
        [ "$status" -eq 0 ]
        [ "$(pm inspect -f '{{.State.Status}}' restarted)" = running ]
        [ "$(pm inspect -f '{{.State.Pid}}' restarted)" != "$pid1" ]
        run pm exec -d restarted sh -c 'echo detached >/tmp/d'
        [ "$status" -eq 0 ]
        for _ in $(seq 50); do
                [ "$(pm exec restarted cat /tmp/d 2>/dev/null)" = detached ] && break
                sleep 0.1
        done
        [ "$(pm exec restarted cat /tmp/d)" = detached ]
        pm rm -f -t 0 waited restarted >/dev/null
        assert_clean
}

@test "--privileged: the caller's capabilities and the host's devices" {
        run pm_run --rm --privileged "$PM_IMAGE" sh -c 'grep "^CapEff" /proc/self/status; test -e /dev/kmsg && echo kmsg'
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(echo "${lines[0]}" | awk '{print $2}')" = "$(awk '/^CapEff/ {print $2}' /proc/self/status)" ]
        [ "${lines[1]}" = kmsg ]
        assert_clean
}

@test "checkpoint: msp says it cannot, podman reports the failure" {
        run "$MSP" checkpoint --help
        [ "$status" -eq 0 ]
        run "$MSP" checkpoint cp
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"checkpoint: not supported"* ]]
        pm_run -d --name cp "$PM_IMAGE" sleep 1000 >/dev/null
        run pm container checkpoint cp
        echo "$output"
        [ "$status" -ne 0 ]
        [ "$(pm inspect -f '{{.State.Status}}' cp)" = running ]
        pm rm -f -t 0 cp >/dev/null
        assert_clean
}

@test "msp --log FILE --log-format json: one JSON object a line with msg, level, time" {
        log="$BATS_TEST_TMPDIR/oci-log"
        run "$MSP" --root "$BATS_TEST_TMPDIR/state" --log "$log" --log-format json state no-such-ctr
        [ "$status" -ne 0 ]
        cat "$log"
        [ "$(wc -l <"$log")" -ge 1 ]
        while read -r line; do
                echo "$line" | jq -e '(.msg | type == "string") and .level == "error" and
                        (.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$"))' >/dev/null
        done <"$log"
        grep -q 'no-such-ctr' "$log"
}

@test "meson install: both binaries and the containers.conf.d drop-in for msp" {
        build=${MSP_BUILD_ROOT:-$(cd "$(dirname "$MSP")/.." && pwd)}
        dest="$BATS_TEST_TMPDIR/dest"
        run meson install -C "$build" --no-rebuild --quiet --destdir "$dest"
        echo "$output"
        [ "$status" -eq 0 ]
        prefix=$(meson introspect "$build" --buildoptions |
                jq -r '.[] | select(.name == "prefix") | .value')
        [ -x "$dest$prefix/bin/msp" ]
        [ -x "$dest$prefix/bin/msp-mcp" ]
        dropin=$(find "$dest" -path '*/containers/containers.conf.d/50-msp.conf')
        echo "drop-in: $dropin"
        [ -n "$dropin" ]
        grep -qF "msp = [\"$prefix/bin/msp\"]" "$dropin"
        # podman accepts it: with the path pointed at the built msp it runs a container
        sed "s|$prefix/bin/msp|$MSP|" "$dropin" | pm_isolate >"$BATS_TEST_TMPDIR/c.conf"
        CONTAINERS_CONF="$BATS_TEST_TMPDIR/c.conf" run pm_run --rm "$PM_IMAGE" echo via-drop-in
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = via-drop-in ]
        assert_clean
}
