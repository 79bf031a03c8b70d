#!/usr/bin/env bats
# process.landlock (docs/LANDLOCK.md), tested by attack from inside the container. In
# every test the denied operation is tried before the allowed one, in the same process
# and domain, and where the errno could come from elsewhere (DAC, nothing listening) a
# run without Landlock shows what the same operation does unconfined.

load helpers

setup() {
        setup_bundle
        update_config '.process.noNewPrivileges = true'
}

teardown() {
        local p
        for p in ${KILL_PIDS:-}; do
                kill "$p" 2>/dev/null || true
                wait_pid_exit "$p" 5 || true
        done
        teardown_containers
}

# landlock JSON: set process.landlock.
landlock() {
        update_config ".process.landlock = $1"
}

ALL_FS='["execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file",
        "make_char", "make_dir", "make_reg", "make_sock", "make_fifo", "make_block",
        "make_sym", "refer", "truncate", "ioctl_dev"]'
RX='["execute", "read_file", "read_dir"]'
RW='["execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file",
        "make_dir", "make_reg", "make_sym", "refer", "truncate"]'

# The kernel's Landlock ABI (landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)).
kernel_abi() {
        python3 -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1))'
}

# abstract_listener NAME: a listener on @NAME in the caller's network namespace (the
# host's), accepting until killed (at most 60 s). Its pid is added to KILL_PIDS.
abstract_listener() {
        coproc LSN { python3 -c '
import signal, socket, sys
signal.alarm(60)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("\0" + sys.argv[1])
s.listen(8)
print("ready", flush=True)
while True:
    s.accept()[0].close()
' "$1" 3>&-; }
        KILL_PIDS="${KILL_PIDS:-} $LSN_PID"
        local ready
        read -r ready <&"${LSN[0]}"
        [ "$ready" = ready ]
}

@test "landlock: writes outside the allowed paths fail EACCES, inside /tmp they work" {
        landlock '{"handledAccess": {"handledAccessFS": '"$ALL_FS"'},
                "rules": {"pathBeneath": [
                        {"allowedAccess": '"$RX"', "paths": ["/"]},
                        {"allowedAccess": '"$RW"', "paths": ["/tmp"]}]}}'
        helper_run write /etc/msp-x -- write /root/x -- mkdir /home/d -- write /tmp/f -- read /tmp/f -- mkdir /tmp/d -- read /etc/passwd
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$(printf '%s\n' "$output" | grep '^write=' | head -n1)" = write=EACCES ]
        [ "$(printf '%s\n' "$output" | grep -c '^write=EACCES')" -eq 2 ]
        [ "$(printf '%s\n' "$output" | grep '^mkdir=' | head -n1)" = mkdir=EACCES ]
        [ "$(printf '%s\n' "$output" | grep '^write=' | tail -n1)" = write=ok ]
        [ "$(printf '%s\n' "$output" | grep '^mkdir=' | tail -n1)" = mkdir=ok ]
        [ "$(value read)" = ok ]
        [ ! -e "$BUNDLE/rootfs/etc/msp-x" ]
        assert_nothing_left "$CID"

        # unconfined, the same root writes /etc: the EACCES above was Landlock's
        update_config 'del(.process.landlock)'
        helper_run write /etc/msp-x
        [ "$(value write)" = ok ]
        assert_nothing_left "$CID"
}

@test "landlock: system directories are read-only and executable; unlisted ones unreadable" {
        landlock '{"handledAccess": {"handledAccessFS": '"$ALL_FS"'},
                "rules": {"pathBeneath": [
                        {"allowedAccess": '"$RX"', "paths": ["/bin", "/etc", "/usr", "/lib"]},
                        {"allowedAccess": ["write_file", "read_file"], "paths": ["/dev/null"]},
                        {"allowedAccess": '"$RW"', "paths": ["/tmp"]}]}}'
        echo secret >"$BUNDLE/rootfs/root/secret"
        set_args /bin/sh -c 'msp-helper write /etc/passwd -- write /bin/msp-x -- read /root/secret -- exec /bin/ls /home; cat /etc/passwd >/dev/null && echo cat=ok; ls /bin >/dev/null && echo ls=ok; cp /bin/msp-helper /tmp/h && /tmp/h exit 0 && echo tmp-exec=ok'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$(printf '%s\n' "$output" | grep -c '^write=EACCES')" -eq 2 ]
        # /root is not covered by any rule: nothing there can be opened
        [ "$(value read)" = EACCES ]
        [[ "$output" == *"ls: can't open '/home': Permission denied"* ]]
        [ "$(value cat)" = ok ]
        [ "$(value ls)" = ok ]
        [ "$(value tmp-exec)" = ok ]
        assert_nothing_left "$CID"
}

