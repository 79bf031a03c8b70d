#!/usr/bin/env bats
# What the process inside a container sees: namespaces, mounts, devices, sysctl, the
# process attributes (args, env, cwd, user, rlimits, capabilities, ...), its fds and stdio.
# Every assertion is made on what msp-helper reports from inside.

load helpers

setup() {
        setup_bundle
        # most tests read /proc/self/*, and the bundle's root is read-only by default
        update_config '.process.noNewPrivileges = true'
}

teardown() {
        teardown_containers
        if [ -n "${NETNS:-}" ]; then
                ip netns delete "$NETNS" 2>/dev/null || true
        fi
}

# ---- namespaces ----

@test "namespaces: pid 1 in a new pid namespace; net, ipc, uts, mnt and cgroup are private" {
        update_config '.linux.namespaces += [{"type": "cgroup"}]'
        helper_run pid -- ns
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value pid)" = 1 ]
        [ "$(value ppid)" = 0 ]
        for ns in pid net ipc uts mnt cgroup; do
                [ -n "$(value ns.$ns)" ]
                [ "$(value ns.$ns)" != "$(host_ns $ns)" ]
        done
        # not asked for: shared with the host
        [ "$(value ns.user)" = "$(host_ns user)" ]
        [ "$(value ns.time)" = "$(host_ns time)" ]
        assert_nothing_left "$CID"
}

@test "network namespace: only lo, and it is up" {
        set_args /bin/sh -c 'ls /sys/class/net; cat /sys/class/net/lo/flags; exec msp-helper connect 127.0.0.1 9 -- connect ::1 9'
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "${lines[0]}" = lo ]
        # IFF_UP | IFF_LOOPBACK (0x8 alone when down)
        [ "${lines[1]}" = 0x9 ]
        # refused, not ENETUNREACH: loopback routes exist, nothing listens
        [ "${lines[2]}" = connect=ECONNREFUSED ]
        [ "${lines[3]}" = connect=ECONNREFUSED ]
        [ "${#lines[@]}" -eq 4 ]
        assert_nothing_left "$CID"
}

@test "network namespace: a listener inside is reachable on loopback" {
        # nc needs a moment to listen: retry for up to 2 s (bounded)
        set_args /bin/sh -c 'nc -l -p 5555 >/dev/null 2>&1 & for i in $(seq 20); do msp-helper connect 127.0.0.1 5555 && exit 0; usleep 100000; done; exit 1'
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *connect=ok* ]]
        assert_nothing_left "$CID"
}

@test "namespaces: a network namespace joined by path is the same namespace" {
        NETNS="msp-test-$$-$BATS_SUITE_TEST_NUMBER"
        ip netns add "$NETNS"
        ino=$(stat -L -c %i "/run/netns/$NETNS")
        update_config ".linux.namespaces |= map(if .type == \"network\" then .path = \"/run/netns/$NETNS\" else . end)"
        helper_run ns
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value ns.net)" = "$ino" ]
        [ "$(value ns.net)" != "$(host_ns net)" ]
        assert_nothing_left "$CID"
}

