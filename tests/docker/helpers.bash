# Shared setup for tests/docker: Debian's dockerd and containerd, started by the suite on
# private sockets and roots in $ENG_DIR (tests/engines/lib.bash), with msp registered by
# contrib/docker/daemon.json (the file a user installs, pointed at the built msp).
#
# dockerd: --iptables=false --bridge=none (no networks: containers get none), cgroupfs
# below /$ENG_CGROUP, --live-restore (containers outlive a dockerd restart), the external
# containerd of the suite. The image is the busybox tree of bundles/busybox, imported
# with `docker import`: no registry.

load ../lib/bats-helpers
load ../engines/lib
ENGINE_CLI=dk

DK_IMAGE=msp-busybox:test

# dk_run [RUN OPTIONS] IMAGE [CMD...]: docker run with msp.
dk_run() {
        dk run --runtime msp "$@"
}

# The runtime root docker 20.10 gives every runc-compatible runtime, msp included.
DK_RUNTIME_ROOT() { echo "$ENG_DIR/exec/runtime-runc/moby"; }

dk_setup_file() {
        eng_need docker || return 1
        mkdir -p "$ENG_DIR/client"
        jq --arg p "$MSP" '.runtimes.msp.path = $p' "$REPO/contrib/docker/daemon.json" \
                >"$ENG_DIR/daemon.json"
        ctd_start || return 1
        dk_start_daemon || return 1
        eng_rootfs "$ENG_DIR/rootfs" || return 1
        tar -C "$ENG_DIR/rootfs" -c . | dk import --change 'CMD ["/bin/sh"]' - "$DK_IMAGE" >/dev/null
}

dk_teardown_file() {
        [ -n "${ENG_DIR:-}" ] && [ -d "$ENG_DIR" ] || return 0
        # shellcheck disable=SC2046 # one word per id
        dk rm -f $(dk ps -aq 2>/dev/null) >/dev/null 2>&1 || true
        dk_stop_daemon
        eng_cleanup
}

# teardown: containers a failed test left behind (a passing one removed its own).
dk_teardown() {
        local ids
        ids=$(dk ps -aq 2>/dev/null) || return 0
        # shellcheck disable=SC2086 # one word per id
        [ -z "$ids" ] || dk rm -f $ids >/dev/null 2>&1 || true
}

# dk_leftovers ID: what is left of container ID, one line each; empty when all is clean.
dk_leftovers() {
        local id=$1
        dk ps -aq --no-trunc | grep -F "$id" | sed 's/^/container: /'
        [ -e "$(DK_RUNTIME_ROOT)/$id" ] && echo "msp state: $(DK_RUNTIME_ROOT)/$id"
        [ -e "$ENG_DIR/exec/containerd/$id" ] && echo "exec dir: $ENG_DIR/exec/containerd/$id"
        eng_cgroups_left | grep -F "$id" | sed 's/^/cgroup: /'
        eng_mounts_left "$id" | sed 's/^/mount: /'
        return 0
}

# assert_gone ID: nothing of container ID is left (docker cleans up asynchronously).
assert_gone() {
        wait_clean dk_leftovers "$1"
}

# cgroup_file NAME V1CONTROLLER V1FILE V2FILE: the host path of a cgroup file of the container.
cgroup_file() {
        local pid
        pid=$(dk inspect -f '{{.State.Pid}}' "$1")
        [ "$pid" -gt 0 ] || { echo "container $1 has no pid" >&2; return 1; }
        cgroup_file_of "$pid" "$2" "$3" "$4"
}
