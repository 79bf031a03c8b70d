#!/usr/bin/env bats
# Container escapes, each written as the attack (docs/SECURITY_MODEL.md, "Known container
# escapes"): a legitimate control case succeeds first, then the attack must fail, and
# afterwards nothing outside the container changed (files, mounts, the msp binary).

load helpers

setup() {
        ORIG_MSP=$MSP
        setup_bundle
        OUTSIDE="$BATS_TEST_TMPDIR/outside"
        mkdir -p "$OUTSIDE/dir"
        echo host-secret >"$OUTSIDE/secret"
}

teardown() {
        MSP=$ORIG_MSP   # the CVE-2019-5736 test runs a copy, which a working attack breaks
        if [ -n "${RACER:-}" ]; then
                kill "$RACER" 2>/dev/null || true
                wait "$RACER" 2>/dev/null || true
        fi
        teardown_containers
}

# outside_snapshot: the outside dir's tree (name, type, mode, size, content hash) and the
# host mounts that mention it; compared before and after an attack.
outside_snapshot() {
        (cd "$OUTSIDE" && find . -printf '%p %y %m %s\n' | sort &&
                find . -type f -exec sha256sum {} + | sort)
        grep -F "$OUTSIDE" /proc/self/mountinfo || true
}

# try_create ID: create that must fail (a success would leave an init holding our
# stdio, so it is never run under `run`); $status and $output as from run.
try_create() {
        local out="$BATS_TEST_TMPDIR/$1.create"
        status=0
        msp create -b "$BUNDLE" "$1" >"$out" 2>&1 </dev/null || status=$?
        output=$(cat "$out")
}

# without_dev_mount: let the image's own /dev be used (no tmpfs over it), so that what
# the image put there (symlinks) is what msp finds.
without_dev_mount() {
        update_config '.mounts |= map(select(.destination != "/dev"))'
}

# image_dev_null: a real /dev/null in the image (msp creates the default devices only
# in a /dev it mounts or an empty one, and masking needs a verified /dev/null).
image_dev_null() {
        mkdir -p "$BUNDLE/rootfs/dev"
        mknod -m 666 "$BUNDLE/rootfs/dev/null" c 1 3
}

# ---- CVE-2019-5736: the runtime binary ----

