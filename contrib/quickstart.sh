#!/usr/bin/env bash
# The README's first command: install what is missing, build msp, prepare the busybox
# bundle and run it.
#
#   contrib/quickstart.sh
#
# Safe to run again: every step is skipped or redone as needed. msp needs root for now;
# when run as another user, the last step goes through sudo.
set -euo pipefail

cd "$(dirname "$0")/.."

step() {
        printf '\n==> %s\n' "$*"
}

step "dependencies"
bash contrib/install-deps.sh build bundles

step "build (build/)"
if [ -f build/build.ninja ]; then
        : # ninja re-runs meson by itself when a meson.build changed
elif [ -f build/meson-private/coredata.dat ]; then
        meson setup --wipe build
else
        meson setup build      # also over the leftovers of a failed first setup
fi
ninja -C build

step "bundle (bundles/busybox)"
bash bundles/busybox/prepare.sh

as_root=()
if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "quickstart: msp needs root for now, and sudo is missing" >&2; exit 1; }
        as_root=(sudo)
fi
msp=build/runtime/msp

# A container left over from an interrupted run would make the id a duplicate.
if "${as_root[@]}" "$msp" state demo >/dev/null 2>&1; then
        "${as_root[@]}" "$msp" delete --force demo
fi

step "msp run -b bundles/busybox demo"
"${as_root[@]}" "$msp" run -b bundles/busybox demo
