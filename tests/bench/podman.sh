#!/usr/bin/env bash
# podman with msp against podman with runc: `podman run --rm IMAGE /bin/true`.
#
#   tests/bench/podman.sh [--runs N] [--warmup N] [--pairs N] [--rootless-pairs N]
#                         [--no-install] [--keep]
#
# As root. Installs what is missing (contrib/install-deps.sh build bench podman), builds
# a release msp in build-bench/ (BUILD_DIR overrides), gives podman a private state in a
# temporary directory (as tests/podman does: vfs storage, a busybox image made with
# `podman import`, msp registered by contrib/podman/50-msp.conf.in, cgroupfs, file
# events and locks, --network none, explicit --ulimit) and times, in ONE hyperfine run:
#
#   podman run --rm (msp)     podman --runtime msp run --rm ... IMAGE /bin/true
#   podman run --rm (runc)    the same with --runtime runc
#   msp run, runc run         the runtime alone on the OCI config podman generated for
#                             the same image and options (its bundle, copied): the
#                             runtime's share of a podman run
#
# and prints mean ± stddev, median, the runc/msp ratio of the podman runs, and each
# runtime's share of its podman run. hyperfine runs one command after the other, so load
# that changes meanwhile (a shared machine) biases the ratio; --pairs N (default 20) then
# times N alternating msp/runc podman runs and gives their medians as a second ratio.
# Last, the same pairs again with each runtime behind a small wrapper that logs how long
# each runtime command took (create, start, delete): the runtime's share in situ.
# Then the rootless pass: the same podman run by the unprivileged user of
# tests/helper/test-user.sh (its subuid range, native overlay, its own HOME and storage in
# a temporary directory, --network none), --rootless-pairs N (default 20, 0 skips it)
# alternating msp/runc runs, and their medians.
# Exit status 0 unless the benchmark could not run.
# The hyperfine JSON is kept in BUILD_DIR/bench/podman.json.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
build=${BUILD_DIR:-$repo/build-bench}
runs=40
warmup=5
pairs=20
rootless_pairs=20
install=1
keep=0

while [ $# -gt 0 ]; do
        case "$1" in
        --runs) runs=$2; shift ;;
        --warmup) warmup=$2; shift ;;
        --pairs) pairs=$2; shift ;;
        --rootless-pairs) rootless_pairs=$2; shift ;;
        --no-install) install=0 ;;
        --keep) keep=1 ;;
        -h|--help) bench_usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
        esac
        shift
done

bench_need_root "rootful podman"

if [ "$install" = 1 ]; then bench_install build bench podman rootless; fi
bench_require "contrib/install-deps.sh bench podman" hyperfine runc podman conmon jq meson ninja

bench_build "$build" runtime/msp
msp=$build/runtime/msp
[ -x "$msp" ] || die "$msp was not built"

# ---- podman's private state ----

