#!/usr/bin/env bash
# Build msp and run every test suite; the README's second command and what CI runs.
#
#   tests/run.sh [--quick] [--suite NAME]... [--no-deps]
#
# Steps, each under a timeout and all under one overall budget:
#   1. contrib/install-deps.sh build test vm podman engines languages rootless (installs only what
#                                             is missing; vm: qemu and the cgroup v2 guest kernel;
#                                             podman: podman, conmon for tests/podman
#                                             and tests/podman-rootless;
#                                             engines: docker.io, containerd for
#                                             tests/docker and tests/containerd;
#                                             languages: R, g++, Ruby, matplotlib for
#                                             tests/mcp/languages.test.mjs;
#                                             rootless: uidmap, fuse-overlayfs, slirp4netns;
#                                             mcp: node, npm when missing), then
#      tests/helper/test-user.sh ensure      (the rootless suites' unprivileged user)
#      npm ci --prefix tests/mcp             (the pinned MCP SDK for suite 'mcp')
#   2. bundles/*/prepare.sh                  (the rootfs trees the integration tests use)
#   3. meson setup + ninja in build/         (-Dwerror=true when $CI is set)
#   4. meson test -C build                   (all suites, or the --suite ones; suite 'vm'
#                                             boots the cgroup v2 guest, tests/vm/)
#   5. build-asan/ with -Db_sanitize=address,undefined: the unit, integration and mcp suites
#   6. tests/fuzz/run-fuzz.sh 30             (a short libFuzzer run; counts as one test)
#
# Options:
#   --quick        skip steps 5 and 6
#   --suite NAME   run only this suite (repeatable); a meson suite (unit, integration, ...)
#                  or 'fuzz' for step 6. Step 5 runs the chosen ones among unit/integration.
#   --no-deps      skip step 1
# Environment: CI (non-empty: warnings are errors), MSP_TEST_BUDGET (seconds, default 4500).
#
# Results come from meson's meson-logs/<logbase>.json (one JSON object per test): each TAP
# case (`ok`/`not ok` line) of a test counts once, a test without TAP output counts once.
# The last line printed is always `N passed, N failed, N skipped` (test cases); the exit
# status is non-zero when anything failed or when no test ran at all.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
top=$(pwd)

quick=0
deps=1
suites=()
usage() {
        sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
}
while [ $# -gt 0 ]; do
        case "$1" in
        --quick) quick=1 ;;
        --no-deps) deps=0 ;;
        --suite)
                [ $# -ge 2 ] || { echo "run.sh: --suite needs a name" >&2; exit 2; }
                suites+=("$2")
                shift
                ;;
        --suite=*) suites+=("${1#--suite=}") ;;
        -h|--help) usage; exit 0 ;;
        *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
        esac
        shift
done

budget=${MSP_TEST_BUDGET:-4500}
deadline=$(( $(date +%s) + budget ))
results=$(mktemp -d "${TMPDIR:-/tmp}/msp-run.XXXXXX")
trap 'rm -rf "$results"' EXIT
: > "$results/all"      # one line per test: STEP<TAB>RESULT<TAB>NAME

say() {
        printf 'run.sh: %s\n' "$*"
}

record() {      # STEP RESULT NAME
        printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results/all"
}

selected() {    # is suite $1 wanted?
        local s
        [ ${#suites[@]} -eq 0 ] && return 0
        for s in "${suites[@]}"; do
                [ "$s" = "$1" ] && return 0
        done
        return 1
}

# ---- running a step under a timeout ----

current=
# shellcheck disable=SC2317 # called from the trap
on_signal() {
        trap - INT TERM
        [ -n "$current" ] && kill -TERM "$current" 2>/dev/null && wait "$current" 2>/dev/null
        record run INTERRUPT "tests/run.sh interrupted"
        finish
}
trap on_signal INT TERM

# run_step NAME MAX_SECONDS CMD...: run CMD with a timeout of MAX_SECONDS, shortened to
# what is left of the overall budget. Returns CMD's status; 124 on a timeout.
run_step() {
        local name=$1 max=$2 left rc
        shift 2
        left=$(( deadline - $(date +%s) ))
        [ "$left" -lt "$max" ] && max=$left
        if [ "$max" -le 0 ]; then
                say "$name: not run, the time budget (MSP_TEST_BUDGET=${budget}s) is used up"
                return 124
        fi
        say "== $name (timeout ${max}s): $*"
        # In the background and waited for, so that Ctrl-C and SIGTERM reach the trap.
        timeout -k 30 "$max" "$@" &
        current=$!
        wait "$current"
        rc=$?
        current=
        case $rc in
        0) ;;
        124|137) say "$name: TIMEOUT after ${max}s"; rc=124 ;;
        *) say "$name: exited with status $rc" ;;
        esac
        return $rc
}

