#!/usr/bin/python3
"""Run a command on a fresh pty, as a user at a terminal would (podman -it needs one).

    pty-run.py [--rows N --cols N] [--timeout S] -- COMMAND [ARG...]

Prints everything the command wrote to the terminal, then exits with the command's
exit status (124 and a message on stderr when it outlived the timeout; it is killed).
"""
import argparse
import fcntl
import os
import select
import signal
import struct
import sys
import termios
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=30)
    ap.add_argument("--cols", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", a.rows, a.cols, 0, 0))
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(slave, fd)
        if slave > 2:
            os.close(slave)
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    os.close(slave)

    out = bytearray()
    deadline = time.monotonic() + a.timeout
    status = None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            sys.stdout.buffer.write(bytes(out))
            print("pty-run: timed out after %gs: %s" % (a.timeout, " ".join(cmd)), file=sys.stderr)
            return 124
        r, _, _ = select.select([master], [], [], min(left, 0.2))
        if r:
            try:
                data = os.read(master, 4096)
            except OSError:     # EIO: every slave fd is closed
                data = b""
            if data:
                out += data
                continue
        if status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
        if status is not None and not r:
            break
        if status is not None and r and not data:
            break
    os.close(master)
    sys.stdout.buffer.write(bytes(out))
    sys.stdout.flush()
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
