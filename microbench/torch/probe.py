#!/usr/bin/python3
"""stallsim's PyTorch probe: times the user's own DataLoader pipeline on this
host and writes a host profile for `loader.kind: pytorch` (see README.md,
"Predicting a PyTorch DataLoader").

  /usr/bin/python3 microbench/torch/probe.py --data DIR --out host-torch.yaml
      [--dataset imagefolder|module:factory] [--batch 32] [--items 240]
      [--max-workers N]

What it measures, each the way the DataLoader spends it:
- per item, dataset[i] (read, decode, transform) in one process with one
  torch thread (as a worker runs), page cache warm, each item's best of two
  passes; fitted as a + b x file size: prep.decode_ms_per_item (a) and
  prep.decode_ms_per_mb (b), prep.augment_ms = 0 (it is inside a + b);
- collate, inside a real worker (it allocates the batch in shared memory):
  loader.collate_ms_per_item;
- the training process's time in next() for a batch a worker has ready
  (unpickling, rebuilding the shared-memory tensors): transfer_ms_per_item;
- the loop's own time per iteration around a sleeping GPU: loader.step_ms;
- iter(loader) with 1..N workers, fitted per worker: worker_start_ms;
- pin_memory: the copy of one batch into pinned memory when CUDA is present
  (PyTorch skips pinning without a GPU: 0 then, and said so);
- cold reads (files evicted with POSIX_FADV_DONTNEED, read one at a time):
  server.storage.latency_ms and read_mb_s, fitted as a + size / bandwidth;
- server.cpus: the cores this process may run on.
Progress and the fits go to stderr; the profile is written atomically."""

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pipeline  # noqa: E402


def log(msg):
    print(f"probe: {msg}", file=sys.stderr, flush=True)


def fit_line(xs, ys):
    """Least squares y = a + b x; b clamped at 0 (a cost cannot fall with size)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    if b < 0:
        b = 0.0
    a = my - b * mx
    if a < 0:
        a, b = 0.0, my / mx if mx > 0 else 0.0
    return a, b


def time_items(ds, idx):
    import torch

    torch.set_num_threads(1)
    best = {}
    for _ in range(2):
        for i in idx:
            t0 = time.perf_counter()
            ds[i]
            dt = time.perf_counter() - t0
            best[i] = min(best.get(i, dt), dt)
    return [best[i] for i in idx]


class TimedCollate:
    """default_collate, reporting its own time inside the worker."""

    def __call__(self, batch):
        from torch.utils.data import default_collate

        t0 = time.perf_counter()
        out = default_collate(batch)
        return out, time.perf_counter() - t0


def loader_costs(item, batch, workers):
    """collate (in a worker), transfer (next() on a ready batch) and the
    loop's time per iteration, in seconds."""
    import torch
    from torch.utils.data import DataLoader

    n = batch * 40
    ds = pipeline.ReadyItems(item, n)
    dl = DataLoader(ds, batch_size=batch, num_workers=1, collate_fn=TimedCollate())
    collate, nexts = [], []
    it = iter(dl)
    time.sleep(0.5)  # the worker fills its prefetch window
    k = 0
    while True:
        t0 = time.perf_counter()
        try:
            _, c = next(it)
        except StopIteration:
            break
        dt = time.perf_counter() - t0
        collate.append(c)
        # A batch is ready when the loop sleeps long enough for the worker.
        if k >= 2:
            nexts.append(dt)
        k += 1
        time.sleep(max(0.02, 3 * c))
    del it
    # The loop around a sleeping GPU with no loader work: num_workers = 0 over
    # ready items, minus the batch's own cost inside next().
    dl0 = DataLoader(ds, batch_size=batch, num_workers=0)
    step = []
    it0 = iter(dl0)
    want = 0.005
    for _ in range(30):
        t0 = time.perf_counter()
        next(it0)
        t1 = time.perf_counter()
        time.sleep(want)
        t2 = time.perf_counter()
        step.append(t2 - t1 - want)
    del torch
    return statistics.median(collate), statistics.median(nexts), statistics.median(step)


def worker_start(ds_item, batch, max_workers):
    from torch.utils.data import DataLoader

    ds = pipeline.ReadyItems(ds_item, batch * 64)
    xs, ys = [], []
    for w in range(1, max_workers + 1):
        for _ in range(3):
            dl = DataLoader(ds, batch_size=batch, num_workers=w)
            t0 = time.perf_counter()
            it = iter(dl)
            next(it)  # each worker is up once the first batch is back
            ys.append(time.perf_counter() - t0)
            xs.append(w)
            del it
    a, b = fit_line(xs, ys)
    return b, a


def pin_cost(item, batch):
    import torch

    if not torch.cuda.is_available():
        return 0.0, "no CUDA device: PyTorch does not pin (pin_memory has no effect)"
    from torch.utils.data import default_collate

    b = default_collate([item] * batch)
    ts = []
    for _ in range(10):
        t0 = time.perf_counter()
        b[0].pin_memory()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) / batch, "tensor.pin_memory() of one batch"


