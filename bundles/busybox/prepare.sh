#!/usr/bin/env bash
# (Re)create bundles/busybox/rootfs from the Debian busybox-static binary.
#
#   bundles/busybox/prepare.sh [ROOTFS]     (default: rootfs/ next to this script)
#
# The tree: /bin/busybox plus a symlink for every applet at the path `busybox --list-full`
# gives, /etc/passwd and /etc/group (root, user 1000, nobody), /tmp (1777), and empty
# mount points. Deterministic: the same busybox gives the same tree. Takes well under a
# second. BUSYBOX=/path/to/static/busybox overrides the binary.
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
rootfs=${1:-$here/rootfs}

die() {
        echo "prepare: $*" >&2
        exit 1
}

find_busybox() {
        local p
        if [ -n "${BUSYBOX:-}" ]; then
                echo "$BUSYBOX"
                return
        fi
        p=$(dpkg -L busybox-static 2>/dev/null | grep -m1 '/bin/busybox$' || true)
        [ -n "$p" ] || p=$(command -v busybox || true)
        [ -n "$p" ] || die "busybox not found: run contrib/install-deps.sh bundles (package busybox-static)"
        echo "$p"
}

# Refuse to delete a tree that still has something mounted inside it: a stray bind mount
# of a host directory would otherwise be emptied too.
check_no_mounts() {
        local dir
        [ -e "$1" ] || return 0
        dir=$(realpath "$1")
        if awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { found = 1 } END { exit !found }' \
                /proc/self/mountinfo; then
                die "something is mounted under $dir; unmount it first (findmnt -R $dir)"
        fi
}

bb=$(find_busybox)
[ -x "$bb" ] || die "$bb is not executable"
if command -v readelf >/dev/null 2>&1 && readelf -l "$bb" 2>/dev/null | grep -q 'program interpreter'; then
        die "$bb is dynamically linked; the bundle needs the static one (package busybox-static)"
fi

check_no_mounts "$rootfs"
rm -rf --one-file-system "$rootfs"
mkdir -p "$rootfs"
cd "$rootfs"

mkdir -p bin sbin usr/bin usr/sbin etc dev proc sys run mnt opt root home/user var/tmp tmp
chmod 0700 root
chmod 1777 tmp var/tmp
install -m 0755 "$bb" bin/busybox

# Relative links, so that they also resolve when the tree is inspected from the host.
declare -A target=([bin]=busybox)
while IFS= read -r applet; do
        case "$applet" in
        */*) ;;
        *) continue ;;          # linuxrc and other top-level names: not wanted
        esac
        dir=${applet%/*}
        if [ -z "${target[$dir]+set}" ]; then
                up=${dir//[^\/]/}      # one '/' per level below the first
                target[$dir]=$(printf '../%.0s' $(seq 0 "${#up}"))bin/busybox
        fi
        [ -e "$applet" ] || [ -L "$applet" ] || ln -s "${target[$dir]}" "$applet"
done < <("$bb" --list-full | LC_ALL=C sort)

cat > etc/passwd <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
user:x:1000:1000:user:/home/user:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
cat > etc/group <<'GROUP'
root:x:0:
tty:x:5:
user:x:1000:
nogroup:x:65534:
GROUP
cat > etc/hosts <<'HOSTS'
127.0.0.1	localhost
::1	localhost ip6-localhost ip6-loopback
HOSTS
if [ "$(id -u)" = 0 ]; then
        chown 1000:1000 home/user
fi

echo "prepare: $rootfs ready ($("$bb" --list | wc -l) applets from $bb)"
