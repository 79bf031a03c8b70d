#!/usr/bin/env bats
# CVE-2019-5736 rootless (docs/SECURITY_MODEL.md, "When no copy is needed"): msp run by
# the unprivileged test user (tests/helper/test-user.sh) cannot make the read-only view
# of its binary; it leaves /proc/self/exe as the file only when no id the container can
# hold may write it (owner neither the user nor mapped into the container, no group or
# other write, no ACL: runtime/lib/selfexe-rule.h), and runs from a sealed memfd copy
# otherwise. The containers map the user as root and the user's /etc/subuid range as
# 1..65536, and the attacker holds every capability of its user namespace.

load helpers

setup_file() {
        command -v setpriv >/dev/null || skip "setpriv (util-linux) is not installed"
        command -v newuidmap >/dev/null || skip "newuidmap (Debian uidmap) is not installed"
        eval "$("$REPO/tests/helper/test-user.sh" ensure)"
        export MSP_TEST_UID MSP_TEST_GID MSP_TEST_SUBID_START MSP_TEST_SUBID_COUNT
}

setup() {
        RL_UID=$MSP_TEST_UID
        RL_GID=$MSP_TEST_GID
        setup_bundle
        RL_MSP="$BATS_TEST_TMPDIR/msp"
        RL_RUN="$BATS_TEST_TMPDIR/xdg"
        mkdir -p "$RL_RUN"
        chown -R "$RL_UID:$RL_GID" "$BUNDLE" "$RL_RUN"
        make_traversable "$BUNDLE"
        STATE_ROOT="$RL_RUN/msp"
        install -m 0755 "$MSP" "$RL_MSP"
        (cd "$BUNDLE" && rm config.json && rl_msp spec --rootless)
        local all='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_DAC_READ_SEARCH","CAP_FOWNER","CAP_SYS_PTRACE","CAP_SETUID","CAP_SETGID","CAP_KILL"]'
        update_config ".process.terminal = false | .root.readonly = false |
                .linux.uidMappings = [{containerID: 0, hostID: $RL_UID, size: 1},
                        {containerID: 1, hostID: $MSP_TEST_SUBID_START, size: 65536}] |
                .linux.gidMappings = [{containerID: 0, hostID: $RL_GID, size: 1},
                        {containerID: 1, hostID: $MSP_TEST_SUBID_START, size: 65536}] |
                .process.capabilities = {bounding: $all, effective: $all, permitted: $all}"
        chown "$RL_UID:$RL_GID" "$BUNDLE/config.json"
        # the exploit's "binary": a script whose interpreter is /proc/self/exe, so that
        # whoever execs it runs the exe of msp exec's process inside the container;
        # --log on a fifo holds that msp there
        printf '#!/proc/self/exe --log=/hold\n' >"$BUNDLE/rootfs/bin/evil"
        # a dynamic msp (the sanitizer build) runs inside only with its libraries there
        local lib
        for lib in $(ldd "$RL_MSP" 2>/dev/null | grep -o '/[^ ]*'); do
                mkdir -p "$BUNDLE/rootfs$(dirname "$lib")"
                cp -L "$lib" "$BUNDLE/rootfs$lib"
        done
        chmod 755 "$BUNDLE/rootfs/bin/evil"
        mkfifo "$BUNDLE/rootfs/hold" "$BUNDLE/rootfs/sync"
        chown "$RL_UID:$RL_GID" "$BUNDLE/rootfs/hold" "$BUNDLE/rootfs/sync"
}

teardown() {
        teardown_containers
}

rl_msp() {
        XDG_RUNTIME_DIR="$RL_RUN" setpriv --reuid="$RL_UID" --regid="$RL_GID" --clear-groups \
                --inh-caps=-all "$RL_MSP" "$@" 3>&-
}

# rl_start_sleeper: a running container, its init pid in $init, the kind of the parked
# init's exe (msp's, before start) in $init_exe.
rl_start_sleeper() {
        set_args /bin/msp-helper sleep-forever
        rl_msp create -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/create.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/create.out"; return 1; }
        init=$(rl_msp state "$CID" | jq -r .pid)
        init_exe=$(exe_protection "$init")
        rl_msp start "$CID"
}

# exec_exe: the kind of /proc/PID/exe (exe_protection) of a running `msp exec`.
exec_exe() {
        # a simple command, so that $! is msp's pid (setpriv execs it)
        XDG_RUNTIME_DIR="$RL_RUN" setpriv --reuid="$RL_UID" --regid="$RL_GID" --clear-groups \
                --inh-caps=-all "$RL_MSP" exec "$CID" /bin/msp-helper write /sync -- read /sync \
                >"$BATS_TEST_TMPDIR/exec.out" 2>&1 </dev/null 3>&- &
        local execpid=$!
        timeout 10 cat "$BUNDLE/rootfs/sync" >/dev/null
        # (an exec that ended before its process synced says why)
        kill -0 "$execpid" 2>/dev/null || { echo "msp exec ended early:" >&2; cat "$BATS_TEST_TMPDIR/exec.out" >&2; }
        exe_protection "$execpid"
        timeout 10 sh -c 'echo go >"$1"' _ "$BUNDLE/rootfs/sync"
        wait "$execpid"
}

