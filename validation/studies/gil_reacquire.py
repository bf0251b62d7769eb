#!/usr/bin/python3
"""What CPython's GIL hand-off costs a training loop's thread beside a busy
thread pool (issue 36, loader.kind: threads; loader.gil_reacquires_per_batch
and gil_switch_ms in sim/kinds/loader_threads.c).

  /usr/bin/python3 validation/studies/gil_reacquire.py [--iters 20] [--step-ms 10]
      [--ks 0,4,16] [--ns 0,1,2,4] [--intervals 1,5,20] [--work python,released]

The loop's thread runs, per iteration, k GIL-releasing calls (hashlib's
sha256 of --call-kb KiB, which drops the GIL around the hash, as a torch op or a
wait on a future does) and a sleep of --step-ms (the GPU). Beside it N
threads run pure Python (they hold the GIL but for the interpreter's forced
switches), mixed work (a Python loop, then sha256 of 1 MiB: an item's glue
and its decode) or released work (sha256 of 1 MiB in a loop: the GIL held
only between calls). Each returning call must take the GIL back: in CPython's
take_gil (Python/ceval_gil.c; ceval_gil.h up to 3.11) a waiter sleeps on the
GIL's condition for the switch interval, and only then, if no switch happened
meanwhile, asks the holder to drop it (gil_drop_request), which the holder
sees at its next eval-breaker check. So each reacquisition against a thread
running Python costs up to the interval, more when pool threads swap the GIL
among themselves meanwhile (a switch resets the waiter's clock).

It prints, for each (work, interval, N, k), the per-iteration wall less the
same k and sleep with N = 0 (the extra), and that extra per reacquisition
(k + 1: the k calls and the sleep's return), less the loop thread's own wait
for a core (/proc/thread-self/schedstat: a thread waiting for the GIL sleeps;
one waiting for a core is runnable). Medians of --reps repeats, interleaved.
"""

import argparse
import hashlib
import statistics
import sys
import os
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python"))
from stallsim import stable  # noqa: E402

BIG = bytes(1024 * 1024)


def python_work(stop):
    x = 0
    while not stop.is_set():
        for i in range(1000):
            x += i * i


def released_work(stop):
    while not stop.is_set():
        hashlib.sha256(BIG).digest()


def mixed_work(stop):
    """An item's shape: Python glue holding the GIL, then C releasing it."""
    x = 0
    while not stop.is_set():
        for i in range(3000):
            x += i * i
        hashlib.sha256(BIG).digest()


def loop(k, step_s, iters, call):
    """Mean seconds an iteration, less the thread's mean wait for a core."""
    for _ in range(3):  # warm
        for _ in range(k):
            hashlib.sha256(call).digest()
        time.sleep(step_s)
    q0, t0 = stable.run_delay(), time.perf_counter()
    for _ in range(iters):
        for _ in range(k):
            hashlib.sha256(call).digest()
        time.sleep(step_s)
    wall, q = time.perf_counter() - t0, stable.run_delay() - q0
    return (wall - q) / iters


def one(work, interval_s, n, k, step_s, iters, call):
    sys.setswitchinterval(interval_s)
    stop = threading.Event()
    fn = {"python": python_work, "released": released_work, "mixed": mixed_work}[work]
    ts = [threading.Thread(target=fn, args=(stop,), daemon=True) for _ in range(n)]
    for t in ts:
        t.start()
    time.sleep(0.02)
    try:
        return loop(k, step_s, iters, call)
    finally:
        stop.set()
        for t in ts:
            t.join()
        sys.setswitchinterval(0.005)


def ints(s):
    return [int(x) for x in s.split(",")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--step-ms", type=float, default=10)
    ap.add_argument("--ks", default="0,4,16")
    ap.add_argument("--call-kb", type=int, default=256,
                    help="bytes each GIL-releasing call hashes (256 KiB: about 0.5 ms on this VM)")
    ap.add_argument("--ns", default="0,1,2,4")
    ap.add_argument("--intervals", default="1,5,20")
    ap.add_argument("--work", default="python,mixed,released")
    a = ap.parse_args()
    step = a.step_ms / 1e3
    call = bytes(a.call_kb * 1024)
    with open("/proc/loadavg") as f:
        load0 = " ".join(f.read().split()[:3])
    print(f"# Python {sys.version.split()[0]}, step {a.step_ms:g} ms, {a.iters} iterations, "
          f"median of {a.reps}, each call sha256 of {a.call_kb} KiB; load average at the start {load0}")
    print("| pool work | interval ms | N | k | ms/iteration | extra ms | extra / (k+1) ms |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for work in a.work.split(","):
        for iv in ints(a.intervals):
            for k in ints(a.ks):
                runs = {n: [] for n in ints(a.ns)}
                for _ in range(a.reps):
                    for n in runs:
                        runs[n].append(one(work, iv / 1e3, n, k, step, a.iters, call))
                base = statistics.median(runs[0]) if 0 in runs else None
                for n, v in runs.items():
                    m = statistics.median(v)
                    extra = m - base if base is not None else float("nan")
                    print(f"| {work} | {iv} | {n} | {k} | {m * 1e3:.2f} | {extra * 1e3:+.2f} | "
                          f"{extra / (k + 1) * 1e3:+.2f} |", flush=True)
    with open("/proc/loadavg") as f:
        print(f"# load average at the end {' '.join(f.read().split()[:3])}")


if __name__ == "__main__":
    main()
