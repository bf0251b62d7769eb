"""stallsim watch: measures the data stalls of your own training loop and
writes a measured profile that `stallsim compare MEASURED SCENARIO` holds a
prediction against (docs/watch.md).

    from stallsim.watch import watch
    for epoch in range(epochs):
        for batch in watch(loader, out="measured.yaml"):
            step(batch)

Per iteration it records two times (time.perf_counter_ns, into preallocated
arrays of int64 that grow by doubling, never a per-iteration allocation):
- wait: the time in next() for the batch: the GPU's stall, as the loop sees
  it (the first one includes iter(loader), where a DataLoader forks its
  workers);
- step: the time from handing the batch over to asking for the next: the
  training step as the host sees it. With CUDA, steps run asynchronously:
  pass sync=True (torch.cuda.synchronize before each next()) or the GPU's
  time lands in the next wait.
An epoch is one pass over the wrapped iterable, from iter() to the end of
its last step (the next() that ends it included, as a DataLoader shuts its
workers down there): epoch_s = sum of waits + sum of steps. Each call of
watch() with the same `out` adds an epoch to the same recorder, and the
profile is rewritten (atomically) at the end of each epoch.

Per rank: the rank is torch.distributed's when it is initialised, else the
environment's RANK, else 0; rank r > 0 writes OUT with ".rank<r>" before its
suffix (measured.rank1.yaml), so every rank keeps its own profile.

differential=N (opt-in, first epoch only) runs DS-Analyzer's three passes
of N iterations each before the epoch, through your loop body, so your step
runs 3N extra times (a profiling run, not a training run):
  T       N iterations of a fresh iterator, as given;
  T_prep  the same items again, now in memory (the page cache): for a
          torch DataLoader, a twin loader over the indices T drew (same
          workers, collate, pin_memory), else a fresh iter() of the
          iterable (the same items only when it repeats its order);
  T_gpu   one batch held on the device (device=..., else where it came)
          handed over N times: the step with no loading.
Each pass's first quarter (workers starting, the prefetch filling) is left
out of its mean. So prep stall = T_prep - T_gpu and fetch stall = T -
T_prep, per iteration, as stallsim defines them.

The profile (measured_version: 1) is YAML: `run:` (tool, host, date, rank,
world_size, batch), `epochs:` keyed by epoch number (iterations, items,
epoch_s, wait_s, step_s, wait percentiles), and with differential
`differential:` (iterations, t_ms, t_prep_ms, t_gpu_ms, how T_prep was
served). Standard library only; PyTorch is used only when it is loaded."""

import array
import collections.abc
import datetime
import os
import platform
import sys
import time
import warnings

from stallsim import atomic

_now = time.perf_counter_ns
_RECORDERS = {}


