#!/bin/sh
# Runs once in the test guest (busybox init's sysinit): mount the API file systems with
# only cgroup2 at /sys/fs/cgroup, run the tests, power off. Every line for the host is
# prefixed "VMTAP " so that it stands out from anything else on the serial console.
PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
hostname msp-vm
echo "VMTAP # guest up: kernel $(uname -r), $(nproc) cpus, uptime $(cut -d' ' -f1 /proc/uptime) s"

sh /vm/guest-tests.sh

echo "VMTAP-DONE"
sync
poweroff -f