work=$(mktemp -d /tmp/msp-bench-podman.XXXXXX)
cg=msp-bench-podman-${work##*.}
P=(podman --root "$work/root" --runroot "$work/runroot" --storage-driver vfs)
RUN_OPTS="--rm --network none --cgroup-parent /$cg --ulimit nofile=1024:1024 --ulimit nproc=4096:4096"
image=localhost/msp-bench-busybox:latest

rl=
cleanup() {
        set +e
        if [ -n "$rl" ]; then
                # the rootless podman's pause process (its user and mount namespaces)
                local p
                p=$(cat "$rl/tmp/pause.pid" 2>/dev/null)
                [ -n "$p" ] && kill -KILL "$p" 2>/dev/null
                rm -rf "$rl"
        fi
        for rt in msp runc; do
                local b=runc
                [ "$rt" = msp ] && b=$msp
                for id in $("$b" --root "$work/state-$rt" list -q 2>/dev/null); do
                        "$b" --root "$work/state-$rt" delete --force "$id" >/dev/null 2>&1
                done
        done
        "${P[@]}" rm -af -t 0 >/dev/null 2>&1
        "${P[@]}" rmi -af >/dev/null 2>&1
        # conmon of the last runs may still be exiting: retry for up to 10 s
        for _ in $(seq 100); do
                for d in /sys/fs/cgroup/*/"$cg" /sys/fs/cgroup/"$cg"; do
                        [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
                done
                compgen -G "/sys/fs/cgroup/*/$cg" >/dev/null || break
                sleep 0.1
        done
        if [ "$keep" = 1 ]; then
                echo "bench: kept $work"
        elif ! awk -v d="$work" 'index($5, d) == 1 { f = 1 } END { exit !f }' /proc/self/mountinfo; then
                rm -rf --one-file-system "$work"
        else
                echo "bench: something is still mounted under $work; not removing it" >&2
        fi
}
trap cleanup EXIT

mkdir -p "$work/tmp" "$work/net" "$work/rootfs/bin" "$work/rootfs/etc" "$work/rootfs/tmp" \
        "$work/state-msp" "$work/state-runc"
sed "s|@MSP_PATH@|$msp|; s|@DROPIN_DIR@|$work|" "$repo/contrib/podman/50-msp.conf.in" |
        awk -v d="$work" '{ print } $0 == "[engine]" {
                print "cgroup_manager = \"cgroupfs\""
                print "events_logger = \"file\""
                print "events_logfile_path = \"" d "/events.log\""
                print "tmp_dir = \"" d "/tmp\""
                print "volume_path = \"" d "/volumes\""
                print "lock_type = \"file\""
        }
        END { print "\n[network]\nnetwork_config_dir = \"" d "/net\"" }' >"$work/containers.conf"
export CONTAINERS_CONF=$work/containers.conf

cp /bin/busybox "$work/rootfs/bin/busybox"
for a in $(/bin/busybox --list); do
        [ "$a" = busybox ] || ln -s busybox "$work/rootfs/bin/$a"
done
tar -C "$work/rootfs" -c . | "${P[@]}" import -q - "$image" >/dev/null || die "podman import failed"

# ---- the runtime alone, on podman's own config ----

# `podman init` writes the bundle (config.json, rootfs in vfs storage, /etc/hosts and
# friends) and creates the container in the runtime; its config is copied with its own
# cgroup path and without podman's hooks, and runs from msp and runc directly.
# shellcheck disable=SC2086 # RUN_OPTS split on purpose
"${P[@]}" --runtime msp create --name ref ${RUN_OPTS/--rm /} "$image" /bin/true >/dev/null || die "podman create failed"
"${P[@]}" --runtime msp init ref >/dev/null || die "podman init with msp failed"
userdata=$(dirname "$(find "$work/root" -path '*/userdata/config.json' | head -n 1)")
[ -f "$userdata/config.json" ] || die "no config.json of the reference container"
mkdir -p "$work/bundle"
jq --arg cg "/$cg/bench" 'del(.hooks) | .linux.cgroupsPath = $cg' "$userdata/config.json" \
        >"$work/bundle/config.json"

# ---- one hyperfine run ----

declare -A bin=([msp]=$msp [runc]=runc)
for rt in msp runc; do
        out=$("${bin[$rt]}" --root "$work/state-$rt" run -b "$work/bundle" probe 2>&1) ||
                die "$rt run of podman's config fails: $out"
        # shellcheck disable=SC2086
        out=$("${P[@]}" --runtime "$rt" run $RUN_OPTS "$image" /bin/true 2>&1) ||
                die "podman --runtime $rt run fails: $out"
done

mkdir -p "$build/bench"
json=$build/bench/podman.json
pm="${P[*]}"
echo "bench: hyperfine -N --warmup $warmup --runs $runs over 4 commands"
hyperfine -N --style basic --warmup "$warmup" --runs "$runs" --export-json "$json" \
        -n "podman run --rm (msp)" "$pm --runtime msp run $RUN_OPTS $image /bin/true" \
        -n "podman run --rm (runc)" "$pm --runtime runc run $RUN_OPTS $image /bin/true" \
        -n "msp run" "$msp --root $work/state-msp run -b $work/bundle b" \
        -n "runc run" "runc --root $work/state-runc run -b $work/bundle b" >&2 ||
        die "hyperfine failed (a command exited non-zero?)"

