# Shared setup for the runtime bats suites (run as root).
#
# Every test gets its own state root and bundle under $BATS_TEST_TMPDIR, and its
# containers live in cgroups under /msp-test-$$-*, so teardown can prove that nothing is
# left behind: no state dir, cgroup, mount or process.

: "${MSP:=$BATS_TEST_DIRNAME/../../build/runtime/msp}"
: "${MSP_HELPER:=$BATS_TEST_DIRNAME/../../build/tests/helper/msp-helper}"
REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
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
        local d
        for d in /sys/fs/cgroup/*/"$CGROUP_PREFIX" /sys/fs/cgroup/"$CGROUP_PREFIX"; do
                [ -d "$d" ] && find "$d" -mindepth 1 -type d
        done
        return 0
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

# wait_pid_exit PID [SECONDS]: block until the process exits (a pidfd event, not a
# polling loop), at most SECONDS (default 10). Fails on timeout.
wait_pid_exit() {
        /usr/bin/python3 - "$1" "${2:-10}" <<'PY'
import os, select, sys
try:
    fd = os.pidfd_open(int(sys.argv[1]))
except ProcessLookupError:
    sys.exit(0)
r, _, _ = select.select([fd], [], [], float(sys.argv[2]))
sys.exit(0 if r else 1)
PY
}
