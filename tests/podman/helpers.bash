# Shared setup for tests/podman: the real podman from the distribution driving the built
# msp, with all of podman's state private to this run.
#
# setup_file makes one directory, $PM_DIR (/tmp/msp-podman.XXXXXX), holding podman's
# --root/--runroot (vfs storage: no overlay mounts), tmp dir, file locks, event log and a
# containers.conf built from contrib/podman/50-msp.conf.in (so the shipped drop-in is what
# registers msp). Every container gets --cgroup-parent /$PM_CGROUP, so leftover cgroups
# are found there and nowhere else is looked at. The image is busybox from the
# busybox-static package, imported with `podman import`: no registry.

load ../lib/bats-helpers
PM_IMAGE=localhost/msp-busybox:test
# Below this host's hard limits (podman's defaults, 1048576 files, exceed them).
PM_ULIMITS=(--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)

# podman on the private state; fd 3 is bats' own and must not reach conmon/containers.
pm() {
        podman --root "$PM_DIR/root" --runroot "$PM_DIR/runroot" --storage-driver vfs "$@" 3>&-
}
ENGINE_CLI=pm

# pm_run [RUN OPTIONS] IMAGE [CMD...]: podman run with the suite's fixed options.
pm_run() {
        pm run --network none --cgroup-parent "/$PM_CGROUP" "${PM_ULIMITS[@]}" "$@"
}

# pm_isolate: copy a containers.conf from stdin to stdout, adding to its [engine] table
# (and a [network] table) what keeps podman's state in $PM_DIR.
pm_isolate() {
        awk -v d="$PM_DIR" '{ print } $0 == "[engine]" {
                print "runtime = \"msp\""
                print "cgroup_manager = \"cgroupfs\""
                print "events_logger = \"file\""
                print "events_logfile_path = \"" d "/events.log\""
                print "tmp_dir = \"" d "/tmp\""
                print "volume_path = \"" d "/volumes\""
                print "lock_type = \"file\""
        }
        END { print "\n[network]\nnetwork_config_dir = \"" d "/net\"" }'
}

pm_setup_file() {
        if ! command -v podman >/dev/null 2>&1 || ! command -v conmon >/dev/null 2>&1; then
                bash "$REPO/contrib/install-deps.sh" podman >&2 || true
        fi
        # Loud, never a skip: CI installs podman through contrib/install-deps.sh podman.
        command -v podman >/dev/null 2>&1 ||
                { echo "podman is missing and 'contrib/install-deps.sh podman' did not install it" >&2; return 1; }
        command -v conmon >/dev/null 2>&1 ||
                { echo "conmon is missing and 'contrib/install-deps.sh podman' did not install it" >&2; return 1; }
        [ -x "$MSP" ] || { echo "MSP=$MSP is not an executable" >&2; return 1; }
        [ -x /bin/busybox ] || { echo "/bin/busybox missing (busybox-static)" >&2; return 1; }

        PM_DIR=$(mktemp -d /tmp/msp-podman.XXXXXX)
        PM_CGROUP="msp-podman-test-${PM_DIR##*.}"
        export PM_DIR PM_CGROUP
        mkdir -p "$PM_DIR/tmp" "$PM_DIR/net"

        # The shipped drop-in with the built msp, plus what isolates this podman.
        sed "s|@MSP_PATH@|$MSP|; s|@DROPIN_DIR@|$PM_DIR|" "$REPO/contrib/podman/50-msp.conf.in" |
                pm_isolate >"$PM_DIR/containers.conf"
        export CONTAINERS_CONF="$PM_DIR/containers.conf"

        busybox_rootfs "$PM_DIR/rootfs"
        tar -C "$PM_DIR/rootfs" -c . |
                pm import --change 'CMD ["/bin/sh"]' - "$PM_IMAGE" >/dev/null
}

pm_teardown_file() {
        [ -n "${PM_DIR:-}" ] && [ -d "$PM_DIR" ] || return 0
        pm rm -af -t 0 >/dev/null 2>&1 || true
        pm rmi -af >/dev/null 2>&1 || true
        # Only mounts below our own directory (none unless a test failed).
        umount_below "$PM_DIR"
        # conmon of the last containers may still be exiting: cgroups_remove retries
        cgroups_remove "$PM_CGROUP"
        rm -rf "$PM_DIR"
}

# teardown: containers a failed test left behind (a passing one removed its own).
pm_teardown() {
        pm rm -af -t 0 >/dev/null 2>&1 || true
}

# Container IDs this podman ever created (from its event log).
pm_ids() {
        grep -o '"ID":"[0-9a-f]\{64\}","Image"' "$PM_DIR/events.log" 2>/dev/null |
                cut -d'"' -f4 | sort -u
}

# What is left of our containers, one line each; empty when all is clean.
pm_leftovers() {
        local id d
        pm ps -a --format '{{.ID}} {{.Names}} {{.Status}}' | sed 's/^/container: /'
        for id in $(pm_ids); do
                [ -e "/run/msp/$id" ] && echo "msp state: /run/msp/$id"
                pgrep -f "conmon .*-c $id" >/dev/null && echo "conmon of $id still running"
        done
        for d in /sys/fs/cgroup/*/"$PM_CGROUP" /sys/fs/cgroup/"$PM_CGROUP"; do
                # podman keeps conmon's shared cgroup, <parent>/conmon
                [ -d "$d" ] && find "$d" -mindepth 1 -type d ! -path "*/conmon" | sed 's/^/cgroup: /'
        done
        grep -F " $PM_DIR/" /proc/self/mountinfo | awk '{print "mount: " $5}'
        return 0
}

# assert_clean: nothing of this test's containers is left (wait_clean polls).
assert_clean() {
        wait_clean pm_leftovers
}

# cgroup_file NAME V1CONTROLLER V1FILE V2FILE: the path of a cgroup file of the container.
cgroup_file() {
        local pid
        pid=$(pm inspect -f '{{.State.Pid}}' "$1")
        [ "$pid" -gt 0 ] || { echo "container $1 has no pid" >&2; return 1; }
        cgroup_file_of "$pid" "$2" "$3" "$4"
}
