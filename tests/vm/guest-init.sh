#!/bin/sh
# /init of the test guest (tests/vm/run-vm.sh), PID 1 in the initramfs. pivot_root
# cannot move away from the initramfs root, so containers could not pivot into their
# rootfs: copy the tree into a tmpfs and switch_root there first. Then busybox init
# runs /vm/guest-main.sh (see /etc/inittab) and reaps the orphans the tests leave.
PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

mount -t tmpfs -o mode=0755 tmpfs /newroot || exec sh
for d in /*; do
        case $d in /newroot|/init|/proc|/sys|/dev) continue ;; esac
        cp -a "$d" /newroot/
done
mkdir -p /newroot/proc /newroot/sys /newroot/dev
mount -t devtmpfs devtmpfs /newroot/dev
exec switch_root /newroot /sbin/init