def rank_of():
    """torch.distributed's rank and world size when initialised (without
    importing torch), else RANK and WORLD_SIZE from the environment, else 0, 1."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except (AttributeError, RuntimeError):
        pass
    try:
        return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        return 0, 1


def rank_path(out, rank):
    """OUT for rank 0; OUT with .rank<r> before its suffix for the others."""
    if rank == 0:
        return out
    root, ext = os.path.splitext(out)
    return f"{root}.rank{rank}{ext}"


def batch_items(batch):
    """Items in a batch: the first dimension of its first tensor (or array),
    or the length of a list of items; 0 when it cannot be told."""
    b = batch
    for _ in range(8):
        shape = getattr(b, "shape", None)
        if shape is not None:
            return int(shape[0]) if len(shape) else 0
        if isinstance(b, dict) and b:
            b = next(iter(b.values()))
        elif isinstance(b, (list, tuple)) and b:
            # A collated batch ([images, labels]): its first tensor; a list of items: its length.
            if getattr(b[0], "shape", None) is None:
                return len(b)
            b = b[0]
        else:
            return 0
    return 0


def _to_device(batch, device):
    if device is None:
        return batch
    if hasattr(batch, "to"):
        return batch.to(device)
    if isinstance(batch, dict):
        return {k: _to_device(v, device) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(_to_device(v, device) for v in batch)
    return batch


def _cuda_sync():
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


class _Series:
    """Two int64 arrays (ns) that grow by doubling: appends cost no allocation
    but at the doublings."""

    def __init__(self, cap=1024):
        self.wait = array.array("q", bytes(8 * cap))
        self.step = array.array("q", bytes(8 * cap))
        self.n = 0

    def grow(self):
        self.wait.extend(self.wait)
        self.step.extend(self.step)


class Recorder:
    """What watch() records for one profile: each epoch's series and, after
    a differential run, its three passes."""

    def __init__(self, out, sync=None):
        self.out = out
        self.sync = _cuda_sync if sync is True else (sync or None)
        self.rank, self.world = rank_of()
        self.path = rank_path(out, self.rank) if out else None
        if self.path:
            atomic.target(self.path)  # a bad out fails here, not after an epoch's work
        self.epochs = []  # dicts: iterations, items, epoch_ns, wait_ns, step_ns, complete, pcts, wait_min_ns
        self.batch = 0
        self.differential = None

    def _pass(self, it, limit, series, holder=None):
        """Yields up to `limit` batches of iterator `it`, timing each: the
        time in next() into series.wait, from the yield to the next call
        into series.step; the next() that ends the iterator counts as the
        last batch's wait (a DataLoader shuts its workers down there).
        holder[0], when given, keeps the last batch (else none is kept
        beyond the loop's own reference)."""
        sync = self.sync
        t_yield = None
        while limit is None or series.n < limit:
            if t_yield is not None and sync:
                sync()
            t0 = _now()
            if t_yield is not None:
                series.step[series.n - 1] = t0 - t_yield
            try:
                batch = next(it)
            except StopIteration:
                if series.n:
                    series.wait[series.n - 1] += _now() - t0
                return True
            t1 = _now()
            if series.n == len(series.wait):
                series.grow()
            series.wait[series.n] = t1 - t0
            series.step[series.n] = 0
            series.n += 1
            if holder is not None:
                holder[0] = batch
            if series.n == 1 and not self.batch:
                self.batch = batch_items(batch)
            t_yield = _now()
            yield batch
        if t_yield is not None:
            if sync:
                sync()
            series.step[series.n - 1] = _now() - t_yield
        return False

    def epoch(self, loader, differential=0, device=None):
        if differential and self.differential is None and not self.epochs:
            yield from self._differential(loader, differential, device)
        series = _Series()
        complete = False
        try:
            # iter(loader) runs inside the first next(): the first wait holds it.
            complete = yield from self._pass(_LazyIter(loader), None, series)
        finally:
            self._close_epoch(series, complete)

    def add_epoch(self, iterations, wait_s, step_s, complete=True):
        """An epoch measured elsewhere (a harness's own loop) into the same
        profile: its batches, its seconds waiting and stepping."""
        self.epochs.append(dict(iterations=iterations, items=iterations * self.batch,
                                epoch_ns=round((wait_s + step_s) * 1e9),
                                wait_ns=round(wait_s * 1e9), step_ns=round(step_s * 1e9),
                                complete=complete, pcts=(0.0, 0.0, 0.0), wait_min_ns=0))

    def _close_epoch(self, series, complete):
        n = series.n
        if not n:
            # An empty pass is no epoch (its time would be 0); said, else the
            # profile that compare later reads is silently missing.
            warnings.warn(f"stallsim watch: the loader gave no batch this epoch: nothing recorded"
                          f"{' in ' + self.path if self.path else ''}", RuntimeWarning, stacklevel=3)
            return
        waits = series.wait[:n]
        steps = series.step[:n]
        w, s = sum(waits), sum(steps)
        # The three percentiles now, not the samples: an epoch kept 40 bytes
        # an iteration for the life of the process.
        srt = sorted(waits)
        pcts = tuple(srt[min(n - 1, int(q * n))] / 1e6 for q in (0.5, 0.9, 0.99))
        self.epochs.append(dict(iterations=n, items=n * self.batch, epoch_ns=w + s, wait_ns=w,
                                step_ns=s, complete=complete, pcts=pcts, wait_min_ns=srt[0]))
        if self.path:
            self.write()

    def _differential(self, loader, n, device):
        """DS-Analyzer's three passes of n iterations each (see the module)."""
        twin, how = _memory_twin(loader, n)
        src = twin if twin is not None else loader
        res = {}
        holder = [None]
        for name in ("t", "t_prep"):
            series = _Series(n)
            yield from self._pass(iter(src), n, series, holder)
            res[name] = series
        if holder[0] is None:
            raise ValueError("stallsim watch: differential: the loader gave no batch")
        held = _to_device(holder[0], device)
        if not self.batch:
            self.batch = batch_items(held)
        series = _Series(n)
        yield from self._pass(_Repeat(held), n, series)
        res["t_gpu"] = series

        # Each pass's first quarter warms up (workers start, the prefetch
        # fills, the held batch reaches the device) and is left out.
        warm = min(s.n for s in res.values()) // 4

        def mean_ms(s):
            return (sum(s.wait[warm:s.n]) + sum(s.step[warm:s.n])) / max(s.n - warm, 1) / 1e6

        self.differential = dict(iterations=min(s.n for s in res.values()) - warm,
                                 t_ms=mean_ms(res["t"]), t_prep_ms=mean_ms(res["t_prep"]),
                                 t_gpu_ms=mean_ms(res["t_gpu"]), t_prep_method=how)

    def text(self):
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines = [f"# stallsim measured run: written by stallsim.watch on {platform.node()} at {now}",
                 "# compare it with a prediction: stallsim compare THIS_FILE SCENARIO.yaml",
                 "measured_version: 1",
                 "run:",
                 '  tool: "stallsim.watch"',
                 f'  host: "{_quote(platform.node())}"',
                 f'  date: "{now}"',
                 f"  rank: {self.rank}",
                 f"  world_size: {self.world}",
                 f"  batch: {self.batch}",
                 "epochs:"]
        for k, e in enumerate(self.epochs, 1):
            p50, p90, p99 = e["pcts"]
            lines.append(f"  {k}: {{iterations: {e['iterations']}, items: {e['iterations'] * self.batch}, "
                         f"epoch_s: {e['epoch_ns'] / 1e9:.9g}, wait_s: {e['wait_ns'] / 1e9:.9g}, "
                         f"step_s: {e['step_ns'] / 1e9:.9g}, wait_p50_ms: {p50:.6g}, "
                         f"wait_p90_ms: {p90:.6g}, wait_p99_ms: {p99:.6g}, "
                         f"complete: {'true' if e['complete'] else 'false'}}}")
        if self.differential:
            d = self.differential
            lines += ["differential:",
                      f"  iterations: {d['iterations']}",
                      f"  t_ms: {d['t_ms']:.9g}",
                      f"  t_prep_ms: {d['t_prep_ms']:.9g}",
                      f"  t_gpu_ms: {d['t_gpu_ms']:.9g}",
                      f'  t_prep_method: "{_quote(d["t_prep_method"])}"']
        return "\n".join(lines) + "\n"

    def write(self):
        """Writes the profile atomically (a reader never sees half of it),
        through a link, by the C writers' rules (stallsim.atomic)."""
        atomic.write(self.path, self.text())


def _quote(s):
    return str(s).replace("\\", "\\\\").replace('"', '\\"')


class _LazyIter:
    """iter(loader) on the first next(), inside the first wait's timing."""

    def __init__(self, loader):
        self.loader, self.it = loader, None

    def __next__(self):
        if self.it is None:
            self.it = iter(self.loader)
        return next(self.it)


class _Repeat:
    def __init__(self, batch):
        self.batch = batch

    def __next__(self):
        return self.batch


def _memory_twin(loader, n):
    """For a torch DataLoader over a map-style Dataset: a twin over the
    indices its sampler gives for the first n batches (same workers,
    collate, pin_memory, no shuffle), so T and T_prep see the same items,
    the second time from memory. Else (None, why)."""
    torch_data = sys.modules.get("torch.utils.data")
    if torch_data is None or not isinstance(loader, torch_data.DataLoader):
        return None, "a fresh iter() of the iterable (the same items if it repeats its order)"
    if loader.batch_sampler is None or isinstance(loader.dataset, torch_data.IterableDataset):
        return None, "a fresh iter() of the DataLoader (an iterable dataset: its own order)"
    idx = []
    for b, batch in enumerate(loader.batch_sampler):
        if b == n:
            break
        idx.extend(batch)
    kw = dict(batch_size=loader.batch_size, shuffle=False, num_workers=loader.num_workers,
              collate_fn=loader.collate_fn, pin_memory=loader.pin_memory,
              drop_last=loader.drop_last)
    if loader.num_workers > 0:
        kw["prefetch_factor"] = loader.prefetch_factor
    twin = torch_data.DataLoader(torch_data.Subset(loader.dataset, idx), **kw)
    return twin, "a twin DataLoader over the items T drew, again (the page cache holds them)"


def watch(loader, out="measured.yaml", differential=0, device=None, sync=None):
    """Wraps one pass over `loader` (an epoch), yielding its batches and
    timing each wait and step; each call with the same `out` adds an epoch to
    the profile it rewrites at the epoch's end. differential=N runs the three
    passes first (on the first epoch; see the module). device: where the held
    batch of T_gpu goes (e.g. "cuda"). sync: True calls
    torch.cuda.synchronize() before each next(), or a callable to call.
    out=None records without writing (recorder(None) has the figures)."""
    rec = _RECORDERS.get(out)
    if rec is None:
        rec = Recorder(out, sync)  # raises on an out that cannot be written, before any work
        _RECORDERS[out] = rec
    if differential and rec.differential is None and not rec.epochs \
            and isinstance(loader, collections.abc.Iterator):
        # iter() of an iterator is itself: the passes would take the epoch's
        # first 2N batches, and T_prep would read new items, not items in memory.
        raise ValueError("stallsim watch: differential needs an iterable that iter() can start "
                         "again (a DataLoader, a list), not a one-shot iterator or generator: its "
                         "passes would eat the epoch's first batches")
    return rec.epoch(loader, differential, device)


def recorder(out="measured.yaml"):
    """The Recorder behind watch(loader, out=out): its epochs and differential."""
    return _RECORDERS.get(out)


def reset(out=None):
    """Forgets the recorder of `out` (all with None): the next watch() starts a new profile."""
    if out is None:
        _RECORDERS.clear()
    else:
        _RECORDERS.pop(out, None)


def overhead(n=200000, reps=5, work=0):
    """watch's own cost per iteration (ns of this thread's CPU time, which a
    busy host's other processes do not inflate): a loop over range(n) whose
    step sums range(work) (0: an empty step), watched against bare; the
    median of `reps` alternating runs, and the bare step's own CPU time
    (out=None: nothing written)."""
    import statistics

    clock = time.thread_time_ns
    r = range(work)

    def bare():
        t0 = clock()
        for _ in range(n):
            sum(r)
        return clock() - t0

    def watched():
        reset(None)
        t0 = clock()
        for _ in watch(range(n), out=None):
            sum(r)
        return clock() - t0

    diffs, steps = [], []
    for _ in range(reps):
        b, w = bare(), watched()
        diffs.append((w - b) / n)
        steps.append(b / n)
    reset(None)
    return statistics.median(diffs), statistics.median(steps)


def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser(prog="python3 -m stallsim.watch",
                                 description="stallsim.watch: measures its own overhead "
                                 "(the module is used from your training loop: docs/watch.md)")
    ap.add_argument("--overhead", action="store_true", help="time watch against a bare loop")
    ap.add_argument("--iterations", type=int, default=200000)
    a = ap.parse_args(argv)
    if not a.overhead:
        ap.print_help()
        return 0
    ns, _ = overhead(a.iterations)
    print(f"stallsim.watch: {ns:.0f} ns of CPU an iteration over a bare loop with an empty step "
          f"(median of 5 runs of {a.iterations} iterations, Python {platform.python_version()})")
    for step_ms in (0.1, 1.0, 10.0):
        print(f"  at a step of {step_ms:g} ms that is {ns / (step_ms * 1e6):.3%} of the step")
    n1 = max(a.iterations // 100, 100)
    ns1, step = overhead(n1, work=20000)
    print(f"  a cheap step (sum(range(20000)), {step / 1e3:.0f} us of CPU), {n1} iterations: "
          f"{ns1:.0f} ns an iteration, {ns1 / step:.3%} of the step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
