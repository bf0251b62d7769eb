#!/usr/bin/python3
"""Whether a cgroup's read throttle makes each read wait its transfer (a
channel, the fixed kind without server.storage.burst_ms) or budgets bytes
over time (a bucket: a reader idle a while reads at once).

  /usr/bin/python3 validation/studies/throttle_budget.py [--data DIR]
      [--files 300] [--mb-s 40] [--cpu-ms 0,10]

Root. One process joins a block-I/O cgroup that limits reads of the disk
holding DIR to --mb-s (v1 blkio.throttle.read_bps_device, v2 io.max rbps),
drops the files' pages (POSIX_FADV_DONTNEED), then reads --files of them
whole, one after another, spinning --cpu-ms of CPU after each (a worker's
decode). A channel takes the reads' time at the rate plus the CPU; a budget
about the larger of the two. On the 2-vCPU VM (2026-12-06, 300 JPEGs of
114 KB, 40 MB/s): 0.80 s with no CPU (0.86 s of reads at the rate), 3.13 s
with 10 ms a file (its first run, load not recorded, nothing else running;
3.17 s in a rerun at load 2.3 left by the harness runs before it), against
3.00 s of CPU and a channel's 3.86 s: a budget, its bucket about
blk-throttle's 100 ms slice (docs/disks.md)."""

import argparse
import glob
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

from stallsim.pipeline import evict  # noqa: E402
from validation.disk import controller, disk_of  # noqa: E402
from validation.fixtures import cgroup  # noqa: E402


def spin(s):
    t = time.perf_counter()
    while time.perf_counter() - t < s:
        pass


def one_pass(files, cpu_s):
    evict(files)
    t0 = time.perf_counter()
    for f in files:
        with open(f, "rb") as h:
            h.read()
        spin(cpu_s)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/var/tmp/stallsim-imagefolder/data")
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--mb-s", type=float, default=40)
    ap.add_argument("--cpu-ms", default="0,10")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.data, "**", "*.jpg"), recursive=True))[:a.files]
    ctl = controller()
    if os.geteuid() != 0 or not ctl or not files or not disk_of(files[0]):
        sys.exit("throttle_budget: needs root, a block-I/O controller and JPEGs on a disk in "
                 f"{a.data} (python3 -m validation.imagefolder makes them)")
    cg = cgroup.throttled(ctl[0], ctl[1], disk_of(files[0]), "budget", rbps=a.mb_s * 1e6)
    try:
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        total = sum(os.path.getsize(f) for f in files)
        for ms in (float(x) for x in a.cpu_ms.split(",")):
            dt = one_pass(files, ms / 1e3)
            reads, cpu = total / (a.mb_s * 1e6), ms / 1e3 * len(files)
            print(f"{ms:g} ms of CPU a file: {dt:.2f} s; reads at the rate {reads:.2f} s, CPU "
                  f"{cpu:.2f} s: a channel {reads + cpu:.2f} s, a budget about "
                  f"{max(reads, cpu):.2f} s")
    finally:
        with open(os.path.join(ctl[1], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
        cgroup.remove_cgroup(cg)


if __name__ == "__main__":
    main()
