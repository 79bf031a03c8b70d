#!/usr/bin/env bash
# Container start-up benchmark: msp against runc, crun, bwrap and a bare exec.
#
#   tests/bench/runtime.sh [--runs N] [--warmup N] [--rss-runs N] [--no-install] [--keep]
#                          [--state-on-disk]
#
# As root. Installs what is missing (contrib/install-deps.sh bench), builds a release msp
# in build-bench/ (BUILD_DIR overrides), prepares one bundle in a temporary directory
# (the busybox rootfs, `runc spec` with process.args ["/bin/true"], no terminal,
# namespaces pid, network, ipc, uts and mount) and times, in ONE hyperfine run:
#
#   msp run, runc run, crun run        the same bundle, each runtime with its own --root
#                                      on a tmpfs, as their default roots (/run/msp,
#                                      /run/runc) are on a systemd host (--state-on-disk:
#                                      under /tmp instead; this VM's /run and /tmp are ext4)
#   bwrap --unshare-all, bare exec     floors: the least a sandbox / an exec can cost
#   msp|runc run, podman seccomp       the same with podman's seccomp profile (msp: cached)
#   msp|runc create+start+delete       the youki benchmark shape, under one `sh -c`
#
# then the peak RSS of `msp run` (GNU time, %M) and a table with the goals of issue 3:
# msp >= 8x faster than runc, no slower than bwrap --unshare-all, peak RSS < 3 MiB.
# A missed goal is reported, not failed: the exit status is 0 unless the benchmark
# itself could not run. The hyperfine JSON is kept in BUILD_DIR/bench/runtime.json.
# tests/bench/README.md says how to read the numbers; docs/PERFORMANCE.md has them.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
build=${BUILD_DIR:-$repo/build-bench}
runs=200
warmup=20
rss_runs=20
install=1
keep=0
state_tmpfs=1

while [ $# -gt 0 ]; do
        case "$1" in
        --runs) runs=$2; shift ;;
        --warmup) warmup=$2; shift ;;
        --rss-runs) rss_runs=$2; shift ;;
        --no-install) install=0 ;;
        --keep) keep=1 ;;
        --state-on-disk) state_tmpfs=0 ;;
        -h|--help) bench_usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
        esac
        shift
done

bench_need_root "the runtimes create namespaces and cgroups"

# ---- dependencies and the release build ----

if [ "$install" = 1 ]; then bench_install build bench; fi
bench_require "contrib/install-deps.sh bench" hyperfine runc bwrap jq meson ninja
[ -x /usr/bin/time ] || die "/usr/bin/time is missing (package 'time')"

bench_build "$build" runtime/msp
msp=$build/runtime/msp
[ -x "$msp" ] || die "$msp was not built"

# ---- the bundle and one state root per runtime ----

work=$(mktemp -d /tmp/msp-bench.XXXXXX)
states=$work
roots=()
cleanup() {
        local r
        set +e
        for r in "${roots[@]}"; do
                case "$r" in
                msp:*) for id in $("$msp" --root "${r#*:}" list -q 2>/dev/null); do
                                "$msp" --root "${r#*:}" delete --force "$id" >/dev/null 2>&1
                        done ;;
                runc:*|crun:*) for id in $("${r%%:*}" --root "${r#*:}" list -q 2>/dev/null); do
                                "${r%%:*}" --root "${r#*:}" delete --force "$id" >/dev/null 2>&1
                        done ;;
                esac
        done
        if [ "$states" != "$work" ] && [ "$keep" != 1 ]; then
                umount "$states" || echo "bench: cannot unmount $states" >&2
        fi
        if [ "$keep" = 1 ]; then
                echo "bench: kept $work"
        elif ! awk -v d="$work" 'index($5, d) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
                rm -rf --one-file-system "$work"
        else
                echo "bench: something is still mounted under $work; not removing it" >&2
        fi
}
trap cleanup EXIT

