#!/usr/bin/env bash
# Rootless start-up benchmark: msp run by an ordinary user against rootless runc, bwrap
# (rootless natively) and msp run by root, the same bundle.
#
#   tests/bench/rootless.sh [--runs N] [--warmup N] [--no-install] [--keep]
#
# As root (it makes the test user, tests/helper/test-user.sh ensure). Builds a release
# msp in build-bench/ (BUILD_DIR overrides) and copies it where the user can run it;
# prepares one bundle owned by the user (the busybox rootfs, `msp spec --rootless`:
# user, pid, ipc, uts and mount namespaces, the user's own ids, process.args
# ["/bin/true"]) and times, in ONE hyperfine run (the commands alternate):
#
#   rootless msp run, rootless runc run   the user's, each with its own --root in the
#                                         work directory (no cgroup: none is delegated
#                                         here, docs/ROOTLESS.md); msp root-owned 0755,
#                                         so it needs no copy of itself (CVE-2019-5736,
#                                         docs/SECURITY_MODEL.md)
#   rootless msp run, user-owned binary   the same msp file owned by the user: it runs
#                                         from a sealed memfd copy (what that costs)
#   bwrap --unshare-all                   the same user: user, pid, net, ipc, uts ns
#   msp run as root                       the same bundle, --cgroup-manager disabled so
#                                         that only rootlessness differs
#
# Every command goes through the same `setpriv` (root's with --reuid=0), so each pays the
# same exec. Ratios are to rootless msp run; goals (issue 14): within 10% of msp run as
# root, no slower than bwrap. A missed goal is reported, not failed. The hyperfine JSON
# is kept in BUILD_DIR/bench/rootless.json.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
build=${BUILD_DIR:-$repo/build-bench}
runs=200
warmup=20
install=1
keep=0

while [ $# -gt 0 ]; do
        case "$1" in
        --runs) runs=$2; shift ;;
        --warmup) warmup=$2; shift ;;
        --no-install) install=0 ;;
        --keep) keep=1 ;;
        -h|--help) bench_usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
        esac
        shift
done

bench_need_root "it makes the test user and runs as it"

if [ "$install" = 1 ]; then bench_install build bench rootless; fi
bench_require "contrib/install-deps.sh bench" hyperfine runc bwrap jq meson ninja setpriv
bench_build "$build" runtime/msp
[ -x "$build/runtime/msp" ] || die "$build/runtime/msp was not built"

eval "$("$repo/tests/helper/test-user.sh" ensure)"
uid=$MSP_TEST_UID
gid=$MSP_TEST_GID