# ---- the table ----

stat_of() {     # NAME FIELD -> milliseconds
        jq -r --arg n "$1" --arg f "$2" \
                '.results[] | select(.command == $n) | .[$f] * 1000' "$json"
}
echo
printf '%-24s %18s %10s\n' "command" "mean ± sd (ms)" "median"
for n in "podman run --rm (msp)" "podman run --rm (runc)" "msp run" "runc run"; do
        printf '%-24s %10.2f ± %5.2f %10.2f\n' "$n" "$(stat_of "$n" mean)" "$(stat_of "$n" stddev)" \
                "$(stat_of "$n" median)"
done
pmsp=$(stat_of "podman run --rm (msp)" median)
prunc=$(stat_of "podman run --rm (runc)" median)
msp_alone=$(stat_of "msp run" median)
runc_alone=$(stat_of "runc run" median)
echo
awk -v a="$pmsp" -v b="$prunc" -v m="$msp_alone" -v r="$runc_alone" 'BEGIN {
        printf "podman run --rm: runc/msp = %.2fx (medians; msp saves %.1f ms a container)\n", b / a, b - a
        printf "runtime share of podman run --rm: msp %.1f%% (%.2f ms of %.1f), runc %.1f%% (%.2f ms of %.1f)\n",
                100 * m / a, m, a, 100 * r / b, r, b
        printf "the runtimes alone on podman'"'"'s config: runc/msp = %.2fx\n", r / m
}'

# ---- alternating pairs ----

median() {      # FILE RUNTIME: the median of RUNTIME's "<runtime> <microseconds>" lines, in ms
        awk -v r="$2" '$1 == r { print $2 }' "$1" | sort -n |
                awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) / 1000 }'
}

if [ "$pairs" -gt 0 ]; then
        : >"$work/pairs"
        for _ in $(seq "$pairs"); do
                for rt in msp runc; do
                        t0=$(date +%s%N)
                        # shellcheck disable=SC2086
                        "${P[@]}" --runtime "$rt" run $RUN_OPTS "$image" /bin/true ||
                                die "podman --runtime $rt run failed"
                        echo "$rt $(( ($(date +%s%N) - t0) / 1000 ))" >>"$work/pairs"
                done
        done
        pm_msp=$(median "$work/pairs" msp)
        pm_runc=$(median "$work/pairs" runc)
        awk -v a="$pm_msp" -v b="$pm_runc" -v n="$pairs" 'BEGIN {
                printf "%d alternating pairs, medians: podman+msp %.1f ms, podman+runc %.1f ms, runc/msp = %.2fx\n",
                        n, a, b, b / a
        }'
fi

# ---- the runtime's time inside podman run, per command ----

