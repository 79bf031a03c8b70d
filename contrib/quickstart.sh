#!/usr/bin/env bash
# The README's first command: install what is missing, build msp, prepare the busybox
# bundle and run it.
#
#   contrib/quickstart.sh
#
# Safe to run again: every step is skipped or redone as needed. Run as root it runs
# bundles/busybox; run by an ordinary user, the same container in a user namespace of
# that user (bundles/busybox-rootless, made for them), without sudo. Only a missing
# package needs root (contrib/install-deps.sh asks sudo for it).
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

msp=build/runtime/msp
bundle=bundles/busybox
if [ "$(id -u)" -ne 0 ]; then
        step "rootless bundle (bundles/busybox-rootless, for uid $(id -u))"
        bash bundles/busybox-rootless/prepare.sh "$msp"
        bundle=bundles/busybox-rootless
fi

# A container left over from an interrupted run would make the id a duplicate.
if "$msp" state demo >/dev/null 2>&1; then
        "$msp" delete --force demo
fi

step "msp run -b $bundle demo"
"$msp" run -b "$bundle" demo
