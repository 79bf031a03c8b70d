# The helpers every bats suite shares: the integration suites (tests/integration) and the
# engine suites (tests/docker, tests/containerd, tests/podman, tests/podman-rootless,
# tests/kubernetes). A suite's .bats file (or its helpers.bash) does `load ../lib/bats-helpers`
# first; what only one suite needs stays in that suite's helpers.bash, and the private
# dockerd/containerd of the docker and containerd suites in tests/engines/lib.bash.
#
# What is here: the source tree and the built programs (meson's test env names them; the
# defaults are the build/ of this tree), terminals (tests/helper/pty-run.py), waiting for
# a process, the cgroups, mounts and busybox tree of a suite, and the bounded polls of the
# engine suites. Nothing runs when loaded but these assignments.

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
: "${MSP:=$REPO/build/runtime/msp}"
: "${MSP_HELPER:=$REPO/build/tests/helper/msp-helper}"

# ---- terminals ----

# pty_run [--rows N --cols N] -- CMD...: CMD on a real pty (the engines' -t/-it check
# isatty), at most 30 s; what it wrote there on stdout, its exit status.
pty_run() {
        /usr/bin/python3 "$REPO/tests/helper/pty-run.py" --timeout 30 "$@" 3>&-
}

# on_pty [PTY-RUN OPTIONS] -- CMD [ARG...]: CMD as an interactive shell runs it, on a
# fresh pty that is its session's controlling terminal; prints what it wrote there without
# the CRs, returns its status. What is left unread in the terminal's input when it has
# exited (what the shell would run next) is in $BATS_TEST_TMPDIR/pending.
on_pty() {
        local rc=0
        /usr/bin/python3 "$REPO/tests/helper/pty-run.py" --pending "$BATS_TEST_TMPDIR/pending" \
                "$@" >"$BATS_TEST_TMPDIR/pty.out" 3>&- || rc=$?
        tr -d '\r' <"$BATS_TEST_TMPDIR/pty.out"
        return $rc
}

# WINSIZE: a shell snippet for the container that prints the terminal's size once it has
# one. The engines size the pty asynchronously: Debian's podman 4.3 writes the first
# resize to conmon's control fifo and runs the runtime's `start` without waiting for
# conmon to apply it (process.consoleSize, which would size the pty before the process
# runs, is not in its config), and Docker's CLI resizes after `start`. With runc's
# slower start the process usually reads the size after the resize; with msp often
# before, as `stty size` of 0 0. So poll, bounded at 5 s, past a 0x0 answer: what is
# checked is that the size the user's terminal has reaches the container.
# busybox's `stty size` on a 0x0 terminal fails, or prints nothing and succeeds (when the
# errno it reports is a stale EINVAL): only an answer that starts with a digit other than 0
# counts.
# shellcheck disable=SC2034,SC2016 # read by the engine suites; expanded in the container
WINSIZE='for i in $(seq 50); do s=$(stty size 2>/dev/null); case $s in [1-9]*) break ;; esac; sleep 0.1; done; echo "$s"'

# ---- processes ----

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

# ---- cgroups and mounts of a suite ----

# cgroups_below NAME: the cgroup directories below /NAME in every hierarchy (the root
# itself on a unified host), one a line.
cgroups_below() {
        local d
        for d in /sys/fs/cgroup/*/"$1" /sys/fs/cgroup/"$1"; do
                [ -d "$d" ] && find "$d" -mindepth 1 -type d
        done
        return 0
}

# cgroups_remove NAME: /NAME and everything below it removed from every hierarchy,
# retried for up to 10 s (an engine's last processes may still be exiting).
cgroups_remove() {
        local d
        for _ in $(seq 100); do
                for d in /sys/fs/cgroup/*/"$1" /sys/fs/cgroup/"$1"; do
                        [ -d "$d" ] && { find "$d" -depth -type d -exec rmdir {} + 2>/dev/null || true; }
                done
                compgen -G "/sys/fs/cgroup/*/$1" >/dev/null || break
                sleep 0.1
        done
}

# cgroup_file_of PID V1CONTROLLER V1FILE V2FILE: the host path of a cgroup file of PID
# (V2FILE on a unified host, V1CONTROLLER's V1FILE otherwise).
cgroup_file_of() {
        local path
        if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
                path=$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup")
                echo "/sys/fs/cgroup$path/$4"
        else
                path=$(awk -F: -v c="$2" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' \
                        "/proc/$1/cgroup")
                echo "/sys/fs/cgroup/$2$path/$3"
        fi
}

# umount_below DIR: every mount below DIR detached, deepest first (a suite's private
# state: overlay snapshots, shm).
umount_below() {
        local m
        grep -F " $1/" /proc/self/mountinfo | awk '{print $5}' | sort -r |
                while read -r m; do umount -l "$m" || true; done
}

# ---- images ----

# busybox_rootfs DIR: the host's static busybox with its applets as symlinks, users root
# and user (1000) for --user, a sticky /tmp and a non-executable /etc/noexec: the tree an
# engine suite imports as its image.
busybox_rootfs() {
        local a
        mkdir -p "$1/bin" "$1/etc" "$1/tmp"
        cp /bin/busybox "$1/bin/busybox"
        for a in $(/bin/busybox --list); do
                [ "$a" = busybox ] || ln -s busybox "$1/bin/$a"
        done
        printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/tmp:/bin/sh\n' >"$1/etc/passwd"
        printf 'root:x:0:\nuser:x:1000:\n' >"$1/etc/group"
        printf 'not a program\n' >"$1/etc/noexec"
        chmod 0644 "$1/etc/noexec"
        chmod 1777 "$1/tmp"
}

# ---- bounded polls of the engine suites ----
# podman and docker answer `inspect -f` and `logs` alike; $ENGINE_CLI names the suite's
# function that runs the engine (pm, dk).

# wait_status NAME STATUS [SECONDS]: poll until .State.Status is STATUS.
wait_status() {
        local name=$1 want=$2 max=${3:-10} s=
        for _ in $(seq $((max * 10))); do
                s=$("$ENGINE_CLI" inspect -f '{{.State.Status}}' "$name" 2>/dev/null) || s=
                [ "$s" = "$want" ] && return 0
                sleep 0.1
        done
        echo "container $name: status '$s' after ${max}s, wanted '$want'"
        return 1
}

# wait_log NAME TEXT [SECONDS]: poll the engine's logs until a line contains TEXT.
wait_log() {
        local name=$1 text=$2 max=${3:-10}
        for _ in $(seq $((max * 10))); do
                # not grep -q: it would stop reading early and the engine would die of SIGPIPE
                "$ENGINE_CLI" logs "$name" 2>&1 | grep -F -- "$text" >/dev/null && return 0
                sleep 0.1
        done
        echo "container $name: no '$text' in its log after ${max}s:"
        "$ENGINE_CLI" logs "$name" 2>&1 || true
        return 1
}

# wait_clean LISTER [ID]: poll (bounded, 10 s) until `LISTER [ID]` prints nothing, i.e.
# nothing of the suite's containers (or of container ID) is left; engines clean up
# asynchronously after a container exits (podman: `podman container cleanup`, conmon's
# exit command; docker and containerd: the shim).
wait_clean() {
        local lister=$1 left
        shift
        for _ in $(seq 100); do
                left=$("$lister" "$@")
                [ -z "$left" ] && return 0
                sleep 0.1
        done
        echo "left behind${1:+ by $1}:"
        echo "$left"
        return 1
}