work=$(mktemp -d /tmp/msp-bench-rootless.XXXXXX)
cleanup() {
        set +e
        for id in $("$work/msp" --root "$work/root-msp-user" list -q 2>/dev/null); do
                "$work/msp" --root "$work/root-msp-user" delete --force "$id" >/dev/null 2>&1
        done
        for id in $(runc --root "$work/root-runc-user" list -q 2>/dev/null); do
                runc --root "$work/root-runc-user" delete --force "$id" >/dev/null 2>&1
        done
        for id in $("$work/msp" --root "$work/root-msp-root" list -q 2>/dev/null); do
                "$work/msp" --root "$work/root-msp-root" delete --force "$id" >/dev/null 2>&1
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
chmod 0755 "$work"
install -m 0755 "$build/runtime/msp" "$work/msp"
install -m 0755 -o "$uid" "$build/runtime/msp" "$work/msp-own"
bundle=$work/bundle
mkdir -p "$bundle" "$work/xdg" "$work/root-msp-user" "$work/root-runc-user"
"$repo/bundles/busybox/prepare.sh" "$bundle/rootfs" >/dev/null
chown -R "$uid:$gid" "$bundle" "$work/xdg" "$work/root-msp-user" "$work/root-runc-user"
chmod 0700 "$work/xdg" "$work/root-msp-user" "$work/root-runc-user"

# as_user / as_root CMD: the same setpriv either way.
user_pfx="setpriv --reuid=$uid --regid=$gid --clear-groups --inh-caps=-all"
root_pfx="setpriv --reuid=0 --regid=0 --keep-groups"
# shellcheck disable=SC2086 # split on purpose
(cd "$bundle" && env XDG_RUNTIME_DIR="$work/xdg" $user_pfx "$work/msp" spec --rootless)
jq '.process.args = ["/bin/true"] | .process.terminal = false' "$bundle/config.json" \
        >"$bundle/config.json.new"
mv "$bundle/config.json.new" "$bundle/config.json"
chown "$uid:$gid" "$bundle/config.json"

msp_user="$user_pfx $work/msp --root $work/root-msp-user run -b $bundle u-msp"
runc_user="$user_pfx runc --root $work/root-runc-user run -b $bundle u-runc"
bwrap_user="$user_pfx bwrap --unshare-all --die-with-parent --ro-bind $bundle/rootfs / --proc /proc --dev /dev /bin/true"
msp_own="$user_pfx $work/msp-own --root $work/root-msp-user run -b $bundle u-msp-own"
msp_root="$root_pfx $work/msp --root $work/root-msp-root --cgroup-manager disabled run -b $bundle r-msp"

names=()
cmds=()
skipped=()
probe() {
        local out status=0
        # shellcheck disable=SC2086 # split on purpose
        out=$(cd "$work" && timeout 20 env XDG_RUNTIME_DIR="$work/xdg" $1 2>&1 >/dev/null) || status=$?
        [ "$status" = 0 ] && return 0
        reason=$(printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | tail -n 1 | cut -c1-160)
        [ -n "$reason" ] || reason="exit status $status"
        return 1
}
for pair in "rootless msp run|$msp_user" "rootless runc run|$runc_user" \
        "bwrap --unshare-all (user)|$bwrap_user" "msp run as root|$msp_root" \
        "rootless msp run, user-owned binary (sealed copy)|$msp_own"; do
        name=${pair%%|*}
        cmd=${pair#*|}
        reason=""
        if probe "$cmd"; then
                names+=("$name")
                cmds+=("$cmd")
        elif [ "$name" = "rootless msp run" ]; then
                die "rootless msp run fails: $reason"
        else
                skipped+=("$name: $reason")
        fi
done

mkdir -p "$build/bench"
json=$build/bench/rootless.json
args=()
for i in "${!names[@]}"; do
        args+=(-n "${names[$i]}" "${cmds[$i]}")
done
echo "bench: hyperfine -N --warmup $warmup --runs $runs over ${#names[@]} commands"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
(cd "$work" && XDG_RUNTIME_DIR="$work/xdg" hyperfine -N --style basic --warmup "$warmup" \
        --runs "$runs" --export-json "$json" "${args[@]}" >&2) ||
        die "hyperfine failed (a command exited non-zero?)"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

mean_of() {
        jq -r --arg n "$1" '.results[] | select(.command == $n) | .mean' "$json"
}
base=$(mean_of "rootless msp run")

echo
echo "msp rootless benchmark, $(date -u +%Y-%m-%d), kernel $(uname -r), $(nproc) CPUs, user $MSP_TEST_USER"
echo "bundle: busybox /bin/true, msp spec --rootless (user, pid, ipc, uts, mount); every command through setpriv"
echo "hyperfine -N, $warmup warmup + $runs runs each; mean ± sd; ratio = mean / mean(rootless msp run)"
echo "load average (1, 5, 15 min): $load_before before, $load_after after"
echo
bench_table "$json" "$base" ${skipped[@]+"${skipped[@]}"}
echo
goal() {
        printf '  %-44s %-28s %s\n' "$1" "$2" "$3"
}
echo "goals (issue 14):"
# goal_at_most NAME MEAN OTHER FACTOR HOW: HOLDS when MEAN <= OTHER * FACTOR.
goal_at_most() {
        local cmp ok
        if [ -z "$3" ]; then
                goal "$1" "$5" "NOT MEASURED"
                return
        fi
        cmp=$(awk -v a="$2" -v b="$3" 'BEGIN { printf "%.2f vs %.2f ms", a * 1000, b * 1000 }')
        ok=$(awk -v a="$2" -v b="$3" -v f="$4" 'BEGIN { print (a <= b * f ? "HOLDS" : "MISSED") }')
        goal "$1" "$cmp" "$ok"
}
goal_at_most "rootless msp run within 10% of root's" "$base" "$(mean_of "msp run as root")" 1.1 \
        "root's run failed"
goal_at_most "rootless msp run no slower than bwrap" "$base" \
        "$(mean_of "bwrap --unshare-all (user)")" 1 "bwrap did not run"
echo
echo "raw results: $json"
echo "(a benchmark, not a test: a MISSED goal does not change the exit status)"
