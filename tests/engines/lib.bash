# Shared by tests/docker and tests/containerd: the engines from the distribution, started
# by the suite itself on private sockets and state, driving the built msp.
#
# Everything of a run lives in $ENG_DIR (/tmp/msp-<suite>.XXXXXX): containerd's root,
# state, sockets and config, dockerd's data and exec roots, msp's --root, logs and the
# image. Containers get cgroups below /$ENG_CGROUP only. Daemons run in their own session
# (setsid) and are stopped by pid with bounded waits; shims are found by the containerd
# address they were given, which names $ENG_DIR. Loaded after tests/lib/bats-helpers.bash
# ($REPO, $MSP, $MSP_HELPER, the cgroup, mount and poll helpers).

RUNC=/usr/sbin/runc
# /usr/local/bin/docker may be an unrelated client: always the distribution's.
DOCKER=/usr/bin/docker
DOCKERD=/usr/sbin/dockerd
CONTAINERD=/usr/bin/containerd
CTR=/usr/bin/ctr

# eng_need: the engines and runc are installed (contrib/install-deps.sh engines when not);
# loud, never a skip. Then $ENG_DIR and $ENG_CGROUP exist.
eng_need() {
        local suite=$1 t
        if ! [ -x "$DOCKERD" ] || ! [ -x "$DOCKER" ] || ! [ -x "$CONTAINERD" ] || ! [ -x "$CTR" ] ||
                ! [ -x "$RUNC" ]; then
                bash "$REPO/contrib/install-deps.sh" engines >&2 || true
        fi
        for t in "$DOCKERD" "$DOCKER" "$CONTAINERD" "$CTR" "$RUNC"; do
                [ -x "$t" ] ||
                        { echo "$t is missing and 'contrib/install-deps.sh engines' did not install it" >&2; return 1; }
        done
        [ -x "$MSP" ] || { echo "MSP=$MSP is not an executable" >&2; return 1; }
        ENG_DIR=$(mktemp -d "/tmp/msp-$suite.XXXXXX")
        ENG_CGROUP="msp-$suite-test-${ENG_DIR##*.}"
        export ENG_DIR ENG_CGROUP
        # dockerd writes its trust key to /etc/docker/key.json: removed again at the end if
        # it was not there before.
        [ -e /etc/docker/key.json ] || touch "$ENG_DIR/remove-key-json"
}

# eng_rootfs DIR: the busybox tree of bundles/busybox with the static test helper at
# /bin/msp-helper and a non-executable /etc/noexec.
eng_rootfs() {
        bash "$REPO/bundles/busybox/prepare.sh" "$1" >/dev/null || return 1
        if [ -x "$MSP_HELPER" ]; then
                cp "$MSP_HELPER" "$1/bin/msp-helper"
        fi
        printf 'not a program\n' >"$1/etc/noexec"
        chmod 0644 "$1/etc/noexec"
}

# eng_wait SECONDS CMD...: run CMD every 50 ms until it succeeds; 1 when time runs out.
eng_wait() {
        local n=$(($1 * 20))
        shift
        while [ "$n" -gt 0 ]; do
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.05
                n=$((n - 1))
        done
        return 1
}

# eng_stop_pid PID [SECONDS]: TERM, wait up to SECONDS (10) for it to go, then KILL.
eng_stop_pid() {
        local pid=$1 max=${2:-10}
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
        kill -TERM "$pid" 2>/dev/null || true
        eng_wait "$max" eval "! kill -0 $pid" && return 0
        echo "pid $pid ignored TERM for ${max}s: KILL" >&2
        kill -KILL "$pid" 2>/dev/null || true
        eng_wait 5 eval "! kill -0 $pid" || true
}

# ---- containerd ----

CTD_SOCK() { echo "$ENG_DIR/containerd.sock"; }

# ctd_config DIR: a containerd config with root, state, sockets and the opt directory in
# DIR (containerd's defaults are below /var/lib, /run and /opt).
ctd_config() {
        cat <<EOF
version = 2
root = "$1/root"
state = "$1/state"
[grpc]
  address = "$1.sock"
[ttrpc]
  address = "$1.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$1/opt"
EOF
}

