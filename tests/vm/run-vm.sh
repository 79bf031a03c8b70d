#!/usr/bin/env bash
# A real cgroup v2 run: boot a throwaway guest and run the cgroup tests in it.
#
#   tests/vm/run-vm.sh        (meson test --suite vm runs it; prints TAP)
#
# The guest is Debian's cloud kernel (/boot/vmlinuz-*-cloud-amd64, package
# linux-image-cloud-amd64) under qemu-system-x86_64 with TCG (KVM is not required), 1 GiB,
# 2 CPUs, no network, `cgroup_no_v1=all`, and an initramfs built here on the fly:
# busybox-static (the tree bundles/busybox/prepare.sh makes), msp and jq with the shared
# libraries ldd lists, the static msp-helper, a busybox container bundle, the
# runtime/lib unit test binaries when built, systemd's user manager with dbus-daemon and
# runc when the host has them, and tests/vm/guest-*.sh. The guest mounts only
# cgroup2 at /sys/fs/cgroup, runs guest-tests.sh, prints TAP on the serial console and
# powers off. This script turns those lines into its own TAP and fails when a test failed
# or the guest did not finish within the time limit.
#
# Environment: MSP, MSP_HELPER, MSP_MCP, MSP_SANDBOX_INIT and MSP_SANDBOX_HOOK (default: build/...; without
# msp-mcp its guest test is skipped), MSP_RT_UNIT_DIR (unit test binaries;
# test-rt-cgroup*), MSP_VM_KERNEL (a vmlinuz), MSP_VM_TIMEOUT (seconds, default 420),
# MSP_VM_LOG (keep the console log there), MSP_VM_VERBOSE=1 (show the output of passing
# tests too), MSP_VM_ONLY=WORD (run only the guest tests whose function name contains WORD,
# e.g. rootless; the others are reported as skipped). Missing qemu or kernel: `1..0 # SKIP`
# (contrib/install-deps.sh vm installs them).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
: "${MSP:=$repo/build/runtime/msp}"
: "${MSP_HELPER:=$repo/build/tests/helper/msp-helper}"
: "${MSP_RT_UNIT_DIR:=$repo/build/tests/rt-unit}"
: "${MSP_MCP:=$repo/build/mcp-adapter/msp-mcp}"
: "${MSP_SANDBOX_INIT:=$repo/build/mcp-adapter/msp-sandbox-init}"
: "${MSP_SANDBOX_HOOK:=$repo/build/mcp-adapter/msp-sandbox-hook}"
: "${MSP_VM_TIMEOUT:=420}"

skip() {
        echo "1..0 # SKIP $*"
        exit 0
}

# Not a test result: the host could not even build the guest.
broken() {
        echo "1..1"
        echo "not ok 1 - build and boot the cgroup v2 guest"
        echo "# $*"
        exit 1
}

command -v qemu-system-x86_64 >/dev/null 2>&1 ||
        skip "qemu-system-x86_64 not found (contrib/install-deps.sh vm installs qemu-system-x86)"
kernel=${MSP_VM_KERNEL:-$(ls -1v /boot/vmlinuz-*-cloud-amd64 2>/dev/null | tail -n 1)}
[ -n "$kernel" ] && [ -r "$kernel" ] ||
        skip "no Debian cloud kernel in /boot (contrib/install-deps.sh vm installs linux-image-cloud-amd64)"
for tool in cpio gzip jq ldd timeout; do
        command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (contrib/install-deps.sh vm test)"
done
[ "$(id -u)" = 0 ] || skip "needs root (the initramfs has device nodes and root-owned files)"
[ -x "$MSP" ] || broken "msp not built: $MSP"
[ -x "$MSP_HELPER" ] || broken "msp-helper not built: $MSP_HELPER"

work=$(mktemp -d "${TMPDIR:-/tmp}/msp-vm.XXXXXX") || broken "mktemp failed"
trap 'rm -rf --one-file-system "$work"' EXIT
stage=$work/root

