# Shared setup for tests/containerd: Debian's containerd 1.6, started by the suite on a
# private socket, root and state in $ENG_DIR (tests/engines/lib.bash), driven with ctr.
# Containers run through the io.containerd.runc.v2 shim with msp as its runc binary
# (`ctr run --runc-binary`, the BinaryName runtime option a CRI handler sets) and msp's
# state under $ENG_DIR/msp-root. The containerd namespace is $ENG_CGROUP, so the
# containers' cgroups (ctr's default /<namespace>/<id>) are all below /$ENG_CGROUP.
# The image is the busybox tree of bundles/busybox, imported from an OCI archive
# (tests/engines/oci-archive.sh): no registry.

load ../lib/bats-helpers
load ../engines/lib

CT_IMAGE=localhost/msp-busybox:test

# ctr on our containerd and namespace; fd 3 is bats'.
ct() {
        "$CTR" -a "$(CTD_SOCK)" -n "$ENG_CGROUP" "$@" 3>&-
}

# The runtime roots of msp and runc: the shim adds the namespace.
CT_MSP_ROOT() { echo "$ENG_DIR/msp-root"; }
CT_RUNC_ROOT() { echo "$ENG_DIR/runc-root"; }

# ct_run [RUN OPTIONS] IMAGE ID [CMD...]: ctr run with msp as the shim's runc binary.
ct_run() {
        ct run --runc-binary "$MSP" --runc-root "$(CT_MSP_ROOT)" "$@"
}

# ct_run_with RUNTIME ...: the same with RUNTIME msp or runc.
ct_run_with() {
        local rt=$1
        shift
        case $rt in
        msp) ct_run "$@" ;;
        runc) ct run --runc-binary "$RUNC" --runc-root "$(CT_RUNC_ROOT)" "$@" ;;
        *) echo "ct_run_with: runtime $rt?" >&2; return 2 ;;
        esac
}

ct_setup_file() {
        eng_need containerd || return 1
        ctd_start || return 1
        eng_rootfs "$ENG_DIR/rootfs" || return 1
        bash "$REPO/tests/engines/oci-archive.sh" "$ENG_DIR/rootfs" "$CT_IMAGE" "$ENG_DIR/image.tar" ||
                return 1
        ct image import "$ENG_DIR/image.tar" >/dev/null
}

# ct_remove ID...: the tasks killed and deleted, then the containers (snapshots too).
ct_remove() {
        local id
        for id in "$@"; do
                ct task kill -s KILL "$id" >/dev/null 2>&1 || true
                eng_wait 10 ct_task_gone_or_stopped "$id" || true
                ct task delete "$id" >/dev/null 2>&1 || true
                ct container delete "$id" >/dev/null 2>&1 || true
        done
}

ct_task_gone_or_stopped() {
        local s
        s=$(ct_task_status "$1")
        [ -z "$s" ] || [ "$s" = STOPPED ]
}

# ct_task_status ID: RUNNING, PAUSED, STOPPED, ... or empty without a task.
ct_task_status() {
        ct task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $3 }'
}

# ct_wait_status ID STATUS [SECONDS]
ct_wait_status() {
        local s=
        for _ in $(seq $((${3:-10} * 10))); do
                s=$(ct_task_status "$1")
                [ "$s" = "$2" ] && return 0
                sleep 0.1
        done
        echo "task $1: status '$s', wanted '$2'"
        return 1
}

# ct_exit_status ID: delete the stopped task and print its exit status (ctr prints a
# warning naming a non-zero one).
ct_exit_status() {
        local out
        out=$(ct task delete "$1" 2>&1) || { echo "$out" >&2; return 1; }
        if [[ "$out" =~ exit\ code\ ([0-9]+) ]]; then
                echo "${BASH_REMATCH[1]}"
        else
                echo 0
        fi
}

ct_teardown_file() {
        [ -n "${ENG_DIR:-}" ] && [ -d "$ENG_DIR" ] || return 0
        # shellcheck disable=SC2046 # one word per id
        [ -S "$(CTD_SOCK)" ] && ct_remove $(ct container ls -q 2>/dev/null)
        eng_cleanup
}

# teardown: containers a failed test left behind (a passing one removed its own).
ct_teardown() {
        local ids
        ids=$(ct container ls -q 2>/dev/null) || return 0
        # shellcheck disable=SC2086 # one word per id
        [ -z "$ids" ] || ct_remove $ids
        [ -z "${CT_EVENTS_PID:-}" ] || eng_stop_pid "$CT_EVENTS_PID" 2
}

# ct_leftovers ID: what is left of container ID, one line each; empty when all is clean.
ct_leftovers() {
        local id=$1 pid
        ct container ls -q | grep -Fx "$id" | sed 's/^/container: /'
        [ -e "$(CT_MSP_ROOT)/$ENG_CGROUP/$id" ] && echo "msp state: $(CT_MSP_ROOT)/$ENG_CGROUP/$id"
        [ -e "$ENG_DIR/containerd/state/io.containerd.runtime.v2.task/$ENG_CGROUP/$id" ] &&
                echo "bundle: $ENG_DIR/containerd/state/io.containerd.runtime.v2.task/$ENG_CGROUP/$id"
        for pid in $(ctd_shims); do
                tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -F -- "-id $id " >/dev/null &&
                        echo "shim: $pid"
        done
        eng_cgroups_left | grep -F "/$id" | sed 's/^/cgroup: /'
        eng_mounts_left "/$id/" | sed 's/^/mount: /'
        return 0
}

# assert_gone ID: nothing of container ID is left (the shim exits asynchronously).
assert_gone() {
        wait_clean ct_leftovers "$1"
}

# ct_events_start: `ctr events` of our namespace into $BATS_TEST_TMPDIR/events (stopped
# by teardown).
ct_events_start() {
        # a simple command, so that $! is ctr itself
        "$CTR" -a "$(CTD_SOCK)" -n "$ENG_CGROUP" events >"$BATS_TEST_TMPDIR/events" 2>&1 3>&- &
        CT_EVENTS_PID=$!
}

# ct_cgroup_file ID V1CONTROLLER V1FILE V2FILE: the host path of a cgroup file of the task.
ct_cgroup_file() {
        local pid
        pid=$(ct task ls | awk -v id="$1" '$1 == id { print $2 }')
        [ -n "$pid" ] && [ "$pid" -gt 0 ] || { echo "task $1 has no pid" >&2; return 1; }
        cgroup_file_of "$pid" "$2" "$3" "$4"
}