@test "namespaces: a second container joins the first one's pid, net, ipc and uts (a pod)" {
        set_args /bin/msp-helper sleep-forever
        create_bg "$CID-infra"
        infra=$(state_field "$CID-infra" pid)
        msp start "$CID-infra"
        update_config ".linux.cgroupsPath = \"/$CGROUP_PREFIX/$CID-member\" |
                .linux.namespaces = [{\"type\": \"mount\"},
                        {\"type\": \"pid\", \"path\": \"/proc/$infra/ns/pid\"},
                        {\"type\": \"network\", \"path\": \"/proc/$infra/ns/net\"},
                        {\"type\": \"ipc\", \"path\": \"/proc/$infra/ns/ipc\"},
                        {\"type\": \"uts\", \"path\": \"/proc/$infra/ns/uts\"}]"
        set_args /bin/msp-helper ns -- pid -- kill 1 0
        run msp run -b "$BUNDLE" "$CID-member" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        for ns in pid net ipc uts; do
                [ "$(value ns.$ns)" = "$(stat -L -c %i /proc/"$infra"/ns/$ns)" ]
        done
        [ "$(value ns.mnt)" != "$(stat -L -c %i /proc/"$infra"/ns/mnt)" ]
        # pid 1 is the first container's process
        [ "$(value pid)" -gt 1 ]
        [ "$(value kill)" = ok ]
        [ ! -e "$STATE_ROOT/$CID-member" ]
        msp kill "$CID-infra" KILL
        wait_pid_exit "$infra"
        msp delete "$CID-infra"
        assert_nothing_left "$CID-member"
        assert_nothing_left "$CID-infra"
}

@test "time namespace: the boottime offset shows in /proc/uptime" {
        update_config '.linux.namespaces += [{"type": "time"}] |
                .linux.timeOffsets = {"boottime": {"secs": 864000, "nanosecs": 0},
                                      "monotonic": {"secs": 3600, "nanosecs": 0}}'
        before=$(cut -d' ' -f1 /proc/uptime)
        helper_run read /proc/uptime -- ns
        after=$(cut -d' ' -f1 /proc/uptime)
        echo "$output"
        [ "$status" -eq 0 ]
        inside=$(value content | cut -d' ' -f1)
        [ "$(value ns.time)" != "$(host_ns time)" ]
        [ "$(value ns.time_for_children)" = "$(value ns.time)" ]
        # inside = outside + 864000 s, within the time the run took
        awk -v i="$inside" -v b="$before" -v a="$after" \
                'BEGIN { exit !(i >= b + 864000 && i <= a + 864000 + 1) }'
        # both offsets as the namespace has them
        set_args /bin/cat /proc/self/timens_offsets
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$(printf '%s\n' "$output" | tr -s ' ' | sort)" = "$(printf 'boottime 864000 0\nmonotonic 3600 0')" ]
        assert_nothing_left "$CID"
}

@test "hostname and domainname" {
        update_config '.hostname = "box.test" | .domainname = "example.org"'
        helper_run hostname -- domainname
        [ "$status" -eq 0 ]
        [ "$(value hostname)" = box.test ]
        [ "$(value domainname)" = example.org ]
        [ "$(hostname)" != box.test ]
        assert_nothing_left "$CID"
}

# ---- mounts ----

# mount_line MOUNTPOINT: "type opts" of that mount point in the helper's output.
mount_line() {
        printf '%s\n' "$output" | awk -v m="$1" '$1 == "mount=" m { $1 = ""; sub(/^ /, ""); l = $0 } END { print l }'
}

has_opts() {
        local opts=",$2," o
        for o in ${3//,/ }; do
                [[ "$opts" == *",$o,"* ]] || { echo "$1: '$o' not in '$2'"; return 1; }
        done
}

@test "mounts: proc, /dev, devpts, shm, mqueue, sysfs and cgroup with their flags" {
        helper_run mounts
        echo "$output"
        [ "$status" -eq 0 ]
        read -r type opts <<<"$(mount_line /proc)"
        [ "$type" = proc ]
        read -r type opts <<<"$(mount_line /dev)"
        [ "$type" = tmpfs ]
        has_opts /dev "$opts" rw,nosuid
        read -r type opts <<<"$(mount_line /dev/pts)"
        [ "$type" = devpts ]
        has_opts /dev/pts "$opts" nosuid,noexec
        read -r type opts <<<"$(mount_line /dev/shm)"
        [ "$type" = tmpfs ]
        has_opts /dev/shm "$opts" rw,nosuid,nodev,noexec
        read -r type opts <<<"$(mount_line /dev/mqueue)"
        [ "$type" = mqueue ]
        has_opts /dev/mqueue "$opts" nosuid,nodev,noexec
        read -r type opts <<<"$(mount_line /sys)"
        [ "$type" = sysfs ]
        has_opts /sys "$opts" ro,nosuid,nodev,noexec
        read -r type opts <<<"$(mount_line /sys/fs/cgroup)"
        [ "$type" = tmpfs ] || [ "$type" = cgroup2 ]
        has_opts /sys/fs/cgroup "$opts" ro,nosuid,nodev,noexec
        # every controller hierarchy below is read-only too
        printf '%s\n' "$output" | grep '^mount=/sys/fs/cgroup/' | grep -vq ' ro,' && return 1
        assert_nothing_left "$CID"
}

@test "mounts: the flags are enforced (noexec, read-only sysfs and cgroup)" {
        set_args /bin/sh -c 'cp /bin/msp-helper /dev/shm/h && cp /bin/msp-helper /dev/h; /bin/msp-helper exec /dev/shm/h pid; /dev/h pid; exec msp-helper write /sys/kernel/msp -- write /sys/fs/cgroup/msp -- write /dev/shm/ok'
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        # /dev/shm is noexec; /dev is not (the config leaves it exec)
        [ "${lines[0]}" = exec=EACCES ]
        [[ "${lines[1]}" == pid=* ]]
        [ "${lines[3]}" = write=EROFS ]
        [ "${lines[4]}" = write=EROFS ]
        [ "${lines[5]}" = write=ok ]
        assert_nothing_left "$CID"
}

@test "mounts: a read-only /dev still gets its submounts and devices; ro comes last" {
        update_config '(.mounts[] | select(.destination == "/dev") | .options) += ["ro"] |
                .linux.devices = [{"path": "/dev/fuse", "type": "c", "major": 10, "minor": 229}]'
        set_args /bin/sh -c 'exec msp-helper write /dev/x -- write /dev/shm/ok -- stat /dev/fuse -- mounts'
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "${lines[0]}" = write=EROFS ]
        [ "${lines[1]}" = write=ok ]
        [ "$(value stat.rdev)" = 10:229 ]
        [[ "$(mount_line /dev/pts)" == devpts* ]]
        [[ "$(mount_line /dev)" == "tmpfs ro,"* ]]
        assert_nothing_left "$CID"
}

@test "mounts: a read-only tmpfs with a bind mount below it: ro comes last" {
        mkdir "$BATS_TEST_TMPDIR/src"
        update_config ".mounts += [{\"destination\": \"/data\", \"type\": \"tmpfs\", \"source\": \"tmpfs\", \"options\": [\"ro\", \"mode=755\"]},
                {\"destination\": \"/data/sub\", \"type\": \"bind\", \"source\": \"$BATS_TEST_TMPDIR/src\", \"options\": [\"rbind\"]}]"
        set_args /bin/msp-helper write /data/x -- write /data/sub/ok -- mounts
        run msp run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "${lines[0]}" = write=EROFS ]
        [ "${lines[1]}" = write=ok ]
        [[ "$(mount_line /data)" == "tmpfs ro,"* ]]
        [ -e "$BATS_TEST_TMPDIR/src/ok" ]
        assert_nothing_left "$CID"
}

@test "mounts: bind mounts of a host directory, read-write and read-only" {
        src="$BATS_TEST_TMPDIR/shared"
        mkdir "$src"
        echo from-host >"$src/file"
        update_config ".mounts += [
                {\"destination\": \"/rw\", \"type\": \"bind\", \"source\": \"$src\", \"options\": [\"rbind\", \"rw\"]},
                {\"destination\": \"/ro\", \"type\": \"bind\", \"source\": \"$src\", \"options\": [\"rbind\", \"ro\", \"nosuid\"]},
                {\"destination\": \"/one-file\", \"type\": \"bind\", \"source\": \"$src/file\", \"options\": [\"bind\", \"ro\"]}]"
        helper_run read /ro/file -- write /rw/new -- write /ro/new2 -- read /one-file -- mounts
        echo "$output"
        [ "$(printf '%s\n' "$output" | sed -n 2p)" = content=from-host ]
        [ "$(printf '%s\n' "$output" | sed -n 3p)" = write=ok ]
        [ "$(printf '%s\n' "$output" | sed -n 4p)" = write=EROFS ]
        [ "$(printf '%s\n' "$output" | sed -n 6p)" = content=from-host ]
        [ "$(cat "$src/new")" = msp-helper ]
        [ ! -e "$src/new2" ]
        read -r type opts <<<"$(mount_line /ro)"
        has_opts /ro "$opts" ro,nosuid
        read -r type opts <<<"$(mount_line /rw)"
        has_opts /rw "$opts" rw
        assert_nothing_left "$CID"
}

@test "mounts: tmpfs with tmpcopyup starts with the directory's content" {
        mkdir -p "$BUNDLE/rootfs/data/sub"
        echo image-content >"$BUNDLE/rootfs/data/sub/file"
        chmod 0750 "$BUNDLE/rootfs/data"
        update_config '.mounts += [{"destination": "/data", "type": "tmpfs", "source": "tmpfs", "options": ["tmpcopyup", "nosuid"]}]'
        helper_run read /data/sub/file -- write /data/new -- stat /data -- mounts
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value content)" = image-content ]
        [ "$(value write)" = ok ]
        [ "$(value stat.mode)" = 040750 ]
        read -r type opts <<<"$(mount_line /data)"
        [ "$type" = tmpfs ]
        # the copy lives in the tmpfs: the image is untouched
        [ ! -e "$BUNDLE/rootfs/data/new" ]
        assert_nothing_left "$CID"
}

@test "mounts: tmpcopyup onto a directory that is not in the image: a plain tmpfs (1777)" {
        [ ! -e "$BUNDLE/rootfs/scratch" ]
        update_config '.process.user = {"uid": 1000, "gid": 1000} |
                .mounts += [{"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["rw", "nosuid", "nodev", "tmpcopyup"]}]'
        helper_run stat /scratch -- write /scratch/x
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value stat.mode)" = 041777 ]
        [ "$(value stat.uid)" = 0 ]
        [ "$(value write)" = ok ]
        assert_nothing_left "$CID"
}

@test "mounts: root.readonly makes / read-only, a tmpfs on /tmp stays writable" {
        update_config '.root.readonly = true |
                .mounts += [{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev"]}]'
        helper_run write /x -- write /tmp/x -- mounts
        echo "$output"
        [ "$(printf '%s\n' "$output" | sed -n 1p)" = write=EROFS ]
        [ "$(printf '%s\n' "$output" | sed -n 2p)" = write=ok ]
        read -r type opts <<<"$(mount_line /)"
        has_opts / "$opts" ro
        assert_nothing_left "$CID"
}

@test "mounts: rootfsPropagation sets the propagation of /" {
        for prop in shared private slave; do
                update_config ".linux.rootfsPropagation = \"$prop\""
                set_args /bin/sh -c 'awk '\''$5 == "/" { for (i = 7; $i != "-"; i++) printf "%s ", $i; print "." }'\'' /proc/self/mountinfo'
                run msp run -b "$BUNDLE" "$CID"
                echo "$prop: $output"
                [ "$status" -eq 0 ]
                case $prop in
                shared) [[ "$output" == *shared:* ]] ;;
                private) [ "$output" = . ] ;;
                # a slave of the host's peer group, or private when the host's
                # mounts are private (as here): never shared
                slave) [[ "$output" != *shared:* ]] ;;
                esac
                assert_nothing_left "$CID"
        done
}

@test "maskedPaths: a masked file reads empty, a masked directory is empty" {
        mkdir -p "$BUNDLE/rootfs/secret-dir"
        echo secret >"$BUNDLE/rootfs/secret-file"
        echo secret >"$BUNDLE/rootfs/secret-dir/inner"
        update_config '.linux.maskedPaths = ["/secret-file", "/secret-dir", "/proc/timer_list", "/does-not-exist"]'
        # a file mask is the null device: writes vanish, reads stay empty
        set_args /bin/sh -c 'echo "[$(cat /secret-file)]"; ls -A /secret-dir | wc -l; echo x > /secret-file; echo "[$(cat /secret-file)]"; exec msp-helper write /secret-dir/x -- read /proc/timer_list -- stat /secret-file'
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "${lines[0]}" = "[]" ]
        [ "${lines[1]}" = 0 ]
        [ "${lines[2]}" = "[]" ]
        [ "${lines[3]}" = write=EROFS ]
        [ "${lines[4]}" = read=ok ]
        [ "${lines[5]}" = content= ]
        [ "${lines[9]}" = stat.rdev=1:3 ]
        # the image is untouched
        [ "$(cat "$BUNDLE/rootfs/secret-file")" = secret ]
        assert_nothing_left "$CID"
}

@test "readonlyPaths: writes fail with EROFS" {
        mkdir -p "$BUNDLE/rootfs/rodir"
        update_config '.linux.readonlyPaths = ["/rodir", "/proc/sys", "/does-not-exist"] |
                .process.capabilities.bounding += ["CAP_SYS_ADMIN"] |
                .process.capabilities.effective += ["CAP_SYS_ADMIN"] |
                .process.capabilities.permitted += ["CAP_SYS_ADMIN"]'
        helper_run write /rodir/x -- write /proc/sys/kernel/domainname -- write /tmp/x
        echo "$output"
        [ "${lines[0]}" = write=EROFS ]
        [ "${lines[1]}" = write=EROFS ]
        [ "${lines[2]}" = write=ok ]
        assert_nothing_left "$CID"
}

# ---- devices ----

@test "devices: the default nodes, /dev/fd, the std links and /dev/ptmx" {
        args=()
        for d in null zero full random urandom tty; do
                args+=(stat "/dev/$d" --)
        done
        set_args /bin/sh -c 'for l in fd stdin stdout stderr ptmx; do echo "$l=$(readlink /dev/$l)"; done; exec msp-helper "$@"' sh "${args[@]}" write /dev/null
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value fd)" = /proc/self/fd ]
        [ "$(value stdin)" = /proc/self/fd/0 ]
        [ "$(value stdout)" = /proc/self/fd/1 ]
        [ "$(value stderr)" = /proc/self/fd/2 ]
        [ "$(value ptmx)" = pts/ptmx ]
        rdevs=$(printf '%s\n' "$output" | sed -n 's/^stat.rdev=//p' | tr '\n' ' ')
        [ "$rdevs" = "1:3 1:5 1:7 1:8 1:9 5:0 " ]
        modes=$(printf '%s\n' "$output" | sed -n 's/^stat.mode=//p' | sort -u)
        [ "$modes" = 020666 ]
        [ "$(value write)" = ok ]
        assert_nothing_left "$CID"
}

@test "devices: linux.devices creates nodes with their type, mode, uid and gid" {
        update_config '.linux.devices = [
                {"path": "/dev/mynull", "type": "c", "major": 1, "minor": 3, "fileMode": 416, "uid": 1000, "gid": 1001},
                {"path": "/dev/sub/myzero", "type": "c", "major": 1, "minor": 5},
                {"path": "/dev/myfifo", "type": "p", "fileMode": 384}] |
                .process.user = {"uid": 1000, "gid": 1000}'
        helper_run stat /dev/mynull -- write /dev/mynull -- stat /dev/sub/myzero -- read /dev/sub/myzero -- stat /dev/myfifo
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = stat.mode=020640 ]
        [ "${lines[1]}" = stat.uid=1000 ]
        [ "${lines[2]}" = stat.gid=1001 ]
        [ "${lines[3]}" = stat.rdev=1:3 ]
        [ "${lines[4]}" = write=ok ]
        [ "${lines[5]}" = stat.mode=020666 ]
        [ "${lines[8]}" = stat.rdev=1:5 ]
        [ "${lines[9]}" = read=ok ]
        [ "${lines[11]}" = stat.mode=010600 ]
        assert_nothing_left "$CID"
}

# ---- sysctl ----

@test "sysctl: net.ipv4.ip_forward is set in the container's netns only" {
        host_before=$(cat /proc/sys/net/ipv4/ip_forward)
        host_msgmax=$(cat /proc/sys/kernel/msgmax)
        want=$((1 - host_before))
        update_config ".linux.sysctl = {\"net.ipv4.ip_forward\": \"$want\", \"kernel.msgmax\": \"4096\"}"
        helper_run read /proc/sys/net/ipv4/ip_forward -- read /proc/sys/kernel/msgmax
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[1]}" = "content=$want" ]
        [ "${lines[3]}" = content=4096 ]
        [ "$(cat /proc/sys/net/ipv4/ip_forward)" = "$host_before" ]
        [ "$(cat /proc/sys/kernel/msgmax)" = "$host_msgmax" ]
        assert_nothing_left "$CID"
}

# create_refused PATTERN: create must fail with PATTERN in its message. Output goes to a
# file, not through `run`: a create that wrongly succeeds would hold bats' pipe.
create_refused() {
        local out="$BATS_TEST_TMPDIR/create.out"
        if msp create -b "$BUNDLE" "$CID" >"$out" 2>&1 </dev/null; then
                msp delete --force "$CID"
                echo "create succeeded"
                return 1
        fi
        cat "$out"
        [[ "$(cat "$out")" == *$1* ]]
        assert_nothing_left "$CID"
}

@test "sysctl: only namespaced keys of a namespace the container owns" {
        # Each key is set to the host's current value, so that a runtime that wrongly
        # accepts it changes nothing on the host.
        swappiness=$(cat /proc/sys/vm/swappiness)
        update_config ".linux.sysctl = {\"vm.swappiness\": \"$swappiness\"}"
        create_refused 'linux.sysctl*vm.swappiness*not namespaced'

        # net.* without a network namespace of its own is the host's
        fwd=$(cat /proc/sys/net/ipv4/ip_forward)
        update_config ".linux.sysctl = {\"net.ipv4.ip_forward\": \"$fwd\"} |
                .linux.namespaces |= map(select(.type != \"network\"))"
        create_refused 'net.ipv4.ip_forward*network namespace'

        # the IPC ones need the IPC namespace
        msgmax=$(cat /proc/sys/kernel/msgmax)
        update_config ".linux.sysctl = {\"kernel.msgmax\": \"$msgmax\"} |
                .linux.namespaces |= map(select(.type != \"ipc\"))"
        create_refused 'kernel.msgmax*ipc namespace'
}

# ---- the process ----

@test "process: args and env exactly as configured" {
        update_config '.process.env = ["PATH=/bin:/usr/bin", "EMPTY=", "EQ=a=b", "SPACE=x y"]'
        set_args /bin/sh -c 'printf "[%s]" "$0" "$@"; echo; exec msp-helper env' arg0 "a b" "" "c"
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = "[arg0][a b][][c]" ]
        # sh adds PWD and SHLVL and reorders; the helper's own env is checked below
        env=$(printf '%s\n' "${lines[@]:1}" | grep -v '^env.PWD=' | grep -v '^env.SHLVL=' | sort)
        # HOME is added (the config sets none), from the image's /etc/passwd as runc does
        [ "$env" = "$(printf 'env.%s\n' "PATH=/bin:/usr/bin" "EMPTY=" "EQ=a=b" "SPACE=x y" "HOME=/root" | sort)" ]
        assert_nothing_left "$CID"
}

@test "process: the helper's env is exactly the config's (no runtime additions when it sets HOME)" {
        update_config '.process.env = ["A=1", "PATH=/bin", "HOME=/elsewhere"]'
        helper_run env
        [ "$status" -eq 0 ]
        [ "$output" = "$(printf 'env.A=1\nenv.PATH=/bin\nenv.HOME=/elsewhere')" ]
        assert_nothing_left "$CID"
}

# runc (setupUser): HOME, when process.env has none, is the home of the process's uid in
# the container's /etc/passwd, else "/". The file is the image's: read beneath the root,
# never a FIFO (which would hang create), never through a symlink out of the root, never a
# kernel file (procfs, sysfs...).
@test "process: HOME from the image's /etc/passwd when the config sets none, as runc; odd passwd files give /" {
        update_config '.process.env = ["PATH=/bin"]'
        local want=(0:/root 1000:/home/user 4242:/)
        for pair in "${want[@]}"; do
                update_config ".process.user.uid = ${pair%%:*}"
                helper_run env
                [ "$status" -eq 0 ]
                [[ "$output" == *"env.HOME=${pair#*:}"* ]] || { echo "uid ${pair%%:*}: $output"; false; }
                if [ -x /usr/sbin/runc ]; then
                        out=$(cd "$BUNDLE" && /usr/sbin/runc --root "$BATS_TEST_TMPDIR/runc" run "r$CID" 3>&-)
                        [[ "$out" == *"env.HOME=${pair#*:}"* ]] || { echo "runc uid ${pair%%:*}: $out"; false; }
                fi
        done
        update_config '.process.user.uid = 0'
        # a FIFO: create must not block on it
        rm "$BUNDLE/rootfs/etc/passwd"
        mkfifo "$BUNDLE/rootfs/etc/passwd"
        run timeout 20 "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" 3>&-
        [ "$status" -eq 0 ]
        [ "$(value env.HOME)" = / ]
        # ... nor opened at all: a device or FIFO there is looked at (O_PATH), never opened
        # (opening a device can act); inotify sees every real open
        python3 - "$BUNDLE/rootfs/etc/passwd" "$BATS_TEST_TMPDIR/opened" <<'PY' &
import ctypes, os, select, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_CLOEXEC)
libc.inotify_add_watch(fd, sys.argv[1].encode(), 0x20)     # IN_OPEN
open(sys.argv[2] + ".ready", "w").close()
if select.select([fd], [], [], 30)[0]:
    open(sys.argv[2], "w").close()
PY
        local watcher=$!
        for _ in $(seq 100); do [ -e "$BATS_TEST_TMPDIR/opened.ready" ] && break; sleep 0.05; done
        run timeout 20 "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" 3>&-
        [ "$(value env.HOME)" = / ]
        kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null || true
        [ ! -e "$BATS_TEST_TMPDIR/opened" ] || { echo "the FIFO was opened"; false; }
        # a symlink to a host file: resolved inside the root, where it does not exist
        rm "$BUNDLE/rootfs/etc/passwd"
        printf 'root:x:0:0:root:/host-home-leaked:/bin/sh\n' >"$BATS_TEST_TMPDIR/host-passwd"
        ln -s "$BATS_TEST_TMPDIR/host-passwd" "$BUNDLE/rootfs/etc/passwd"
        helper_run env
        [ "$status" -eq 0 ]
        [[ "$output" != *"host-home-leaked"* ]]
        [ "$(value env.HOME)" = / ]
        # a symlink to a kernel file, which the runtime would read with all its privilege
        # (/proc/kmsg: the host's log, consumed): not the image's passwd (runc reads it)
        rm "$BUNDLE/rootfs/etc/passwd"
        ln -s /proc/self/environ "$BUNDLE/rootfs/etc/passwd"
        set_args /bin/msp-helper env
        run env -i "P=x:x:0:0:x:/from-procfs:/bin/sh" PATH="$PATH" \
                "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" 3>&- </dev/null
        [ "$status" -eq 0 ]
        [[ "$output" != *"from-procfs"* ]]
        [ "$(value env.HOME)" = / ]
        # garbage lines and a uid with a sign are skipped
        rm "$BUNDLE/rootfs/etc/passwd"
        printf 'junk\n::\nx:x:+0:0::/plus:/bin/sh\nroot:x:0:0:root:/ok:/bin/sh\n' >"$BUNDLE/rootfs/etc/passwd"
        helper_run env
        [[ "$output" == *"env.HOME=/ok"* ]]
        assert_nothing_left "$CID"
}

@test "exec: HOME from the image's /etc/passwd for the exec'd uid when the process sets none, as runc" {
        update_config '.process.env = ["PATH=/bin"]'
        set_args /bin/sleep 100000
        create_bg "$CID"
        msp start "$CID"
        run msp exec "$CID" /bin/msp-helper env
        [[ "$output" == *"env.HOME=/root"* ]]
        run msp exec --user 1000 "$CID" /bin/msp-helper env
        [[ "$output" == *"env.HOME=/home/user"* ]]
        run msp exec --env HOME=/x "$CID" /bin/msp-helper env
        [[ "$output" == *"env.HOME=/x"* ]]
        msp delete --force "$CID"
        assert_nothing_left "$CID"
}

@test "process: cwd, and a cwd symlink that escapes the root is clamped to it" {
        mkdir -p "$BUNDLE/rootfs/work/dir"
        ln -s ../../../../../../../../.. "$BUNDLE/rootfs/escape"
        ln -s ../../../../../../../../../work/dir "$BUNDLE/rootfs/up-and-in"
        update_config '.process.cwd = "/work/dir"'
        helper_run cwd
        [ "$output" = cwd=/work/dir ]
        update_config '.process.cwd = "/escape"'
        helper_run cwd
        [ "$output" = cwd=/ ]
        update_config '.process.cwd = "/up-and-in"'
        helper_run cwd
        [ "$output" = cwd=/work/dir ]
        assert_nothing_left "$CID"
}

@test "process: a cwd only root may search (/root 0700) works for uid 42, as runc (docker run -u 42 -w /root)" {
        chmod 0700 "$BUNDLE/rootfs/root"
        update_config '.process.cwd = "/root" | .process.user = {"uid": 42, "gid": 42}'
        helper_run cwd -- ids
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value cwd)" = /root ]
        [ "$(value euid)" = 42 ]
        assert_nothing_left "$CID"
}

@test "process: a cwd symlink to a host path is resolved inside the root (and refused)" {
        ln -s "$BATS_TEST_TMPDIR" "$BUNDLE/rootfs/hostdir"
        update_config '.process.cwd = "/hostdir"'
        set_args /bin/msp-helper cwd
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *process.cwd* ]]
        assert_nothing_left "$CID"
        # and a cwd under /proc/self/fd (CVE-2024-21626) is refused too
        update_config '.process.cwd = "/proc/self/fd/3"'
        run msp create -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -ne 0 ]
        [[ "$output" == *process.cwd* ]]
        assert_nothing_left "$CID"
}

@test "process: user uid, gid, additionalGids and umask" {
        update_config '.process.user = {"uid": 1000, "gid": 1001, "additionalGids": [5, 100, 1002], "umask": 63}'
        helper_run ids -- umask -- write /tmp/f -- stat /tmp/f
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value uid)" = 1000 ]
        [ "$(value euid)" = 1000 ]
        [ "$(value gid)" = 1001 ]
        [ "$(value egid)" = 1001 ]
        [ "$(value groups)" = 5,100,1002 ]
        [ "$(value umask)" = 0077 ]
        [ "$(value stat.mode)" = 100600 ]
        [ "$(value stat.uid)" = 1000 ]
        [ "$(value stat.gid)" = 1001 ]
        assert_nothing_left "$CID"
}