# copy_with_libs BINARY DEST: the binary at DEST in the stage, and every library ldd
# lists at its own path (the ELF interpreter included). A static binary has none (ldd
# fails with "not a dynamic executable").
copy_with_libs() {
        install -D -m 0755 "$1" "$stage$2" || return 1
        { ldd "$1" 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
                while read -r lib; do
                        [ -e "$stage$lib" ] || install -D -m 0755 "$(readlink -f "$lib")" "$stage$lib" ||
                                return 1
                done
}

build_initramfs() {
        bash "$repo/bundles/busybox/prepare.sh" "$stage" >/dev/null || return 1
        copy_with_libs "$MSP" /usr/bin/msp || return 1
        copy_with_libs "$(command -v jq)" /usr/bin/jq || return 1
        install -D -m 0755 "$MSP_HELPER" "$stage/usr/bin/msp-helper" || return 1
        # util-linux's setpriv: the rootless test runs msp as an unprivileged user
        copy_with_libs "$(command -v setpriv)" /usr/bin/setpriv || return 1
        # msp-mcp run by that user: the server, the sandboxes' init and hook beside it, and
        # the setuid helpers (Debian uidmap) that map its subordinate range
        if [ -x "$MSP_MCP" ] && [ -x "$MSP_SANDBOX_INIT" ] && [ -x "$MSP_SANDBOX_HOOK" ] &&
                command -v newuidmap >/dev/null && command -v newgidmap >/dev/null; then
                copy_with_libs "$MSP_MCP" /usr/bin/msp-mcp || return 1
                install -m 0755 "$MSP_SANDBOX_INIT" "$stage/usr/bin/msp-sandbox-init" || return 1
                copy_with_libs "$MSP_SANDBOX_HOOK" /usr/bin/msp-sandbox-hook || return 1
                copy_with_libs "$(command -v newuidmap)" /usr/bin/newuidmap || return 1
                copy_with_libs "$(command -v newgidmap)" /usr/bin/newgidmap || return 1
                chmod 4755 "$stage/usr/bin/newuidmap" "$stage/usr/bin/newgidmap" || return 1
        fi
        # AppArmor's parser (package apparmor), when the host has it: the guest kernel runs
        # AppArmor, so a profile can be loaded there and its confinement tested.
        if command -v apparmor_parser >/dev/null; then
                copy_with_libs "$(command -v apparmor_parser)" /usr/sbin/apparmor_parser || return 1
        fi
        # systemd's user manager with the D-Bus session bus it starts (Debian systemd,
        # dbus-daemon, dbus-user-session), when the host has them, and runc to compare
        # with: the rootless --systemd-cgroup test runs `systemd --user` for the test user.
        if [ -x /lib/systemd/systemd ] && [ -f /usr/lib/systemd/user/dbus.socket ] &&
                command -v dbus-daemon >/dev/null; then
                for b in /lib/systemd/systemd /bin/systemctl /usr/bin/systemd-run \
                        /usr/bin/dbus-daemon; do
                        copy_with_libs "$b" "$b" || return 1
                done
                mkdir -p "$stage/usr/lib/systemd" "$stage/usr/share/dbus-1" || return 1
                cp -a /usr/lib/systemd/user "$stage/usr/lib/systemd/" || return 1
                cp /usr/share/dbus-1/session.conf "$stage/usr/share/dbus-1/" || return 1
                if command -v runc >/dev/null; then
                        copy_with_libs "$(command -v runc)" /usr/sbin/runc || return 1
                fi
        fi
        for u in "$MSP_RT_UNIT_DIR"/test-rt-cgroup* "$MSP_RT_UNIT_DIR"/test-rt-lsm; do
                [ -x "$u" ] && [ -f "$u" ] || continue
                copy_with_libs "$u" "/vm/unit/$(basename "$u")" || return 1
        done

        # The container bundle: a second busybox tree with the helper, the default config.
        bash "$repo/bundles/busybox/prepare.sh" "$stage/vm/bundle/rootfs" >/dev/null || return 1
        install -m 0755 "$MSP_HELPER" "$stage/vm/bundle/rootfs/bin/msp-helper" || return 1
        install -m 0644 "$repo/tests/helper/cg-writer.sh" "$stage/vm/bundle/rootfs/cg-writer.sh" || return 1
        cp "$repo/bundles/busybox/config.json" "$stage/vm/bundle/config.json" || return 1

        install -m 0755 "$here/guest-init.sh" "$stage/init" || return 1
        install -m 0755 "$here/guest-main.sh" "$here/guest-tests.sh" "$stage/vm/" || return 1
        echo "::sysinit:/bin/sh /vm/guest-main.sh" >"$stage/etc/inittab"
        mkdir -p "$stage/newroot" "$stage/dev" "$stage/proc" "$stage/sys" "$stage/lib64"
        # The kernel opens /dev/console for init before anything is mounted.
        mknod -m 0600 "$stage/dev/console" c 5 1 || return 1
        (cd "$stage" && find . -print0 | cpio --null -o -H newc -R 0:0 --quiet) |
                gzip -1 >"$work/initrd.gz"
}

build_initramfs || broken "building the initramfs failed"

log=${MSP_VM_LOG:-$work/console.log}
start=$(date +%s)
# -no-reboot: the guest's poweroff (or a panic, panic=-1) ends qemu. stdin is /dev/null
# so that nothing typed reaches the guest; the serial console is qemu's stdout.
timeout -k 10 "$MSP_VM_TIMEOUT" qemu-system-x86_64 \
        -accel tcg -m 1024 -smp 2 -nographic -no-reboot -monitor none -nic none \
        -kernel "$kernel" -initrd "$work/initrd.gz" \
        -append "console=ttyS0 cgroup_no_v1=all loglevel=1 panic=-1 msp_vm_verbose=${MSP_VM_VERBOSE:-0} msp_vm_only=${MSP_VM_ONLY:-}" \
        </dev/null >"$log" 2>&1
qemu_rc=$?
secs=$(( $(date +%s) - start ))

n=0
failed=0
while IFS= read -r line; do
        line=${line%$'\r'}
        case $line in
        "ok "*) n=$((n + 1)); echo "$line" ;;
        "not ok "*) n=$((n + 1)); failed=$((failed + 1)); echo "$line" ;;
        *) echo "$line" ;;
        esac
done < <(grep -a '^VMTAP ' "$log" | sed 's/^VMTAP //')

n=$((n + 1))
if grep -aq '^VMTAP-DONE' "$log"; then
        echo "ok $n - the guest ran every test and powered off ($secs s, $(basename "$kernel"))"
else
        failed=$((failed + 1))
        echo "not ok $n - the guest did not finish (qemu exit $qemu_rc after $secs s, limit ${MSP_VM_TIMEOUT}s)"
fi
echo "1..$n"
if [ "$failed" -gt 0 ]; then
        echo "--- last lines of the guest console${MSP_VM_LOG:+ (all of it: $MSP_VM_LOG)} ---" >&2
        tail -n 60 "$log" | tr -d '\r' >&2
        exit 1
fi
exit 0
