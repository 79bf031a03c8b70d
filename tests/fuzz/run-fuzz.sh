#!/usr/bin/env bash
# Fuzz the oci/ parsers (config.json, exec --process, update --resources, state),
# msp-mcp's JSON-RPC decoder (10 s more, MSP_FUZZ_MCP_SECONDS), its egress proxy's
# request heads (5 s more, MSP_FUZZ_PROXY_SECONDS) and the spawn service's messages (5 s
# more, MSP_FUZZ_SPAWN_SECONDS) with libFuzzer for a bounded time.
#
#   tests/fuzz/run-fuzz.sh [SECONDS]          default 30
#
# Builds build-fuzz/ if needed (CC=clang meson setup build-fuzz -Dfuzzing=enabled; only
# the fuzz target is built, with -fsanitize=fuzzer,address,undefined), seeds a scratch
# corpus in a temporary directory with tests/fixtures/*.json (nothing is written into
# the repository) and runs build-fuzz/tests/fuzz-oci-parse with tests/fuzz/oci.dict.
#
# Exit status: 0 when the run was clean; 1 on a crash, leak, sanitizer report, timeout
# or out-of-memory (the reproducer is kept in build-fuzz/fuzz-artifacts/ and its name
# printed); 77 when clang is not installed (tests/run.sh counts that as a skip).
# Environment: MSP_FUZZ_BUILD (build directory, default build-fuzz), MSP_FUZZ_JOBS
# (parallel fuzzing processes, default 1).
#
# Longer runs, e.g. before a release or after changing anything in oci/:
#   MSP_FUZZ_JOBS=$(nproc) tests/fuzz/run-fuzz.sh 3600
# or by hand with a corpus that persists between runs (keep it outside the repo):
#   mkdir -p ~/msp-fuzz-corpus && cp tests/fixtures/*.json ~/msp-fuzz-corpus/
#   build-fuzz/tests/fuzz-oci-parse -dict=tests/fuzz/oci.dict -max_len=65536 \
#       -max_total_time=28800 -jobs=$(nproc) -workers=$(nproc) ~/msp-fuzz-corpus
# Reproduce a finding:   build-fuzz/tests/fuzz-oci-parse build-fuzz/fuzz-artifacts/crash-...
# Shrink it:             build-fuzz/tests/fuzz-oci-parse -minimize_crash=1 -runs=10000 <file>
set -euo pipefail

cd "$(dirname "$0")/../.."
seconds=${1:-30}
case $seconds in
''|*[!0-9]*) echo "run-fuzz.sh: SECONDS must be a number, got '$seconds'" >&2; exit 2 ;;
esac
build=${MSP_FUZZ_BUILD:-build-fuzz}
jobs=${MSP_FUZZ_JOBS:-1}

if ! command -v clang >/dev/null 2>&1; then
        echo "run-fuzz.sh: clang not found; skipping (install clang to fuzz)" >&2
        exit 77
fi

if [ ! -f "$build/build.ninja" ]; then
        CC=clang meson setup "$build" -Dfuzzing=enabled >/dev/null ||
                { echo "run-fuzz.sh: meson setup $build failed" >&2; exit 1; }
fi
ninja -C "$build" tests/fuzz-oci-parse tests/fuzz-mcp-jsonrpc tests/fuzz-mcp-proxy-head \
        tests/fuzz-mcp-spawn-proto tests/fuzz-mcp-port-head >/dev/null ||
        { echo "run-fuzz.sh: building the fuzz targets in $build failed" >&2; exit 1; }

top=$(pwd)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/msp-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/corpus"
cp tests/fixtures/*.json "$scratch/corpus/"
artifacts="$top/$build/fuzz-artifacts"
mkdir -p "$artifacts"
extra=()
if [ "$jobs" -gt 1 ]; then
        extra=(-jobs="$jobs" -workers="$jobs")
fi

echo "run-fuzz.sh: fuzzing oci/ parsers for ${seconds}s ($jobs job(s)), scratch in $scratch"
rc=0
# From inside the scratch directory: with -jobs, libFuzzer writes fuzz-N.log to the cwd.
(cd "$scratch" && "$top/$build/tests/fuzz-oci-parse" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -dict="$top/tests/fuzz/oci.dict" -artifact_prefix="$artifacts/" \
        -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
        "${extra[@]}" corpus >run.log 2>&1) || rc=$?
tail -n 25 "$scratch/run.log"
[ "$jobs" -gt 1 ] && tail -n 5 "$scratch"/fuzz-*.log 2>/dev/null
if [ "$rc" -ne 0 ]; then
        echo "run-fuzz.sh: FAILED (exit $rc); newest files in $artifacts/:" >&2
        ls -t "$artifacts" | head -5 >&2
        exit 1
fi

# fuzz_mcp TARGET CORPUS SECONDS MAX_LEN WHAT: one of msp-mcp's targets on a copy of its
# corpus; stops the script when it finds something.
fuzz_mcp() {
        local target=$1 corpus=$2 seconds=$3 max_len=$4 what=$5
        mkdir "$scratch/$corpus"
        cp "tests/fuzz/$corpus"/* "$scratch/$corpus/"
        echo "run-fuzz.sh: fuzzing $what for ${seconds}s"
        (cd "$scratch" && "$top/$build/tests/$target" \
                -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
                -artifact_prefix="$artifacts/" -error_exitcode=1 -timeout_exitcode=1 \
                -print_final_stats=1 "${extra[@]}" "$corpus" >"$target.log" 2>&1) || rc=$?
        tail -n 12 "$scratch/$target.log"
        if [ "$rc" -ne 0 ]; then
                echo "run-fuzz.sh: $what fuzzing FAILED (exit $rc); newest files in $artifacts/:" >&2
                ls -t "$artifacts" | head -5 >&2
                exit 1
        fi
}

# msp-mcp's JSON-RPC decoder (MSP_FUZZ_MCP_SECONDS, default 10), the egress proxy's
# request heads (MSP_FUZZ_PROXY_SECONDS, default 5), the spawn service's messages
# (MSP_FUZZ_SPAWN_SECONDS, default 5) and the port gateway's request heads
# (MSP_FUZZ_PORT_SECONDS, default 5).
fuzz_mcp fuzz-mcp-jsonrpc mcp-corpus "${MSP_FUZZ_MCP_SECONDS:-10}" 16384 "the msp-mcp JSON-RPC decoder"
fuzz_mcp fuzz-mcp-proxy-head proxy-corpus "${MSP_FUZZ_PROXY_SECONDS:-5}" 17000 "the egress proxy's request heads"
fuzz_mcp fuzz-mcp-spawn-proto spawn-corpus "${MSP_FUZZ_SPAWN_SECONDS:-5}" 66000 "the spawn service's messages"
fuzz_mcp fuzz-mcp-port-head port-corpus "${MSP_FUZZ_PORT_SECONDS:-5}" 17000 "the port gateway's request heads"
echo "run-fuzz.sh: clean"
