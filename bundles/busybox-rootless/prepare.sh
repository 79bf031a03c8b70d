#!/usr/bin/env bash
# Write bundles/busybox-rootless/config.json for the user who runs this: the busybox
# bundle's container in a user namespace whose only mapping is that user's uid and gid,
# over the busybox rootfs (prepared first when missing).
#
#   bundles/busybox-rootless/prepare.sh [MSP]     (default: build/runtime/msp of this tree)
#
# The config is `msp spec --rootless` (the mapping, no network namespace, /sys bound
# read-only) with the busybox bundle's process and hostname. It names the caller's ids,
# so it is made on the machine, by the user, and not committed.
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
msp=${1:-$here/../../build/runtime/msp}

die() {
        echo "prepare: $*" >&2
        exit 1
}

# root runs bundles/busybox itself; tests/run.sh runs every recipe, before msp is built
if [ "$(id -u)" -eq 0 ]; then
        echo "bundles/busybox-rootless: nothing to do as root (it is made by the user who runs it)"
        exit 0
fi
[ -x "$msp" ] || die "$msp not found: build msp first (meson setup build && ninja -C build)"
command -v python3 >/dev/null || die "python3 not found: run contrib/install-deps.sh bundles"
[ -x "$here/../busybox/rootfs/bin/busybox" ] || bash "$here/../busybox/prepare.sh" >/dev/null

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$msp" spec --rootless --bundle "$tmp"
python3 - "$tmp/config.json" "$here/../busybox/config.json" "$here/config.json" <<'PY'
import json, sys
spec, busybox, out = sys.argv[1:]
c = json.load(open(spec))
b = json.load(open(busybox))
c["process"]["terminal"] = False
c["process"]["args"] = b["process"]["args"]
c["process"]["env"] = b["process"]["env"]
c["root"] = {"path": "../busybox/rootfs", "readonly": True}
c["hostname"] = b["hostname"]
tmp = out + ".tmp"
with open(tmp, "w") as f:
    json.dump(c, f, indent="\t")
    f.write("\n")
import os
os.replace(tmp, out)
PY
echo "bundles/busybox-rootless: config.json for uid $(id -u) over bundles/busybox/rootfs"