# ---- reading meson's test log ----

# Print RESULT<TAB>NAME for each test case in a meson testlog JSON file (one object a
# line). A test whose stdout holds TAP results counts once per `ok`/`not ok` line (a
# `# SKIP` directive is a skip, `not ok ... # TODO` an expected failure), plus one failure
# under its own name when meson failed it without a failing case (a crash, a timeout, a
# plan it did not finish). Any other test counts once, with meson's result.
# /usr/bin/python3 on purpose: the python3 first on PATH may be a user's shim.
parse_testlog() {
        if [ -x /usr/bin/python3 ]; then
                /usr/bin/python3 - "$1" <<'PY'
import json, re, sys
CASE = re.compile(r"^(not )?ok\b[ \t]*(\d*)[ \t]*-?[ \t]*(.*)$")
DIRECTIVE = re.compile(r"(?<!\\)#[ \t]*(skip|todo)\b", re.IGNORECASE)
PASSED = ("OK", "EXPECTEDFAIL", "SKIP")
with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
    for line in f:
        line = line.strip()
        if not line:
            continue
        try:
            t = json.loads(line)
        except ValueError:
            print("ERROR\t(unreadable line in %s)" % sys.argv[1])
            continue
        name = str(t.get("name", "?")).replace("\t", " ")
        result = t.get("result", "ERROR")
        cases = 0
        failed_case = False
        for out in str(t.get("stdout") or "").splitlines():
            m = CASE.match(out)
            if not m:
                continue
            cases += 1
            desc = m.group(3).replace("\t", " ")
            d = DIRECTIVE.search(desc)
            kind = d.group(1).lower() if d else ""
            if m.group(1):
                r = "EXPECTEDFAIL" if kind == "todo" else "FAIL"
                failed_case = failed_case or r == "FAIL"
            else:
                r = "SKIP" if kind == "skip" else "OK"
            print("%s\t%s: %s %s" % (r, name, m.group(2), desc.strip()))
        if cases == 0 or (result not in PASSED and not failed_case):
            print("%s\t%s" % (result, name))
PY
        elif command -v jq >/dev/null 2>&1; then
                jq -r '(.result // "ERROR") as $r | (.name // "?") as $n
                        | [(.stdout // "") | split("\n")[]
                           | capture("^(?<no>not )?ok\\b[ \t]*(?<desc>.*)$")
                           | (.desc | ascii_downcase | test("(^|[^\\\\])#[ \t]*todo\\b")) as $todo
                           | (.desc | ascii_downcase | test("(^|[^\\\\])#[ \t]*skip\\b")) as $skip
                           | {r: (if .no then (if $todo then "EXPECTEDFAIL" else "FAIL" end)
                                  elif $skip then "SKIP" else "OK" end), desc}] as $c
                        | ($c[] | "\(.r)\t\($n): \(.desc)"),
                          (if ($c | length) == 0
                              or (([$r] | inside(["OK", "EXPECTEDFAIL", "SKIP"]) | not)
                                  and ([$c[] | select(.r == "FAIL")] | length) == 0)
                           then "\($r)\t\($n)" else empty end)' "$1"
        else
                # No JSON reader: one count per test. Inside JSON strings every quote is
                # escaped, so these keys only match as keys.
                awk '{
                        r = "ERROR"; n = "?"
                        if (match($0, /"result": "[A-Z]+"/)) r = substr($0, RSTART + 11, RLENGTH - 12)
                        if (match($0, /"name": "[^"]*"/)) n = substr($0, RSTART + 9, RLENGTH - 10)
                        print r "\t" n
                }' "$1"
        fi
}

# meson_test STEP BUILDDIR MAX_SECONDS [MESON TEST ARGS...]: run the tests, record each.
meson_test() {
        local step=$1 dir=$2 max=$3 logbase="msp-run-$1" log rc n_fail
        shift 3
        log="$dir/meson-logs/$logbase.json"
        rm -f "$log"
        run_step "$step: meson test" "$max" \
                meson test -C "$dir" --print-errorlogs --logbase "$logbase" "$@"
        rc=$?
        if [ -f "$log" ]; then
                parse_testlog "$log" | while IFS=$'\t' read -r result name; do
                        record "$step" "$result" "$name"
                done
        fi
        n_fail=$(awk -F'\t' -v s="$step" '$1 == s && $2 != "OK" && $2 != "EXPECTEDFAIL" && $2 != "SKIP"' \
                "$results/all" | wc -l)
        if [ "$rc" = 124 ]; then
                record "$step" TIMEOUT "meson test in $dir/ (step timeout)"
        elif [ "$rc" != 0 ] && [ "$n_fail" = 0 ]; then
                record "$step" ERROR "meson test in $dir/ exited $rc with no failing test in its log"
        elif [ ! -f "$log" ]; then
                say "$step: meson test found no test to run"
        fi
}

# setup_and_build STEP BUILDDIR [MESON OPTIONS...]: configure (or reconfigure) and build.
setup_and_build() {
        local step=$1 dir=$2
        shift 2
        if [ -f "$dir/meson-private/coredata.dat" ]; then
                run_step "$step: meson setup --reconfigure" 300 meson setup --reconfigure "$dir" "$@" ||
                        run_step "$step: meson setup --wipe" 300 meson setup --wipe "$dir" "$@" ||
                        { record "$step" FAIL "meson setup $dir"; return 1; }
        else
                run_step "$step: meson setup" 300 meson setup "$dir" "$@" ||
                        { record "$step" FAIL "meson setup $dir"; return 1; }
        fi
        run_step "$step: build" 1500 ninja -C "$dir" ||
                { record "$step" FAIL "build in $dir/ (ninja)"; return 1; }
}

# ---- the closing report ----

finish() {
        local passed failed skipped status=0
        trap - INT TERM
        passed=$(awk -F'\t' '$2 == "OK" || $2 == "EXPECTEDFAIL"' "$results/all" | wc -l)
        skipped=$(awk -F'\t' '$2 == "SKIP"' "$results/all" | wc -l)
        failed=$(awk -F'\t' '$2 != "OK" && $2 != "EXPECTEDFAIL" && $2 != "SKIP"' "$results/all" | wc -l)
        if [ $((passed + failed)) -eq 0 ]; then
                record run FAIL "no test ran"
                failed=1
        fi
        echo
        say "== summary"
        awk -F'\t' '{
                if ($2 == "OK" || $2 == "EXPECTEDFAIL") p[$1]++
                else if ($2 == "SKIP") s[$1]++
                else f[$1]++
                seen[$1] = 1
        } END {
                for (k in seen) printf "  %-6s %d passed, %d failed, %d skipped\n", k, p[k], f[k], s[k]
        }' "$results/all" | sort
        if [ "$failed" -gt 0 ]; then
                say "failed:"
                awk -F'\t' '$2 != "OK" && $2 != "EXPECTEDFAIL" && $2 != "SKIP" { printf "  %-14s %-6s %s\n", $2, $1, $3 }' \
                        "$results/all"
                status=1
        fi
        if [ "$skipped" -gt 0 ]; then
                say "skipped:"
                awk -F'\t' '$2 == "SKIP" { printf "  %-6s %s\n", $1, $3 }' "$results/all"
        fi
        [ "$quick" = 1 ] && say "--quick: the ASan/UBSan pass and the fuzz run were not run"
        rm -rf "$results"
        trap - EXIT
        echo "$passed passed, $failed failed, $skipped skipped"
        exit $status
}

