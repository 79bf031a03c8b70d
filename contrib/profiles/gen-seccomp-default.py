#!/usr/bin/python3
# Derive contrib/profiles/seccomp-default.json from podman's default profile
# (tests/fixtures/podman-limits.json, linux.seccomp). Run from the source root.
import json

src = json.load(open("tests/fixtures/podman-limits.json"))["linux"]["seccomp"]

# Removed from podman's allow list: never needed by code in an AI sandbox.
REMOVE = {
    # new namespaces / joining others (clone and unshare come back with conditions)
    "clone", "clone3", "unshare", "setns",
    # mount API
    "mount", "umount", "umount2", "pivot_root", "fsopen", "fsmount", "fsconfig", "fspick",
    "move_mount", "open_tree", "mount_setattr",
    # other processes' memory and fds
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
    # kernel keyrings
    "keyctl", "add_key", "request_key",
    # file handles (the CVE-2014-3519 "shocker" family)
    "name_to_handle_at", "open_by_handle_at",
    # io_uring: a large attack surface that bypasses per-syscall filtering
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # host-wide state
    "reboot", "syslog", "acct", "swapon", "swapoff", "quotactl", "nfsservctl",
    "lookup_dcookie", "vmsplice", "iopl", "ioperm", "bpf", "userfaultfd", "perf_event_open",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    # x86's multiplexed socket calls: seccomp cannot see the family behind them (the direct
    # socket syscall, which the family rules below check, exists since Linux 4.3)
    "socketcall",
}

# Native AIO: an io_setup context charges the host-wide fs.aio-max-nr, which no namespace
# or cgroup bounds. ENOSYS, as on a kernel without it: libaio users and runtimes fall back
# to threads.
NO_AIO = ["io_setup", "io_destroy", "io_submit", "io_cancel", "io_getevents",
          "io_pgetevents", "io_pgetevents_time64"]

# socket(2) families the sandbox may create: unix, inet, inet6, and NETLINK_ROUTE
# (getaddrinfo's AI_ADDRCONFIG and interface listing). Other netlink protocols get
# EPROTONOSUPPORT (NETLINK_AUDIT keeps podman's EINVAL): sock_diag lists the network
# namespace's sockets, kobject_uevent listens to device events, and the rest configure
# the kernel.
# Every other family is refused with EAFNOSUPPORT, as if the kernel lacked it: AF_VSOCK
# is not confined by a network namespace (it reaches the hypervisor and the guest's
# vsock ports), AF_PACKET, AF_BLUETOOTH, AF_CAN, AF_XDP and the rest are attack surface
# no sandboxed program needs.
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
NETLINK_ROUTE, NETLINK_AUDIT = 0, 9
EAFNOSUPPORT, EPROTONOSUPPORT = 97, 93

NS_FLAGS = (0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000
            | 0x40000000)   # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
CLONE_NEWTIME = 0x00000080  # only unshare/clone3 can carry it (in clone it is CSIGNAL)

out = {
    "defaultAction": src["defaultAction"],
    "defaultErrnoRet": src["defaultErrnoRet"],
    "architectures": src["architectures"],
    "syscalls": [],
}
removed = set()
for rule in src["syscalls"]:
    r = dict(rule)
    if r["names"] == ["socket"] and r["action"] == "SCMP_ACT_ALLOW":
        continue    # replaced by the family rules
    if r["action"] == "SCMP_ACT_ALLOW":
        names = [n for n in r["names"]
                 if n not in REMOVE and n not in NO_AIO and n != "socketpair"]
        removed |= set(r["names"]) - set(names)
        if not names:
            continue
        r["names"] = names
    out["syscalls"].append(r)

out["syscalls"] += [
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": NS_FLAGS, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
    {"names": ["unshare"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": NS_FLAGS | CLONE_NEWTIME, "valueTwo": 0,
               "op": "SCMP_CMP_MASKED_EQ"}]},
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
    {"names": sorted(REMOVE - {"clone", "clone3", "unshare"}), "action": "SCMP_ACT_ERRNO",
     "errnoRet": 1},
    {"names": NO_AIO, "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
]
for fam in (AF_UNIX, AF_INET, AF_INET6):
    out["syscalls"].append({"names": ["socket"], "action": "SCMP_ACT_ALLOW",
                            "args": [{"index": 0, "value": fam, "op": "SCMP_CMP_EQ"}]})
out["syscalls"].append({"names": ["socket"], "action": "SCMP_ACT_ALLOW",
                        "args": [{"index": 0, "value": AF_NETLINK, "op": "SCMP_CMP_EQ"},
                                 {"index": 2, "value": NETLINK_ROUTE, "op": "SCMP_CMP_EQ"}]})
for proto in [p for p in range(1, NETLINK_AUDIT)] + [None]:
    arg2 = ({"index": 2, "value": proto, "op": "SCMP_CMP_EQ"} if proto is not None else
            {"index": 2, "value": NETLINK_AUDIT + 1, "op": "SCMP_CMP_GE"})
    out["syscalls"].append({"names": ["socket"], "action": "SCMP_ACT_ERRNO",
                            "errnoRet": EPROTONOSUPPORT,
                            "args": [{"index": 0, "value": AF_NETLINK, "op": "SCMP_CMP_EQ"},
                                     arg2]})
# socketpair: unix only (AF_TIPC has it too).
out["syscalls"] += [
    {"names": ["socketpair"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": AF_UNIX, "op": "SCMP_CMP_EQ"}]},
    {"names": ["socketpair"], "action": "SCMP_ACT_ERRNO", "errnoRet": EAFNOSUPPORT,
     "args": [{"index": 0, "value": AF_UNIX, "op": "SCMP_CMP_NE"}]},
]
# The refusals only choose the errno: a family without an allow rule is refused anyway
# (by the default action).
out["syscalls"].append({"names": ["socket"], "action": "SCMP_ACT_ERRNO",
                        "errnoRet": EAFNOSUPPORT,
                        "args": [{"index": 0, "value": AF_NETLINK + 1, "op": "SCMP_CMP_GE"}]})
for fam in range(AF_NETLINK):
    if fam not in (AF_UNIX, AF_INET, AF_INET6):
        out["syscalls"].append({"names": ["socket"], "action": "SCMP_ACT_ERRNO",
                                "errnoRet": EAFNOSUPPORT,
                                "args": [{"index": 0, "value": fam, "op": "SCMP_CMP_EQ"}]})
with open("contrib/profiles/seccomp-default.json", "w") as f:
    json.dump(out, f, indent=2)
    f.write("\n")
print("removed from podman's allow list:", " ".join(sorted(removed)))
print("rules:", len(out["syscalls"]))
