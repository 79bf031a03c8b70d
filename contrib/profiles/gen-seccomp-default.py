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
}

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
    if r["action"] == "SCMP_ACT_ALLOW":
        names = [n for n in r["names"] if n not in REMOVE]
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
]
with open("contrib/profiles/seccomp-default.json", "w") as f:
    json.dump(out, f, indent=2)
    f.write("\n")
print("removed from podman's allow list:", " ".join(sorted(removed)))
print("rules:", len(out["syscalls"]))
