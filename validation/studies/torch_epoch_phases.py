#!/usr/bin/python3
"""Where a real DataLoader epoch's time goes, by phase: iter() (the
iterator forks its workers one after another), the first batch, the rest,
and the last next() (StopIteration: without persistent_workers the workers
are shut down and joined there); with the CPU of this process and its
reaped children. For loader.worker_start_ms and worker_init_ms
(docs/pytorch.md, "Starting the workers"):

  /usr/bin/python3 validation/studies/torch_epoch_phases.py DATA [--dataset SPEC]
      [--workers 0,1,2,8,32] [--batch 32]

DATA and --dataset as the probe takes them (an ImageFolder tree by
default; module:factory for your own Dataset)."""

import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python"))


def cpu_s():
    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--dataset", default="imagefolder")
    ap.add_argument("--workers", default="0,1,2,8,32")
    ap.add_argument("--batch", type=int, default=32)
    a = ap.parse_args()
    from torch.utils.data import DataLoader

    from stallsim import pipeline

    ds = pipeline.make_dataset(a.data, a.dataset)
    paths = pipeline.item_paths(ds)
    if paths:
        pipeline.warm(paths)
    for w in (int(x) for x in a.workers.split(",")):
        for keep in ([False, True] if w else [False]):
            kw = dict(batch_size=a.batch, shuffle=True, num_workers=w)
            if w:
                kw.update(persistent_workers=keep)
            dl = DataLoader(ds, **kw)
            for ep in range(2):
                c0, t0 = cpu_s(), time.perf_counter()
                it = iter(dl)
                t1 = time.perf_counter()
                next(it)
                t2 = tl = time.perf_counter()
                n = 1
                for _ in it:
                    n += 1
                    tl = time.perf_counter()
                t4, c1 = time.perf_counter(), cpu_s()
                print(f"workers {w:2d} persistent {int(keep)} epoch {ep}: iter {1e3 * (t1 - t0):6.0f} ms, "
                      f"first {1e3 * (t2 - t1):6.0f}, rest {1e3 * (tl - t2):6.0f}, stop "
                      f"{1e3 * (t4 - tl):6.0f}, total {1e3 * (t4 - t0):6.0f} ms; CPU {1e3 * (c1 - c0):6.0f} ms "
                      f"({n} batches)", flush=True)
            del dl
    return 0


if __name__ == "__main__":
    sys.exit(main())
