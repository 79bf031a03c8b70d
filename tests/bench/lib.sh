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