@test "landlock: rule paths are the container's, resolved after its mounts (a tmpfs, a host-only path)" {
        mkdir "$BUNDLE/rootfs/scratch"
        update_config '.mounts += [{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev"]}]'
        # $BUNDLE exists on the host only: in the container it is a missing path (skipped)
        landlock '{"handledAccess": {"handledAccessFS": '"$ALL_FS"'},
                "rules": {"pathBeneath": [
                        {"allowedAccess": '"$RX"', "paths": ["/"]},
                        {"allowedAccess": '"$RW"', "paths": ["/scratch", "'"$BUNDLE"'"]}]}}'
        helper_run write /root/f -- write /scratch/f
        echo "$output"
        [ "$(printf '%s\n' "$output" | grep '^write=' | head -n1)" = write=EACCES ]
        [ "$(printf '%s\n' "$output" | grep '^write=' | tail -n1)" = write=ok ]
        # the write went to the container's tmpfs, not to the rootfs directory under it
        [ ! -e "$BUNDLE/rootfs/scratch/f" ]
        assert_nothing_left "$CID"
}

@test "landlock: refer and truncate: cross-directory rename (EXDEV) and truncate (EACCES) only where granted" {
        mkdir -p "$BUNDLE"/rootfs/data/{lim,full}/{a,b}
        echo x >"$BUNDLE/rootfs/data/lim/a/f"
        echo x >"$BUNDLE/rootfs/data/full/a/f"
        landlock '{"handledAccess": {"handledAccessFS": '"$ALL_FS"'},
                "rules": {"pathBeneath": [
                        {"allowedAccess": '"$RX"', "paths": ["/"]},
                        {"allowedAccess": ["write_file", "read_file", "read_dir", "make_reg", "remove_file"], "paths": ["/data/lim"]},
                        {"allowedAccess": '"$RW"', "paths": ["/data/full"]}]}}'
        helper_run rename /data/lim/a/f /data/lim/b/f -- truncate /data/lim/a/f -- rename /data/full/a/f /data/full/b/f -- truncate /data/full/b/f
        echo "$output"
        [ "$(printf '%s\n' "$output" | grep '^rename=' | head -n1)" = rename=EXDEV ]
        [ "$(printf '%s\n' "$output" | grep '^truncate=' | head -n1)" = truncate=EACCES ]
        [ "$(printf '%s\n' "$output" | grep '^rename=' | tail -n1)" = rename=ok ]
        [ "$(printf '%s\n' "$output" | grep '^truncate=' | tail -n1)" = truncate=ok ]
        [ -s "$BUNDLE/rootfs/data/lim/a/f" ]
        [ -e "$BUNDLE/rootfs/data/full/b/f" ] && [ ! -s "$BUNDLE/rootfs/data/full/b/f" ]
        assert_nothing_left "$CID"
}

@test "landlock: ioctl_dev: a device ioctl is EACCES unless the device's rule grants it" {
        # control: unconfined, TCGETS on /dev/null reaches the driver (not a tty)
        helper_run ioctl-tcgets /dev/null
        echo "$output"
        [ "$(value ioctl)" = ENOTTY ]

        landlock '{"handledAccess": {"handledAccessFS": '"$ALL_FS"'},
                "rules": {"pathBeneath": [
                        {"allowedAccess": '"$RX"', "paths": ["/"]},
                        {"allowedAccess": ["read_file"], "paths": ["/dev/null"]},
                        {"allowedAccess": ["read_file", "ioctl_dev"], "paths": ["/dev/zero"]}]}}'
        helper_run ioctl-tcgets /dev/null -- ioctl-tcgets /dev/zero
        echo "$output"
        [ "$(printf '%s\n' "$output" | grep '^ioctl=' | head -n1)" = ioctl=EACCES ]
        [ "$(printf '%s\n' "$output" | grep '^ioctl=' | tail -n1)" = ioctl=ENOTTY ]
        assert_nothing_left "$CID"
}

