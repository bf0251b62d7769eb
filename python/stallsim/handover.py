"""What a PyTorch DataLoader's hand-over costs per MB of the items' bytes,
for loader.copy_ms_per_mb and loader.receive_ms_per_mb (the probe's loader
step; docs/pytorch.md).

  python3 -m stallsim.handover [--batch 32] [--mb 0.25,2] [--runs 3]

A worker collates each batch into a fresh shared-memory segment (its pages
faulted and filled) and the training process maps it and frees the one
before, so both grow with the bytes: measured here on this host, one
persistent worker, items of uint8 that cost nothing but their copy
(the Dataset's clone, timed apart in this process and taken out), at two
item sizes; the per-MB figures are the slopes between them. The probe takes
them out of its per-item figures for the user's own item (share and
transfer), so the per-item figures are the fixed part and the per-MB ones
carry to another item size (a video clip's float32 frames against its
uint8). On the 2-core development VM, quiet (load 0.8), at batch 32 and 8:
0.69 and 0.89 ms a MB in the worker, 0.14 and 0.16 in next()."""

import argparse
import statistics
import time

from stallsim import stable


class SizedItems:
    """n items of `nbytes` uint8 each (and a label), each a fresh copy."""

    def __init__(self, nbytes, n):
        import torch

        self.t, self.n = torch.ones(int(nbytes), dtype=torch.uint8), n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.t.clone(), i


def clone_s(ds, k):
    """CPU seconds this thread spends making k items: the Dataset's, not
    the hand-over's."""
    t0 = time.thread_time()
    for i in range(k):
        ds[i]
    return time.thread_time() - t0


def one_run(nbytes, batch, batches):
    """One worker's CPU beyond its items per batch, and the training
    process's CPU in next() per batch, in the worker's second epoch (warm)."""
    from torch.utils.data import DataLoader

    ds = SizedItems(nbytes, batch * batches)
    dl = DataLoader(ds, batch_size=batch, num_workers=1, persistent_workers=True)
    for _ in dl:  # the first epoch: the worker's heap and caches warm
        pass
    it = iter(dl)
    pid = it._workers[0].pid
    time.sleep(0.2)  # its prefetch window fills: next() then waits for nothing
    w0, nexts = stable.tasks_cpu_s(pid), []
    while True:
        t0 = time.thread_time()
        try:
            next(it)
        except StopIteration:
            break
        nexts.append(time.thread_time() - t0)
    worker = stable.tasks_cpu_s(pid) - w0
    it._shutdown_workers()
    items = clone_s(ds, batch * batches) / batches
    return worker / batches - items, statistics.median(nexts)


def per_mb(batch, sizes_mb=(0.25, 2.0), runs=3, batches=24):
    """(worker ms/MB, training process ms/MB, the medians behind them):
    the slopes of the per-batch medians over the item sizes."""
    points = []
    for mb in sizes_mb:
        rs = [one_run(mb * 1e6, batch, batches) for _ in range(runs)]
        points.append((mb, statistics.median(r[0] for r in rs),
                       statistics.median(r[1] for r in rs)))
    (m0, w0, n0), (m1, w1, n1) = points[0], points[-1]
    span = batch * (m1 - m0)
    return (max(0.0, (w1 - w0) / span * 1e3), max(0.0, (n1 - n0) / span * 1e3), points)


def describe(points, batch):
    """The medians as the profile's measured block notes them."""
    return " ".join(f"{mb:g}MB:worker {w * 1e3:.4g}:next {n * 1e3:.4g}" for mb, w, n in points) + \
        f" (ms a batch of {batch})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--mb", default="0.25,2", help="item sizes, MB (two or more, ascending)")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    sizes = tuple(float(x) for x in a.mb.split(","))
    if a.batch < 1 or a.runs < 1 or len(sizes) < 2 or not sizes[-1] > sizes[0] > 0:
        ap.error("--batch and --runs >= 1, --mb two sizes > 0, ascending")
    copy, recv, points = per_mb(a.batch, sizes, a.runs)
    print(f"loader.copy_ms_per_mb: {copy:.4g}\nloader.receive_ms_per_mb: {recv:.4g}\n"
          f"# {describe(points, a.batch)}")


if __name__ == "__main__":
    main()
