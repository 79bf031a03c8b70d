# Shared by the engine suites (docker, containerd, podman, podman-rootless).
#
# WINSIZE: a shell snippet for the container that prints the terminal's size once it has
# one. The engines size the pty asynchronously: Debian's podman 4.3 writes the first
# resize to conmon's control fifo and runs the runtime's `start` without waiting for
# conmon to apply it (process.consoleSize, which would size the pty before the process
# runs, is not in its config), and Docker's CLI resizes after `start`. With runc's
# slower start the process usually reads the size after the resize; with msp often
# before, as `stty size` of 0 0. So poll, bounded at 5 s, past a 0x0 answer: what is
# checked is that the size the user's terminal has reaches the container.
# busybox's `stty size` on a 0x0 terminal fails, or prints nothing and succeeds (when the
# errno it reports is a stale EINVAL): only an answer that starts with a digit other than 0
# counts.
WINSIZE='for i in $(seq 50); do s=$(stty size 2>/dev/null); case $s in [1-9]*) break ;; esac; sleep 0.1; done; echo "$s"'
