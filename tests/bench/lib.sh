# Shared by the benchmark scripts (runtime.sh, podman.sh, mcp.sh): sourced, not run.
# Each script keeps its own options; this is what they all did the same way.

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

die() {
        echo "bench: $*" >&2
        exit 1
}

# The comment block at the top of the script, without the #! line and the "# ".
bench_usage() {
        awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"
}

bench_need_root() {
        [ "$(id -u)" = 0 ] || die "run as root ($1)"
}

# bench_install GROUP...: contrib/install-deps.sh for the groups (installs what is missing).
bench_install() {
        "$repo/contrib/install-deps.sh" "$@" >/dev/null || die "contrib/install-deps.sh $* failed"
}

# bench_require HINT TOOL...: each tool on PATH, else fail with the hint.
bench_require() {
        local hint=$1 t
        shift
        for t in "$@"; do
                command -v "$t" >/dev/null || die "$t is missing: run $hint"
        done
}

# bench_build DIR [TARGET...]: a release build (no tests) in DIR, then ninja (the targets,
# or everything).
bench_build() {
        local dir=$1
        shift
        if [ ! -f "$dir/build.ninja" ]; then
                meson setup "$dir" "$repo" --buildtype=release -Dtests=false >/dev/null ||
                        die "meson setup $dir failed"
        fi
        ninja -C "$dir" "$@" >/dev/null || die "ninja -C $dir failed"
}

# bench_table JSON BASE_MEAN SKIPPED...: the hyperfine results as a table (mean ± sd,
# median, ratio to BASE_MEAN), then one line per "name: reason" that was skipped.
bench_table() {
        local json=$1 base=$2 s
        shift 2
        jq -r --argjson base "$base" '
                .results[] | [.command, (.mean * 1000), (.stddev * 1000), (.median * 1000),
                              (.mean / $base)] | @tsv' "$json" |
                awk -F'\t' 'BEGIN {
                        printf "%-28s %-16s %10s %8s\n", "command", "mean ± sd [ms]", "median", "ratio"
                        printf "%-28s %-16s %10s %8s\n", "-------", "--------------", "------", "-----"
                } { printf "%-28s %6.2f ± %6.2f %10.2f %7.2fx\n", $1, $2, $3, $4, $5 }'
        for s in "$@"; do
                printf '%-28s skipped: %s\n' "${s%%:*}" "${s#*: }"
        done
}
