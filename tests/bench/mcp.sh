#!/usr/bin/env bash
# msp-mcp benchmark: run_code latency and throughput over one stdio connection, msp and
# runc side by side, and msp-mcp's idle RSS.
#
#   tests/bench/mcp.sh [--runs N] [--calls N] [--callers N] [--no-install]
#   tests/bench/mcp.sh --http [--runs N] [--pings N] [--calls N] [--rounds N]
#                      [--sessions N] [--no-install]
#   tests/bench/mcp.sh --rootless [--runs N] [--calls N] [--rounds N] [--no-install]
#   tests/bench/mcp.sh --ab OTHER_BUILD_DIR [--runs N] [--calls N] [--callers N]
#                      [--rounds N] [--no-install]
#   tests/bench/mcp.sh --live [--runs N] [--pauses N] [--sessions N] [--kernels yes|no]
#                      [--no-install]
#
# As root. Installs what is missing (contrib/install-deps.sh build bench, and mcp when
# node is missing), builds a release msp and msp-mcp in build-bench-mcp/ (BUILD_DIR
# overrides) and runs tests/bench/mcp.mjs, which starts msp-mcp (own temporary
# --state-dir) once with --runtime msp and once with --runtime runc and measures, over
# one connection each:
#
#   latency      --runs (200) sequential run_code calls of sh `echo hi` and python
#                `print(1)` after 10 warm-up calls: p50 and p95; then as many calls of
#                sh `echo hi` in one live session (its sandbox running, each program
#                started by its pid 1)
#   throughput   --calls (200) calls of sh `echo hi` from --callers (4) concurrent callers
#   idle RSS     VmHWM/VmRSS of msp-mcp from /proc/<pid>/status right after initialize
#
# then the goals of issue 7: sh p50 < 15 ms, >= 100 runs/s with 4 callers, idle RSS < 4 MiB.
# A missed goal is reported, not failed: the exit status is 0 unless the benchmark itself
# could not run. The JSON with every number is kept in BUILD_DIR/bench/mcp.json.
#
# --http runs tests/bench/http.mjs instead: msp-mcp on stdio and on --listen 127.0.0.1:0
# at once (both --runtime msp), and a third time on HTTP for the memory figure:
#
#   latency      --runs (200) sh `echo hi` calls on each, alternating, after 10 warm-up
#                calls each: p50 and p95; the same for --pings (1000) `ping` requests
#                (the transport without a sandbox)
#   throughput   --rounds (3) rounds of --calls (200) calls of sh `echo hi` from 4 callers
#                on the stdio connection and from 16 HTTP clients (own session and
#                kept-alive connection each), which goes first alternating
#   memory       VmRSS/VmHWM of msp-mcp after start and with --sessions (100) idle HTTP
#                sessions, each client keeping its connection
#
# then the goals of issue 16: sh p50 over HTTP within 1 ms of stdio's, HTTP runs/s at
# least stdio's, RSS with 100 idle sessions under 16 MiB; the JSON in
# BUILD_DIR/bench/http.json.
#
# --rootless runs tests/bench/mcp-rootless.mjs instead: two msp-mcp on stdio at once, one
# started by root and one by the unprivileged test user (tests/helper/test-user.sh ensure
# makes it; XDG_RUNTIME_DIR a 0700 directory of its own, the state dir in it), both with
# the same copies of the release binaries in a 0755 work directory:
#
#   latency      --runs (200) sh `echo hi` calls on each, alternating, after 10 warm-up
#                calls each: p50 and p95
#   throughput   --rounds (3) rounds of --calls (200) calls of sh `echo hi` from 4 callers
#                on each server, which goes first alternating
#
# then the ratios and the goals of issue 14: the user's sh p50 within 10% of root's, its
# runs/s at least 90% of root's; the load average before and after; the JSON in
# BUILD_DIR/bench/mcp-rootless.json.
#
# --ab OTHER_BUILD_DIR runs tests/bench/mcp-ab.mjs instead: an A/B of another build (A: a
# meson build directory with mcp-adapter/msp-mcp, the helpers beside it and runtime/msp,
# e.g. a release build of the tree before a change) against this tree's release build (B),
# each msp-mcp with its own msp, both servers up at once:
#
#   rounds       --rounds (4) rounds, which build goes first alternating (A B, B A, ...);
#                in each, per build, the workload above: --runs (200) sh and python
#                latency calls, --calls (200) sh calls from --callers (4) callers
#
# then per build sh and python p50/p95 over all rounds, the mean runs/s, idle RSS, the
# ratio B/A and the spread between rounds (a B/A within it is noise); the JSON in
# BUILD_DIR/bench/mcp-ab.json.
#
# --live runs tests/bench/live.mjs instead: live sessions (a session's running sandbox,
# its python kernel), msp-mcp with --runtime msp and with --runtime runc up at once:
#
#   latency      --runs (200) rounds, each on each server: sh `echo hi` fresh and in the
#                session, python `print(1)` fresh and `x += 1` in the session's kernel,
#                after 10 warm-up calls of each; servers and fresh/live order alternating
#   pause        --pauses (50) rounds of session_pause, a call on the paused session,
#                session_pause + session_resume + a call, against a call on the running one
#   memory       msp-mcp's VmRSS with --sessions (50) idle live sessions, the sandboxes'
#                cgroups and processes and the runtime processes apart; again with a
#                python kernel started in each (--kernels no skips that)
#
# then the floors, tests/bench/spawn.sh's (spawn service, fork+exec, msp exec) and
# tests/bench/kernel-floor.py's (ipykernel alone under a bare zmq client), the goals of
# issue 26 (live sh p50 <= 2 ms, kernel statement p50 <= 3 ms, resume <= 5 ms, msp-mcp
# VmRSS with 50 idle sessions < 16 MiB), the load average before and after; the JSON in
# BUILD_DIR/bench/live.json.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
build=${BUILD_DIR:-$repo/build-bench-mcp}
opts=()
live=0
http=0
rootless=0
ab=
install=1