# ctd_start: the suite's containerd, in $ENG_DIR/containerd (the CRI plugin off: no CNI
# here). Waits (bounded) until it answers.
ctd_start() {
        mkdir -p "$ENG_DIR/containerd"
        { echo 'disabled_plugins = ["io.containerd.grpc.v1.cri"]'; ctd_config "$ENG_DIR/containerd"; } \
                >"$ENG_DIR/containerd/config.toml"
        setsid "$CONTAINERD" --config "$ENG_DIR/containerd/config.toml" \
                </dev/null >>"$ENG_DIR/containerd.log" 2>&1 3>&- &
        echo $! >"$ENG_DIR/containerd.pid"
        eng_wait 20 "$CTR" -a "$(CTD_SOCK)" version ||
                { echo "containerd did not answer within 20 s:" >&2; tail -20 "$ENG_DIR/containerd.log" >&2; return 1; }
}

# ctd_stop: containerd itself (its shims keep running, as after a crash or an upgrade).
ctd_stop() {
        [ -f "$ENG_DIR/containerd.pid" ] || return 0
        eng_stop_pid "$(cat "$ENG_DIR/containerd.pid")"
        rm -f "$ENG_DIR/containerd.pid"
}

# The shims started for our containerd, by pid: the address in their command line.
ctd_shims() {
        local p
        for p in /proc/[0-9]*; do
                tr '\0' ' ' 2>/dev/null <"$p/cmdline" |
                        grep -F -- "-address $(CTD_SOCK) " >/dev/null && echo "${p#/proc/}"
        done
        return 0
}

# ---- dockerd (on the suite's containerd) ----

# the distribution's client on our socket; its config dir is ours too; fd 3 is bats'.
dk() {
        DOCKER_CONFIG="$ENG_DIR/client" "$DOCKER" -H "unix://$ENG_DIR/docker.sock" "$@" 3>&-
}

# dk_start_daemon: dockerd on $ENG_DIR/docker.sock with $ENG_DIR/daemon.json, data and exec
# roots in $ENG_DIR, no networks, cgroupfs below /$ENG_CGROUP, --live-restore; waits (bounded).
dk_start_daemon() {
        setsid "$DOCKERD" -H "unix://$ENG_DIR/docker.sock" \
                --config-file "$ENG_DIR/daemon.json" \
                --data-root "$ENG_DIR/docker" --exec-root "$ENG_DIR/exec" \
                --pidfile "$ENG_DIR/dockerd.pid" --containerd "$(CTD_SOCK)" \
                --iptables=false --ip-masq=false --bridge=none --userland-proxy=false \
                --exec-opt native.cgroupdriver=cgroupfs --cgroup-parent "/$ENG_CGROUP" \
                --live-restore \
                </dev/null >>"$ENG_DIR/dockerd.log" 2>&1 3>&- &
        eng_wait 30 dk version ||
                { echo "dockerd did not answer within 30 s:" >&2; tail -20 "$ENG_DIR/dockerd.log" >&2; return 1; }
}

dk_stop_daemon() {
        [ -f "$ENG_DIR/dockerd.pid" ] || return 0
        eng_stop_pid "$(cat "$ENG_DIR/dockerd.pid")" 20
        eng_wait 5 test ! -e "$ENG_DIR/dockerd.pid" || rm -f "$ENG_DIR/dockerd.pid"
}

# ---- cleanup ----

# eng_cleanup: stop whatever of ours still runs, unmount, remove cgroups and $ENG_DIR.
# Callers first remove their containers through the engine (the polite way).
eng_cleanup() {
        [ -n "${ENG_DIR:-}" ] && [ -d "$ENG_DIR" ] || return 0
        local pid d
        [ -f "$ENG_DIR/dockerd.pid" ] && eng_stop_pid "$(cat "$ENG_DIR/dockerd.pid")" 20
        ctd_stop
        for pid in $(ctd_shims); do
                eng_stop_pid "$pid" 5
        done
        # Container processes a killed shim left: only those in our cgroups.
        for d in /sys/fs/cgroup/pids/"$ENG_CGROUP" /sys/fs/cgroup/"$ENG_CGROUP"; do
                [ -d "$d" ] || continue
                find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | xargs -r kill -KILL 2>/dev/null || true
        done
        # Only mounts below our own directory (overlay snapshots, shm).
        umount_below "$ENG_DIR"
        cgroups_remove "$ENG_CGROUP"
        if [ -e "$ENG_DIR/remove-key-json" ]; then
                rm -f /etc/docker/key.json
                rmdir /etc/docker 2>/dev/null || true
        fi
        rm -rf --one-file-system "$ENG_DIR"
}

# ---- what a container leaves ----

# eng_cgroups_left: cgroup directories below /$ENG_CGROUP, one a line.
eng_cgroups_left() {
        cgroups_below "$ENG_CGROUP"
}

# eng_mounts_left ID: mounts whose path names the container ID.
eng_mounts_left() {
        grep -F "$1" /proc/self/mountinfo | awk '{print $5}'
        return 0
}