@test "landlock: TCP connect and bind to unlisted ports are denied, listed ones work" {
        # control: unconfined, nothing listens on 5002 (refused) and 5003 can be bound
        helper_run connect 127.0.0.1 5002 -- bind 5003
        echo "$output"
        [ "$(value connect)" = ECONNREFUSED ]
        [ "$(value bind)" = ok ]

        landlock '{"handledAccess": {"handledAccessNetwork": ["bind", "connect"]},
                "rules": {"networkPort": [{"allowedAccess": ["bind", "connect"], "ports": [5001]}]}}'
        helper_run connect 127.0.0.1 5002 -- bind 5003 -- tcp-listen 5001 -- connect 127.0.0.1 5001
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$(printf '%s\n' "$output" | grep '^connect=' | head -n1)" = connect=EACCES ]
        [ "$(value bind)" = EACCES ]
        [ "$(value tcp-listen)" = ok ]
        [ "$(printf '%s\n' "$output" | grep '^connect=' | tail -n1)" = connect=ok ]
        assert_nothing_left "$CID"
}

@test "landlock: abstract unix socket outside the domain (host netns) is EPERM, inside works" {
        # the host's network namespace, where the test's listener lives
        update_config '.linux.namespaces |= map(select(.type != "network"))'
        name="msp-test-$$-$BATS_SUITE_TEST_NUMBER"
        abstract_listener "$name"

        # control: unconfined, the container reaches the host's listener
        helper_run abstract-connect "$name"
        echo "$output"
        [ "$(value abstract-connect)" = ok ]

        landlock '{"scoped": ["abstract_unix_socket"]}'
        helper_run abstract-connect "$name" -- abstract-listen "$name-in" -- abstract-connect "$name-in"
        echo "$output"
        [ "$status" -eq 1 ]
        [ "$(printf '%s\n' "$output" | grep '^abstract-connect=' | head -n1)" = abstract-connect=EPERM ]
        [ "$(value abstract-listen)" = ok ]
        [ "$(printf '%s\n' "$output" | grep '^abstract-connect=' | tail -n1)" = abstract-connect=ok ]
        assert_nothing_left "$CID"
}

@test "landlock: signals to a process outside the domain (host pid ns) are EPERM, inside work" {
        update_config '.linux.namespaces |= map(select(.type != "pid"))'
        sleep 60 3>&- &
        target=$!
        KILL_PIDS="$target"

        # control: unconfined, the container's root may signal it (signal 0: no effect)
        helper_run kill "$target" 0
        echo "$output"
        [ "$(value kill)" = ok ]

        landlock '{"scoped": ["signal"]}'
        set_args /bin/sh -c "msp-helper kill $target 15; sleep 30 & msp-helper kill \$! 15"
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "${lines[0]}" = kill=EPERM ]
        [ "${lines[1]}" = kill=ok ]
        kill -0 "$target"
        assert_nothing_left "$CID"
}

@test "landlock: strict mode (enableBestEffort false) with every right of ABI 7 runs and enforces" {
        [ "$(kernel_abi)" -ge 7 ] || skip "kernel Landlock ABI < 7"
        landlock '{"handledAccess": {"handledAccessFS": '"$ALL_FS"', "handledAccessNetwork": ["bind", "connect"]},
                "scoped": ["abstract_unix_socket", "signal"],
                "logging": {"sameExecOff": true, "subdomainsOff": true},
                "rules": {"pathBeneath": [
                        {"allowedAccess": '"$RX"', "paths": ["/"]},
                        {"allowedAccess": '"$RW"', "paths": ["/tmp"]}],
                        "networkPort": [{"allowedAccess": ["connect"], "ports": ["5001"]}]},
                "enableBestEffort": false}'
        helper_run write /etc/msp-x -- bind 5003 -- write /tmp/f
        echo "$output"
        [ "$(printf '%s\n' "$output" | grep '^write=' | head -n1)" = write=EACCES ]
        [ "$(value bind)" = EACCES ]
        [ "$(printf '%s\n' "$output" | grep '^write=' | tail -n1)" = write=ok ]
        assert_nothing_left "$CID"
}