bundle=$work/bundle
rootfs=$bundle/rootfs
mkdir -p "$bundle"
"$repo/bundles/busybox/prepare.sh" "$rootfs" >/dev/null
runc spec --bundle "$bundle"
jq '.process.args = ["/bin/true"] | .process.terminal = false
    | .linux.namespaces = [{"type": "pid"}, {"type": "network"}, {"type": "ipc"},
                           {"type": "uts"}, {"type": "mount"}]' \
        "$bundle/config.json" > "$bundle/config.json.new"
mv "$bundle/config.json.new" "$bundle/config.json"

# The state roots on a tmpfs of their own: on a systemd host /run, where the runtimes
# keep their state by default, is one; here /run and /tmp are on the VM's ext4 disk
# (mounted with discard), where every state write costs journal and discard work
# (msp run ~0.3 ms more). Every runtime gets the same.
if [ "$state_tmpfs" = 1 ]; then
        mkdir "$work/state"
        mount -t tmpfs -o mode=0700,size=64m msp-bench-state "$work/state" ||
                die "cannot mount a tmpfs for the state roots (--state-on-disk avoids it)"
        states=$work/state
fi
for rt in msp runc crun; do
        mkdir -p "$states/root-$rt"
        roots+=("$rt:$states/root-$rt")
done

# ---- which commands run here ----

names=()
cmds=()
skipped=()
add() {
        names+=("$1")
        cmds+=("$2")
}
# First line of a command's stderr when it fails, for "skipped: <reason>".
probe() {
        local out status=0
        out=$(timeout 20 "$@" 2>&1 >/dev/null) || status=$?
        [ "$status" = 0 ] && return 0
        reason=$(printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-160)
        [ -n "$reason" ] || reason="exit status $status"
        return 1
}

# Paths without blanks (mktemp under /tmp): the hyperfine command lines below are
# split on spaces.
R_MSP="--root $states/root-msp"
R_RUNC="--root $states/root-runc"
R_CRUN="--root $states/root-crun"

reason=""
probe "$msp" --root "$states/root-msp" run -b "$bundle" probe || die "msp run fails: $reason"
add "msp run" "$msp $R_MSP run -b $bundle b-msp"

if probe runc --root "$states/root-runc" run -b "$bundle" probe; then
        add "runc run" "runc $R_RUNC run -b $bundle b-runc"
else
        skipped+=("runc run: $reason")
fi

if ! command -v crun >/dev/null; then
        skipped+=("crun run: crun is not installed")
elif probe crun --root "$states/root-crun" run -b "$bundle" probe; then
        add "crun run" "crun $R_CRUN run -b $bundle b-crun"
else
        (crun --root "$states/root-crun" delete --force probe >/dev/null 2>&1) || true
        skipped+=("crun run: $reason")
fi

bwrap_cmd="bwrap --unshare-all --die-with-parent --ro-bind $rootfs / --proc /proc --dev /dev /bin/true"
# shellcheck disable=SC2086 # split on purpose
if probe $bwrap_cmd; then
        add "bwrap --unshare-all" "$bwrap_cmd"
else
        skipped+=("bwrap --unshare-all: $reason")
fi
add "bare exec" "$rootfs/bin/true"

# podman's seccomp profile: msp takes the compiled program from its cache after the
# warm-up (docs/PERFORMANCE.md, seccomp), runc compiles it on every run.
sbundle=$work/bundle-seccomp
mkdir -p "$sbundle"
jq --slurpfile p "$repo/tests/fixtures/podman-limits.json" --arg root "$rootfs" \
        '.linux.seccomp = $p[0].linux.seccomp | .root.path = $root' \
        "$bundle/config.json" >"$sbundle/config.json"
add "msp run, podman seccomp" "$msp $R_MSP run -b $sbundle s-msp"
if [[ " ${names[*]} " == *" runc run "* ]]; then
        if probe runc --root "$states/root-runc" run -b "$sbundle" probe; then
                add "runc run, podman seccomp" "runc $R_RUNC run -b $sbundle s-runc"
        else
                skipped+=("runc run, podman seccomp: $reason")
        fi
fi

csd() {
        echo "sh -c '$1 create -b $bundle $2 && $1 start $2 && $1 delete --force $2'"
}
add "msp create+start+delete" "$(csd "$msp $R_MSP" c-msp)"
if [[ " ${names[*]} " == *" runc run "* ]]; then
        add "runc create+start+delete" "$(csd "runc $R_RUNC" c-runc)"