@test "process: without additionalGids the runtime's groups are dropped" {
        update_config '.process.user = {"uid": 0, "gid": 0}'
        helper_run ids -- umask
        [ "$(value groups)" = "" ]
        [ "$(value umask)" = 0022 ]
        assert_nothing_left "$CID"
}

# The caller's CapEff has CAP_SYS_RESOURCE (raising hard limits, negative oomScoreAdj).
have_sys_resource() {
        local eff
        eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
        (((0x$eff >> 24) & 1))
}

@test "process: rlimits, incl. 2^64-1 as unlimited" {
        # Hard limits stay at or below the caller's (this host may lack
        # CAP_SYS_RESOURCE): CORE and FSIZE are unlimited here already.
        update_config '.process.rlimits = [
                {"type": "RLIMIT_NOFILE", "soft": 100, "hard": 200},
                {"type": "RLIMIT_CORE", "soft": 1234567, "hard": 1234567},
                {"type": "RLIMIT_FSIZE", "soft": 4096, "hard": 1234567},
                {"type": "RLIMIT_NPROC", "soft": 10, "hard": 20}]'
        # jq would round 2^64-1 to a double: spell it out after the last jq edit
        set_args /bin/msp-helper rlimits
        sed -i 's/1234567/18446744073709551615/g' "$BUNDLE/config.json"
        run msp run -b "$BUNDLE" "$CID"
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value RLIMIT_NOFILE)" = "100 200" ]
        [ "$(value RLIMIT_CORE)" = "unlimited unlimited" ]
        [ "$(value RLIMIT_FSIZE)" = "4096 unlimited" ]
        [ "$(value RLIMIT_NPROC)" = "10 20" ]
        assert_nothing_left "$CID"
}