@test "landlock: a missing rule path fails strict create, best effort skips it (--debug says so)" {
        landlock '{"handledAccess": {"handledAccessFS": '"$ALL_FS"'},
                "rules": {"pathBeneath": [
                        {"allowedAccess": '"$RX"', "paths": ["/", "/msp-no-such-dir"]},
                        {"allowedAccess": '"$RW"', "paths": ["/tmp"]}]},
                "enableBestEffort": false}'
        set_args /bin/msp-helper write /etc/msp-x -- write /tmp/f
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"open '/msp-no-such-dir'"* ]]
        assert_nothing_left "$CID"

        update_config '.process.landlock.enableBestEffort = true'
        run "$MSP" --debug --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" 3>&- </dev/null
        echo "$output"
        [[ "$output" == *"landlock: best effort, not enforced: missing path '/msp-no-such-dir' skipped"* ]]
        [ "$(printf '%s\n' "$output" | grep '^write=' | head -n1)" = write=EACCES ]
        [ "$(printf '%s\n' "$output" | grep '^write=' | tail -n1)" = write=ok ]
        assert_nothing_left "$CID"
}

@test "landlock: rule paths never follow the image's symlinks: /tmp -> / grants no write beneath /" {
        mkdir "$BUNDLE/rootfs/workspace"
        rm -rf "$BUNDLE/rootfs/tmp"
        ln -s / "$BUNDLE/rootfs/tmp"
        ln -s .. "$BUNDLE/rootfs/workspace/up"
        tmp="$BUNDLE/config.json.tmp"
        jq --slurpfile p "$REPO/contrib/profiles/landlock-default.json" \
                '.process.landlock = $p[0] | .process.landlock.rules.pathBeneath += [
                        {"allowedAccess": ["write_file", "make_reg"], "paths": ["/workspace/up/etc"]}]' \
                "$BUNDLE/config.json" >"$tmp"
        mv "$tmp" "$BUNDLE/config.json"
        # The attack: the default profile's "write beneath /tmp" (and a rule through a
        # symlinked component) must not become "write beneath /" or "/etc".
        set_args /bin/msp-helper write /etc/msp-x -- write /msp-x -- write /tmp/msp-x -- write /workspace/f
        run "$MSP" --debug --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" 3>&- </dev/null
        echo "$output"
        [ "$(printf '%s\n' "$output" | grep -c '^write=EACCES')" -eq 3 ]
        [ "$(printf '%s\n' "$output" | grep '^write=' | tail -n1)" = write=ok ]
        [[ "$output" == *"symlinked path '/tmp' skipped"* ]]
        [[ "$output" == *"symlinked path '/workspace/up/etc' skipped"* ]]
        [ ! -e "$BUNDLE/rootfs/etc/msp-x" ] && [ ! -e "$BUNDLE/rootfs/msp-x" ]
        assert_nothing_left "$CID"
        # Strict mode refuses the rule, naming it.
        landlock '{"handledAccess": {"handledAccessFS": '"$ALL_FS"'},
                "rules": {"pathBeneath": [
                        {"allowedAccess": '"$RX"', "paths": ["/"]},
                        {"allowedAccess": '"$RW"', "paths": ["/tmp"]}]},
                "enableBestEffort": false}'
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"process.landlock.rules.pathBeneath: '/tmp' is or passes through a symlink"* ]]
        assert_nothing_left "$CID"
}

@test "landlock: process.landlock without noNewPrivileges fails create with a clear message" {
        update_config '.process.noNewPrivileges = false'
        landlock '{"scoped": ["signal"]}'
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"process.landlock requires process.noNewPrivileges to be true"* ]]
        assert_nothing_left "$CID"
}

@test "landlock: contrib/profiles/landlock-default.json: normal work in /workspace and /tmp; /etc and TCP blocked" {
        mkdir "$BUNDLE/rootfs/workspace"
        tmp="$BUNDLE/config.json.tmp"
        jq --slurpfile p "$REPO/contrib/profiles/landlock-default.json" \
                '.process.landlock = $p[0] | .process.env += ["HOME=/workspace"] | .process.cwd = "/workspace"' \
                "$BUNDLE/config.json" >"$tmp"
        mv "$tmp" "$BUNDLE/config.json"
        set_args /bin/sh -c 'msp-helper write /etc/msp-x -- write /usr/msp-x -- connect 127.0.0.1 5002 -- bind 5003; echo hi >f && cat f >/dev/null && mkdir d && mv f d/g && ls d >/dev/null && rm -r d && echo x >/tmp/t && cat /tmp/t >/dev/null && rm /tmp/t && ls /usr >/dev/null && echo work=ok; cat /etc/passwd >/dev/null && echo read=ok'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$(printf '%s\n' "$output" | grep -c '^write=EACCES')" -eq 2 ]
        [ "$(value connect)" = EACCES ]
        [ "$(value bind)" = EACCES ]
        [ "$(value work)" = ok ]
        [ "$(value read)" = ok ]
        [ ! -e "$BUNDLE/rootfs/etc/msp-x" ]
        assert_nothing_left "$CID"
}

