#!/usr/bin/env bash
# Spawn-and-wait inside a running sandbox: msp-sandbox-init's spawn service against a
# bare fork+exec and against `msp exec` into the same container (issue 26).
#
#   tests/bench/spawn.sh [--runs N] [--warmup N] [--keep]
#
# As root. Builds a release msp and msp-sandbox-init in build-bench/ (BUILD_DIR
# overrides), prepares one busybox bundle in a temporary directory (`runc spec`, no
# terminal, namespaces pid, network, ipc, uts and mount, the static msp-sandbox-init
# copied in as /msp-init and the process `/msp-init --serve 3`), compiles
# tests/bench/spawn-timer.c with msp-mcp's spawn client, and runs it: one container,
# the three ways timed round robin in one run, medians, p90 and ratios printed.
# The exit status is 0 unless the benchmark itself could not run.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
build=${BUILD_DIR:-$repo/build-bench}
runs=500
warmup=50
keep=0

while [ $# -gt 0 ]; do
        case "$1" in
        --runs) runs=$2; shift ;;
        --warmup) warmup=$2; shift ;;
        --keep) keep=1 ;;
        -h|--help) bench_usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
        esac
        shift
done

bench_need_root "the container needs namespaces and a cgroup"
bench_require "contrib/install-deps.sh bench" runc jq meson ninja cc

bench_build "$build" runtime/msp mcp-adapter/msp-sandbox-init
msp=$build/runtime/msp
init=$build/mcp-adapter/msp-sandbox-init
[ -x "$msp" ] && [ -x "$init" ] || die "msp or msp-sandbox-init was not built in $build"

work=$(mktemp -d /tmp/msp-bench-spawn.XXXXXX)
cleanup() {
        set +e
        for id in $("$msp" --root "$work/root" list -q 2>/dev/null); do
                "$msp" --root "$work/root" delete --force "$id" >/dev/null 2>&1
        done
        if [ "$keep" = 1 ]; then
                echo "bench: kept $work"
        else
                rm -rf --one-file-system "$work"
        fi
}
trap cleanup EXIT

bundle=$work/bundle
rootfs=$bundle/rootfs
mkdir -p "$bundle" "$work/root"
"$repo/bundles/busybox/prepare.sh" "$rootfs" >/dev/null
cp "$init" "$rootfs/msp-init"
runc spec --bundle "$bundle"
jq '.process.args = ["/msp-init", "--serve", "3"] | .process.terminal = false
    | .linux.namespaces = [{"type": "pid"}, {"type": "network"}, {"type": "ipc"},
                           {"type": "uts"}, {"type": "mount"}]' \
        "$bundle/config.json" > "$bundle/config.json.new"
mv "$bundle/config.json.new" "$bundle/config.json"

timer=$work/spawn-timer
cc -O2 -I"$repo" -I"$repo/mcp-adapter" -o "$timer" "$here/spawn-timer.c" \
        "$repo/mcp-adapter/sandbox/spawn-client.c" "$repo/mcp-adapter/sandbox/spawn-proto.c" \
        "$repo/oci/err.c" || die "cannot compile spawn-timer.c"

"$timer" --runs "$runs" --warmup "$warmup" --msp "$msp" --root "$work/root" \
        --bundle "$bundle" --host-true "$rootfs/bin/true"
