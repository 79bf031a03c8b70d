#!/usr/bin/env bash
# Install the Debian/Ubuntu packages msp needs to build, test and benchmark.
#
#   contrib/install-deps.sh [GROUP...]     install what is missing (default: build test)
#   contrib/install-deps.sh --check [G...] list what is missing; exit 1 if anything is
#   contrib/install-deps.sh --print-fedora [G...]   print the Fedora dnf command instead
#   contrib/install-deps.sh --list         list the groups
#
# Idempotent: it asks dpkg-query what is installed and only runs apt-get (and
# `apt-get update`) when something is missing, so a second run takes well under a second.
# Runs as root, or through sudo otherwise.
#
# To add a group (podman, vm, mcp, ...), add one line to each of the three tables below.
# A Debian package name ending in '?' is optional: when the distribution does not have
# it, or it fails to install, the script warns and carries on without it.
set -euo pipefail

declare -A DEB FEDORA ABOUT

ABOUT[build]="compile msp and msp-mcp"
DEB[build]="meson ninja-build pkg-config gcc libc6-dev libseccomp-dev libcap-dev libyajl-dev libmnl-dev libmicrohttpd-dev libarchive-dev libzmq3-dev"
FEDORA[build]="meson ninja-build pkgconf-pkg-config gcc glibc-devel libseccomp-devel libcap-devel yajl-devel libmnl-devel libmicrohttpd-devel libarchive-devel zeromq-devel"

ABOUT[bundles]="prepare bundles/busybox and bundles/python"
DEB[bundles]="busybox-static python3"
FEDORA[bundles]="busybox python3"

# openssh-server: tests/mcp/clients.test.mjs runs its own sshd (127.0.0.1, a private config);
# where systemd runs, Debian's package also enables and starts ssh.service on port 22
# (`systemctl disable --now ssh` if this host should not serve ssh).
# python3-ipykernel: tests/mcp-unit/test-kernel.c runs a real Python Jupyter kernel.
ABOUT[test]="run tests/run.sh (bats, bundles, the libFuzzer smoke run; a private sshd for tests/mcp/clients.test.mjs; a Python Jupyter kernel)"
DEB[test]="bats jq busybox-static python3 python3-pip python3-yaml haproxy curl openssl iproute2 util-linux procps slirp4netns openssh-client openssh-server python3-ipykernel clang? libclang-rt-dev?"
FEDORA[test]="bats jq busybox python3 python3-pip python3-pyyaml haproxy curl openssl iproute util-linux procps-ng slirp4netns openssh-clients openssh-server python3-ipykernel clang compiler-rt"

ABOUT[bench]="run tests/bench (hyperfine; runc, bwrap and crun to compare; GNU time for RSS)"
DEB[bench]="hyperfine runc bubblewrap time jq busybox-static crun?"
FEDORA[bench]="hyperfine runc bubblewrap time jq busybox crun"

ABOUT[vm]="boot the cgroup v2 test guest (tests/vm: qemu, Debian's cloud kernel, initramfs tools, apparmor_parser; systemd's user manager, its session bus and runc for the --systemd-cgroup test)"
DEB[vm]="qemu-system-x86 linux-image-cloud-amd64 busybox-static cpio apparmor systemd dbus-daemon dbus-user-session runc"
FEDORA[vm]="qemu-system-x86-core kernel-core busybox cpio apparmor-parser systemd dbus-daemon runc"

ABOUT[podman]="run tests/podman and tests/bench/podman.sh (podman, conmon, catatonit; busybox for the image)"
DEB[podman]="podman conmon catatonit busybox-static"
FEDORA[podman]="podman conmon catatonit busybox"

ABOUT[engines]="run tests/docker, tests/containerd and tests/bench/engines.sh (Debian's dockerd and containerd, which the suites start themselves; runc to compare; jq, busybox for the image)"
DEB[engines]="docker.io containerd runc jq busybox-static"
FEDORA[engines]="moby-engine containerd runc jq busybox"

ABOUT[mcp]="run tests/mcp and tests/bench/mcp.sh (node and npm for the MCP TypeScript SDK; tests/run.sh asks for it only when node or npm is missing)"
DEB[mcp]="nodejs npm zstd"
FEDORA[mcp]="nodejs npm zstd"

ABOUT[languages]="the optional languages tests/mcp/languages.test.mjs runs in msp-mcp's sandbox (R, Ruby; matplotlib for Python's plots; g++ for C++; R's Jupyter kernel, IRkernel)"
DEB[languages]="r-base-core g++ ruby? python3-matplotlib? r-cran-irkernel?"
FEDORA[languages]="R-core gcc-c++ ruby python3-matplotlib R-IRkernel"

ABOUT[rootless]="the rootless suites run as an unprivileged test user (tests/helper/test-user.sh): newuidmap/newgidmap for several-id mappings, fuse-overlayfs and slirp4netns for rootless podman"
DEB[rootless]="uidmap fuse-overlayfs? slirp4netns"
FEDORA[rootless]="shadow-utils fuse-overlayfs slirp4netns"