# ---- the steps ----

say "msp tests in $top (budget ${budget}s${CI:+, CI mode: -Dwerror=true}${suites[*]:+, suites: ${suites[*]}})"
[ "$(id -u)" = 0 ] || say "warning: not root; the integration suite needs root and will fail or skip"

if [ "$deps" = 1 ]; then
        # mcp (node, npm) only when missing: a node from elsewhere (NodeSource) brings its npm.
        dep_groups="build test vm podman engines languages rootless"
        { command -v node && command -v npm; } >/dev/null 2>&1 || dep_groups="$dep_groups mcp"
        # shellcheck disable=SC2086 # word splitting wanted
        run_step "deps" 1200 bash contrib/install-deps.sh $dep_groups ||
                record deps FAIL "contrib/install-deps.sh $dep_groups"
        # The user the rootless suites run as (subordinate ids, runtime dir), made once.
        if [ "$(id -u)" = 0 ]; then
                run_step "test-user" 60 bash tests/helper/test-user.sh ensure ||
                        record deps FAIL "tests/helper/test-user.sh ensure"
        fi
        # The MCP SDK for suite 'mcp' (tests/mcp/run.sh also does this when it is stale).
        if command -v npm >/dev/null 2>&1; then
                run_step "deps: npm ci tests/mcp" 300 npm ci --prefix tests/mcp --no-audit --no-fund ||
                        record deps FAIL "npm ci --prefix tests/mcp"
        fi
