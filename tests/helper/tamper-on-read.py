#!/usr/bin/env python3
"""Rewrite a file at a chosen read, deterministically: the window between a reader's reads.

    tamper-on-read.py FILE REPLACEMENT EXE N [TIMEOUT]

Marks FILE for fanotify FAN_ACCESS_PERM (needs CAP_SYS_ADMIN) and prints "ready" once
marked: from then on every read(2) of FILE waits for this program's answer. The Nth read
by a process whose executable is named EXE is answered only after REPLACEMENT's bytes were
written over FILE in place (same inode; through the event's own fd, which raises no event
of its own); then it prints "tampered" and exits 0, which lets every later read through.
Exit 2 when fanotify is unavailable (the reason on stderr), 3 when no such read came
within TIMEOUT seconds (default 120). A file opened before the mark may raise no event:
start this before the reader opens FILE.
"""
import ctypes
import os
import select
import struct
import sys
import time

FAN_CLOEXEC = 0x1
FAN_CLASS_CONTENT = 0x4
FAN_MARK_ADD = 0x1
FAN_ACCESS_PERM = 0x00020000
FAN_ALLOW = 0x1
AT_FDCWD = -100
EVENT = struct.Struct("IBBHQii")        # struct fanotify_event_metadata
RESPONSE = struct.Struct("iI")          # struct fanotify_response


def fanotify(path):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fanotify_init.argtypes = [ctypes.c_uint, ctypes.c_uint]
    libc.fanotify_mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int,
                                   ctypes.c_char_p]
    fd = libc.fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, os.O_RDWR | os.O_LARGEFILE)
    if fd < 0 or libc.fanotify_mark(fd, FAN_MARK_ADD, FAN_ACCESS_PERM, AT_FDCWD,
                                    os.fsencode(path)) < 0:
        err = ctypes.get_errno()
        sys.stderr.write(f"tamper-on-read: fanotify: {os.strerror(err)}\n")
        sys.exit(2)
    return fd


def exe_name(pid):
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return ""


def main():
    path, replacement, exe, nth = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    deadline = time.monotonic() + (float(sys.argv[5]) if len(sys.argv) > 5 else 120.0)
    with open(replacement, "rb") as f:
        data = f.read()
    fd = fanotify(path)
    print("ready", flush=True)
    seen = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            sys.stderr.write(f"tamper-on-read: {seen} of {nth} reads by {exe} came\n")
            sys.exit(3)
        buf = os.read(fd, 4096)
        done = False
        for off in range(0, len(buf), EVENT.size):
            _, _, _, _, mask, efd, pid = EVENT.unpack_from(buf, off)
            if mask & FAN_ACCESS_PERM and exe_name(pid) == exe:
                seen += 1
                if seen == nth:
                    os.pwrite(efd, data, 0)
                    done = True
            os.write(fd, RESPONSE.pack(efd, FAN_ALLOW))
            os.close(efd)
        if done:
            print("tampered", flush=True)
            return


main()