if [ "$pairs" -gt 0 ]; then
        # A wrapper per runtime (one bash start, ~1-3 ms, on both sides alike) appends
        # "<runtime> <command> <microseconds>" to a log; podman knows them as msp-timed
        # and runc-timed, added to the [engine.runtimes] table of our containers.conf.
        mkdir -p "$work/timed"
        : >"$work/timed/log"
        for rt in msp runc; do
                real=$msp
                [ "$rt" = runc ] && real=$(command -v runc)
                # shellcheck disable=SC2016 # the wrapper's own expansions
                {
                        echo '#!/bin/bash'
                        echo 't0=$(date +%s%N)'
                        printf '"%s" "$@"\n' "$real"
                        echo 'rc=$?'
                        echo 'cmd=other'
                        echo 'for a in "$@"; do case "$a" in create|start|state|kill|delete) cmd=$a; break ;; esac; done'
                        printf 'echo "%s $cmd $(( ($(date +%%s%%N) - t0) / 1000 ))" >>"%s"\n' "$rt" "$work/timed/log"
                        echo 'exit $rc'
                } >"$work/timed/$rt"
                chmod +x "$work/timed/$rt"
        done
        awk -v d="$work/timed" '{ print } $0 == "[engine.runtimes]" {
                print "msp-timed = [\"" d "/msp\"]"
                print "runc-timed = [\"" d "/runc\"]"
        }' "$CONTAINERS_CONF" >"$work/timed.conf"
        export CONTAINERS_CONF=$work/timed.conf
        for _ in $(seq "$pairs"); do
                for rt in msp runc; do
                        # shellcheck disable=SC2086
                        "${P[@]}" --runtime "$rt-timed" run $RUN_OPTS "$image" /bin/true ||
                                die "podman --runtime $rt-timed run failed"
                done
        done
        echo
        echo "the runtime inside podman run --rm, ms per container (mean of $pairs):"
        for rt in msp runc; do
                awk -v r="$rt" -v n="$pairs" '$1 == r { t[$2] += $3; all += $3 }
                        END {
                                printf "  %-5s create %6.1f  start %6.1f  delete %6.1f  other %5.1f  total %6.1f\n",
                                        r, t["create"] / n / 1000, t["start"] / n / 1000,
                                        t["delete"] / n / 1000, (t["state"] + t["kill"] + t["other"]) / n / 1000,
                                        all / n / 1000
                        }' "$work/timed/log"
        done
fi

# ---- rootless: the same podman as an unprivileged user ----

if [ "$rootless_pairs" -gt 0 ]; then
        eval "$("$repo/tests/helper/test-user.sh" ensure)"
        # Outside $work (root's, 0700): the user owns this one. msp is copied where the
        # user can run it; podman's config is the user-level containers.conf.
        rl=$(mktemp -d /tmp/msp-bench-podman-rootless.XXXXXX)
        mkdir -p "$rl/home/.config/containers" "$rl/tmp"
        install -D -m 0755 "$msp" "$rl/bin/msp"
        sed "s|@MSP_PATH@|$rl/bin/msp|; s|@DROPIN_DIR@|~/.config/containers|" \
                "$repo/contrib/podman/50-msp.conf.in" |
                awk -v d="$rl" '{ print } $0 == "[engine]" {
                        print "events_logger = \"file\""
                        print "events_logfile_path = \"" d "/events.log\""
                        print "tmp_dir = \"" d "/tmp\""
                }' >"$rl/home/.config/containers/containers.conf"
        chown -R "$MSP_TEST_UID:$MSP_TEST_GID" "$rl"
        chmod 0700 "$rl"
        RP=("$repo/tests/helper/test-user.sh" run env -C "$rl" HOME="$rl/home"
            podman --root "$rl/root" --runroot "$rl/runroot" --storage-driver overlay)
        tar -C "$work/rootfs" -c . | "${RP[@]}" import -q - "$image" >/dev/null ||
                die "rootless podman import failed"
        for rt in msp runc; do
                out=$("${RP[@]}" --runtime "$rt" run --rm --network none "$image" /bin/true 2>&1) ||
                        die "rootless podman --runtime $rt run fails: $out"
        done
        : >"$rl/pairs"
        for _ in $(seq "$rootless_pairs"); do
                for rt in msp runc; do
                        t0=$(date +%s%N)
                        "${RP[@]}" --runtime "$rt" run --rm --network none "$image" /bin/true ||
                                die "rootless podman --runtime $rt run failed"
                        echo "$rt $(( ($(date +%s%N) - t0) / 1000 ))" >>"$rl/pairs"
                done
        done
        awk -v a="$(median "$rl/pairs" msp)" -v b="$(median "$rl/pairs" runc)" \
                -v n="$rootless_pairs" -v u="$MSP_TEST_USER" 'BEGIN {
                printf "\nrootless (as %s), %d alternating pairs, medians: podman+msp %.1f ms, podman+runc %.1f ms, runc/msp = %.2fx\n",
                        u, n, a, b, b / a
        }'
fi
