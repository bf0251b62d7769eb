#!/usr/bin/python3
"""Where validation/threads.py's loop thread spends a batch beside the GPU's
sleep (issue 36: the 100 ms rows' missing time), split by phase and by the
interpreter's switch interval, with the thread pool busy and with it idle.

  /usr/bin/python3 validation/studies/gil_loop_split.py [--data /var/tmp/stallsim-torch/data]
      [--threads 1,4] [--compute 0.1] [--intervals 1,5,20] [--batches 30]

The loop is validate_threads.thread_batches' (2 batches of 32 submitted
ahead, each taken, the next submitted, then collated here with
default_collate, then time.sleep(compute) for the GPU), instrumented: per
batch, the wall of taking the futures' results, of submitting, of the
collate, and of the sleep beyond `compute`; each less the loop thread's
wait for a core in it (/proc/thread-self/schedstat), printed beside. "idle"
is the same collate and sleep over items made beforehand (no pool): the
loop's own work. If the GIL's hand-off is what the loop loses, the busy
rows' extra moves with sys.setswitchinterval; a core shortage would not.
"""

import argparse
import collections
import concurrent.futures
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))
from stallsim import pipeline, stable  # noqa: E402

BATCH, AHEAD = 32, 2


class Clock:
    """Per-phase wall and core wait of this thread."""

    def __init__(self):
        self.wall = collections.defaultdict(float)
        self.q = collections.defaultdict(float)
        self.t, self.d = time.perf_counter(), stable.run_delay()

    def lap(self, name, less=0.0):
        t, d = time.perf_counter(), stable.run_delay()
        self.wall[name] += t - self.t - less
        self.q[name] += d - self.d
        self.t, self.d = t, d


def busy(ds, order, threads, compute, clk):
    from torch.utils.data import default_collate

    with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as ex:
        futs, it = collections.deque(), iter(order)

        def fill():
            while len(futs) < AHEAD * BATCH:
                i = next(it, None)
                if i is None:
                    return
                futs.append(ex.submit(ds.__getitem__, i))

        fill()
        time.sleep(0.5)  # the first batches made: the steady state is timed
        clk.lap("start")
        n = 0
        while futs:
            items = [futs.popleft().result() for _ in range(min(BATCH, len(futs)))]
            clk.lap("take")
            fill()
            clk.lap("submit")
            default_collate(items)
            clk.lap("collate")
            time.sleep(compute)
            clk.lap("sleep beyond", compute)
            n += 1
    return n


def idle(items, compute, clk):
    from torch.utils.data import default_collate

    clk.lap("start")
    n = 0
    for k in range(0, len(items), BATCH):
        default_collate(items[k:k + BATCH])
        clk.lap("collate")
        time.sleep(compute)
        clk.lap("sleep beyond", compute)
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="/var/tmp/stallsim-torch/data")
    ap.add_argument("--threads", default="1,4")
    ap.add_argument("--compute", type=float, default=0.1)
    ap.add_argument("--intervals", default="1,5,20")
    ap.add_argument("--batches", type=int, default=30)
    a = ap.parse_args()
    import torch

    torch.manual_seed(1)
    ds = pipeline.make_dataset(a.data)
    pipeline.warm(pipeline.item_paths(ds))
    order = torch.randperm(len(ds)).tolist()[: a.batches * BATCH]
    items = [ds[i] for i in order]
    with open("/proc/loadavg") as f:
        print(f"# load average at the start {' '.join(f.read().split()[:3])}; "
              f"compute {a.compute * 1e3:g} ms a batch, {a.batches} batches of {BATCH}")
    phases = ("take", "submit", "collate", "sleep beyond")
    print("| pool | interval ms | ms/batch beyond compute | " +
          " | ".join(f"{p} ms (core wait)" for p in phases) + " |")
    print("|---|---:|---:|" + "---:|" * len(phases))
    for iv in (int(x) for x in a.intervals.split(",")):
        sys.setswitchinterval(iv / 1e3)
        for t in [0] + [int(x) for x in a.threads.split(",")]:
            clk = Clock()
            n = busy(ds, order, t, a.compute, clk) if t else idle(items, a.compute, clk)
            tot = sum(clk.wall[p] for p in phases) / n
            cells = " | ".join(f"{clk.wall[p] / n * 1e3:.2f} ({clk.q[p] / n * 1e3:.2f})"
                               for p in phases)
            print(f"| {f'{t} threads' if t else 'idle'} | {iv} | {tot * 1e3:.2f} | {cells} |",
                  flush=True)
    with open("/proc/loadavg") as f:
        print(f"# load average at the end {' '.join(f.read().split()[:3])}")


if __name__ == "__main__":
    main()
