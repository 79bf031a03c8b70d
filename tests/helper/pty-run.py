#!/usr/bin/python3
"""Run a command on a fresh pty, as a user at a terminal would (podman -it needs one).

    pty-run.py [--rows N --cols N] [--timeout S] [--raw] [--send TEXT]
               [--send-after MARK TEXT] [--pending FILE] -- COMMAND [ARG...]

The command leads a session whose controlling terminal is the pty (fds 0-2), as a
shell's job does. Prints everything the command wrote to the terminal, then exits with
the command's exit status (124 and a message on stderr when it outlived the timeout; it
is killed).

--raw: the terminal in raw mode (no echo, line editing or signals), so that bytes pushed
  into its input read back as they are; otherwise cooked, as a shell leaves it.
--send TEXT: typed at once; --send-after MARK TEXT: once MARK was in the output (e.g.
  "\x03", Ctrl-C).
--pending FILE: what is left unread in the terminal's input once the command exited
  (what the shell would read next, e.g. keystrokes pushed with TIOCSTI).
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
import tty


def read_queued(fd):
    """What can be read from fd now, without waiting."""
    os.set_blocking(fd, False)
    data = b""
    try:
        while True:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    except OSError:     # EAGAIN: nothing more
        pass
    return data


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=30)
    ap.add_argument("--cols", type=int, default=100)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--raw", action="store_true")
    ap.add_argument("--send", default="")
    ap.add_argument("--send-after", nargs=2, metavar=("MARK", "TEXT"))
    ap.add_argument("--pending")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no command")

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", a.rows, a.cols, 0, 0))
    if a.raw:
        tty.setraw(slave)
    pid = os.fork()
    if pid == 0:
        os.close(master)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # python ignores it; a shell does not
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
    if not a.pending:
        os.close(slave)     # else held, as the waiting shell does: the input stays queued
    if a.send:
        os.write(master, a.send.encode())
    send_after = a.send_after

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
                if send_after and send_after[0].encode() in out:
                    os.write(master, send_after[1].encode())
                    send_after = None
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
    if a.pending:
        with open(a.pending, "wb") as f:
            f.write(read_queued(slave))
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