fi

# ---- one hyperfine run ----

mkdir -p "$build/bench"
json=$build/bench/runtime.json
args=()
for i in "${!names[@]}"; do
        args+=(-n "${names[$i]}" "${cmds[$i]}")
done
echo "bench: hyperfine -N --warmup $warmup --runs $runs over ${#names[@]} commands"
# The machine's load before and after: the numbers mean little above ~1 per core.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
hyperfine -N --style basic --warmup "$warmup" --runs "$runs" --export-json "$json" "${args[@]}" >&2 ||
        die "hyperfine failed (a command exited non-zero?)"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- peak RSS of msp run ----

rss=()
for i in $(seq 1 "$rss_runs"); do
        kb=$(/usr/bin/time -f %M "$msp" --root "$states/root-msp" run -b "$bundle" "rss-$i" 2>&1 >/dev/null | tail -n 1)
        rss+=("$kb")
done
rss_max=$(printf '%s\n' "${rss[@]}" | sort -n | tail -n 1)
rss_med=$(printf '%s\n' "${rss[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')

# ---- the table ----

mean_of() {
        jq -r --arg n "$1" '.results[] | select(.command == $n) | .mean' "$json"
}
msp_mean=$(mean_of "msp run")

cgmode=legacy
if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
        cgmode=unified
elif [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
        cgmode=hybrid
fi

echo
echo "msp runtime benchmark, $(date -u +%Y-%m-%d), kernel $(uname -r), $(nproc) CPUs, cgroups $cgmode"
echo "bundle: busybox /bin/true; pid, net, ipc, uts, mount namespaces; runc spec mounts and devices"
if [ "$states" = "$work" ]; then
        echo "state roots: on disk, under $work (--state-on-disk)"
else
        echo "state roots: on a tmpfs, like /run on a systemd host"
fi
echo "hyperfine -N, $warmup warmup + $runs runs each; mean ± sd; ratio = mean / mean(msp run)"
echo "load average (1, 5, 15 min): $load_before before, $load_after after"
echo
bench_table "$json" "$msp_mean" ${skipped[@]+"${skipped[@]}"}
echo
printf 'peak RSS of msp run (%d runs, GNU time %%M): max %d KiB, median %d KiB\n' \
        "$rss_runs" "$rss_max" "$rss_med"
echo

goal() {
        printf '  %-44s %-28s %s\n' "$1" "$2" "$3"
}
echo "goals (issue 3):"
runc_mean=$(mean_of "runc run")
if [ -n "$runc_mean" ]; then
        x=$(awk -v a="$runc_mean" -v b="$msp_mean" 'BEGIN { printf "%.1f", a / b }')
        ok=$(awk -v x="$x" 'BEGIN { print (x >= 8 ? "HOLDS" : "MISSED") }')
        goal "msp run >= 8x faster than runc run" "${x}x" "$ok"
else
        goal "msp run >= 8x faster than runc run" "runc did not run" "NOT MEASURED"
fi
bwrap_mean=$(mean_of "bwrap --unshare-all")
if [ -n "$bwrap_mean" ]; then
        cmp=$(awk -v a="$msp_mean" -v b="$bwrap_mean" 'BEGIN { printf "%.2f vs %.2f ms", a * 1000, b * 1000 }')
        ok=$(awk -v a="$msp_mean" -v b="$bwrap_mean" 'BEGIN { print (a <= b ? "HOLDS" : "MISSED") }')
        goal "msp run no slower than bwrap --unshare-all" "$cmp" "$ok"
else
        goal "msp run no slower than bwrap --unshare-all" "bwrap did not run" "NOT MEASURED"
fi
ok=$([ "$rss_max" -lt 3072 ] && echo HOLDS || echo MISSED)
goal "peak RSS of msp run < 3 MiB" "$rss_max KiB" "$ok"
echo
echo "raw results: $json"
echo "(a benchmark, not a test: a MISSED goal does not change the exit status)"