@test "process: noNewPrivileges true and false" {
        update_config '.process.noNewPrivileges = true'
        helper_run nnp
        [ "$output" = nnp=1 ]
        update_config '.process.noNewPrivileges = false'
        helper_run nnp
        [ "$output" = nnp=0 ]
        assert_nothing_left "$CID"
}

@test "process: all five capability sets exactly as configured (root)" {
        # For uid 0 the kernel recomputes permitted/effective from the bounding set at
        # execve, so a consistent config has them equal to it.
        bnd="CAP_CHOWN CAP_KILL CAP_NET_BIND_SERVICE CAP_SETPCAP CAP_SYS_CHROOT"
        inh="CAP_KILL CAP_NET_BIND_SERVICE"
        amb="CAP_NET_BIND_SERVICE"
        set_caps "$bnd" "$bnd" "$bnd" "$inh" "$amb"
        helper_run caps
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value CapBnd)" = "$(cap_mask $bnd)" ]
        [ "$(value CapPrm)" = "$(cap_mask $bnd)" ]
        [ "$(value CapEff)" = "$(cap_mask $bnd)" ]
        [ "$(value CapInh)" = "$(cap_mask $inh)" ]
        [ "$(value CapAmb)" = "$(cap_mask $amb)" ]
        assert_nothing_left "$CID"
}