# attack: the published exploit through msp exec. Sets $evil_ran; when it ran, $output
# holds the attacker's results (held /proc/<evil>/exe: write, read-write, chmod while
# the runtime is there, reopen for writing after it left).
attack() {
        evil_ran=0
        if ! rl_msp exec --detach --pid-file "$RL_RUN/evil.pid" "$CID" /bin/evil </dev/null \
                >"$BATS_TEST_TMPDIR/evil.out" 2>&1; then
                cat "$BATS_TEST_TMPDIR/evil.out"
                return 0
        fi
        evil_ran=1
        local evil
        evil=$(cat "$RL_RUN/evil.pid")
        evil_exe=$(exe_protection "$evil")
        exe_attack rl_msp "$CID" "$evil" "$RL_RUN"
}

stop_sleeper() {
        rl_msp kill "$CID" KILL
        wait_pid_exit "$init"
        rl_msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "rootless CVE-2019-5736: a root-owned 0755 msp is not copied; container root cannot write or chmod it" {
        before=$(sha256sum <"$RL_MSP")
        rl_start_sleeper
        # no copy: the parked init was msp itself, msp exec runs from the file
        [ "$init_exe" = exposed ]
        [ "$(exec_exe)" = exposed ]
        attack
        [ "$evil_ran" = 1 ]
        [ "$evil_exe" = exposed ]
        [ "$(value exe.hold)" = ok ]
        [ "$(value exe.link)" != "/memfd:msp (deleted)" ]
        [ "$(value exe.write)" = EACCES ]
        [ "$(value exe.rdwr)" = EACCES ]
        [ "$(value exe.chmod)" = EPERM ]
        [ "$(value exe.reopen)" = EACCES ]
        [ "$(value exe.overwrite)" != ok ]
        [ "$(sha256sum <"$RL_MSP")" = "$before" ]
        [ "$(stat -c %u:%a "$RL_MSP")" = 0:755 ]
        stop_sleeper
}

@test "rootless CVE-2019-5736: an msp the user owns runs from the sealed copy (init, run, exec); the exploit finds only the copy" {
        chown "$RL_UID" "$RL_MSP"
        before=$(sha256sum <"$RL_MSP")
        # create's parked init
        set_args /bin/msp-helper sleep-forever
        rl_msp create -b "$BUNDLE" "$CID" >/dev/null 2>&1 </dev/null
        init=$(rl_msp state "$CID" | jq -r .pid)
        [ "$(exe_protection "$init")" = sealed-memfd ]
        [ "$(readlink /proc/"$init"/exe)" = "/memfd:msp (deleted)" ]
        rl_msp start "$CID"
        # msp exec while its process runs
        [ "$(exec_exe)" = sealed-memfd ]
        attack
        # the memfd as interpreter fails the exec (ENOENT); where it runs, the copy is all
        # the attacker reaches
        if [ "$evil_ran" = 1 ]; then
                [ "$evil_exe" = sealed-memfd ]
                [ "$(value exe.link)" = "/memfd:msp (deleted)" ]
                [ "$(value exe.overwrite)" != ok ]
        fi
        [ "$(sha256sum <"$RL_MSP")" = "$before" ]
        stop_sleeper
        # msp run, which stays while the container runs
        set_args /bin/msp-helper write /sync -- read /sync
        XDG_RUNTIME_DIR="$RL_RUN" setpriv --reuid="$RL_UID" --regid="$RL_GID" --clear-groups \
                --inh-caps=-all "$RL_MSP" run -b "$BUNDLE" "$CID-run" \
                >"$BATS_TEST_TMPDIR/run.out" 2>&1 </dev/null 3>&- &
        runpid=$!
        timeout 10 cat "$BUNDLE/rootfs/sync" >/dev/null
        exe=$(exe_protection "$runpid")
        timeout 10 sh -c 'echo go >"$1"' _ "$BUNDLE/rootfs/sync"
        wait "$runpid"
        [ "$exe" = sealed-memfd ]
        assert_nothing_left "$CID-run"
}

@test "rootless CVE-2019-5736: an msp owned by a subuid the container maps is re-executed from the copy (create, exec); unmapped, it is not" {
        owner=$((MSP_TEST_SUBID_START + 5))
        chown "$owner" "$RL_MSP"
        rl_start_sleeper
        [ "$init_exe" = sealed-memfd ]
        [ "$(exec_exe)" = sealed-memfd ]
        stop_sleeper
        # the one-id mapping (the user alone) does not hold that owner: no copy
        update_config ".linux.uidMappings = [{containerID: 0, hostID: $RL_UID, size: 1}] |
                .linux.gidMappings = [{containerID: 0, hostID: $RL_GID, size: 1}]"
        chown "$RL_UID:$RL_GID" "$BUNDLE/config.json"
        rl_start_sleeper
        [ "$init_exe" = exposed ]
        [ "$(exec_exe)" = exposed ]
        stop_sleeper
}