@test "CVE-2019-5736: the container cannot overwrite msp through /proc/<init>/exe" {
        # The attack targets a copy, so that a failing defence damages nothing else.
        cp "$MSP" "$BATS_TEST_TMPDIR/msp"
        MSP="$BATS_TEST_TMPDIR/msp"
        before=$(sha256sum <"$MSP")
        # A: created, not started: its init is msp code parked inside the container.
        set_args /bin/msp-helper sleep-forever
        create_bg "$CID-a"
        apid=$(state_field "$CID-a" pid)
        [[ "$(exe_protection "$apid")" == @(sealed-memfd|ro-view) ]]
        update_config ".linux.cgroupsPath = \"/$CGROUP_PREFIX/$CID-b\" |
                .linux.namespaces |= map(if .type == \"pid\" then .path = \"/proc/$apid/ns/pid\" else . end)"
        # B shares A's pid namespace. Control: its own environ reads; the parked init is
        # non-dumpable, so its environ and exe are closed to B.
        set_args /bin/msp-helper read /proc/self/environ -- read /proc/1/environ -- open-write /proc/1/exe
        run msp run -b "$BUNDLE" "$CID-b" </dev/null
        echo "$output"
        [ "${lines[0]}" = read=ok ]
        [[ "$output" == *$'\nread=EACCES\n'* ]]
        [ "$(value open-write)" = EACCES ]
        # The published exploit, by a B that may even ptrace (CAP_SYS_PTRACE and
        # DAC_OVERRIDE pass the dumpable check): hold /proc/1/exe while the runtime is
        # inside, reopen it for writing once the runtime has left.
        set_caps "CAP_SYS_PTRACE CAP_DAC_OVERRIDE" "CAP_SYS_PTRACE CAP_DAC_OVERRIDE" \
                "CAP_SYS_PTRACE CAP_DAC_OVERRIDE" "" ""
        mkfifo "$BUNDLE/rootfs/sync"
        set_args /bin/msp-helper overwrite-exe 1 /sync
        create_bg "$CID-b"
        bpid=$(state_field "$CID-b" pid)
        msp start "$CID-b"
        timeout 10 sh -c 'echo >"$1"' _ "$BUNDLE/rootfs/sync"   # B holds /proc/1/exe
        msp start "$CID-a"                                        # the runtime leaves A
        timeout 10 sh -c 'echo >"$1"' _ "$BUNDLE/rootfs/sync"   # B reopens it
        wait_pid_exit "$bpid"
        output=$(cat "$BATS_TEST_TMPDIR/$CID-b.out")
        echo "$output"
        [ "$(value exe.hold)" = ok ]
        # The sealed copy, or the read-only view, whose mount is attached nowhere and
        # so has no path: it reads as its own root.
        [[ "$(value exe.link)" == @("/memfd:msp (deleted)"|/) ]]
        [ "$(value exe.write)" != ok ]
        # The memfd opens for writing but its seals refuse the write; the view refuses
        # the open.
        [ "$(value exe.link)" != / ] || [ "$(value exe.reopen)" = EROFS ]
        [ "$(value exe.overwrite)" != ok ]
        [ "$(sha256sum <"$MSP")" = "$before" ]
        MSP=$ORIG_MSP
        msp kill "$CID-a" KILL
        wait_pid_exit "$apid"
        msp delete "$CID-a"
        msp delete "$CID-b"
        assert_nothing_left "$CID-a"
        assert_nothing_left "$CID-b"
}

@test "CVE-2019-5736: the init's executable cannot be written, resized or made writable; state and kill leave it" {
        set_args /bin/msp-helper sleep-forever
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        kind=$(exe_protection "$pid")
        # From the host side, with every privilege: the seals, or the read-only view that
        # no mount namespace holds (so neither mount_setattr nor a clone can reach it).
        run /usr/bin/python3 - "/proc/$pid/exe" <<'PY'
import ctypes, fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
libc = ctypes.CDLL(None, use_errno=True)
def res(r):
    return "ok" if r >= 0 else os.strerror(ctypes.get_errno())
try:
    print("seals=%#x" % fcntl.fcntl(fd, 1034))  # F_GET_SEALS
except OSError:
    attr = (ctypes.c_uint64 * 4)(0, 0x1, 0, 0)   # attr_clr = MOUNT_ATTR_RDONLY
    print("remount-rw=" + res(libc.syscall(442, fd, b"", 0x1000, attr, 32)))
    print("clone=" + res(libc.syscall(428, fd, b"", 0x1 | 0x1000)))  # OPEN_TREE_CLONE
for what, f in (("write", lambda w: os.pwrite(w, b"x", 0)), ("truncate", lambda w: os.ftruncate(w, 0))):
    try:
        w = os.open("/proc/self/fd/%d" % fd, os.O_WRONLY)
        f(w)
        print(what + "=ok")
    except OSError as e:
        print(what + "=" + (os.strerror(e.errno)))
PY
        echo "$kind"
        echo "$output"
        if [ "$kind" = sealed-memfd ]; then
                # SEAL|SHRINK|GROW|WRITE = 0xf (0x2f with F_SEAL_EXEC)
                [ $(( $(value seals) & 0xf )) -eq $((0xf)) ]
        else
                [ "$kind" = ro-view ]
                [ "$(value remount-rw)" != ok ]
                [ "$(value clone)" != ok ]
        fi
        [ "$(value write)" != ok ]
        [ "$(value truncate)" != ok ]
        # Commands that do not enter a container run from the file, however the global
        # options before them are spelled (an option's value is not the command).
        for cmd in "--root $STATE_ROOT state $CID" "--root=$STATE_ROOT --debug list" \
                "--log-format text --root $STATE_ROOT kill $CID 0" \
                "--cgroup-manager cgroupfs --root $STATE_ROOT ps $CID" \
                "--root $STATE_ROOT --log-level info state create"; do
                run strace -f -qq -e trace=memfd_create,open_tree "$MSP" $cmd
                echo "$cmd: $output"
                [[ "$output" != *memfd_create* && "$output" != *open_tree* ]]
        done
        msp kill "$CID" KILL
        wait_pid_exit "$pid"
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "CVE-2019-5736: msp run, which stays while the container runs, has the protected exe too" {
        mkfifo "$BUNDLE/rootfs/sync"
        set_args /bin/msp-helper write /sync -- read /sync
        "$MSP" --root "$STATE_ROOT" --debug run -b "$BUNDLE" "$CID" \
                >"$BATS_TEST_TMPDIR/run.out" 2>&1 </dev/null 3>&- &
        runpid=$!
        timeout 10 cat "$BUNDLE/rootfs/sync"        # the process runs
        exe=$(exe_protection "$runpid")
        timeout 10 sh -c 'echo go >"$1"' _ "$BUNDLE/rootfs/sync"
        wait "$runpid"
        cat "$BATS_TEST_TMPDIR/run.out"
        [[ "$exe" == @(sealed-memfd|ro-view) ]]
        [[ "$(cat "$BATS_TEST_TMPDIR/run.out")" == *content=go* ]]
        assert_nothing_left "$CID"
}

@test "CVE-2019-5736: msp exec, the runtime that enters a live container, has the protected exe" {
        set_args /bin/msp-helper sleep-forever
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        mkfifo "$BUNDLE/rootfs/sync"
        "$MSP" --root "$STATE_ROOT" exec "$CID" /bin/msp-helper write /sync -- read /sync \
                >"$BATS_TEST_TMPDIR/exec.out" 2>&1 </dev/null 3>&- &
        execpid=$!
        timeout 10 cat "$BUNDLE/rootfs/sync"        # the exec'd process runs
        exe=$(exe_protection "$execpid")
        timeout 10 sh -c 'echo go >"$1"' _ "$BUNDLE/rootfs/sync"
        wait "$execpid"
        cat "$BATS_TEST_TMPDIR/exec.out"
        [[ "$exe" == @(sealed-memfd|ro-view) ]]
        [[ "$(cat "$BATS_TEST_TMPDIR/exec.out")" == *content=go* ]]
        msp kill "$CID" KILL
        wait_pid_exit "$pid"
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "CVE-2019-5736: the published exploit (#!/proc/self/exe run by msp exec) does not reach the binary" {
        cp "$MSP" "$BATS_TEST_TMPDIR/msp"
        MSP="$BATS_TEST_TMPDIR/msp"
        before=$(sha256sum <"$MSP")
        set_args /bin/msp-helper sleep-forever
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        # The image's "binary" is a script whose interpreter is /proc/self/exe: whoever
        # execs it runs the runtime's own executable inside the container. --log on a
        # fifo holds that runtime there until we read the fifo.
        printf '#!/proc/self/exe --log=/hold\n' >"$BUNDLE/rootfs/bin/evil"
        chmod 755 "$BUNDLE/rootfs/bin/evil"
        mkfifo "$BUNDLE/rootfs/hold" "$BUNDLE/rootfs/sync"
        # (With the sealed memfd copy, the execve of the script by msp exec's child fails
        # with ENOENT for the /proc/self/exe interpreter, so the exploit stops at its
        # first step. With the read-only view it runs msp inside; then it must find
        # only that view.)
        status=0
        msp exec --detach --pid-file "$BATS_TEST_TMPDIR/evil.pid" "$CID" /bin/evil </dev/null \
                >"$BATS_TEST_TMPDIR/evil.out" 2>&1 || status=$?
        cat "$BATS_TEST_TMPDIR/evil.out"
        if [ "$status" -eq 0 ]; then
                evil=$(cat "$BATS_TEST_TMPDIR/evil.pid")
                # The attacker: an unprivileged process of the container (config caps),
                # detached so that no msp process is left running once evil is gone.
                exe_attack msp "$CID" "$evil" "$BATS_TEST_TMPDIR"
                [[ "$(value exe.link)" == @("/memfd:msp (deleted)"|/) ]]
                [ "$(value exe.write)" != ok ]
                [ "$(value exe.link)" != / ] || [ "$(value exe.reopen)" = EROFS ]
                [ "$(value exe.overwrite)" != ok ]
        else
                [[ "$(cat "$BATS_TEST_TMPDIR/evil.out")" == *"exec '/bin/evil'"* ]]
        fi
        [ "$(sha256sum <"$MSP")" = "$before" ]
        MSP=$ORIG_MSP
        msp kill "$CID" KILL
        wait_pid_exit "$pid"
        msp delete "$CID"
        assert_nothing_left "$CID"
}

# ---- CVE-2016-9962 / CVE-2024-21626: fds and cwd ----

@test "CVE-2016-9962, CVE-2024-21626: no runtime fd inside; cwd /proc/self/fd/N is refused" {
        # Control: a plain cwd works, and only 0-2 are open even when the caller of msp
        # holds host directories open (they must not reach the container).
        mkdir -p "$BUNDLE/rootfs/work"
        update_config '.process.cwd = "/work"'
        set_args /bin/msp-helper cwd -- fds
        run msp run -b "$BUNDLE" "$CID" </dev/null 5</ 6</sys/fs/cgroup 7<"$OUTSIDE"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$output" = cwd=/work ]
        # The attack: cwd through a leaked fd, for every fd number the runtime and the
        # caller use.
        for n in 3 4 5 6 7 8 9 10; do
                update_config ".process.cwd = \"/proc/self/fd/$n\""
                try_create "$CID"
                echo "fd $n: $output"
                [ "$status" -ne 0 ]
                [[ "$output" == *process.cwd* ]]
                assert_nothing_left "$CID"
        done 5</ 6</sys/fs/cgroup 7<"$OUTSIDE"
        # ... or through a symlink in the image to such a path, or one escaping the root
        ln -s /proc/self/fd/7 "$BUNDLE/rootfs/fdlink"
        update_config '.process.cwd = "/fdlink"'
        try_create "$CID" 7<"$OUTSIDE"
        echo "$output"
        [ "$status" -ne 0 ]
        assert_nothing_left "$CID"
        ln -s ../../../../../../../../.. "$BUNDLE/rootfs/escape"
        update_config '.process.cwd = "/escape"'
        set_args /bin/msp-helper cwd -- stat ./secret
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$(value cwd)" = / ]
        [ "$(value stat)" = ENOENT ]
        assert_nothing_left "$CID"
}

# activated PID_EXPR [MSP ARGS...]: exec msp (run) with a listening AF_UNIX socket at
# fd 3, LISTEN_FDS=1 and LISTEN_PID=PID_EXPR (a Python expression; `pid` is msp's own).
activated() {
        local pid_expr=$1
        shift
        /usr/bin/python3 - "$pid_expr" "$BATS_TEST_TMPDIR/sock" "$MSP" --root "$STATE_ROOT" "$@" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[2])
s.listen()
os.dup2(s.fileno(), 3)
pid = os.getpid()
os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(eval(sys.argv[1])))
os.execv(sys.argv[3], sys.argv[3:])
PY
}

@test "stale LISTEN_FDS: the caller's fd 3 reaches the container only when LISTEN_PID is msp's pid" {
        update_config '.process.env = ["PATH=/bin"]'
        set_args /bin/msp-helper env -- fds -- stat /proc/self/fd/3/etc/hostname
        # The attack: fd 3 of the caller is a directory of the host's /, LISTEN_FDS=1 is
        # left over from an ancestor (LISTEN_PID names another process, or none).
        for pid in "LISTEN_PID=$$" "LISTEN_PID=1" "LISTEN_PID=x" ""; do
                run env LISTEN_FDS=1 $pid "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" </dev/null 3</
                echo "$pid: $output"
                [ "$(printf '%s\n' "$output" | grep -c '^fd\.')" -eq 0 ]
                [ "$(printf '%s\n' "$output" | grep -c '^env\.LISTEN_')" -eq 0 ]
                [ "$(value stat)" = ENOENT ]
                assert_nothing_left "$CID"
        done
        # Control: socket activation as systemd does it, LISTEN_PID naming msp: the
        # listening socket is fd 3 inside, with LISTEN_FDS=1 and LISTEN_PID=1.
        set_args /bin/msp-helper env -- fds
        run activated pid run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value env.LISTEN_FDS)" = 1 ]
        [ "$(value env.LISTEN_PID)" = 1 ]
        [[ "$(value fd.3)" == socket:* ]]
        [ "$(printf '%s\n' "$output" | grep -c '^fd\.')" -eq 1 ]
        assert_nothing_left "$CID"
}