@test "process: all five capability sets exactly as configured (non-root, ambient)" {
        # For a non-root uid execve keeps only the ambient set as permitted/effective.
        bnd="CAP_CHOWN CAP_KILL CAP_NET_BIND_SERVICE CAP_NET_RAW CAP_SYS_CHROOT"
        inh="CAP_KILL CAP_NET_BIND_SERVICE CAP_NET_RAW"
        amb="CAP_NET_BIND_SERVICE CAP_NET_RAW"
        set_caps "$bnd" "$amb" "$amb" "$inh" "$amb"
        update_config '.process.user = {"uid": 1000, "gid": 1000}'
        helper_run caps -- syscall raw_socket -- bind 80
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value CapBnd)" = "$(cap_mask $bnd)" ]
        [ "$(value CapPrm)" = "$(cap_mask $amb)" ]
        [ "$(value CapEff)" = "$(cap_mask $amb)" ]
        [ "$(value CapInh)" = "$(cap_mask $inh)" ]
        [ "$(value CapAmb)" = "$(cap_mask $amb)" ]
        # and they work: a raw socket and a privileged port as uid 1000
        [ "$(value syscall.raw_socket)" = ok ]
        [ "$(value bind)" = ok ]
        assert_nothing_left "$CID"
}

@test "process: no capabilities at all: every set is empty and mount gets EPERM" {
        update_config 'del(.process.capabilities)'
        helper_run caps -- syscall mount -- syscall sethostname
        echo "$output"
        for s in CapBnd CapPrm CapEff CapInh CapAmb; do
                [ "$(value $s)" = 0000000000000000 ]
        done
        [ "$(value syscall.mount)" = EPERM ]
        [ "$(value syscall.sethostname)" = EPERM ]
        assert_nothing_left "$CID"
}