while [ $# -gt 0 ]; do
        case "$1" in
        --runs|--calls|--callers|--pings|--rounds|--sessions|--pauses|--kernels) opts+=("$1" "$2"); shift ;;
        --http) http=1 ;;
        --live) live=1 ;;
        --rootless) rootless=1 ;;
        --ab) [ $# -ge 2 ] || die "--ab needs the other build directory"; ab=$2; shift ;;
        --no-install) install=0 ;;
        -h|--help) bench_usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
        esac
        shift
done

bench_need_root "msp-mcp creates namespaces and cgroups"
[ $((http + rootless + live + (${#ab} > 0))) -le 1 ] ||
        die "--http, --rootless, --live and --ab are four benchmarks: run one at a time"
if [ -n "$ab" ]; then
        [ -d "$ab" ] || die "--ab $ab: not a directory"
        ab=$(cd "$ab" && pwd)
        for b in mcp-adapter/msp-mcp mcp-adapter/msp-sandbox-init mcp-adapter/msp-sandbox-hook \
                 mcp-adapter/msp-mcp-unpack runtime/msp; do
                [ -x "$ab/$b" ] || die "--ab $ab: no $b (a built meson build directory of msp is needed)"
        done
fi

if [ "$install" = 1 ]; then
        groups=(build bench)
        [ "$rootless" = 0 ] || groups+=(rootless)
        command -v node >/dev/null || groups+=(mcp)
        bench_install "${groups[@]}"
fi
bench_require "contrib/install-deps.sh build mcp" node meson ninja

# Everything (-Dtests=false: the runtime and msp-mcp with its helpers, e.g. msp-sandbox-init).
bench_build "$build"

mkdir -p "$build/bench"
if [ "$http" = 1 ]; then
        node "$here/http.mjs" --msp-mcp "$build/mcp-adapter/msp-mcp" --msp "$build/runtime/msp" \
                "${opts[@]}" --json "$build/bench/http.json" || die "tests/bench/http.mjs failed"
        exit 0
fi

if [ "$live" = 1 ]; then
        runc_args=()
        if command -v runc >/dev/null; then
                runc_args=(--runc "$(command -v runc)")
        else
                echo "bench: runc is not installed: measuring msp only" >&2
        fi
        node "$here/live.mjs" --msp-mcp "$build/mcp-adapter/msp-mcp" --msp "$build/runtime/msp" \
                "${runc_args[@]}" "${opts[@]}" --json "$build/bench/live.json" || die "tests/bench/live.mjs failed"
        # The floor under a live call: pid 1's spawn service alone, a bare fork+exec, msp exec.
        echo
        echo "bare costs (tests/bench/spawn.sh --runs 200, the same build):"
        BUILD_DIR=$build "$here/spawn.sh" --runs 200 || echo "bench: tests/bench/spawn.sh failed" >&2
        # The floor under a kernel cell: ipykernel alone on the host, a bare zmq client.
        echo
        /usr/bin/python3 "$here/kernel-floor.py" --runs 200 2>/dev/null ||
                echo "bench: tests/bench/kernel-floor.py failed" >&2
        exit 0
fi

if [ "$rootless" = 1 ]; then
        bench_require "contrib/install-deps.sh rootless" setpriv newuidmap
        eval "$("$repo/tests/helper/test-user.sh" ensure)"
        # The user runs copies (the build tree may be below a directory it cannot search),
        # msp-mcp with every helper it finds beside itself, and root runs the same copies.
        work=$(mktemp -d /tmp/msp-bench-mcp-rootless.XXXXXX)
        trap 'rm -rf --one-file-system "$work"' EXIT
        chmod 0755 "$work"
        for b in "$build"/mcp-adapter/msp-* "$build/runtime/msp"; do
                if [ -f "$b" ] && [ -x "$b" ]; then install -m 0755 "$b" "$work/"; fi
        done
        # The user's state on the same kind of filesystem as root's (mcp-client.mjs stateBase)
        xdg=$(node -e 'import("'"$here"'/mcp-client.mjs").then((m) => console.log(m.stateBase()))')
        xdg=$(mktemp -d "$xdg/msp-bench-mcp-xdg.XXXXXX")
        trap 'rm -rf --one-file-system "$work" "$xdg"' EXIT
        chown "$MSP_TEST_UID:$MSP_TEST_GID" "$xdg"
        chmod 0700 "$xdg"
        node "$here/mcp-rootless.mjs" --msp-mcp "$work/msp-mcp" --msp "$work/msp" \
                --user-xdg "$xdg" "${opts[@]}" --json "$build/bench/mcp-rootless.json" ||
                die "tests/bench/mcp-rootless.mjs failed"
        exit 0
fi

# build_label DIR: the build directory, its source tree and that tree's commit.
build_label() {
        local src
        src=$(jq -r .directories.source "$1/meson-info/meson-info.json" 2>/dev/null) || src=
        [ -n "$src" ] || { echo "$1"; return; }
        echo "$1, from $src at $(git -C "$src" describe --always --dirty 2>/dev/null || echo "an unknown commit")"
}

if [ -n "$ab" ]; then
        node "$here/mcp-ab.mjs" --a-msp-mcp "$ab/mcp-adapter/msp-mcp" --a-msp "$ab/runtime/msp" \
                --a-label "$(build_label "$ab")" \
                --b-msp-mcp "$build/mcp-adapter/msp-mcp" --b-msp "$build/runtime/msp" \
                --b-label "$(build_label "$build") (this tree)" \
                "${opts[@]}" --json "$build/bench/mcp-ab.json" || die "tests/bench/mcp-ab.mjs failed"
        exit 0
fi

runc_args=()
if command -v runc >/dev/null; then
        runc_args=(--runc "$(command -v runc)")
else
        echo "bench: runc is not installed: measuring msp only" >&2
fi

node "$here/mcp.mjs" --msp-mcp "$build/mcp-adapter/msp-mcp" --msp "$build/runtime/msp" \
        "${runc_args[@]}" "${opts[@]}" --json "$build/bench/mcp.json" || die "tests/bench/mcp.mjs failed"
