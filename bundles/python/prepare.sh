#!/usr/bin/env bash
# (Re)create bundles/python/rootfs: a skeleton whose /usr, /lib and /lib64 are the host's,
# bind-mounted read-only by config.json, so /usr/bin/python3 is the host's interpreter.
#
#   bundles/python/prepare.sh [ROOTFS]     (default: rootfs/ next to this script)
#
# The skeleton has its own shell: /bin is a real directory holding the static busybox and
# its applets, so the container never runs a host shell. /usr, /lib and /lib64 are empty
# mount points. Deterministic and well under a second. BUSYBOX=... overrides the binary.
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
rootfs=${1:-$here/rootfs}

die() {
        echo "prepare: $*" >&2
        exit 1
}

# The python of the host's /usr, never whatever python3 is first on PATH (a user-level
# shim, a virtualenv): only /usr is mounted into the container.
[ -x /usr/bin/python3 ] || die "/usr/bin/python3 not found: run contrib/install-deps.sh bundles (package python3)"
for d in /usr /lib /lib64; do
        [ -d "$d" ] || die "the host has no $d; adjust the mounts in $here/config.json"
done

if [ -n "${BUSYBOX:-}" ]; then
        bb=$BUSYBOX
else
        bb=$(dpkg -L busybox-static 2>/dev/null | grep -m1 '/bin/busybox$' || command -v busybox || true)
fi
{ [ -n "$bb" ] && [ -x "$bb" ]; } || die "busybox not found: run contrib/install-deps.sh bundles (package busybox-static)"
if command -v readelf >/dev/null 2>&1 && readelf -l "$bb" 2>/dev/null | grep -q 'program interpreter'; then
        die "$bb is dynamically linked; the bundle needs the static one (package busybox-static)"
fi

# Never empty a tree that still has a host directory mounted inside it.
if [ -e "$rootfs" ]; then
        dir=$(realpath "$rootfs")
        if awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { found = 1 } END { exit !found }' \
                /proc/self/mountinfo; then
                die "something is mounted under $dir; unmount it first (findmnt -R $dir)"
        fi
fi
rm -rf --one-file-system "$rootfs"
mkdir -p "$rootfs"
cd "$rootfs"

mkdir -p bin usr lib lib64 etc dev proc sys run tmp root home/user
chmod 0700 root
chmod 1777 tmp
install -m 0755 "$bb" bin/busybox
while IFS= read -r applet; do
        [ "$applet" = busybox ] || [ "$applet" = linuxrc ] || ln -s busybox "bin/$applet"
done < <("$bb" --list | LC_ALL=C sort -u)

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

echo "prepare: $rootfs ready (python $(/usr/bin/python3 -c 'import platform; print(platform.python_version())') from the host's /usr)"