@test "process: with CAP_SYS_ADMIN the same probe passes the permission check" {
        set_caps "CAP_SYS_ADMIN" "CAP_SYS_ADMIN" "CAP_SYS_ADMIN" "" ""
        helper_run syscall mount
        echo "$output"
        [ "$(value syscall.mount)" = EINVAL ]
        assert_nothing_left "$CID"
}

@test "process: oomScoreAdj" {
        update_config '.process.oomScoreAdj = 500'
        helper_run read /proc/self/oom_score_adj
        [ "$(value content)" = 500 ]
        update_config '.process.oomScoreAdj = 1000'
        helper_run read /proc/self/oom_score_adj
        [ "$(value content)" = 1000 ]
        if have_sys_resource; then
                update_config '.process.oomScoreAdj = -17'
                helper_run read /proc/self/oom_score_adj
                [ "$(value content)" = -17 ]
        fi
        assert_nothing_left "$CID"
}

# ---- fds and stdio ----

@test "fds: no runtime fd leaks into the container (run, and create + start)" {
        helper_run fds
        echo "$output"
        [ "$status" -eq 0 ]
        [ -z "$output" ]
        set_args /bin/msp-helper fds -- pid
        create_bg "$CID"
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        wait_pid_exit "$pid"
        cat "$BATS_TEST_TMPDIR/$CID.out"
        [ "$(cat "$BATS_TEST_TMPDIR/$CID.out")" = "$(printf 'pid=1\nppid=0')" ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "fds: --preserve-fds 2 passes fds 3 and 4, and nothing else" {
        echo first >"$BATS_TEST_TMPDIR/f1"
        echo second >"$BATS_TEST_TMPDIR/f2"
        set_args /bin/sh -c 'cat <&3; cat <&4; exec msp-helper fds'
        preserve() {
                exec 3<"$BATS_TEST_TMPDIR/f1" 4<"$BATS_TEST_TMPDIR/f2" 5</dev/null
                "$MSP" --root "$STATE_ROOT" run --preserve-fds 2 -b "$BUNDLE" "$CID" </dev/null
        }
        run preserve
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = first ]
        [ "${lines[1]}" = second ]
        [[ "${lines[2]}" == fd.3=*f1 ]]
        [[ "${lines[3]}" == fd.4=*f2 ]]
        [ "${#lines[@]}" -eq 4 ]
        assert_nothing_left "$CID"
        # create keeps them in the parked init until start
        (
                exec 3<"$BATS_TEST_TMPDIR/f1" 4<"$BATS_TEST_TMPDIR/f2"
                "$MSP" --root "$STATE_ROOT" create --preserve-fds 2 -b "$BUNDLE" "$CID" \
                        >"$BATS_TEST_TMPDIR/out" 2>&1 </dev/null
        )
        pid=$(state_field "$CID" pid)
        msp start "$CID"
        wait_pid_exit "$pid"
        cat "$BATS_TEST_TMPDIR/out"
        [ "$(head -n2 "$BATS_TEST_TMPDIR/out")" = "$(printf 'first\nsecond')" ]
        [ "$(grep -c '^fd\.' "$BATS_TEST_TMPDIR/out")" -eq 2 ]
        msp delete "$CID"
        assert_nothing_left "$CID"
}

@test "fds: LISTEN_FDS=2 passes the fds, LISTEN_FDS=2 and LISTEN_PID=1 inside" {
        echo first >"$BATS_TEST_TMPDIR/f1"
        echo second >"$BATS_TEST_TMPDIR/f2"
        update_config '.process.env = ["PATH=/bin"]'
        set_args /bin/msp-helper env -- fds
        activated() {
                exec 3<"$BATS_TEST_TMPDIR/f1" 4<"$BATS_TEST_TMPDIR/f2" 5</dev/null
                # LISTEN_PID names msp: it replaces this subshell
                LISTEN_FDS=2 LISTEN_PID=$BASHPID exec "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" </dev/null
        }
        run activated
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value env.LISTEN_FDS)" = 2 ]
        [ "$(value env.LISTEN_PID)" = 1 ]
        [ "$(value env.PATH)" = /bin ]
        [ "$(printf '%s\n' "$output" | grep -c '^fd\.')" -eq 2 ]
        [[ "$(value fd.3)" == *f1 ]]
        [[ "$(value fd.4)" == *f2 ]]
        assert_nothing_left "$CID"
}

