#!/usr/bin/python3
"""The floor under a live session's python cell: ipykernel alone on the host, no sandbox,
no msp-mcp. tests/bench/mcp.sh --live runs it after tests/bench/live.mjs.

    /usr/bin/python3 tests/bench/kernel-floor.py [--runs N] [--kernel NAME]

jupyter_client starts the kernel (the kernelspec NAME, python3 by default) only; the
timing is a bare pyzmq client, signed messages on the shell and iopub sockets, and each
round waits for what msp-mcp waits for: the execute_reply and iopub's status idle. After
`x = 0` and 20 warm-up cells, --runs (200) cells of `x += 1`: p50, p95, min in ms, and the
kernel's CPU time per cell (its /proc stat). Exit status 0 unless it could not run.
"""
import argparse
import hashlib
import hmac
import json
import os
import sys
import time
import uuid

try:
    import zmq
    from jupyter_client.manager import KernelManager
except ImportError as e:
    print(f"kernel-floor: skipped: {e}")
    sys.exit(0)

ap = argparse.ArgumentParser()
ap.add_argument("--runs", type=int, default=200)
ap.add_argument("--kernel", default="python3")
opt = ap.parse_args()

km = KernelManager(kernel_name=opt.kernel)
km.start_kernel(stderr=open(os.devnull, "w"))
info = km.get_connection_info()
key = info["key"] if isinstance(info["key"], bytes) else info["key"].encode()
ctx = zmq.Context()
url = lambda port: f"{info['transport']}://{info['ip']}:{port}"
shell = ctx.socket(zmq.DEALER)
shell.connect(url(info["shell_port"]))
iopub = ctx.socket(zmq.SUB)
iopub.setsockopt(zmq.SUBSCRIBE, b"")
iopub.connect(url(info["iopub_port"]))
session = uuid.uuid4().hex


def send(code):
    header = {"msg_id": uuid.uuid4().hex, "session": session, "username": "bench",
              "msg_type": "execute_request", "version": "5.3", "date": ""}
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
               "allow_stdin": False, "stop_on_error": True}
    parts = [json.dumps(x).encode() for x in (header, {}, {}, content)]
    sig = hmac.new(key, b"".join(parts), hashlib.sha256).hexdigest().encode()
    shell.send_multipart([b"<IDS|MSG>", sig, *parts])
    return header["msg_id"]


def parent_of(frames):
    i = frames.index(b"<IDS|MSG>")
    return json.loads(frames[i + 3]).get("msg_id"), json.loads(frames[i + 2]), json.loads(frames[i + 5])


def cell(code, timeout=30.0):
    msg_id = send(code)
    reply = idle = False
    poller = zmq.Poller()
    poller.register(shell, zmq.POLLIN)
    poller.register(iopub, zmq.POLLIN)
    end = time.monotonic() + timeout
    while not (reply and idle):
        if not poller.poll(max(0, (end - time.monotonic()) * 1000)):
            raise TimeoutError(f"no answer to {code!r}")
        for sock in (shell, iopub):
            while sock.poll(0):
                parent, header, content = parent_of(sock.recv_multipart())
                if parent != msg_id:
                    continue
                if sock is shell:
                    reply = True
                elif header["msg_type"] == "status" and content.get("execution_state") == "idle":
                    idle = True


def kernel_cpu_s():
    with open(f"/proc/{km.provisioner.process.pid}/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    return (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")


try:
    # The iopub subscription takes a moment; the first cells wait for the kernel's start.
    for _ in range(100):
        try:
            cell("x = 0", timeout=1.0)
            break
        except TimeoutError:
            pass
    for _ in range(20):
        cell("x += 1")
    t = []
    cpu0 = kernel_cpu_s()
    for _ in range(opt.runs):
        t0 = time.perf_counter()
        cell("x += 1")
        t.append((time.perf_counter() - t0) * 1000)
    cpu = (kernel_cpu_s() - cpu0) / opt.runs * 1e6
    t.sort()
    p = lambda q: t[min(len(t) - 1, int(q * len(t)))]
    print(f"ipykernel alone (bare zmq client on the host), {opt.runs} cells of `x += 1`: "
          f"p50 {p(0.5):.2f} ms, p95 {p(0.95):.2f} ms, min {t[0]:.2f} ms; kernel CPU {cpu:.0f} µs per cell "
          f"(load average {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
finally:
    km.shutdown_kernel(now=True)