# ---- CVE-2021-30465, CVE-2024-45310, CVE-2019-19921: symlinked mount targets ----

@test "CVE-2021-30465, CVE-2024-45310: bind-mount destinations symlinked to a host dir mount inside or fail" {
        mkdir -p "$BATS_TEST_TMPDIR/src"
        echo from-src >"$BATS_TEST_TMPDIR/src/file"
        snap=$(outside_snapshot)
        # Control: a plain destination gets the bind mount.
        update_config ".mounts += [{\"destination\": \"/data\", \"type\": \"bind\",
                \"source\": \"$BATS_TEST_TMPDIR/src\", \"options\": [\"rbind\"]}]"
        helper_run read /data/file
        echo "$output"
        [ "$(value content)" = from-src ]
        # The attack: the destination (or a parent of it) is a symlink to the outside
        # dir, absolute or with enough ../ to leave the rootfs.
        for link in "$OUTSIDE" "../../../../../../../../..$OUTSIDE"; do
                for dest in /data /data/dir/sub; do
                        rm -rf "$BUNDLE/rootfs/data"
                        ln -s "$link" "$BUNDLE/rootfs/data"
                        update_config ".mounts[-1].destination = \"$dest\""
                        helper_run read "$dest/file"
                        echo "$link $dest: $status $output"
                        # mounted inside (the symlink resolved beneath the root) or refused
                        [ "$status" -ne 0 ] || [ "$(value content)" = from-src ]
                        [ "$(outside_snapshot)" = "$snap" ]
                        assert_nothing_left "$CID"
                done
        done
}