@test "stdio: stdin, stdout and stderr pass through untouched" {
        set_args /bin/sh -c 'cat; echo to-stderr >&2; ls -l /proc/self/fd/0 /proc/self/fd/1'
        piped() {
                printf 'line one\nline two\n' |
                        "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" 2>"$BATS_TEST_TMPDIR/err" 3>&-
        }
        run piped
        echo "$output"
        [ "$status" -eq 0 ]
        [ "${lines[0]}" = "line one" ]
        [ "${lines[1]}" = "line two" ]
        [[ "${lines[2]}" == *"/proc/self/fd/0 -> pipe:"* ]]
        [[ "${lines[3]}" == *"/proc/self/fd/1 -> pipe:"* ]]
        [ "$(cat "$BATS_TEST_TMPDIR/err")" = to-stderr ]
        assert_nothing_left "$CID"
}

# ---- runtime options ----

@test "--no-pivot: the container runs in its rootfs" {
        echo only-in-the-image >"$BUNDLE/rootfs/marker"
        set_args /bin/msp-helper read /marker -- pid -- cwd -- mounts
        run msp run --no-pivot -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value content)" = only-in-the-image ]
        [ "$(value pid)" = 1 ]
        [ "$(value cwd)" = / ]
        [ "$(mount_line /proc)" != "" ]
        assert_nothing_left "$CID"
}