@test "landlock: both contrib profiles together (Landlock + seccomp) still run normal work" {
        mkdir "$BUNDLE/rootfs/workspace"
        tmp="$BUNDLE/config.json.tmp"
        jq --slurpfile l "$REPO/contrib/profiles/landlock-default.json" \
                --slurpfile s "$REPO/contrib/profiles/seccomp-default.json" \
                '.process.landlock = $l[0] | .linux.seccomp = $s[0] | .process.cwd = "/workspace"' \
                "$BUNDLE/config.json" >"$tmp"
        mv "$tmp" "$BUNDLE/config.json"
        set_args /bin/sh -c 'msp-helper write /etc/msp-x -- syscall keyctl -- seccomp; echo hi >f && cat f >/dev/null && echo work=ok'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$(value write)" = EACCES ]
        [ "$(value syscall.keyctl)" = EPERM ]
        [ "$(value Seccomp)" = 2 ]
        [ "$(value work)" = ok ]
        assert_nothing_left "$CID"
}

@test "landlock: features reports linux.landlock with the kernel's ABI and its rights" {
        abi=$(kernel_abi)
        run msp features
        [ "$status" -eq 0 ]
        echo "$output" | jq -c .linux.landlock
        if [ "$abi" -le 0 ]; then
                [ "$(jq -r .linux.landlock.enabled <<<"$output")" = false ]
                return
        fi
        [ "$(jq -r .linux.landlock.enabled <<<"$output")" = true ]
        [ "$(jq -r .linux.landlock.abi <<<"$output")" = "$abi" ]
        fs=$(jq -r '.linux.landlock.handledAccessFS | length' <<<"$output")
        # ABI 1: 13 rights, 2: +refer, 3: +truncate, 5: +ioctl_dev
        want=13
        [ "$abi" -ge 2 ] && want=14
        [ "$abi" -ge 3 ] && want=15
        [ "$abi" -ge 5 ] && want=16
        [ "$fs" -eq "$want" ]
        if [ "$abi" -ge 4 ]; then
                [ "$(jq -c .linux.landlock.handledAccessNetwork <<<"$output")" = '["bind","connect"]' ]
        fi
        if [ "$abi" -ge 6 ]; then
                [ "$(jq -c .linux.landlock.scoped <<<"$output")" = '["abstract_unix_socket","signal"]' ]
        fi
        # the restrict_self logging flags of ABI 7, named as in process.landlock.logging
        if [ "$abi" -ge 7 ]; then
                [ "$(jq -c .linux.landlock.logging <<<"$output")" = '["sameExecOff","newExecOn","subdomainsOff"]' ]
        else
                [ "$(jq -c .linux.landlock.logging <<<"$output")" = '[]' ]
        fi
}

@test "landlock: with seccomp in a new user namespace (root inside is uid 100000 outside)" {
        update_config '.linux.namespaces += [{"type": "user"}] |
                .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}] |
                .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
        chown -R 100000:100000 "$BUNDLE/rootfs"
        make_traversable "$BUNDLE"
        landlock '{"handledAccess": {"handledAccessFS": '"$ALL_FS"'},
                "scoped": ["signal"],
                "rules": {"pathBeneath": [
                        {"allowedAccess": '"$RX"', "paths": ["/"]},
                        {"allowedAccess": '"$RW"', "paths": ["/tmp"]}]}}'
        update_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
                {"names": ["add_key"], "action": "SCMP_ACT_ERRNO", "errnoRet": 122}]}'
        helper_run ids -- write /etc/msp-x -- syscall add_key -- write /tmp/f -- seccomp
        echo "$output"
        [ "$(value uid)" = 0 ]
        [ "$(printf '%s\n' "$output" | grep '^write=' | head -n1)" = write=EACCES ]
        [ "$(value syscall.add_key)" = EDQUOT ]
        [ "$(printf '%s\n' "$output" | grep '^write=' | tail -n1)" = write=ok ]
        [ "$(value Seccomp)" = 2 ]
        assert_nothing_left "$CID"
}
