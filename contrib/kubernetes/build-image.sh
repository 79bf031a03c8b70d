#!/usr/bin/env bash
# Build the msp-mcp container image from the installed binaries, offline.
#
#   contrib/kubernetes/build-image.sh [--destdir DIR] [--tag TAG] [--packages "P..."]
#                                     [--tool podman|buildah] [-- TOOL-GLOBAL-OPTIONS...]
#
#   --destdir DIR   where `meson install --destdir DIR` put the binaries (default: /, i.e.
#                   the installed /usr/local/bin/msp, msp-mcp, /usr/local/libexec/msp/...)
#   --tag TAG       the image's name (default localhost/msp-mcp:latest)
#   --packages P    Debian packages of the base besides what the binaries link to
#                   (default: "base-files dash bash coreutils python3": the sh, bash and
#                   python languages of run_code; add e.g. perl or nodejs)
#   --tool T        podman (default when installed) or buildah
#   after --        global options of the tool (--root, --runroot, --storage-driver ...)
#
# Needs a Debian 12 host (the base is its own installed packages: debian-base.py) and
# python3. Steps: a context directory in /tmp, the base tar written into it, the binaries
# copied into it, the Containerfile beside this script built with it; the context is
# removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
destdir=/
tag=localhost/msp-mcp:latest
packages="base-files dash bash coreutils python3"
tool=
die() { echo "build-image: $*" >&2; exit 1; }

while [ $# -gt 0 ]; do
        case "$1" in
        --destdir) destdir=$2; shift ;;
        --tag) tag=$2; shift ;;
        --packages) packages=$2; shift ;;
        --tool) tool=$2; shift ;;
        --) shift; break ;;
        -h|--help) awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
        esac
        shift
done
if [ -z "$tool" ]; then
        if command -v podman >/dev/null; then tool=podman
        elif command -v buildah >/dev/null; then tool=buildah
        else die "neither podman nor buildah is installed (contrib/install-deps.sh podman)"
        fi
fi
case "$tool" in podman|buildah) ;; *) die "--tool $tool: podman or buildah" ;; esac

bins=(usr/local/bin/msp usr/local/bin/msp-mcp usr/local/libexec/msp/msp-sandbox-init
      usr/local/libexec/msp/msp-sandbox-hook usr/local/libexec/msp/msp-mcp-unpack)
for b in "${bins[@]}"; do
        [ -x "$destdir/$b" ] || die "$destdir/$b is not an executable (meson install, or --destdir)"
done

ctx=$(mktemp -d "${TMPDIR:-/tmp}/msp-mcp-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT

# The packages that own the libraries the binaries link to, then the base itself.
libs=$(for b in "${bins[@]}"; do ldd "$destdir/$b" 2>/dev/null || true; done |
        awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u)
linked=
for l in $libs; do
        owner=$(dpkg -S "$(readlink -f "$l")" 2>/dev/null || dpkg -S "$l" 2>/dev/null) ||
                die "no Debian package owns $l (the binaries must link to Debian's libraries)"
        linked="$linked ${owner%%:*}"
done
# shellcheck disable=SC2086 # word splitting wanted
python3 "$here/debian-base.py" "$ctx/debian12.tar" $packages $linked

for b in "${bins[@]}"; do
        install -D -m 0755 "$destdir/$b" "$ctx/$b"
done
# Accounts: root, and nobody for what looks one up. No /etc/subuid: as root msp-mcp
# checks that no account or range holds its --sandbox-ids.
mkdir -p "$ctx/etc"
printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/sh' \
        >"$ctx/etc/passwd"
printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$ctx/etc/group"
case "$tool" in
podman) podman "$@" build --pull=never -f "$here/Containerfile" -t "$tag" "$ctx" ;;
buildah) buildah "$@" bud --pull-never -f "$here/Containerfile" -t "$tag" "$ctx" ;;
esac
echo "build-image: built $tag"