# The kernel allows a new procfs/sysfs in a nested user namespace only while the mount
# namespace holds an uncovered full mount of that type; the chroot of --no-pivot leaves
# the host's in it unless msp removes them.
no_pivot_fresh_pseudofs() {
        local caps='["CAP_SETFCAP"]'
        update_config ".process.capabilities = {bounding: $caps, effective: $caps, permitted: $caps}"
        local script='unshare -mr true && echo nested-userns=yes'
        script+='; unshare -mrpf mount -t proc none /proc && echo fresh-proc=yes'
        script+='; unshare -mrnpf mount -t sysfs none /sys && echo fresh-sysfs=yes'
        script+='; echo masked=$(wc -c </proc/timer_list)'
        set_args /bin/sh -c "$script"
        run msp run --no-pivot -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [ "$(value nested-userns)" = yes ]
        [ "$(value masked)" = 0 ]
        [ "$(value fresh-proc)" = "" ]
        [ "$(value fresh-sysfs)" = "" ]
        assert_nothing_left "$CID"
}

@test "--no-pivot: no fresh procfs or sysfs past maskedPaths (the host's are gone)" {
        no_pivot_fresh_pseudofs
}

@test "--no-pivot with a user namespace: no fresh procfs or sysfs (the host's are covered)" {
        update_config '.linux.namespaces += [{"type": "user"}] |
                .linux.uidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}] |
                .linux.gidMappings = [{"containerID": 0, "hostID": 0, "size": 65536}]'
        no_pivot_fresh_pseudofs
}

# with_session_keyring NAME CMD...: run CMD in a new session keyring called NAME.
with_session_keyring() {
        /usr/bin/python3 -c 'import ctypes, os, sys
l = ctypes.CDLL(None, use_errno=True)
if l.syscall(250, 1, ctypes.c_char_p(sys.argv[1].encode())) < 0:  # KEYCTL_JOIN_SESSION_KEYRING
    sys.exit("keyctl: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[2], sys.argv[2:])' "$@" 3>&-
}

@test "keyring: a new session keyring by default, the caller's with --no-new-keyring" {
        [ "$(uname -m)" = x86_64 ] || skip "the keyctl syscall number here is x86_64's"
        ring="msp-test-$$-$BATS_SUITE_TEST_NUMBER"
        # As uid 1000 /proc/keys shows the root-owned keyrings only when possessed.
        update_config '.linux.maskedPaths -= ["/proc/keys"] | .process.user = {"uid": 1000, "gid": 1000}'
        set_args /bin/cat /proc/keys
        run with_session_keyring "$ring" "$MSP" --root "$STATE_ROOT" run -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *" keyring "*" _ses: "* ]]
        [[ "$output" != *" $ring: "* ]]
        run with_session_keyring "$ring" "$MSP" --root "$STATE_ROOT" run --no-new-keyring -b "$BUNDLE" "$CID" </dev/null
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *" keyring "*" $ring: "* ]]
        [[ "$output" != *" _ses: "* ]]
        assert_nothing_left "$CID"
}