GROUP_ORDER="build bundles test bench vm podman engines mcp languages rootless"
DEFAULT_GROUPS="build test"

die() {
        echo "install-deps: $*" >&2
        exit 1
}

usage() {
        sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
}

list_groups() {
        local g
        for g in $GROUP_ORDER; do
                printf '%-8s %s\n         debian: %s\n' "$g" "${ABOUT[$g]}" "${DEB[$g]}"
        done
        echo "default: $DEFAULT_GROUPS"
}

mode=install
groups=()
while [ $# -gt 0 ]; do
        case "$1" in
        --print-fedora) mode=fedora ;;
        --check) mode=check ;;
        --list) list_groups; exit 0 ;;
        -h|--help) usage; exit 0 ;;
        -*) die "unknown option '$1' (see --help)" ;;
        *)
                [ -n "${DEB[$1]+set}" ] || die "unknown group '$1' (groups: $GROUP_ORDER)"
                groups+=("$1")
                ;;
        esac
        shift
done
[ ${#groups[@]} -gt 0 ] || read -r -a groups <<< "$DEFAULT_GROUPS"

if [ "$mode" = fedora ]; then
        pkgs=""
        for g in "${groups[@]}"; do
                pkgs="$pkgs ${FEDORA[$g]}"
        done
        # shellcheck disable=SC2086 # word splitting wanted
        echo "dnf install -y $(printf '%s\n' $pkgs | awk '!seen[$0]++' | xargs)"
        exit 0
fi

# Collect the wanted packages once each, in order; remember which are optional.
wanted=()
declare -A optional seen
for g in "${groups[@]}"; do
        for p in ${DEB[$g]}; do
                name=${p%\?}
                [ -n "${seen[$name]+set}" ] && continue
                seen[$name]=1
                wanted+=("$name")
                [ "$name" != "$p" ] && optional[$name]=1
        done
done

command -v dpkg-query >/dev/null 2>&1 ||
        die "this script knows Debian and Ubuntu only; on Fedora run: $("$0" --print-fedora "${groups[@]}")"

# One dpkg-query call for all of them; unknown names are simply absent from its output.
declare -A installed
while read -r name status; do
        [ "$status" = ii ] && installed[$name]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${wanted[@]}" 2>/dev/null || true)

missing=()
for p in "${wanted[@]}"; do
        [ -n "${installed[$p]+set}" ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
        echo "install-deps: all packages present for: ${groups[*]}"
        exit 0
fi
if [ "$mode" = check ]; then
        echo "install-deps: missing for ${groups[*]}: ${missing[*]}"
        exit 1
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || die "not root and no sudo; as root run: apt-get install ${missing[*]}"
        as_root=(sudo)
fi
apt_get() {
        "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
                apt-get -q -y -o DPkg::Lock::Timeout=300 "$@"
}

# Where PID 1 is not systemd (containers, CI sandboxes) nothing supervises a daemon a
# package's postinst would start (docker.io starts dockerd): a policy-rc.d that denies
# every start, for the time of the install only, unless the host has its own.
no_service_starts() {
        local policy=/usr/sbin/policy-rc.d
        [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] && return 0
        [ -e "$policy" ] && return 0
        "${as_root[@]}" sh -c "printf '#!/bin/sh\\nexit 101\\n' >$policy && chmod 0755 $policy" ||
                die "cannot write $policy"
        trap '"${as_root[@]}" rm -f '"$policy" EXIT
}

# grep without -q: it would stop reading early, apt-cache would die of SIGPIPE and
# pipefail would report the package as unavailable.
available() {
        apt-cache policy "$1" 2>/dev/null | grep 'Candidate: [^(]' >/dev/null
}

# Optional packages the package lists do not know are skipped; when only such packages
# are missing, even `apt-get update` is skipped, so the script stays quick.
need_update=0
for p in "${missing[@]}"; do
        if [ -z "${optional[$p]+set}" ] || available "$p"; then
                need_update=1
        fi
done
if [ "$need_update" = 1 ]; then
        echo "install-deps: installing ${missing[*]}"
        apt_get update || die "apt-get update failed"
fi

to_install=()
for p in "${missing[@]}"; do
        if [ -n "${optional[$p]+set}" ] && ! available "$p"; then
                echo "install-deps: warning: optional package '$p' is not available here, skipping it" >&2
                continue
        fi
        to_install+=("$p")
done
[ ${#to_install[@]} -gt 0 ] || exit 0
no_service_starts

if ! apt_get install --no-install-recommends "${to_install[@]}"; then
        # Retry without the optional ones so that they can never block the required ones.
        required=()
        for p in "${to_install[@]}"; do
                [ -n "${optional[$p]+set}" ] || required+=("$p")
        done
        [ ${#required[@]} -lt ${#to_install[@]} ] || die "apt-get install failed"
        echo "install-deps: warning: retrying without the optional packages" >&2
        if [ ${#required[@]} -gt 0 ]; then
                apt_get install --no-install-recommends "${required[@]}" || die "apt-get install failed"
        fi
fi
echo "install-deps: done"
