# The integration suites' setup (tests/integration/*.bats, run as root), on top of the
# helpers every bats suite shares (tests/lib/bats-helpers.bash: $REPO, $MSP, $MSP_HELPER,
# terminals, waits, cgroups).
#
# Every test gets its own state root and bundle under $BATS_TEST_TMPDIR, and its
# containers live in cgroups under /msp-test-$$-*, so teardown can prove that nothing is
# left behind: no state dir, cgroup, mount or process.

load ../lib/bats-helpers
CGROUP_PREFIX="msp-test-$$"

# fd 3 is bats' own channel: a container (which inherits our fds) must not hold it.
msp() {
        "$MSP" --root "$STATE_ROOT" "$@" 3>&-
}

# create_bg ID [ARGS...]: create a container whose stdio goes to $BATS_TEST_TMPDIR/ID.out
# (the init keeps the caller's stdio: under `run` it would hold bats' pipe open).
create_bg() {
        local id=$1
        shift
        msp create -b "$BUNDLE" "$@" "$id" >"$BATS_TEST_TMPDIR/$id.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/$id.out"; return 1; }
}

# A fresh busybox bundle with the static helper at /bin/msp-helper. The config is the
# prepared busybox bundle's, rewritten with jq by the caller through update_config.
setup_bundle() {
        STATE_ROOT="$BATS_TEST_TMPDIR/state"
        BUNDLE="$BATS_TEST_TMPDIR/bundle"
        mkdir -p "$BUNDLE"
        if [ ! -d "$BATS_FILE_TMPDIR/rootfs" ]; then
                bash "$REPO/bundles/busybox/prepare.sh" "$BATS_FILE_TMPDIR/rootfs" >/dev/null
                [ -x "$MSP_HELPER" ] && cp "$MSP_HELPER" "$BATS_FILE_TMPDIR/rootfs/bin/msp-helper"
        fi
        cp -a "$BATS_FILE_TMPDIR/rootfs" "$BUNDLE/rootfs"
        cp "$REPO/bundles/busybox/config.json" "$BUNDLE/config.json"
        CID="t$BATS_SUITE_TEST_NUMBER-$$"
        update_config ".linux.cgroupsPath = \"/$CGROUP_PREFIX/$CID\" | .root.readonly = false"
}

# update_config JQ_FILTER: edit the bundle's config.json in place.
update_config() {
        local tmp="$BUNDLE/config.json.tmp"
        jq "$1" "$BUNDLE/config.json" >"$tmp"
        mv "$tmp" "$BUNDLE/config.json"
}

# set_args ARG...: process.args as a JSON array.
set_args() {
        local json
        json=$(printf '%s\n' "$@" | jq -R . | jq -s .)
        update_config ".process.args = $json"
}

# The cgroup dirs of this test run that still exist, one a line.
leftover_cgroups() {
        cgroups_below "$CGROUP_PREFIX"
}

# Mounts that reference this test's directory (a leaked mount would show here).
leftover_mounts() {
        grep -F "$BATS_TEST_TMPDIR" /proc/self/mountinfo || true
}

assert_nothing_left() {
        local id=$1
        [ ! -e "$STATE_ROOT/$id" ] || { echo "state dir left: $STATE_ROOT/$id"; return 1; }
        local cg
        cg=$(leftover_cgroups)
        [ -z "$cg" ] || { echo "cgroups left: $cg"; return 1; }
        local mnt
        mnt=$(leftover_mounts)
        [ -z "$mnt" ] || { echo "mounts left: $mnt"; return 1; }
}

# state_field ID FIELD: one field of `msp state`.
state_field() {
        msp state "$1" | jq -r ".$2"
}