# race_exchange A B...: in the background, swap each pair of paths with
# renameat2(RENAME_EXCHANGE) as fast as possible (a second container sharing the volume,
# done from the host); its pid is in $RACER.
race_exchange() {
        /usr/bin/python3 - "$@" 3>&- <<'PY' &
import ctypes, sys
l = ctypes.CDLL(None, use_errno=True)
pairs = [(sys.argv[i].encode(), sys.argv[i + 1].encode()) for i in range(1, len(sys.argv), 2)]
while True:
    for a, b in pairs:
        l.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE
PY
        RACER=$!
}

@test "CVE-2021-30465, CVE-2019-19921: destinations raced between a dir and a host symlink never escape" {
        mkdir -p "$BATS_TEST_TMPDIR/src"
        echo from-src >"$BATS_TEST_TMPDIR/src/file"
        snap=$(outside_snapshot)
        # /data gets the volume; /shared shows the outside dir (rbind, made after the
        # others): a mount that escaped onto the outside dir would show through it.
        update_config ".mounts += [{\"destination\": \"/data/sub\", \"type\": \"bind\",
                        \"source\": \"$BATS_TEST_TMPDIR/src\", \"options\": [\"rbind\"]},
                {\"destination\": \"/shared\", \"type\": \"bind\",
                        \"source\": \"$OUTSIDE\", \"options\": [\"rbind\", \"ro\"]}]"
        mkdir -p "$BUNDLE/rootfs/data/sub" "$BUNDLE/rootfs/shared"
        set_args /bin/msp-helper read /data/sub/file -- stat /shared/file -- stat /shared/self -- \
                stat /shared/sub
        # Control: no race.
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$(value content)" = from-src ]
        [ "$(value stat)" = ENOENT ]
        ln -s "$OUTSIDE" "$BUNDLE/rootfs/data-link"
        ln -s "$OUTSIDE" "$BUNDLE/rootfs/proc-link"
        race_exchange "$BUNDLE/rootfs/data" "$BUNDLE/rootfs/data-link" \
                "$BUNDLE/rootfs/proc" "$BUNDLE/rootfs/proc-link"
        ok=0
        for i in $(seq 40); do
                run msp run -b "$BUNDLE" "$CID" </dev/null
                # the helper ran (its stats of /shared fail: exit 1), or msp refused
                if [[ "$output" == *read=* ]]; then
                        ok=$((ok + 1))
                else
                        echo "run $i: ${output:0:160}"
                fi
                if [[ "$output" == *stat.mode* ]]; then
                        echo "run $i escaped: $output"
                        false
                fi
                [ "$(outside_snapshot)" = "$snap" ]
        done
        kill "$RACER"
        wait "$RACER" || true
        RACER=
        echo "$ok of 40 runs started (msp refused the others)"
        [ "$(outside_snapshot)" = "$snap" ]
        assert_nothing_left "$CID"
}

@test "CVE-2019-19921: /proc, /dev, /dev/pts or /sys symlinked to a host dir: nothing outside changes" {
        snap=$(outside_snapshot)
        helper_run read /proc/self/comm
        [ "$(value content)" = msp-helper ]
        without_dev_mount
        for target in proc dev dev/pts dev/shm sys; do
                rm -rf "$BUNDLE/rootfs"
                cp -a "$BATS_FILE_TMPDIR/rootfs" "$BUNDLE/rootfs"
                mkdir -p "$BUNDLE/rootfs/$(dirname $target)"
                rm -rf "${BUNDLE:?}/rootfs/$target"
                [ "$target" = dev ] || image_dev_null
                ln -s "$OUTSIDE" "$BUNDLE/rootfs/$target"
                helper_run read /proc/self/comm -- stat /dev/null
                echo "$target: $status $output"
                if [ "$status" -eq 0 ]; then
                        # it worked, so the mounts landed inside
                        [ "$(value content)" = msp-helper ]
                        [ "$(value stat.rdev)" = 1:3 ]
                fi
                [ "$(outside_snapshot)" = "$snap" ]
                assert_nothing_left "$CID"
        done
}

# ---- CVE-2025-31133: masking with a swapped /dev/null ----

@test "CVE-2025-31133: an image /dev/null that is a symlink to a host file or core_pattern is never bound" {
        core=$(cat /proc/sys/kernel/core_pattern)
        snap=$(outside_snapshot)
        # Control: masking works (an empty /proc/timer_list; core_pattern is read-only).
        helper_run read /proc/timer_list -- open-write /proc/sys/kernel/core_pattern
        echo "$output"
        [ "$(value read)" = ok ]
        [ "$(value content)" = "" ]
        [ "$(value open-write)" != ok ]
        without_dev_mount
        update_config '.linux.maskedPaths += ["/proc/sys/kernel/core_pattern", "/etc/hostname"]'
        for link in "$OUTSIDE/secret" /proc/sys/kernel/core_pattern /proc/keys; do
                rm -f "$BUNDLE/rootfs/dev/null"
                ln -s "$link" "$BUNDLE/rootfs/dev/null"
                helper_run read /proc/timer_list -- read /etc/hostname -- stat /dev/null -- \
                        open-write /proc/sys/kernel/core_pattern
                echo "$link: $status $output"
                if [ "$status" -ne 2 ] && [ -n "$(value stat.rdev)" ]; then
                        # it ran: masked paths are empty and read-only, /dev/null is a device
                        [ "$(value stat.rdev)" = 1:3 ]
                        [[ "$output" != *host-secret* ]]
                        [[ "$output" != *"content=$core"* ]] || [ -z "$core" ]
                        [ "$(value open-write)" != ok ]
                fi
                [ "$(cat /proc/sys/kernel/core_pattern)" = "$core" ]
                [ "$(outside_snapshot)" = "$snap" ]
                assert_nothing_left "$CID"
        done
}

@test "CVE-2025-31133: /dev/null raced against a symlink to core_pattern: masks stay empty and read-only" {
        core=$(cat /proc/sys/kernel/core_pattern)
        snap=$(outside_snapshot)
        without_dev_mount
        image_dev_null
        ln -s /proc/sys/kernel/core_pattern "$BUNDLE/rootfs/dev/null-link"
        # (a write to the mask is allowed: it is the null device, on which a read-only
        # mount does not stop writes; what matters is that it is that device)
        set_args /bin/msp-helper read /proc/timer_list -- stat /proc/timer_list -- \
                open-write /proc/sys/kernel/core_pattern
        # Control: no race; the mask is the null device and core_pattern is read-only.
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$(value read)" = ok ]
        [ "$(value content)" = "" ]
        [ "$(value stat.rdev)" = 1:3 ]
        [ "$(value open-write)" = EROFS ]
        race_exchange "$BUNDLE/rootfs/dev/null" "$BUNDLE/rootfs/dev/null-link"
        ok=0
        for i in $(seq 40); do
                run msp run -b "$BUNDLE" "$CID" </dev/null
                if [[ "$output" == *read=* ]]; then
                        ok=$((ok + 1))
                        # a vulnerable runtime bound core_pattern (rw) over the mask
                        [ "$(value content)" = "" ] || { echo "run $i: $output"; false; }
                        [ "$(value stat.rdev)" = 1:3 ] || { echo "run $i: $output"; false; }
                        [ "$(value open-write)" != ok ] || { echo "run $i: $output"; false; }
                else
                        echo "run $i: ${output:0:160}"
                fi
                [ "$(cat /proc/sys/kernel/core_pattern)" = "$core" ]
        done
        kill "$RACER"
        wait "$RACER" || true
        RACER=
        echo "$ok of 40 runs started (msp refused the others)"
        [ "$(outside_snapshot)" = "$snap" ]
        assert_nothing_left "$CID"
}

# ---- CVE-2025-52565: the console ----

@test "CVE-2025-52565: /dev/console and /dev/pts/ptmx symlinked in the image: the console is a real pty" {
        snap=$(outside_snapshot)
        update_config '.process.terminal = true'
        # Control
        helper_run tty -- stat /dev/console
        output=$(printf '%s\n' "$output" | tr -d '\r')
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$(value stat.rdev)" == 136:* ]]
        without_dev_mount
        image_dev_null
        mkdir -p "$BUNDLE/rootfs/dev/pts"
        for link in console pts/ptmx pts/0 ptmx; do
                rm -rf "$BUNDLE/rootfs/dev/console" "$BUNDLE/rootfs/dev/pts/ptmx" \
                        "$BUNDLE/rootfs/dev/pts/0" "$BUNDLE/rootfs/dev/ptmx"
                ln -s "$OUTSIDE/secret" "$BUNDLE/rootfs/dev/$link"
                helper_run tty -- stat /dev/console
                output=$(printf '%s\n' "$output" | tr -d '\r')
                echo "$link: $status $output"
                if [ "$status" -eq 0 ] || [ -n "$(value stat.rdev)" ]; then
                        [[ "$(value stat.rdev)" == 136:* ]]
                        [[ "$output" != *host-secret* ]]
                fi
                [ "$(outside_snapshot)" = "$snap" ]
                assert_nothing_left "$CID"
        done
}

# ---- CVE-2025-52881, CVE-2019-16884: writes under /proc ----

@test "CVE-2025-52881: with a fake /proc in the image, sysctl and oom_score_adj reach the real procfs" {
        update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1"} | .process.oomScoreAdj = 500'
        # Control: both take effect.
        helper_run read /proc/sys/net/ipv4/ip_forward -- read /proc/self/oom_score_adj
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(printf '%s\n' "$output" | sed -n 2p)" = content=1 ]
        [ "$(printf '%s\n' "$output" | sed -n 4p)" = content=500 ]
        # The image's /proc is a directory of decoys: regular files where procfs' are.
        fake="$BUNDLE/rootfs/proc"
        mkdir -p "$fake/sys/net/ipv4" "$fake/self" "$fake/1"
        echo 0 >"$fake/sys/net/ipv4/ip_forward"
        echo 0 >"$fake/self/oom_score_adj"
        echo 0 >"$fake/1/oom_score_adj"
        decoys=$(cd "$fake" && find . -type f -exec sha256sum {} + | sort)
        helper_run read /proc/sys/net/ipv4/ip_forward -- read /proc/self/oom_score_adj
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(printf '%s\n' "$output" | sed -n 2p)" = content=1 ]
        [ "$(printf '%s\n' "$output" | sed -n 4p)" = content=500 ]
        [ "$(cd "$fake" && find . -type f -exec sha256sum {} + | sort)" = "$decoys" ]
        # ... or a symlink to a decoy dir inside the image: refused or the real procfs.
        mv "$fake" "$BUNDLE/rootfs/fakeproc"
        ln -s /fakeproc "$fake"
        helper_run read /proc/sys/net/ipv4/ip_forward -- read /proc/self/oom_score_adj
        echo "$output"
        if [ "$status" -eq 0 ]; then
                [ "$(printf '%s\n' "$output" | sed -n 2p)" = content=1 ]
                [ "$(printf '%s\n' "$output" | sed -n 4p)" = content=500 ]
        fi
        [ "$(cd "$BUNDLE/rootfs/fakeproc" && find . -type f -exec sha256sum {} + | sort)" = "$decoys" ]
        # the host's forwarding setting is its own
        assert_nothing_left "$CID"
}

# ---- CVE-2025-24965: files the runtime creates in the rootfs ----

# crun's krun handler wrote .krun_config.json into the rootfs by name, so a symlink in the
# image sent it outside. msp has no handler that writes files of its own into the image;
# what it does create there (missing bind-mount targets and mount points, /dev/console,
# device nodes) is made with *at() calls beneath the root fd. The attack plants dangling
# symlinks to host paths at each of those names: an O_CREAT or mkdir by name would create
# the host path.
@test "CVE-2025-24965: mount targets and /dev/console msp creates never land outside through dangling symlinks" {
        echo from-src >"$BATS_TEST_TMPDIR/srcfile"
        # Control: creating a file by that kind of name creates the symlink's host target.
        ln -s "$OUTSIDE/probe" "$BATS_TEST_TMPDIR/probe-link"
        : >"$BATS_TEST_TMPDIR/probe-link"
        [ -f "$OUTSIDE/probe" ]
        rm "$OUTSIDE/probe"
        snap=$(outside_snapshot)
        update_config ".process.terminal = true | .mounts += [
                {destination: \"/etc/msp-file\", type: \"bind\",
                 source: \"$BATS_TEST_TMPDIR/srcfile\", options: [\"bind\"]},
                {destination: \"/msp-dir/sub\", type: \"tmpfs\", source: \"tmpfs\"}]"
        without_dev_mount
        image_dev_null
        mkdir -p "$BUNDLE/rootfs/dev/pts"
        ln -s "$OUTSIDE/created-file" "$BUNDLE/rootfs/etc/msp-file"
        ln -s "$OUTSIDE/created-dir" "$BUNDLE/rootfs/msp-dir"
        ln -s "$OUTSIDE/created-console" "$BUNDLE/rootfs/dev/console"
        helper_run read /etc/msp-file -- stat /dev/console -- stat /msp-dir/sub
        output=$(printf '%s\n' "$output" | tr -d '\r')
        echo "$status $output"
        if [ "$status" -eq 0 ]; then
                [ "$(value content)" = from-src ]
                [[ "$(value stat.rdev)" == 136:* ]]
        fi
        [ ! -e "$OUTSIDE/created-file" ] && [ ! -e "$OUTSIDE/created-dir" ] &&
                [ ! -e "$OUTSIDE/created-console" ]
        [ "$(outside_snapshot)" = "$snap" ]
        assert_nothing_left "$CID"
}

# ---- capabilities ----

@test "capabilities: without them no mount, module load, clock change, raw socket or ptrace outside" {
        # Control, with the capability: each call passes the permission check (and does
        # nothing: a bad argument, or ptrace of our own child).
        set_caps "CAP_NET_RAW CAP_SYS_TIME" "CAP_NET_RAW CAP_SYS_TIME" "CAP_NET_RAW CAP_SYS_TIME" "" ""
        helper_run syscall raw_socket -- ptrace child
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value syscall.raw_socket)" = ok ]
        [ "$(value ptrace)" = ok ]
        # The attack, with no capability at all.
        update_config 'del(.process.capabilities)'
        helper_run caps -- syscall mount -- init-module -- settime -- syscall settimeofday -- \
                syscall raw_socket -- ptrace "$$" -- ptrace 1
        echo "$output"
        for s in CapInh CapPrm CapEff CapBnd CapAmb; do
                [ "$(value $s)" = 0000000000000000 ]
        done
        [ "$(value syscall.mount)" = EPERM ]
        if [ -e /proc/modules ]; then
                [ "$(value init_module)" = EPERM ]
                [ "$(value finit_module)" = EPERM ]
        else    # no module support in this kernel: ENOSYS, still not ok
                [ "$(value init_module)" != ok ]
                [ "$(value finit_module)" != ok ]
        fi
        [ "$(value clock_settime)" = EPERM ]
        [ "$(value clock_adjtime)" = EPERM ]
        [ "$(value syscall.settimeofday)" = EPERM ]
        [ "$(value syscall.raw_socket)" = EPERM ]
        # the host's pid does not exist in the container's pid namespace; pid 1 is us
        [ "$(printf '%s\n' "$output" | grep '^ptrace=' | sed -n 1p)" = ptrace=ESRCH ]
        [ "$(printf '%s\n' "$output" | grep '^ptrace=' | sed -n 2p)" = ptrace=EPERM ]
        assert_nothing_left "$CID"
}

@test "capabilities: inheritable and ambient are empty by default and exactly as configured" {
        helper_run caps
        [ "$(value CapInh)" = 0000000000000000 ]
        [ "$(value CapAmb)" = 0000000000000000 ]
        [ "$(value CapBnd)" = "$(cap_mask CAP_AUDIT_WRITE CAP_KILL CAP_NET_BIND_SERVICE)" ]
        # a non-root user gets exactly the configured ambient set, and it works
        update_config '.process.user = {"uid": 1000, "gid": 1000}'
        set_caps "CAP_NET_RAW CAP_KILL" "CAP_NET_RAW" "CAP_NET_RAW" "CAP_NET_RAW" "CAP_NET_RAW"
        helper_run caps -- syscall raw_socket
        echo "$output"
        [ "$(value CapInh)" = "$(cap_mask CAP_NET_RAW)" ]
        [ "$(value CapAmb)" = "$(cap_mask CAP_NET_RAW)" ]
        [ "$(value CapEff)" = "$(cap_mask CAP_NET_RAW)" ]
        [ "$(value syscall.raw_socket)" = ok ]
        # and without ambient the same user has nothing
        set_caps "CAP_NET_RAW CAP_KILL" "CAP_NET_RAW" "CAP_NET_RAW" "CAP_NET_RAW" ""
        helper_run caps -- syscall raw_socket
        echo "$output"
        [ "$(value CapEff)" = 0000000000000000 ]
        [ "$(value CapAmb)" = 0000000000000000 ]
        [ "$(value syscall.raw_socket)" = EPERM ]
        assert_nothing_left "$CID"
}

# ---- the kernel keyring ----

# in_keyring NAME DESC CMD...: run CMD in a new session keyring NAME, then say whether
# a "user" key DESC is in that keyring ("key=found" or "key=absent").
in_keyring() {
        /usr/bin/python3 - "$@" 3>&- <<'PY'
import ctypes, os, subprocess, sys
l = ctypes.CDLL(None, use_errno=True)
l.syscall.restype = ctypes.c_long
KEYCTL = 250  # x86_64
if l.syscall(KEYCTL, 1, ctypes.c_char_p(sys.argv[1].encode())) < 0:  # JOIN_SESSION_KEYRING
    sys.exit("keyctl: " + os.strerror(ctypes.get_errno()))
rc = subprocess.call(sys.argv[3:], stdin=subprocess.DEVNULL)
# KEYCTL_SEARCH (10) in the session keyring (-3), no destination
k = l.syscall(KEYCTL, 10, ctypes.c_long(-3), b"user", ctypes.c_char_p(sys.argv[2].encode()), 0)
print("key=found" if k >= 0 else "key=absent")
sys.exit(rc)
PY
}

@test "keyring: a key added inside is not in the caller's session keyring (unless --no-new-keyring)" {
        [ "$(uname -m)" = x86_64 ] || skip "the keyctl syscall number here is x86_64's"
        ring="msp-test-$$-$BATS_SUITE_TEST_NUMBER"
        desc="msp-escape-$$"
        set_args /bin/msp-helper add-key "$desc"
        # Control: with --no-new-keyring the container shares the caller's keyring, so
        # the key shows up there.
        run in_keyring "$ring" "$desc" "$MSP" --root "$STATE_ROOT" run --no-new-keyring -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value add-key)" = ok ]
        [ "$(printf '%s\n' "$output" | grep '^key=' | tail -n1)" = key=found ]
        # By default the container gets its own session keyring.
        run in_keyring "$ring" "$desc" "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value add-key)" = ok ]
        [ "$(printf '%s\n' "$output" | grep '^key=' | tail -n1)" = key=absent ]
        assert_nothing_left "$CID"
}

# ---- LSM labels (CVE-2019-16884): refused when the LSM is not active ----

@test "LSM labels: a profile or label for an LSM the host does not run fails create, naming field and value" {
        lsm_active apparmor && skip "AppArmor is active on this host: the refusal does not apply"
        lsm_active selinux && skip "SELinux is active on this host: the refusal does not apply"
        # Control: no label, the container runs.
        helper_run ids
        [ "$status" -eq 0 ]
        for field in process.apparmorProfile process.selinuxLabel linux.mountLabel; do
                cp "$BATS_TEST_TMPDIR/bundle/config.json" "$BATS_TEST_TMPDIR/config.orig"
                update_config ".$field = \"msp-test-label\""
                try_create "$CID"
                echo "$field: $status $output"
                [ "$status" -ne 0 ]
                [[ "$output" == *"$field 'msp-test-label': "*" is not enabled on this host"* ]]
                assert_nothing_left "$CID"
                cp "$BATS_TEST_TMPDIR/config.orig" "$BUNDLE/config.json"
        done
}
