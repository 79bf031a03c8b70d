#!/usr/bin/env bash
# msp-mcp benchmark: run_code latency and throughput over one stdio connection, msp and
# runc side by side, and msp-mcp's idle RSS.
#
#   tests/bench/mcp.sh [--runs N] [--calls N] [--callers N] [--no-install]
#
# As root. Installs what is missing (contrib/install-deps.sh build bench, and mcp when
# node is missing), builds a release msp and msp-mcp in build-bench-mcp/ (BUILD_DIR
# overrides) and runs tests/bench/mcp.mjs, which starts msp-mcp (own temporary
# --state-dir) once with --runtime msp and once with --runtime runc and measures, over
# one connection each:
#
#   latency      --runs (200) sequential run_code calls of sh `echo hi` and python
#                `print(1)` after 10 warm-up calls: p50 and p95
#   throughput   --calls (200) calls of sh `echo hi` from --callers (4) concurrent callers
#   idle RSS     VmHWM/VmRSS of msp-mcp from /proc/<pid>/status right after initialize
#
# then the goals of issue 7: sh p50 < 15 ms, >= 100 runs/s with 4 callers, idle RSS < 4 MiB.
# A missed goal is reported, not failed: the exit status is 0 unless the benchmark itself
# could not run. The JSON with every number is kept in BUILD_DIR/bench/mcp.json.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
build=${BUILD_DIR:-$repo/build-bench-mcp}
runs=200
calls=200
callers=4
install=1

while [ $# -gt 0 ]; do
        case "$1" in
        --runs) runs=$2; shift ;;
        --calls) calls=$2; shift ;;
        --callers) callers=$2; shift ;;
        --no-install) install=0 ;;
        -h|--help) bench_usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
        esac
        shift
done

bench_need_root "msp-mcp creates namespaces and cgroups"

if [ "$install" = 1 ]; then
        groups=(build bench)
        command -v node >/dev/null || groups+=(mcp)
        bench_install "${groups[@]}"
fi
bench_require "contrib/install-deps.sh build mcp" node meson ninja

# Everything (-Dtests=false: the runtime and msp-mcp with its helpers, e.g. msp-sandbox-init).
bench_build "$build"

runc_args=()
if command -v runc >/dev/null; then
        runc_args=(--runc "$(command -v runc)")
else
        echo "bench: runc is not installed: measuring msp only" >&2
fi

mkdir -p "$build/bench"
node "$here/mcp.mjs" --msp-mcp "$build/mcp-adapter/msp-mcp" --msp "$build/runtime/msp" \
        "${runc_args[@]}" --runs "$runs" --calls "$calls" --callers "$callers" \
        --json "$build/bench/mcp.json" || die "tests/bench/mcp.mjs failed"