def cold_reads(paths):
    pipeline.evict(paths)
    xs, ys = [], []
    for p in paths:
        t0 = time.perf_counter()
        with open(p, "rb") as f:
            n = len(f.read())
        ys.append(time.perf_counter() - t0)
        xs.append(n)
    pipeline.warm(paths)
    return fit_line(xs, ys)


def write_profile(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".probe-", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="the dataset's root (ImageFolder tree)")
    ap.add_argument("--out", required=True, help="the host profile to write")
    ap.add_argument("--dataset", default="imagefolder", help="imagefolder or module:factory")
    ap.add_argument("--batch", type=int, default=32, help="batch size per GPU (default 32)")
    ap.add_argument("--items", type=int, default=240, help="items to time (default 240)")
    ap.add_argument("--max-workers", type=int, default=0, help="worker start-up fit up to N (default: cores)")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.batch < 1 or a.items < 8:
        ap.error("--batch must be >= 1 and --items >= 8")
    try:
        import torch
    except ImportError:
        sys.exit("probe: PyTorch is missing: scripts/setup.sh --torch installs Debian's python3-torch")
    if not os.path.isdir(a.data):
        ap.error(f"--data {a.data}: not a directory")
    torch.manual_seed(a.seed)
    cores = len(os.sched_getaffinity(0))
    ds = pipeline.make_dataset(a.data, a.dataset)
    n = len(ds)
    if n < 2:
        sys.exit(f"probe: --data {a.data}: {n} items; need at least 2")
    step = max(1, n // a.items)
    idx = list(range(0, n, step))[: a.items]
    paths = pipeline.item_paths(ds)
    if paths:
        pipeline.warm([paths[i] for i in idx])
    log(f"timing dataset[i] on {len(idx)} of {n} items (one thread, page cache warm)")
    times = time_items(ds, idx)
    if paths:
        sizes = [os.path.getsize(paths[i]) for i in idx]
        a0, b0 = fit_line([s / 1e6 for s in sizes], times)
        mean_kb = statistics.mean(sizes) / 1e3
    else:
        a0, b0, mean_kb = statistics.mean(times), 0.0, None
    log(f"item: median {statistics.median(times) * 1e3:.3f} ms = {a0 * 1e3:.3f} ms + {b0 * 1e3:.3f} ms/MB")
    item = ds[idx[0]]
    collate, nxt, step_s = loader_costs(item, a.batch, 1)
    log(f"collate {collate * 1e3:.3f} ms, next() on a ready batch {nxt * 1e3:.3f} ms, loop {step_s * 1e3:.3f} ms (batch {a.batch})")
    maxw = a.max_workers or cores
    start, start0 = worker_start(item, a.batch, maxw)
    log(f"worker start-up {start * 1e3:.2f} ms per worker (+{start0 * 1e3:.2f} ms), fitted over 1..{maxw}")
    pin, pin_how = pin_cost(item, a.batch)
    log(f"pin: {pin * 1e3:.4f} ms per item ({pin_how})")
    lat = bw = None
    if paths:
        la, lb = cold_reads([paths[i] for i in idx])
        lat, bw = la, (1 / lb if lb > 0 else None)
        log(f"cold reads: {la * 1e3:.3f} ms + size / {bw / 1e6 if bw else float('inf'):.1f} MB/s")
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [
        f"# stallsim host profile: written by microbench/torch/probe.py on {platform.node()} at {now}",
        "# for loader.kind: pytorch; every figure measured on this host (see the probe's header)",
        "profile_version: 1",
        "scenario:",
        "  server:",
        f"    cpus: {cores}",
    ]
    if lat is not None:
        lines += ["    storage:", f"      latency_ms: {lat * 1e3:.6g}"]
        if bw:
            lines.append(f"      read_mb_s: {bw / 1e6:.6g}")
    lines += [
        "  prep:",
        f"    decode_ms_per_item: {a0 * 1e3:.6g}",
        f"    decode_ms_per_mb: {b0 * 1e3:.6g}",
        "    augment_ms: 0",
        f"    out_kb: {item[0].numel() * item[0].element_size() / 1e3:.6g}",
        "  loader:",
        "    kind: pytorch",
        f"    collate_ms_per_item: {collate / a.batch * 1e3:.6g}",
        f"    transfer_ms_per_item: {max(nxt, 0) / a.batch * 1e3:.6g}",
        f"    step_ms: {max(step_s, 0) * 1e3:.6g}",
        f"    worker_start_ms: {max(start, 0) * 1e3:.6g}",
        f"    pin_ms_per_item: {pin * 1e3:.6g}",
        "measured:",
        "  method:",
        f"    data: \"{os.path.abspath(a.data)}\"",
        f"    dataset: \"{a.dataset}\"",
        f"    items_timed: {len(idx)}",
        f"    items_in_dataset: {n}",
        f"    batch: {a.batch}",
        f"    torch: \"{torch.__version__}\"",
        f"    item_median_ms: {statistics.median(times) * 1e3:.6g}",
        f"    pin: \"{pin_how}\"",
    ]
    if mean_kb:
        lines.append(f"    mean_kb: {mean_kb:.6g}")
    write_profile(a.out, "\n".join(lines) + "\n")
    log(f"wrote {a.out}")


if __name__ == "__main__":
    main()