teardown_containers() {
        local id
        if [ -d "${STATE_ROOT:-/nonexistent}" ]; then
                for id in $(ls "$STATE_ROOT"); do
                        msp delete --force "$id" >/dev/null 2>&1 || true
                done
        fi
        local d
        for d in /sys/fs/cgroup/*/"$CGROUP_PREFIX" /sys/fs/cgroup/"$CGROUP_PREFIX"; do
                [ -d "$d" ] && find "$d" -depth -mindepth 1 -type d -exec rmdir {} \; 2>/dev/null
                [ -d "$d" ] && rmdir "$d" 2>/dev/null
        done
        return 0
}

# exe_attack MSP CID EVIL DIR: CVE-2019-5736's published exploit, its second half
# (escape.bats, rootless-exe.bats). EVIL is a process of container CID whose
# /proc/self/exe is the runtime's and which holds the runtime there until the bundle's
# `hold` FIFO is read; an unprivileged attacker exec'd by MSP (the command or function
# that runs msp) into CID holds that exe, tries to write it while the runtime is there,
# and reopens it for writing after it left. The attacker's pid file and report go to
# DIR; the report is echoed and left in $output.
exe_attack() {
        local msp_cmd=$1 cid=$2 evil=$3 dir=$4 inner attacker
        inner=$(awk '/^NSpid:/ {print $NF}' /proc/"$evil"/status)
        $msp_cmd exec --detach --pid-file "$dir/attacker.pid" "$cid" \
                /bin/msp-helper overwrite-exe "$inner" /sync >"$dir/attack.out" 2>&1 </dev/null
        attacker=$(cat "$dir/attacker.pid")
        timeout 10 sh -c 'echo >"$1"' _ "$BUNDLE/rootfs/sync"   # it holds the exe
        timeout 10 cat "$BUNDLE/rootfs/hold" >/dev/null        # the runtime exits
        wait_pid_exit "$evil"
        timeout 10 sh -c 'echo >"$1"' _ "$BUNDLE/rootfs/sync"   # reopen for writing
        wait_pid_exit "$attacker"
        output=$(cat "$dir/attack.out")
        echo "$output"
}

# ---- containers of a test ----

# start_sleeper: create + start $CID running a long sleep (stdio to a file).
start_sleeper() {
        set_args /bin/sleep 100000
        create_bg "$CID"
        msp start "$CID"
        [ "$(state_field "$CID" status)" = running ]
}

# run_detached ARG...: a running container with these process.args.
run_detached() {
        set_args "$@"
        msp run -d -b "$BUNDLE" "$CID" >"$BATS_TEST_TMPDIR/$CID.out" 2>&1 </dev/null ||
                { cat "$BATS_TEST_TMPDIR/$CID.out"; return 1; }
}

# ---- shared by container, fixtures, terminal, hooks and userns suites ----

: "${MSP_CONSOLE_RECV:=$REPO/build/tests/helper/msp-console-recv}"

# helper_run ARGS...: run /bin/msp-helper ARGS in a fresh container with `msp run`;
# $status and $output as from bats' run.
helper_run() {
        set_args /bin/msp-helper "$@"
        run msp run -b "$BUNDLE" "$CID" </dev/null
}

# value KEY: the value of the first `KEY=...` line of $output.
value() {
        printf '%s\n' "$output" | sed -n "s/^$1=//p" | head -n1
}

# host_ns TYPE: the inode of the caller's TYPE namespace.
host_ns() {
        stat -L -c %i "/proc/self/ns/$1"
}

# cap_mask CAP_NAME...: the 16-hex-digit mask /proc/PID/status prints for those caps.
cap_mask() {
        local -A num=(
                [CAP_CHOWN]=0 [CAP_DAC_OVERRIDE]=1 [CAP_DAC_READ_SEARCH]=2 [CAP_FOWNER]=3
                [CAP_FSETID]=4 [CAP_KILL]=5 [CAP_SETGID]=6 [CAP_SETUID]=7 [CAP_SETPCAP]=8
                [CAP_LINUX_IMMUTABLE]=9 [CAP_NET_BIND_SERVICE]=10 [CAP_NET_BROADCAST]=11
                [CAP_NET_ADMIN]=12 [CAP_NET_RAW]=13 [CAP_IPC_LOCK]=14 [CAP_IPC_OWNER]=15
                [CAP_SYS_MODULE]=16 [CAP_SYS_RAWIO]=17 [CAP_SYS_CHROOT]=18 [CAP_SYS_PTRACE]=19
                [CAP_SYS_PACCT]=20 [CAP_SYS_ADMIN]=21 [CAP_SYS_BOOT]=22 [CAP_SYS_NICE]=23
                [CAP_SYS_RESOURCE]=24 [CAP_SYS_TIME]=25 [CAP_SYS_TTY_CONFIG]=26 [CAP_MKNOD]=27
                [CAP_LEASE]=28 [CAP_AUDIT_WRITE]=29 [CAP_AUDIT_CONTROL]=30 [CAP_SETFCAP]=31
                [CAP_MAC_OVERRIDE]=32 [CAP_MAC_ADMIN]=33 [CAP_SYSLOG]=34 [CAP_WAKE_ALARM]=35
                [CAP_BLOCK_SUSPEND]=36 [CAP_AUDIT_READ]=37 [CAP_PERFMON]=38 [CAP_BPF]=39
                [CAP_CHECKPOINT_RESTORE]=40
        )
        local m=0 c
        for c in "$@"; do
                [ -n "${num[$c]:-}" ] || { echo "cap_mask: unknown $c" >&2; return 1; }
                m=$((m | (1 << num[$c])))
        done
        printf '%016x\n' "$m"
}

# json_list WORD...: a JSON array of strings.
json_list() {
        if [ $# -eq 0 ]; then
                echo '[]'
                return
        fi
        printf '%s\n' "$@" | jq -R . | jq -cs .
}

# console_recv_bg SOCKET [ARGS...]: start msp-console-recv in the background on SOCKET
# (it returns once the socket listens); its output goes to $BATS_TEST_TMPDIR/console.out,
# its facts (pty=, winsize=) to console.err, and its pid is in $RECV_PID.
console_recv_bg() {
        local sock=$1
        shift
        "$MSP_CONSOLE_RECV" -d "$BATS_TEST_TMPDIR/recv.pid" "$@" "$sock" \
                >"$BATS_TEST_TMPDIR/console.out" 2>"$BATS_TEST_TMPDIR/console.err" 3>&-
        RECV_PID=$(cat "$BATS_TEST_TMPDIR/recv.pid")
}

# console_output: what the receiver copied from the pty, without the CRs.
console_output() {
        tr -d '\r' <"$BATS_TEST_TMPDIR/console.out"
}

# make_traversable DIR: let any uid (a user namespace's mapped root) walk down to DIR:
# bats makes its temp dirs 0700. Only directories inside $BATS_RUN_TMPDIR are touched.
make_traversable() {
        local d top
        d=$(realpath "$1")
        top=$(realpath "$BATS_RUN_TMPDIR")
        while [[ "$d" == "$top"/* ]]; do
                chmod o+x "$d"
                d=$(dirname "$d")
        done
        chmod o+x "$top"
}

# exe_protection PID: how /proc/PID/exe is kept from being written (CVE-2019-5736):
# "sealed-memfd" (a memfd copy sealed against writes: the dynamic and sanitizer builds),
# "ro-view" (the file itself, through a read-only bind mount of it alone that is attached
# nowhere: what the static msp's entry point makes, runtime/lib/selfexe-early.c) or
# "exposed" (anything else: the host file as it is).
exe_protection() {
        /usr/bin/python3 - "/proc/$1/exe" <<'PY'
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    seals = fcntl.fcntl(fd, 1034)  # F_GET_SEALS: only memfds have seals
    print("sealed-memfd" if seals & 0xf == 0xf else "exposed")
    sys.exit(0)
except OSError:
    pass
mnt = [l.split()[1] for l in open("/proc/self/fdinfo/%d" % fd) if l.startswith("mnt_id:")][0]
attached = any(l.split()[0] == mnt for l in open("/proc/self/mountinfo"))
ro = os.fstatvfs(fd).f_flag & os.ST_RDONLY
print("ro-view" if ro and not attached else "exposed")
PY
}

# set_caps BND EFF PRM INH AMB: each a space-separated list of names.
set_caps() {
        update_config ".process.capabilities = {
                \"bounding\": $(json_list $1), \"effective\": $(json_list $2),
                \"permitted\": $(json_list $3), \"inheritable\": $(json_list $4),
                \"ambient\": $(json_list $5)}"
}

# lsm_active NAME: whether the kernel runs that LSM (its securityfs list, read in a
# private mount namespace: this host does not mount securityfs).
lsm_active() {
        unshare -m sh -c 'mount -t securityfs none /sys/kernel/security &&
                tr , "\n" </sys/kernel/security/lsm' | grep -qx "$1"
}
