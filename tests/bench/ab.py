#!/usr/bin/env python3
"""Interleaved A/B timing of `msp run` for two or more msp binaries.

    tests/bench/ab.py [--runs N] [--warmup N] BUNDLE MSP_A MSP_B [MSP_C ...]

As root. Runs `MSP_X --root <tmp>/rootX run -b BUNDLE abX` round-robin (A B C, B C A,
...), so that load drifts on a shared machine hit every binary alike, and prints the
median, quartiles and a 10%-trimmed mean of the wall time of each. The BUNDLE is one
made by tests/bench/runtime.sh --keep. A benchmark, not a test: exit 0 unless a run
fails. docs/PERFORMANCE.md says which comparisons were made with it."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("bundle")
    ap.add_argument("msp", nargs="+")
    a = ap.parse_args()
    if len(a.msp) < 2:
        ap.error("give at least two msp binaries")
    k = len(a.msp)
    times = [[] for _ in range(k)]
    with tempfile.TemporaryDirectory(prefix="msp-ab.") as tmp:
        for i in range(-a.warmup, a.runs):
            for j0 in range(k):
                j = (i + j0) % k
                cmd = [a.msp[j], "--root", os.path.join(tmp, "root%d" % j), "run", "-b", a.bundle,
                       "ab%d" % j]
                t0 = time.perf_counter_ns()
                r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE)
                t1 = time.perf_counter_ns()
                if r.returncode != 0:
                    sys.exit("ab: %s failed (%d): %s" % (" ".join(cmd), r.returncode,
                                                          r.stderr.decode(errors="replace")))
                if i >= 0:
                    times[j].append((t1 - t0) / 1e6)
    load = open("/proc/loadavg").read().split()[:3]
    print("%d runs each, interleaved; load average now %s" % (a.runs, " ".join(load)))
    for j in range(k):
        x = sorted(times[j])
        n = len(x)
        trim = x[n // 10:n - n // 10]
        q = statistics.quantiles(x, n=4)
        print("%-40s median %7.3f  p25 %7.3f  p75 %7.3f  trimmed mean %7.3f ms" %
              (a.msp[j], statistics.median(x), q[0], q[2], statistics.mean(trim)))


if __name__ == "__main__":
    main()