fi

for b in bundles/*/prepare.sh; do
        [ -f "$b" ] || continue
        run_step "bundle ${b%/prepare.sh}" 60 bash "$b" ||
                record bundle FAIL "$b"
done

meson_suites=()
for s in "${suites[@]}"; do
        [ "$s" = fuzz ] || meson_suites+=(--suite "$s")
done
want_meson=1
[ ${#suites[@]} -gt 0 ] && [ ${#meson_suites[@]} -eq 0 ] && want_meson=0

werror=false
[ -n "${CI:-}" ] && werror=true

main_built=0
if setup_and_build main build -Dwerror="$werror"; then
        main_built=1
        if [ "$want_meson" = 1 ]; then
                meson_test main build 2400 "${meson_suites[@]}"
        fi
fi

if [ "$quick" = 0 ]; then
        asan_suites=()
        for s in unit integration mcp; do
                selected "$s" && asan_suites+=(--suite "$s")
        done
        if [ ${#asan_suites[@]} -eq 0 ]; then
                :
        elif [ "$main_built" = 0 ]; then
                say "asan: not run, the main build failed"
        else
                # Warnings are enforced by the main build; sanitizer builds can warn spuriously.
                if setup_and_build asan build-asan -Dwerror=false \
                        -Db_sanitize=address,undefined -Db_lundef=false; then
                        ASAN_OPTIONS=halt_on_error=1:print_stacktrace=1:detect_leaks=1 \
                        UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
                                meson_test asan build-asan 2700 --timeout-multiplier 3 "${asan_suites[@]}"
                fi
        fi

        if selected fuzz; then
                if [ ! -f tests/fuzz/run-fuzz.sh ]; then
                        say "fuzz: skipped, tests/fuzz/run-fuzz.sh does not exist"
                        record fuzz SKIP "config parser fuzz run: tests/fuzz/run-fuzz.sh does not exist"
                elif ! command -v clang >/dev/null 2>&1; then
                        say "fuzz: skipped, clang not found"
                        record fuzz SKIP "config parser fuzz run: clang not found (contrib/install-deps.sh test installs it)"
                else
                        run_step "fuzz" 900 bash tests/fuzz/run-fuzz.sh 30
                        case $? in
                        0) record fuzz OK "tests/fuzz/run-fuzz.sh 30" ;;
                        77) record fuzz SKIP "tests/fuzz/run-fuzz.sh 30 exited 77 (see its output above)" ;;
                        124) record fuzz TIMEOUT "tests/fuzz/run-fuzz.sh 30" ;;
                        *) record fuzz FAIL "tests/fuzz/run-fuzz.sh 30" ;;
                        esac
                fi
        fi
fi

finish
