"""stallsim's PyTorch probe: times the user's own DataLoader pipeline on this
host and writes a host profile for `loader.kind: pytorch` (see docs/pytorch.md,
"Predicting a PyTorch DataLoader").

  stallsim-probe --data DIR --out host-torch.yaml
      [--dataset imagefolder|module:factory] [--batch 32] [--items 640]
      [--max-workers N] [--mem-items N] [--pipelines] [--audio WAVDIR]
      [--videos DIR [--video-size 224x224] [--video-frames 8]]
  stallsim-probe --gpu-rate [--model resnet18,resnet50|module:factory]
      [--batch 32] [--precision auto|amp|bf16|fp32] [--iters 50]
      [--warmup 10] [--device cuda|cpu] [--out gpu-rate.yaml]

(installed from python/ with pip; in a checkout without installing,
/usr/bin/python3 python/probe.py runs the same main).

What it measures, each the way the DataLoader spends it:
- a real DataLoader with one worker and no GPU work, repeated until the
  items' mean CPU agrees (see "Repeats" below; the run nearest the median): each item's dataset[i] inside the worker, its CPU (the worker
  thread's time.thread_time) fitted as a + b x file size:
  prep.decode_ms_per_item (a) and prep.decode_ms_per_mb (b),
  prep.augment_ms = 0 (it is inside a + b); its wall time less its CPU and
  less its wait for a core (/proc/thread-self/schedstat) is I/O wait (a
  read, a GET's first byte), which is the storage's, not prep
  (measured.method.item_wait_ms); the steady interval between batches is
  the worker's whole cycle;
- collate of one batch in this process: loader.collate_ms_per_item; the rest
  of the worker's CPU per batch (worker_cpu_s of the same persistent
  worker in the same epoch as its items, so the VM's drift between two
  runs is not in the difference: the batch in shared memory, the queue's
  pickling) beyond its items': loader.share_ms_per_item;
- the workers' CPU per item with one worker per core against one worker
  alone, the two run back to back and their ratio repeated:
  loader.core_efficiency, the speed left to each when all cores are busy
  (the capacity of sim/kinds/loader_pytorch.c's cores);
- the training process's CPU in next() (its thread's time.thread_time) for
  a batch a worker has ready (unpickling, rebuilding the shared-memory
  tensors): transfer_ms_per_item;
- the part of the hand-over that grows with the items' bytes
  (stallsim.handover: one worker handing over items of 0.25 and 2 MB at the
  user's batch): loader.copy_ms_per_mb (the worker's) and
  receive_ms_per_mb (next()'s), taken out of share_ms_per_item and
  transfer_ms_per_item at the user's item's size (prep.out_kb), so the
  per-item figures are the fixed part and the whole carries to another
  item size (a video clip's frames in float32 against uint8);
- the user's Dataset with 1, 2, 4, 8 and 16 x the cores' persistent
  workers over two epochs (one batch size for all, the median of 3 runs
  each, in rounds over every count): the CPU the warm workers use per item
  in the second epoch (worker_cpu_s), relative to 1 x in the same round:
  loader.oversub, the cost of more processes than cores (switches,
  caches, the scheduler); and each
  worker's CPU from the iterator's shutdown to its reaping
  (/proc/PID/task/*/schedstat before, the reaped children's rusage after):
  loader.worker_exit_ms, paid at every epoch's end unless persistent;
- one fresh worker at the user's batch (3 runs, the median): the CPU from
  its fork to its first batch's end (/proc/PID/task/*/schedstat, read in
  the worker's collate) beyond a warm batch's, less worker_init_ms:
  loader.worker_warmup_ms, a fresh worker's first batch's extra cost (the
  heap it grows for a batch, pages copied on write, cold caches), paid
  once per worker start; the items' and the hand-over's figures above are
  a warm worker's (its second epoch), so it is not counted twice;
- the loop's own time per iteration around a sleeping GPU: loader.step_ms;
- the training process's wait for each batch's tensors' file descriptors, with
  the workers busy (FdWait, in the oversubscription runs, their median):
  loader.receive_wait_ms, a wait that holds no core;
- iter(loader) with 1..N workers and nothing to load, fitted per worker
  (the iterator forks them one after another): worker_start_ms; and each
  worker's own CPU until it waits for its first index: worker_init_ms;
- a worker's private pages at their peak (/proc/PID/smaps_rollup,
  Private_Dirty: what a memory cgroup charges it, the training process's
  pages it copied) with one worker reading 1/8, 1/4, 1/2 and all of
  --mem-items items drawn at random over the whole Dataset (the share a
  worker among 8, 4, 2, 1 reads), fitted as fixed + per item read:
  loader.worker_mem_mb and loader.worker_mem_mb_per_kitem, for
  server.mem_gb's check (stallsim.memprobe; VALIDATION.md, "Server memory");
- the training process's own memory: a fresh process builds the Dataset and
  runs a shuffled epoch of the same items through a DataLoader, its
  /proc/self/status RssAnon at its peak sampled after every batch:
  loader.process_mem_mb, which stands for jobs.N.host_mem_gb where a job
  does not give it (not the model's or CUDA's memory: see docs/memory.md);
- pin_memory: the copy of one batch into pinned memory when CUDA is present
  (PyTorch skips pinning without a GPU: 0 then, and said so);
- cold reads (files evicted with POSIX_FADV_DONTNEED) by 1, 2, 4, 8 and 16
  threads at once and by one sequential stream (stallsim.storageprobe):
  server.storage.read_mb_s the aggregate rate where the curve levels off,
  latency_ms one reader's time per file less its transfer at that rate,
  read_ahead_kb the device's (when the data is on a block device); the
  curve, the stream's rate and the path, mount and device measured under
  measured.method.storage;
- server.cpus: the cores this process may run on.
Opt-in, for jobs naming their pipeline (jobs.N.prep.pipeline), each timed as
the training items are (one worker, the median of 3 runs, page cache warm):
- --pipelines (ImageFolder only): ImageFolder's decode alone (PIL open +
  convert RGB) fitted over file size replaces the fit above as
  prep.decode_ms_per_item and _per_mb; prep.augment_ms is the training
  item's mean less the decode's, prep.eval_ms the evaluation transform's
  (Resize 256, CenterCrop 224, ToTensor, Normalize) less the decode's (each
  written as 0, with a warning, if it comes out negative);
- --audio WAVDIR: torchaudio's load of each 16-bit 44.1 kHz WAV, Resample to
  16 kHz, MelSpectrogram (n_fft 400, hop 160, 80 mels), log, fitted over the
  file's size as prep.audio_ms_per_item + prep.audio_ms_per_mb; the clips'
  mean size, the item's out_kb and its own collate, hand-over and next()
  costs go under measured: (the loader keys stay the image item's).
- --videos DIR: the video pipeline's decode through PyAV, one thread
  (stallsim.videoprobe): each packet's demux and decode by keyframe or
  not, each frame's to_ndarray at --video-size, clips of --video-frames
  read from random frames (their cost past their frames' is the seek):
  prep.video_decode_ms_per_mpx, _keyframe_ms_per_mpx,
  _transform_ms_per_mpx and _seek_ms (calibrate --videos times the same
  through libavcodec from C: the floor without the binding's costs).
--gpu-rate times the model instead of the loader (stallsim.gpurate): real
forward and backward passes and SGD steps of each --model at --batch and
--precision ("auto": float16 autocast with a GradScaler on CUDA, fp32 on
the CPU) on synthetic input already on the device, --warmup steps and then
--iters timed ones; one JSON line a model on stdout with its items/s and
the `--set jobs.0.gpu_items_per_s=...` to give stallsim (--out: the same
as YAML). It is the GPU's rate for your model, where scenarios/gpus/rates.yaml
has a published one only for some GPUs and models.
Repeats: each timed figure (the items' CPU, collate, one worker's CPU per
item against a worker a core's, next()) runs until (max - min) / median of its
3 runs that agree best is within --max-spread (0.10), or --max-repeats (10)
or --repeat-s (300 s) are spent, then is flagged with its spread and the
host's load; the host is judged by calibrate's rule (stallsim.stable). The
profile's measured.stability has each scenario key's spread, which
`stallsim run` turns into the prediction's range.
Progress and the fits go to stderr; the profile is written atomically."""

import argparse
import datetime
import os
import platform
import resource
import stat
import statistics
import sys
import time
import warnings

# The probe runs up to 16 x the cores' workers on purpose (loader.oversub).
warnings.filterwarnings("ignore", message="This DataLoader will create")

from stallsim import atomic, handover, pipeline, stable, storageprobe  # noqa: E402
from stallsim.memprobe import process_memory, worker_growth  # noqa: E402


def log(msg):
    print(f"probe: {msg}", file=sys.stderr, flush=True)


def fit_cost(xs, ys):
    """Least squares y = a + b x with a, b >= 0 (a cost is never negative and
    does not fall with size): the free line when both are >= 0, else the
    better (lower squared error) of the line through 0 and the plain mean;
    with no line to fit (one point, or every x equal) the plain mean.
    Returns (a, b, how): how is "fit", or names the fallback and why."""
    n = len(xs)
    if n == 0:
        raise ValueError("fit_cost: no samples")
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx <= 0:
        return max(my, 0.0), 0.0, "plain mean (no line to fit: every sample has the same size)"
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    if a >= 0 and b >= 0:
        return a, b, "fit"

    def sq_error(a, b):
        return sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))

    s2 = sum(x * x for x in xs)
    b0 = max(sum(x * y for x, y in zip(xs, ys)) / s2, 0.0) if s2 > 0 else 0.0
    mean = max(my, 0.0)
    free = f"the free fit was {a:.6g} + {b:.6g} x; held >= 0"
    if sq_error(0.0, b0) < sq_error(mean, 0.0):
        return 0.0, b0, f"line through 0 ({free})"
    return mean, 0.0, f"plain mean ({free}: the cost did not grow with size)"


FIT_NOTES = []  # the fits that fell back, for the profile's measured.method.fits


def fit_line(xs, ys, what):
    """fit_cost, returning (a, b); a fallback is logged and noted."""
    a, b, how = fit_cost(xs, ys)
    if how != "fit":
        log(f"{what}: {how}")
        FIT_NOTES.append(f"{what}: {how}")
    return a, b


class Timed:
    """The user's dataset, each item returned with its index, the seconds
    dataset[i] took inside the worker less its time waiting for a core
    (wall) and the CPU its thread spent on it (time.thread_time: user +
    system, the worker's own thread; the queue's feeder thread that pickles
    finished batches is not the item's). Wall less CPU is then waiting for
    I/O (a read, a GET's first byte): none of it is prep."""

    def __init__(self, ds):
        self.ds, self.delay = ds, stable.RunDelay()

    def __len__(self):
        return len(self.ds)

    def __getitem__(self, i):
        # The wait for a core is read outside the item's CPU: its read is
        # the probe's, not the Dataset's.
        q0 = self.delay()
        t0, c0 = time.perf_counter(), time.thread_time()
        x = self.ds[i]
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        # Time runnable but not running (another process had the core) is
        # not the item's wait either: the wait is what is left.
        return x, i, max(cpu, wall - (self.delay() - q0)), cpu


class NoItem:
    """A Dataset whose items cost nothing: Timed over it is the timing's own CPU."""

    def __len__(self):
        return 1 << 30

    def __getitem__(self, i):
        return i


def timing_cpu_s(n=2000):
    """The CPU seconds Timed's own clocks and reads take per item (this
    thread, over a Dataset of no cost, the least of 3 runs): in the
    worker's whole CPU but not the item's, so taken from the hand-over. A
    pure-Python Dataset's item is 0.37 ms here and the timing's /proc
    reads were 0.05 ms of it: the text rows at 1 worker came out 16 %
    slow (issue 30)."""
    t = Timed(NoItem())
    runs = []
    for _ in range(3):
        c0 = time.thread_time()
        for i in range(n):
            t[i]
        runs.append((time.thread_time() - c0) / n)
    return min(runs)


class StripCollate:
    """default_collate of the items alone, with the items' indices, wall and
    CPU times and the collate's own time beside."""

    def __call__(self, batch):
        from torch.utils.data import default_collate

        t0 = time.perf_counter()
        out = default_collate([b[0] for b in batch])
        c = time.perf_counter() - t0
        return out, [b[1] for b in batch], [b[2] for b in batch], c, [b[3] for b in batch]


def loader_bound(ds, idx, batch, workers, seed):
    """A real DataLoader over idx with no GPU work: each item's (index, CPU
    seconds, wall seconds) in the worker, the collates, the steady
    interval between batches and the workers' whole CPU per item
    (worker_cpu_s; 0 without workers); from the workers' second epoch (persistent):
    a fresh worker's first items cost more (its warm-up, which
    worker_warmup_ms charges once per start), and a figure per item taken
    from them charged it again on every item, and to 0 workers too, whose
    items run in the warm training process (issue 30: the 0- and 1-worker
    rows 17-28 % slow)."""
    import torch
    from torch.utils.data import DataLoader, Subset

    g = torch.Generator()
    g.manual_seed(seed)
    dl = DataLoader(Subset(Timed(ds), idx), batch_size=batch, shuffle=True, generator=g,
                    num_workers=workers, collate_fn=StripCollate(),
                    persistent_workers=workers > 0)
    for _ in dl:
        pass
    items, collates, stamps = [], [], []
    it = iter(dl)  # persistent: the same workers, warm
    pids = [w.pid for w in it._workers] if workers > 0 else []
    base = [worker_cpu_s(p) for p in pids]
    for _, ii, tt, c, cc in it:
        stamps.append(time.perf_counter())
        items += zip(ii, cc, tt)
        collates.append(c)
    # The workers' whole CPU in the same epoch as the items' own: what a
    # worker spends beyond its items (the hand-over) as a difference of two
    # figures taken at one moment. Taken from separate runs a few minutes
    # apart, this VM's speed drift (a fixed loop's time moves by a third)
    # went into the difference: share_ms_per_item 1.82 ms where the same
    # worker measured at the items' moment left about 1.1 (issue 30).
    worker = sum(worker_cpu_s(p) - b for p, b in zip(pids, base))
    skip = 2 * workers  # the prefetch window fills at the start
    k = len(stamps) - 1 - skip
    if k < 2:
        raise SystemExit(f"probe: too few batches ({len(stamps)}) for {workers} workers: raise --items")
    # Only full batches between the stamps (the last may be partial).
    interval = (stamps[-2] - stamps[skip]) / (len(stamps) - 2 - skip)
    return items, collates, interval, worker / len(items)


REPS = 3  # runs of the figures not repeated to a bound (oversub, worker start)

# The repeats (stallsim.stable): set by main from --max-spread, --max-repeats
# and --repeat-s; HOST judges the host over the whole probe.
POLICY = stable.Policy()
HOST = None
SPREADS = {}  # scenario key: (spread, repeats), for measured.stability (the last wins)
UNSTABLE = []  # the figures that did not settle, for measured.stability.warnings


def settled(r, keys, figure):
    """Notes repeat()'s result r: its figure's spread for each scenario key
    of keys (none when the spread is not finite), its warnings."""
    s = r.spreads[figure]
    if s == s and s != float("inf"):
        SPREADS.update((k, (s, r.n)) for k in keys)
    for w in r.warnings:
        log(f"warning: {w}")
        UNSTABLE.append(w)
    lo, hi = r.ranges[figure]
    log(f"{figure}: {r.n} runs, spread {100 * s:.1f}% ({lo:.4g}..{hi:.4g}) "
        f"{'within' if s <= POLICY.bound else 'over'} {100 * POLICY.bound:.0f}%")


def stable_run(ds, idx, batch, workers, seed, what, keys):
    """loader_bound repeated until the items' mean CPU (what the profile's
    prep figures are fitted from) agrees within POLICY's bound over its
    best runs (stallsim.stable): the run nearest their median."""
    def cpu(run):
        return statistics.mean(c for _, c, _ in run[0])

    r = stable.repeat(lambda k: loader_bound(ds, idx, batch, workers, seed + k),
                      {"item CPU": cpu, "cycle": lambda run: run[2],
                       "beyond items": lambda run: run[3] - cpu(run)}, POLICY, what,
                      judged=["item CPU"], host=HOST)
    settled(r, keys, "item CPU")
    lo, hi = r.ranges["beyond items"]
    return r.result, hi - lo


def item_costs(ds, idx, batch, seed, paths, what="item",
               keys=("prep.decode_ms_per_item", "prep.decode_ms_per_mb")):
    """stable_run with one worker: (a, b, mean, wait), the items' CPU
    seconds fitted as a + b x MB of their files (b = 0 without files), their
    mean, and the mean wait (wall less CPU) beside; the run's items,
    collates and cycle; and (the worker's whole CPU per item in that run,
    the range over the repeats kept of its CPU beyond the items'). keys: the
    profile keys the items' spread is written for."""
    (items, collates, cycle, worker), beyond_range = stable_run(ds, idx, batch, 1, seed, what, keys)
    cpu = [c for _, c, _ in items]
    wait = statistics.mean(max(0.0, w - c) for _, c, w in items)
    if paths:
        a0, b0 = fit_line([os.path.getsize(paths[i]) / 1e6 for i, _, _ in items], cpu,
                          "item CPU over file size")
    else:
        a0, b0 = statistics.mean(cpu), 0.0
    return (a0, b0, statistics.mean(cpu), wait), items, collates, cycle, (worker, beyond_range)


def proc_cpu_s(pid):
    """CPU seconds (user + system, every thread) process pid has used."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_cpu_s(pid):
    """CPU seconds process pid has used, every thread's: its live threads'
    to the nanosecond (tasks_cpu_s), or /proc/PID/stat's clock ticks where
    those are more by over two ticks (a thread has exited, and its CPU is
    counted there alone). Ticks alone were too coarse for a fast Dataset's
    workers: 320 items of 0.4 ms are 13 ticks of 10 ms, so a worker's
    hand-over per batch (loader.share_ms_per_item) and the oversubscription
    curve moved by a tick's share of the whole between runs."""
    coarse, fine = proc_cpu_s(pid), stable.tasks_cpu_s(pid)
    return coarse if coarse - fine > 2 / os.sysconf("SC_CLK_TCK") else fine


def children_cpu_s():
    """CPU seconds of this process's reaped children (every thread's,
    counted to the nanosecond when each was waited for)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def shutdown_cpu(it, pids):
    """Shuts the iterator's workers down as StopIteration does without
    persistent_workers (an index of None each, then joined): the CPU each
    worker spent from then until it was reaped, its exit (finalizers, the
    kernel freeing its pages), seconds a worker."""
    before, reaped = sum(stable.tasks_cpu_s(p) for p in pids), children_cpu_s()
    it._shutdown_workers()
    return max(0.0, children_cpu_s() - reaped - before) / len(pids)


def persistent_iter(ds, idx, batch, workers, seed):
    """A DataLoader over idx with `workers` persistent workers, its iterator
    started (the workers forked) and their pids: (loader, iterator, pids)."""
    import torch
    from torch.utils.data import DataLoader, Subset

    g = torch.Generator()
    g.manual_seed(seed)
    dl = DataLoader(Subset(ds, idx), batch_size=batch, shuffle=True, generator=g,
                    num_workers=workers, persistent_workers=True)
    it = iter(dl)
    return dl, it, [w.pid for w in it._workers]


def workers_cpu(ds, idx, batch, workers, seed):
    """A real DataLoader with `workers` persistent workers over idx, no GPU
    work: (CPU seconds its workers used per item, wall seconds per item) in
    their second epoch, warm, as loader_bound times the items."""
    dl, it, pids = persistent_iter(ds, idx, batch, workers, seed)
    for _ in it:
        pass
    it = iter(dl)  # persistent: the same workers, warm
    base = [worker_cpu_s(p) for p in pids]
    t0 = time.perf_counter()
    for _ in it:
        pass
    wall = time.perf_counter() - t0
    # Persistent workers stay up after the epoch: every item's CPU is in.
    cpu = sum(worker_cpu_s(p) - b for p, b in zip(pids, base))
    it._shutdown_workers()
    return cpu / len(idx), wall / len(idx)


def loader_costs(ds, idx, batch, seed, cores, item, mean_item, worker):
    """The loader's figures, each repeated to POLICY's bound
    (stallsim.stable): collate in this process; the hand-over from worker,
    (one worker's whole CPU per item, the range of its CPU beyond the
    items' over item_costs' repeats), measured in the same epoch as the
    items (the batch in shared memory and the queue's pickling beyond the
    items' and the collate's CPU); next() on a ready batch and the loop;
    and the cores' efficiency. Returns (collate, share, next, step,
    efficiency) in seconds a batch (efficiency: a fraction)."""
    r = stable.repeat(lambda k: main_collate(item, batch), {"collate": lambda c: c}, POLICY,
                      "collate", host=HOST)
    settled(r, ("loader.collate_ms_per_item",), "collate")
    collate = r.values["collate"]
    per_item, beyond_range = worker
    timing = timing_cpu_s()
    share = max(0.0, batch * (per_item - mean_item - timing) - collate)
    log(f"the probe's own timing: {timing * 1e6:.1f} us an item, not the hand-over's")
    if share > 0:  # a difference: its spread is its range over the repeats over the share
        SPREADS["loader.share_ms_per_item"] = (batch * beyond_range / share, POLICY.keep)
    m = stable.repeat(lambda k: main_costs(item, batch), {"next()": lambda run: run[0],
                      "loop": lambda run: run[1]}, POLICY, "the training process",
                      judged=["next()"], host=HOST)
    settled(m, ("loader.transfer_ms_per_item",), "next()")
    if m.values["loop"] > 0 and m.spreads["loop"] != float("inf"):
        SPREADS["loader.step_ms"] = (m.spreads["loop"], m.n)  # a sleep's overshoot: not judged
    eff = core_efficiency(ds, idx, batch, seed, cores) if cores > 1 else 1.0
    return collate, share, m.values["next()"], m.values["loop"], eff


def core_efficiency(ds, idx, batch, seed, cores):
    """With a worker on every core each item costs more CPU than it does
    alone (SMT siblings, shared caches, memory bandwidth, the kernel's
    work): the workers' CPU per item (worker_cpu_s), one worker against one
    a core, each pair run back to back and their ratio repeated to POLICY's
    bound, so the VM's speed drift between two separate repeats is not in
    the ratio. CPU, not the batches' interval: a Dataset that waits (a
    GET), or a store this host serves, stretches the interval without
    costing the cores anything, and the interval made a 20 ms GET's Dataset
    look like a quarter of its cores (issue 30)."""
    def pair(k):
        c1 = workers_cpu(ds, idx, batch, 1, seed + k)[0]
        return c1, workers_cpu(ds, idx, batch, cores, seed + k)[0]

    w = stable.repeat(pair, {"efficiency": lambda p: p[0] / p[1] if p[1] > 0 else 1.0},
                      POLICY, f"one worker against {cores}", host=HOST)
    settled(w, ("loader.core_efficiency",), "efficiency")
    c1, cn = w.result
    eff = min(1.0, max(0.2, w.values["efficiency"]))
    # Below 1 by less than twice its own spread is this host's noise, not
    # the cores: one probe's 0.858 (spread 9 %) made every row with workers
    # 6-31 % too slow, where the rows' two workers used less CPU an item
    # than one (VALIDATION.md, "PyTorch past the cores", run 18).
    noise = 2 * w.spreads["efficiency"] * eff
    held = eff < 1.0 and 1.0 - eff <= noise
    log(f"{cores} workers: {cn * 1e3:.3f} ms of worker CPU per item (one worker beside: "
        f"{c1 * 1e3:.3f}); core efficiency {eff:.3f}"
        + (", within twice its spread of 1: held at 1" if held else ""))
    return 1.0 if held else eff


OVERSUB = (1, 2, 4, 8, 16)


class FdWait:
    """Times, in this (the training) process, each fetch of a received
    tensor's file descriptor from the worker that shared it (PyTorch's
    default file_descriptor strategy: torch.multiprocessing.reductions'
    rebuild_storage_fd, looked up by name when a batch is unpickled). The
    wall beyond this thread's CPU is a wait: the worker's resource-sharer
    thread needs the worker's GIL, which a pure-Python __getitem__ holds
    (VALIDATION.md, "PyTorch past the cores").
    loader.receive_wait_ms is its median over the oversubscription points;
    0 under the file_system strategy (no fetch)."""

    def __enter__(self):
        from torch.multiprocessing import reductions

        self.mod, self.orig, self.wait, self.fetches = reductions, reductions.rebuild_storage_fd, 0.0, 0
        orig = self.orig

        def timed(*args):
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                return orig(*args)
            finally:
                self.wait += max(0.0, (time.perf_counter() - t0) - (time.thread_time() - c0))
                self.fetches += 1

        timed.__module__, timed.__qualname__ = orig.__module__, orig.__qualname__
        timed.__name__ = orig.__name__
        reductions.rebuild_storage_fd = timed
        return self

    def __exit__(self, *exc):
        self.mod.rebuild_storage_fd = self.orig
        return False


def workers_two_epochs(ds, idx, batch, workers, seed):
    """A real DataLoader with `workers` persistent workers over idx, no GPU
    work, two epochs: (the workers' CPU per item in the second, warm, epoch;
    its wall per item; each worker's CPU in the first epoch beyond the
    second, from its fork: a forked child's counters start at 0, so its
    start and its first items' extra cost are in it; each worker's CPU to
    exit when the iterator shuts them down, shutdown_cpu)."""
    dl, it, pids = persistent_iter(ds, idx, batch, workers, seed)
    for _ in it:
        pass
    first = [worker_cpu_s(p) for p in pids]
    it = iter(dl)  # persistent: the same workers, warm
    t0, batches = time.perf_counter(), 0
    with FdWait() as fw:
        for _ in it:
            batches += 1
    wall = time.perf_counter() - t0
    second = sum(worker_cpu_s(p) - b for p, b in zip(pids, first))
    return second / len(idx), wall / len(idx), (sum(first) - second) / workers, \
        shutdown_cpu(it, pids), fw.wait / max(batches, 1)


def oversubscription(ds, idx, batch, cores, seed, reps):
    """The user's Dataset with k x cores persistent workers for each k of
    OVERSUB, reps rounds over every k, two epochs a run.
    The second epoch's workers' CPU per item against k = 1's in the same
    round (the median over the rounds) is loader.oversub: what more
    processes than cores cost each item once the workers are warm
    (switches, caches and TLBs shared, the scheduler's work), which
    loader_pytorch.c applies to the cores' capacity. The first
    epoch's CPU beyond the second, per worker, is a fresh worker's start and
    warm-up (first_batch_extra measures it at the user's batch): a cost per
    worker, not per item, which the first epoch alone put into the curve at
    this probe's items per worker (10 at 16 x), not the user's (issue 30). CPU, not the items'
    throughput: a Dataset that waits on a GET has a throughput that grows
    with workers without any core getting faster or slower. One batch size
    for every point (each worker gets at least two batches at 16 x).
    Returns (curve, batch, seen, extra, exits, fd_waits): extra[k] is the
    first epoch's CPU per worker beyond the second at k x, exits[k] each
    worker's CPU to exit at the shutdown, fd_waits[k] the training
    process's wait per batch for its file descriptors (FdWait), seconds
    (the median run's)."""
    b = max(1, min(batch, len(idx) // (2 * OVERSUB[-1] * cores)))
    # Rounds over every point, each point against its own round's 1 x: a
    # point run minutes after 1 x carried the VM's speed drift in between
    # (a fixed loop's time moves by a third here) into its ratio.
    rounds = [[workers_two_epochs(ds, idx, b, k * cores, seed + r) for k in OVERSUB]
              for r in range(reps)]
    ratios = {k: statistics.median(rd[0][0] / rd[i][0] if rd[i][0] > 0 else 1.0 for rd in rounds)
              for i, k in enumerate(OVERSUB)}
    seen, extra, exits, fd_waits = [], {}, {}, {}
    for i, k in enumerate(OVERSUB):
        runs = sorted(rd[i] for rd in rounds)
        cpu, wall, fresh, gone, fdw = runs[len(runs) // 2]
        extra[k], exits[k], fd_waits[k] = fresh, gone, fdw
        seen.append(f"{k}:{cpu * 1e3:.4g}:{wall * 1e3:.4g}:{fresh * 1e3:.4g}")
        log(f"{k * cores} workers ({k} x the cores, batch {b}): warm, {cpu * 1e3:.3f} ms of worker "
            f"CPU and {wall * 1e3:.3f} ms of wall per item; a fresh worker's first epoch "
            f"{fresh * 1e3:.1f} ms of CPU more; its exit {gone * 1e3:.1f} ms; the training "
            f"process waited {fdw * 1e3:.2f} ms a batch for the batch's file descriptors")
    curve = ", ".join(f"{k}:{min(1.0, ratios[k]):.3g}" for k in OVERSUB)
    return curve, b, " ".join(seen), extra, exits, fd_waits


class StampCollate:
    """default_collate, with the worker's CPU from its fork to the end of
    this batch's collate beside (every thread's, tasks_cpu_s)."""

    def __call__(self, batch):
        from torch.utils.data import default_collate

        return default_collate(batch), stable.tasks_cpu_s(os.getpid())


def first_batch_extra(ds, idx, batch, seed):
    """One fresh worker over idx at the user's batch, as an epoch without
    persistent_workers forks it: the CPU from its fork to its first batch's
    end beyond a warm batch's (the median of the later full batches'),
    seconds. Its start and its warm-up are in it: the heap it grows to hold
    a batch, the parent's pages it copies, its cold caches, which grow with
    the batch (on this VM's ImageFolder about 0.2 s at batch 5, 0.25 s at
    32 and 0.65 s at 128 over warm batches of 0.04, 0.19 and 0.7 s, load
    5-12), so the user's batch, not the oversubscription curve's small one."""
    import torch
    from torch.utils.data import DataLoader, Subset

    g = torch.Generator()
    g.manual_seed(seed)
    dl = DataLoader(Subset(ds, idx), batch_size=batch, shuffle=True, generator=g, num_workers=1,
                    collate_fn=StampCollate())
    stamps = [c for _, c in dl]
    steps = [b - a for a, b in zip(stamps, stamps[1:])]
    if len(idx) % batch:
        steps = steps[:-1]  # the last batch is partial
    if len(steps) < 2:
        raise SystemExit(f"probe: too few batches ({len(stamps)}) for a worker's warm-up: raise --items")
    return stamps[0] - statistics.median(steps[1:])


def worker_warmup(extras, init):
    """loader.worker_warmup_ms: a fresh worker's first batch's CPU beyond a
    warm one (first_batch_extra's, one worker on the cores, the median of
    the runs), less its start before the first item (worker_init_ms,
    measured alone). Seconds, >= 0."""
    return max(0.0, statistics.median(extras) - init)


def worker_exit(curve, exits):
    """loader.worker_exit_ms: each worker's CPU from the iterator's shutdown
    to its reaping (oversubscription's exits), taken back to one worker a
    core by each point's efficiency as worker_warmup does, the median over
    the points. Seconds, >= 0."""
    eff = dict((int(k), float(e)) for k, e in (p.split(":") for p in curve.split(", ")))
    return max(0.0, statistics.median(x * eff[k] for k, x in exits.items()))


def pipeline_costs(data, idx, batch, seed, train_mean):
    """--pipelines: ImageFolder's decode alone and torchvision's evaluation
    transform over the same items as the training one, each as the training
    one is timed. Returns the profile's prep keys ({key: value}) and the
    measured lines."""
    dec_ds = regular_only(pipeline.pipeline_dataset(data, "decode"), f"--data {data}")
    paths = pipeline.item_paths(dec_ds)
    log(f"--pipelines: decode only (PIL open + convert RGB), one worker, repeated to within {100 * POLICY.bound:.0f}%")
    (da, db, dmean, _), *_ = item_costs(dec_ds, idx, batch, seed, paths, "decode alone")
    log(f"decode: mean {dmean * 1e3:.3f} ms = {da * 1e3:.3f} ms + {db * 1e3:.3f} ms/MB")
    log(f"--pipelines: Resize(256), CenterCrop(224), ToTensor, Normalize, one worker, repeated to within {100 * POLICY.bound:.0f}%")
    eval_ds = regular_only(pipeline.pipeline_dataset(data, "image_eval"), f"--data {data}")
    (_, _, emean, _), *_ = item_costs(eval_ds, idx, batch, seed, paths,
                                           "evaluation item", keys=())
    aug, ev = train_mean - dmean, emean - dmean
    for what, v in (("training augment", aug), ("evaluation transform", ev)):
        if v < 0:
            log(f"warning: the {what} measured {v * 1e3:.3f} ms beyond the decode (noise, or a "
                f"decode that dominates it): written as 0")
    log(f"eval item mean {emean * 1e3:.3f} ms: eval_ms {ev * 1e3:.3f}; training item mean "
        f"{train_mean * 1e3:.3f} ms: augment_ms {aug * 1e3:.3f}")
    prep = {"prep.decode_ms_per_item": f"{da * 1e3:.6g}",
            "prep.decode_ms_per_mb": f"{db * 1e3:.6g}",
            "prep.augment_ms": f"{max(aug, 0) * 1e3:.6g}",
            "prep.eval_ms": f"{max(ev, 0) * 1e3:.6g}"}
    measured = [f"    decode_mean_ms: {dmean * 1e3:.6g}",
                f"    eval_item_mean_ms: {emean * 1e3:.6g}"]
    return prep, measured


def audio_costs(root, batch, n_items, seed):
    """--audio: the audio pipeline over the WAVs under root, timed as the
    training items are, fitted over the files' sizes; the item's own loader
    costs beside (collate and hand-over, next()), for the reader: the
    profile's loader keys stay the image item's."""
    ds = regular_only(pipeline.pipeline_dataset(root, "audio"), f"--audio {root}")
    n = len(ds)
    if min(n, n_items) < batch * 5:
        print(f"probe: --audio {root}: {min(n, n_items)} clips to time ({n} there); batches of "
              f"{batch} need {batch * 5}", file=sys.stderr)
        sys.exit(2)
    idx = list(range(0, n, max(1, n // n_items)))[:n_items]
    paths = pipeline.item_paths(ds)
    pipeline.warm([paths[i] for i in idx])
    log(f"--audio: torchaudio load, Resample 44.1 -> 16 kHz, MelSpectrogram, log over {len(idx)} "
        f"of {n} clips, one worker, repeated to within {100 * POLICY.bound:.0f}%")
    (aa, ab, amean, _), items, *_ = item_costs(
        ds, idx, batch, seed, paths, "audio item", keys=("prep.audio_ms_per_item", "prep.audio_ms_per_mb"))
    if ab <= 0:
        log("warning: the audio item's time did not grow with the clip's size: audio_ms_per_mb 0 "
            "(stallsim refuses audio jobs until it is set); time more clips (--items)")
    item = ds[idx[0]]
    collate = main_collate(item, batch)
    worker_item, _ = workers_cpu(ds, idx, batch, 1, seed)
    share = max(0.0, batch * (worker_item - amean) - collate)
    nxt, _ = main_costs(item, batch)
    mean_kb = statistics.mean(os.path.getsize(paths[i]) for i, _, _ in items) / 1e3
    log(f"audio: mean {amean * 1e3:.3f} ms = {aa * 1e3:.3f} ms + {ab * 1e3:.3f} ms/MB "
        f"(clips {mean_kb:.1f} KB mean); its collate {collate / batch * 1e3:.4f}, hand-over "
        f"{share / batch * 1e3:.4f}, next() {nxt / batch * 1e3:.4f} ms per item")
    prep = {"prep.audio_ms_per_item": f"{aa * 1e3:.6g}",
            "prep.audio_ms_per_mb": f"{ab * 1e3:.6g}"}
    measured = [f"    audio_data: \"{os.path.abspath(root)}\"",
                f"    audio_items_timed: {len(idx)}",
                f"    audio_items_in_dataset: {n}",
                f"    audio_mean_kb: {mean_kb:.6g}",
                f"    audio_item_mean_ms: {amean * 1e3:.6g}",
                f"    audio_out_kb: {item[0].numel() * item[0].element_size() / 1e3:.6g}",
                f"    audio_collate_ms_per_item: {collate / batch * 1e3:.6g}",
                f"    audio_share_ms_per_item: {share / batch * 1e3:.6g}",
                f"    audio_transfer_ms_per_item: {max(nxt, 0) / batch * 1e3:.6g}"]
    return prep, measured


def main_collate(item, batch):
    """default_collate of one batch in this process (no shared memory)."""
    from torch.utils.data import default_collate

    items = [(item[0].clone(), item[1]) for _ in range(batch)]
    ts = []
    for _ in range(15):
        t0 = time.perf_counter()
        default_collate(items)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main_costs(item, batch):
    """The training process's time in next() for a batch a worker has ready
    (transfer), and the loop's own time per iteration around a sleep (step)."""
    from torch.utils.data import DataLoader

    ds = pipeline.ReadyItems(item, batch * 40)
    it = iter(DataLoader(ds, batch_size=batch, num_workers=1))
    time.sleep(0.5)  # the worker fills its prefetch window
    # The CPU this thread spends in next() (thread_time): receiving a batch
    # that is ready costs that; the wall time also holds the wait for a
    # worker still busy, and for a core on a busy host.
    nexts = []
    while True:
        t0 = time.thread_time()
        try:
            next(it)
        except StopIteration:
            break
        nexts.append(time.thread_time() - t0)
        time.sleep(0.03)  # the worker gets the next one ready meanwhile
    del it
    it0 = iter(DataLoader(ds, batch_size=batch, num_workers=0))
    step, want = [], 0.005
    for _ in range(30):
        next(it0)
        t1 = time.perf_counter()
        time.sleep(want)
        step.append(time.perf_counter() - t1 - want)
    return statistics.median(nexts[2:]), statistics.median(step)


def idle_cpu_s(pids):
    """Each process's CPU seconds once it has stopped using any (polled
    every 50 ms, at most 20 s): what a worker spent before it waits for
    its first index."""
    last = None
    for _ in range(400):
        now = [proc_cpu_s(p) for p in pids]
        if now == last:
            return now
        last = now
        time.sleep(0.05)
    return last


def worker_start(ds, max_workers):
    """The DataLoader's iterator forks its workers one after another, and
    returns once the last is forked: iter()'s wall time over 1..max_workers
    workers with nothing to load (an empty Subset of the user's Dataset, so
    each fork copies this process as it is), fitted per worker:
    worker_start_ms. Each worker's own CPU before it waits for an index
    (/proc/PID/stat once it stops growing: imports, seeding, the pages it
    touches): worker_init_ms, the median of the runs with one worker (with
    more, the cores' crowding is in it, which loader.oversub applies)."""
    from torch.utils.data import DataLoader, Subset

    xs, ys, init = [], [], []
    for w in sorted({1, max(1, max_workers // 2), max_workers}):
        for _ in range(REPS):
            dl = DataLoader(Subset(ds, []), batch_size=1, num_workers=w, persistent_workers=True)
            t0 = time.perf_counter()
            it = iter(dl)
            ys.append(time.perf_counter() - t0)
            xs.append(w)
            if w == 1:  # alone: the cores' curve (loader.oversub) scales it where workers crowd
                init += idle_cpu_s([p.pid for p in it._workers])
            it._shutdown_workers()
            del it, dl
    a, b = fit_line(xs, ys, "iter() over workers")
    return b, a, statistics.median(init)


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


def regular_only(ds, what):
    """Drops the items whose file is not a regular file (a FIFO named *.jpg
    blocks open() for ever, a device reads for ever), each said on stderr:
    ImageFolder lists whatever has an image's name. Stat does not open, so it
    never blocks. Datasets that do not list their files are left as they are."""
    samples = getattr(ds, "samples", None)
    if not samples or not isinstance(samples[0], (tuple, list)):
        return ds
    keep, dropped = [], []
    for sample in samples:
        try:
            regular = stat.S_ISREG(os.stat(sample[0]).st_mode)
        except OSError:
            regular = False
        (keep if regular else dropped).append(sample)
    for sample in dropped[:10]:
        log(f"{what}: skipping {sample[0]}: not a regular file (a FIFO, a device or a dangling link)")
    if len(dropped) > 10:
        log(f"{what}: ... and {len(dropped) - 10} more that are not regular files")
    if dropped:
        ds.samples = keep
        if isinstance(getattr(ds, "imgs", None), list):
            ds.imgs = keep
        if isinstance(getattr(ds, "targets", None), list):
            ds.targets = [t for _, t in keep]
    return ds


# --- The steps (calibrate's shape: sim/calibrate/benches.c's registry) ---
#
# Each step measures one thing on this host into the probe's state (a
# Probe) and returns the scenario keys it measured, {dotted key: the value
# as written}; Step.keys lists every key it may write, and the profile is
# laid out in PROFILE_ORDER. tests/probe_keys.py holds every step's keys
# against the schema's key table (stallsim help keys) and PROFILE_ORDER.
# The steps run in their list's order (LOADER_STEPS), which is the order
# the figures were always measured in: a later one may use an earlier
# one's figures (the item's mean CPU, the oversubscription's exits).


class Step:
    """name: what it measures (the logs and the tests name it by this);
    keys: the scenario keys it may write; run(p): measures, keeps what
    later steps and the measured block use in p, returns its keys'
    values; when(a): whether the command line asks for it."""

    def __init__(self, name, keys, run, when=None):
        self.name, self.keys, self.run, self.when = name, tuple(keys), run, when


class Probe:
    """What the steps share: the arguments, the Dataset and the items
    timed, and each step's figures for the steps after it and the
    measured block (set as they run)."""

    def __init__(self, a, torch_version, ds, n, idx, paths, cores):
        self.a, self.torch_version, self.ds, self.n = a, torch_version, ds, n
        self.idx, self.paths, self.cores = idx, paths, cores
        self.measured_extra = []  # the opt-in steps' lines under measured.method


def step_cores(p):
    return {"server.cpus": f"{p.cores}"}


def step_items(p):
    """One worker, no GPU work, repeated to the bound: the item's CPU fit."""
    log(f"one worker, no GPU work, over {len(p.idx)} of {p.n} items (page cache warm), repeated to "
        f"within {100 * POLICY.bound:.0f}%")
    (p.a0, p.b0, p.mean_item, p.mean_wait), p.items, p.collates, p.cycle1, p.worker = item_costs(
        p.ds, p.idx, p.a.batch, p.a.seed, p.paths)
    p.mean_kb = (statistics.mean(os.path.getsize(p.paths[i]) for i, _, _ in p.items) / 1e3
                 if p.paths else None)
    p.item = p.ds[p.idx[0]]
    return {"prep.decode_ms_per_item": f"{p.a0 * 1e3:.6g}",
            "prep.decode_ms_per_mb": f"{p.b0 * 1e3:.6g}", "prep.augment_ms": "0"}


def out_kb(p):
    return f"{p.item[0].numel() * p.item[0].element_size() / 1e3:.6g}"


def step_loader(p):
    """What a worker spends per batch beyond its items: collate, then
    handing the batch to the queue (from the steady interval: one worker is
    the bottleneck, so the interval is its whole cycle); next() and the
    loop; the cores' efficiency."""
    a = p.a
    p.collate_main, p.share, p.nxt, p.step_s, p.eff = loader_costs(
        p.ds, p.idx, a.batch, a.seed, p.cores, p.item, p.mean_item, p.worker)
    log(f"item: mean {p.mean_item * 1e3:.3f} ms = {p.a0 * 1e3:.3f} ms + {p.b0 * 1e3:.3f} ms/MB; "
        f"worker cycle {p.cycle1 * 1e3:.1f} ms per batch: collate {p.collate_main * 1e3:.2f} ms "
        f"(in a worker {statistics.mean(p.collates) * 1e3:.2f} ms), hand-over {p.share * 1e3:.2f} ms")
    log(f"next() on a ready batch {p.nxt * 1e3:.3f} ms, loop {p.step_s * 1e3:.3f} ms (batch {a.batch})")
    share, transfer, per_mb = per_mb_apart(p)
    return {"prep.out_kb": out_kb(p), "loader.kind": "pytorch",
            "loader.collate_ms_per_item": f"{p.collate_main / a.batch * 1e3:.6g}",
            "loader.share_ms_per_item": f"{share * 1e3:.6g}",
            "loader.copy_ms_per_mb": f"{per_mb[0]:.6g}",
            "loader.core_efficiency": f"{p.eff:.4g}",
            "loader.transfer_ms_per_item": f"{transfer * 1e3:.6g}",
            "loader.receive_ms_per_mb": f"{per_mb[1]:.6g}",
            "loader.step_ms": f"{max(p.step_s, 0) * 1e3:.6g}"}


def per_mb_apart(p):
    """The hand-over's part that grows with the bytes (stallsim.handover:
    items of two sizes, the user's batch), taken out of the per-item
    figures measured on the user's item, so that those are its fixed part
    and the whole carries to another item size. (share, transfer) seconds
    an item, and (copy, receive) ms a MB."""
    a, mb = p.a, float(out_kb(p)) / 1e3
    copy, recv, points = handover.per_mb(a.batch)
    p.handover_seen = handover.describe(points, a.batch)
    log(f"hand-over by the bytes: a worker {copy:.4g} ms/MB, next() {recv:.4g} ms/MB "
        f"({p.handover_seen}); the item is {mb:.4g} MB")
    share = p.share / a.batch - copy * mb / 1e3
    transfer = max(p.nxt, 0) / a.batch - recv * mb / 1e3
    for what, v in (("loader.share_ms_per_item", share), ("loader.transfer_ms_per_item", transfer)):
        if v < 0:
            note = (f"{what}: the user's item's figure less the bytes' part came out "
                    f"{v * 1e3:.4g} ms; held at 0")
            log(note)
            FIT_NOTES.append(note)
    return max(share, 0.0), max(transfer, 0.0), (copy, recv)


def step_pipelines(p):
    """--pipelines: decode alone and the evaluation transform (they replace
    the item's prep.decode_* and augment_ms)."""
    keys, lines = pipeline_costs(p.a.data, p.idx, p.a.batch, p.a.seed, p.mean_item)
    p.measured_extra += lines
    return keys


def step_audio(p):
    """--audio: the audio pipeline on the WAVs."""
    a = p.a
    try:
        keys, lines = audio_costs(a.audio, a.batch, a.items, a.seed)
    except ImportError as e:
        print(f"probe: --audio needs torchaudio ({e}): scripts/setup.sh --torch installs "
              "Debian's python3-torchaudio", file=sys.stderr)
        sys.exit(2)
    except (OSError, RuntimeError, ValueError) as e:
        print(f"probe: --audio {a.audio}: {e}", file=sys.stderr)
        sys.exit(2)
    p.measured_extra += lines
    return keys


def step_video(p):
    """--videos: the video pipeline's decode through PyAV (stallsim.videoprobe)."""
    a = p.a
    try:
        from stallsim import videoprobe

        size = videoprobe.parse_size(a.video_size)
        paths = videoprobe.video_files(a.videos, 8)
        if not paths:
            raise ValueError("no video files")
        keys, lines = videoprobe.measure(paths, size, 3, 32, 1, log, a.seed, a.video_frames)
    except ImportError as e:
        print(f"probe: --videos needs PyAV ({e}): Debian's python3-av", file=sys.stderr)
        sys.exit(2)
    except (OSError, ValueError) as e:
        print(f"probe: --videos {a.videos}: {e}", file=sys.stderr)
        sys.exit(2)
    p.measured_extra += lines
    return keys


def step_item_wait(p):
    """Says where the Dataset waits (a read, a GET): the storage's, not prep."""
    if p.mean_wait > 0.05 * (p.mean_item + p.mean_wait):
        log(f"the Dataset waits {p.mean_wait * 1e3:.3f} ms an item beside {p.mean_item * 1e3:.3f} ms "
            f"of CPU (a read or a GET): only the CPU is prep; the wait is the storage's, which "
            f"your scenario's server.storage gives (docs/pytorch.md)")
    return {}


def step_oversub(p):
    p.curve, p.curve_batch, p.curve_seen, _, p.exits, p.fd_waits = oversubscription(
        p.ds, p.idx, p.a.batch, p.cores, p.a.seed, p.a.oversub_reps)
    log(f"oversubscription: loader.oversub \"{p.curve}\" (worker processes per core: efficiency)")
    return {"loader.oversub": f"\"{p.curve}\"",
            "loader.receive_wait_ms": f"{statistics.median(p.fd_waits.values()) * 1e3:.6g}"}


def step_worker_start(p):
    forks = p.a.max_workers or 4 * p.cores  # nothing to load: forking more is cheap
    start, start0, p.init = worker_start(p.ds, forks)
    log(f"iter() forks {start * 1e3:.2f} ms a worker (+{start0 * 1e3:.2f} ms), fitted over 1..{forks}; "
        f"a worker's own start {p.init * 1e3:.2f} ms of CPU")
    return {"loader.worker_start_ms": f"{max(start, 0) * 1e3:.6g}",
            "loader.worker_init_ms": f"{max(p.init, 0) * 1e3:.6g}"}


def step_warmup(p):
    p.extras = [first_batch_extra(p.ds, p.idx, p.a.batch, p.a.seed + r) for r in range(REPS)]
    warmup = worker_warmup(p.extras, p.init)
    log(f"a fresh worker's first batch of {p.a.batch}: " +
        ", ".join(f"{x * 1e3:.1f}" for x in p.extras) + " ms of CPU beyond a warm one")
    log(f"a fresh worker's warm-up: {warmup * 1e3:.2f} ms of CPU beyond its start "
        f"(loader.worker_warmup_ms)")
    return {"loader.worker_warmup_ms": f"{warmup * 1e3:.6g}"}


def step_worker_exit(p):
    exit_s = worker_exit(p.curve, p.exits)
    log(f"a worker's exit at the epoch's end: {exit_s * 1e3:.2f} ms of CPU (loader.worker_exit_ms)")
    return {"loader.worker_exit_ms": f"{exit_s * 1e3:.6g}"}


def step_pin(p):
    pin, p.pin_how = pin_cost(p.item, p.a.batch)
    log(f"pin: {pin * 1e3:.4f} ms per item ({p.pin_how})")
    return {"loader.pin_ms_per_item": f"{pin * 1e3:.6g}"}


def step_worker_mem(p):
    p.most = p.a.mem_items or 4 * len(p.idx)
    wfix, wper, wpts = worker_growth(p.ds, p.n, p.a.batch, p.a.seed, most=p.most)
    log(f"a worker's private pages: {wfix / 2**20:.1f} MiB + {wper * 1e3 / 2**20:.4g} MiB per 1000 "
        f"items read (one worker reading " +
        ", ".join(f"{k} items: {b / 2**20:.1f} MiB" for k, b in wpts) + ")")
    if min(p.most, p.n) < p.n:
        FIT_NOTES.append(f"worker memory fitted over shares of {min(p.most, p.n)} of the {p.n} items "
                         f"(--mem-items): past them it is extrapolated")
    return {"loader.worker_mem_mb": f"{wfix / 2**20:.6g}",
            "loader.worker_mem_mb_per_kitem": f"{wper * 1e3 / 2**20:.6g}"}


def step_process_mem(p):
    a = p.a
    try:
        p.pm = pm = process_memory(a.data, a.dataset, a.batch, a.seed, max(1, min(p.cores, 4)),
                                   min(p.most, p.n))
    except RuntimeError as e:
        print(f"probe: --data {a.data}: {e}", file=sys.stderr)
        sys.exit(2)
    log(f"the training process: RssAnon {pm['peak']['RssAnon'] / 2**20:.1f} MiB at its peak over "
        f"{pm['items']} items ({pm['before']['RssAnon'] / 2**20:.1f} MiB with the Dataset alone), "
        f"VmRSS {pm['peak']['VmRSS'] / 2**20:.1f} MiB")
    return {"loader.process_mem_mb": f"{pm['peak']['RssAnon'] / 2**20:.6g}"}


def step_cold_reads(p):
    """The files cold, read by 1 to 16 readers at once and by one stream:
    the storage's aggregate rate, one reader's latency, the device's
    readahead (stallsim.storageprobe), the curve under measured.method."""
    if not p.paths:
        return {}
    keys, lines = storageprobe.measure(p.a.data, [p.paths[i] for i in p.idx], log)
    p.measured_extra += lines
    return keys


def threads_gil(p):
    """--loader threads: the stages' GIL shares on this host's cores
    (stallsim.gilshare), the item's CPU scaled to this process's thread,
    the loop's take-backs of the GIL and more threads than cores."""
    from stallsim import gilshare

    a = p.a
    p.collate = main_collate(p.item, a.batch) / a.batch
    p.g = g = gilshare.measure(p.ds, p.idx[: min(len(p.idx), 160)], p.cores, log)
    # The kind's threads run the item in the training process, where it
    # costs what it does in this process's thread (warm), not what it does
    # in a fresh DataLoader worker (plausibly its pages copied on write and
    # its first items' warm-up, spread over the run): 2.1 against 3.0 ms on
    # validate_threads' JPEGs at load 5, where the worker's figure had put
    # the 1-thread row 29 % slow. The fit is scaled to this process's mean.
    p.worker_ms = p.mean_item * 1e3
    scale = g["item_cpu_ms"] / p.worker_ms if p.worker_ms > 0 and g["item_cpu_ms"] > 0 else 1.0
    p.a0, p.b0, p.mean_item = p.a0 * scale, p.b0 * scale, p.mean_item * scale
    log(f"item: {g['item_cpu_ms']:.3f} ms of CPU in this process's thread against "
        f"{p.worker_ms:.3f} in a DataLoader worker: prep.decode_* scaled by {scale:.3f}"
        + (" (not --pipelines' figures, which stay the worker's)" if a.pipelines else ""))
    # The loop's own take-backs of the GIL beside a busy pool of as many
    # threads as cores (at least 2), the items those the GIL was timed on.
    p.reacq, p.loop = gilshare.reacquires(p.ds, p.idx[: min(len(p.idx), 12 * a.batch)],
                                          max(2, p.cores), a.batch, p.mean_item,
                                          g["item_share"] * p.mean_item, log)
    # More threads than cores: the loop's batches beside 1 to 8 x the cores'
    # threads (the pool's items, the loop's collates and take-backs).
    p.over, p.over_walls = gilshare.oversub(p.ds, p.idx[: min(len(p.idx), 10 * a.batch)],
                                            max(1, p.cores), log, a.batch)
    return {"prep.decode_ms_per_item": f"{p.a0 * 1e3:.6g}",
            "prep.decode_ms_per_mb": f"{p.b0 * 1e3:.6g}", "prep.augment_ms": "0"}


def threads_warmup(p):
    """A fresh training process's first epoch beyond its second (stallsim.poolwarm)."""
    from stallsim import poolwarm

    p.warm, p.warm_seen = poolwarm.measure(p.a.data, p.a.dataset, p.idx, max(2, p.cores),
                                           p.a.batch, log)
    return {"loader.threads_warmup_ms": f"{p.warm * 1e3:.6g}"}


def threads_shares(p):
    """The GIL shares the kind reads: with --pipelines its stages' own,
    else the whole item's CPU as prep.decode_*, the read's in it."""
    g = p.g
    if p.a.pipelines:
        read_ms, gd, gt = g["read_ms"], g["decode"], g["transform"]
    else:
        # The item's CPU is all prep.decode_* here (the read's in it too):
        # its share is the stages' GIL-held CPU over the item's.
        cpu = g["cpu_ms"]
        held = g["read_ms"] + sum(g[k] * cpu[k] for k in ("decode", "transform") if k in cpu)
        total = sum(cpu.values())
        read_ms, gd = 0.0, (min(1.0, held / total) if "read" in cpu and total > 0 else g["decode"])
        gt = g["transform"]
    p.unresolved = [k for k in g["ratio"] if k not in g["resolved"]]
    if p.unresolved:
        log(f"GIL: {', '.join(p.unresolved)}: the cores bind before the GIL on {max(2, p.cores)} "
            f"threads here; their share is at most 1/{max(2, p.cores)}, given what the whole item "
            "holds (a host with more cores resolves it)")
    return {"prep.out_kb": out_kb(p), "loader.kind": "threads",
            "loader.gil_read_ms": f"{read_ms:.6g}", "loader.gil_decode_share": f"{gd:.4g}",
            "loader.gil_transform_share": f"{gt:.4g}",
            "loader.threads_collate_ms_per_item": f"{p.collate * 1e3:.6g}",
            "loader.gil_reacquires_per_batch": f"{p.reacq:.4g}",
            "loader.threads_oversub": f"\"{p.over}\""}


PREP_KEYS = ("prep.decode_ms_per_item", "prep.decode_ms_per_mb", "prep.augment_ms")
STEP_CORES = Step("cores", ("server.cpus",), step_cores)
STEP_ITEMS = Step("items", PREP_KEYS, step_items)
STEP_PIPELINES = Step("pipelines", PREP_KEYS + ("prep.eval_ms",), step_pipelines,
                      lambda a: a.pipelines)
STEP_COLD_READS = Step("cold reads", ("server.storage.latency_ms", "server.storage.read_mb_s",
                                      "server.storage.read_ahead_kb"), step_cold_reads)
VIDEO_KEYS = ("prep.video_decode_ms_per_frame", "prep.video_decode_ms_per_mpx",
              "prep.video_keyframe_ms_per_mpx", "prep.video_seek_ms", "prep.video_decode_delay",
              "prep.video_transform_ms_per_mpx")
LOADER_STEPS = {
    "pytorch": (
        STEP_CORES, STEP_ITEMS,
        Step("loader", ("prep.out_kb", "loader.kind", "loader.collate_ms_per_item",
                        "loader.share_ms_per_item", "loader.copy_ms_per_mb",
                        "loader.core_efficiency", "loader.transfer_ms_per_item",
                        "loader.receive_ms_per_mb", "loader.step_ms"), step_loader),
        STEP_PIPELINES,
        Step("audio", ("prep.audio_ms_per_item", "prep.audio_ms_per_mb"), step_audio,
             lambda a: a.audio),
        Step("video", VIDEO_KEYS, step_video, lambda a: a.videos),
        Step("item wait", (), step_item_wait),
        Step("oversubscription", ("loader.oversub", "loader.receive_wait_ms"), step_oversub),
        Step("worker start", ("loader.worker_start_ms", "loader.worker_init_ms"), step_worker_start),
        Step("worker warm-up", ("loader.worker_warmup_ms",), step_warmup),
        Step("worker exit", ("loader.worker_exit_ms",), step_worker_exit),
        Step("pin", ("loader.pin_ms_per_item",), step_pin),
        Step("worker memory", ("loader.worker_mem_mb", "loader.worker_mem_mb_per_kitem"),
             step_worker_mem),
        Step("process memory", ("loader.process_mem_mb",), step_process_mem),
        STEP_COLD_READS,
    ),
    "threads": (
        STEP_CORES, STEP_ITEMS,
        Step("GIL", PREP_KEYS, threads_gil),
        Step("pool warm-up", ("loader.threads_warmup_ms",), threads_warmup),
        STEP_PIPELINES,
        Step("GIL shares", ("prep.out_kb", "loader.kind", "loader.gil_read_ms",
                            "loader.gil_decode_share", "loader.gil_transform_share",
                            "loader.threads_collate_ms_per_item",
                            "loader.gil_reacquires_per_batch", "loader.threads_oversub"),
             threads_shares),
        STEP_COLD_READS,
    ),
}

# The profile's scenario block, in this order (every key a step may write).
PROFILE_ORDER = (
    "server.cpus", "server.storage.latency_ms", "server.storage.read_mb_s",
    "server.storage.read_ahead_kb",
    "prep.decode_ms_per_item", "prep.decode_ms_per_mb", "prep.augment_ms", "prep.eval_ms",
    "prep.audio_ms_per_item", "prep.audio_ms_per_mb", *VIDEO_KEYS, "prep.out_kb",
    "loader.kind",
    "loader.collate_ms_per_item", "loader.share_ms_per_item", "loader.copy_ms_per_mb",
    "loader.core_efficiency", "loader.oversub", "loader.transfer_ms_per_item",
    "loader.receive_ms_per_mb", "loader.step_ms", "loader.receive_wait_ms",
    "loader.worker_start_ms", "loader.worker_init_ms", "loader.worker_warmup_ms",
    "loader.worker_exit_ms", "loader.pin_ms_per_item", "loader.worker_mem_mb",
    "loader.worker_mem_mb_per_kitem", "loader.process_mem_mb",
    "loader.gil_read_ms", "loader.gil_decode_share", "loader.gil_transform_share",
    "loader.threads_collate_ms_per_item", "loader.gil_reacquires_per_batch",
    "loader.threads_warmup_ms", "loader.threads_oversub",
)


def run_steps(p, steps):
    """Runs the steps the command line asks for, in order; their keys'
    values, a later step's replacing an earlier one's (--pipelines' decode)."""
    values = {}
    for s in steps:
        if s.when and not s.when(p.a):
            continue
        got = s.run(p)
        stray = [k for k in got if k not in s.keys]
        if stray:
            raise AssertionError(f"probe step {s.name} wrote {stray}, not among its keys")
        values.update(got)
    return values


def scenario_lines(values):
    """The scenario block: values' dotted keys nested as YAML, in PROFILE_ORDER."""
    stray = [k for k in values if k not in PROFILE_ORDER]
    if stray:
        raise AssertionError(f"probe: keys {stray} are not in PROFILE_ORDER")
    out, prev = ["scenario:"], []
    for key in PROFILE_ORDER:
        if key not in values:
            continue
        path = key.split(".")
        same = 0
        while same < min(len(prev), len(path)) - 1 and prev[same] == path[same]:
            same += 1
        out += ["  " * (d + 1) + path[d] + ":" for d in range(same, len(path) - 1)]
        out.append("  " * len(path) + f"{path[-1]}: {values[key]}")
        prev = path
    return out


def profile_head(loader, note):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return [f"# stallsim host profile: written by stallsim-probe on {platform.node()} at {now}",
            f"# for loader.kind: {loader}; every figure measured on this host (see the probe's "
            f"header{note})", "profile_version: 1"]


def fits_lines():
    if not FIT_NOTES:
        return []
    return ["    fits:"] + [f"      - \"{note}\"" for note in FIT_NOTES]


def method_head(p):
    a = p.a
    return ["measured:", "  method:", f"    data: \"{os.path.abspath(a.data)}\"",
            f"    dataset: \"{a.dataset}\"", f"    items_timed: {len(p.idx)}",
            f"    items_in_dataset: {p.n}", f"    batch: {a.batch}"]


def pytorch_measured(p):
    """measured.method for loader.kind: pytorch: how each figure was taken."""
    pm = p.pm
    lines = method_head(p) + [
        f"    torch: \"{p.torch_version}\"",
        f"    item_mean_ms: {p.mean_item * 1e3:.6g}",
        f"    item_wait_ms: {p.mean_wait * 1e3:.6g}",
        f"    oversub_batch: {p.curve_batch}",
        f"    oversub_cpu_wall_fresh_ms: \"{p.curve_seen}\"",
        "    warmup_first_batch_ms: \"" + " ".join(f"{x * 1e3:.4g}" for x in p.extras) + "\"",
        "    worker_exit_cpu_ms: \"" + " ".join(f"{k}:{x * 1e3:.4g}" for k, x in p.exits.items()) + "\"",
        "    receive_fd_wait_ms: \"" + " ".join(f"{k}:{x * 1e3:.4g}" for k, x in p.fd_waits.items()) + "\"",
        f"    collate_mean_ms: {statistics.mean(p.collates) * 1e3:.6g}",
        f"    worker_cycle_ms: {p.cycle1 * 1e3:.6g}",
        f"    handover_per_batch_ms: \"{p.handover_seen}\"",
        f"    pin: \"{p.pin_how}\"",
        "    process_memory_mib:",
        f"      items: {pm['items']}",
        f"      workers: {pm['workers']}",
        *(f"      {w}_{k}: {pm[w][k] / 2**20:.6g}" for w in ("before", "peak") for k in
          ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Private_Dirty")),
    ] + fits_lines()
    if p.mean_kb:
        lines.append(f"    mean_kb: {p.mean_kb:.6g}")
    return lines


def threads_measured(p):
    """measured.method for loader.kind: threads."""
    g = p.g
    lines = method_head(p) + [
        f"    item_mean_ms: {p.mean_item * 1e3:.6g}", f"    item_wait_ms: {p.mean_wait * 1e3:.6g}",
        f"    item_mean_ms_worker: {p.worker_ms:.6g}",
        f"    gil_threads: {max(2, p.cores)}",
        "    gil_stage_cpu_ms: \"" + ", ".join(f"{k} {v:.4g}" for k, v in g["cpu_ms"].items()) + "\"",
        "    gil_wall_ratio: \"" + ", ".join(f"{k} {v:.4g}" for k, v in g["ratio"].items()) + "\"",
        f"    gil_unresolved: \"{', '.join(p.unresolved)}\"",
        f"    gil_item_share: {g['item_share']:.4g}",
        "    oversub_wall_ms: \"" + ", ".join(f"{n} threads {w * 1e3:.4g}"
                                           for n, w in p.over_walls.items()) + "\"",
        f"    warmup_cpu_s_first_second: \"{p.warm_seen}\""]
    lines += [f"    gil_loop_{k}: {v:.4g}" if isinstance(v, float) else f"    gil_loop_{k}: \"{v}\""
              for k, v in p.loop.items()]
    return lines + fits_lines()


def write(p, values):
    """The profile: its head, the steps' keys, how they were measured, the
    opt-in steps' lines, the host's stability."""
    loader = p.a.loader
    note = " and stallsim/gilshare.py" if loader == "threads" else ""
    measured = pytorch_measured(p) if loader == "pytorch" else threads_measured(p)
    lines = (profile_head(loader, note) + scenario_lines(values) + measured + p.measured_extra
             + stability_lines())
    write_profile(p.a.out, "\n".join(lines) + "\n")
    log(f"wrote {p.a.out}")


def stability_lines():
    """measured.stability: the host judged over the whole probe (calibrate's
    rule, stallsim.stable), each scenario key's spread and runs; the host's
    and the unsettled figures' warnings also on stderr, last, where they
    are seen."""
    HOST.end()
    for w in HOST.warnings:
        log(f"warning: {w} (on {HOST.hostname}, over the probe)")
    if UNSTABLE or HOST.warnings:
        log("warning: the figures above are not to be trusted on this host: rerun on an idle "
            "one (measured.stability in the profile says which and by how much)")
    figures = [(k, s, n) for k, (s, n) in SPREADS.items()]
    return stable.profile_lines(HOST, POLICY, figures, UNSTABLE)


def write_profile(path, text):
    """The profile, atomically and through a link (stallsim.atomic: the C writers' rules)."""
    atomic.write(path, text)


def parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="the dataset's root (ImageFolder tree; required but with --gpu-rate)")
    ap.add_argument("--out", help="the host profile to write (with --gpu-rate: the rates, optional)")
    ap.add_argument("--dataset", default="imagefolder", help="imagefolder or module:factory")
    ap.add_argument("--batch", type=int, default=32, help="batch size per GPU (default 32)")
    ap.add_argument("--items", type=int, default=640, help="items to time (default 640)")
    ap.add_argument("--mem-items", type=int, default=0,
                    help="a worker's memory is fitted over one worker reading 1/8 to all of this many "
                         "items drawn over the whole Dataset (default 4 x --items; give the share "
                         "a worker reads, items / gpus / num_workers, or more)")
    ap.add_argument("--max-workers", type=int, default=0, help="iter()'s fork fit up to N workers (default: 4 x cores)")
    ap.add_argument("--pipelines", action="store_true",
                    help="also time decode alone and the evaluation transform: writes "
                    "prep.decode_* (decode alone), augment_ms and eval_ms")
    ap.add_argument("--audio", metavar="DIR",
                    help="also time the audio pipeline on DIR's WAVs: writes prep.audio_*")
    ap.add_argument("--videos", metavar="DIR",
                    help="also time the video pipeline's decode of DIR's videos through PyAV "
                    "(stallsim.videoprobe): writes prep.video_*")
    ap.add_argument("--video-size", default="224x224",
                    help="--videos: the frames' size as the Dataset returns them (224x224)")
    ap.add_argument("--video-frames", type=int, default=8,
                    help="--videos: frames of a clip as the Dataset reads one (8)")
    ap.add_argument("--oversub-reps", type=int, default=REPS,
                    help=f"runs of each loader.oversub point, the median kept (default {REPS})")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-spread", type=float, default=0.10,
                    help="repeat each timed figure until (max - min) / median of its 3 runs that "
                    "agree best is within this (default 0.10); the spread goes into the profile")
    ap.add_argument("--max-repeats", type=int, default=10,
                    help="at most this many runs of a figure (default 10; then it is flagged)")
    ap.add_argument("--repeat-s", type=float, default=300,
                    help="no new run of a figure after this many seconds on it (default 300)")
    ap.add_argument("--loader", choices=("pytorch", "threads"), default="pytorch",
                    help="the loader kind to profile: pytorch (the DataLoader's worker processes) "
                    "or threads (a thread pool in the training process: the stages' GIL shares, "
                    "stallsim.gilshare)")
    g = ap.add_argument_group("--gpu-rate: the model's own rate on this device")
    g.add_argument("--gpu-rate", action="store_true",
                   help="time forward+backward passes of --model at --batch instead of the loader")
    g.add_argument("--model", default="resnet18,resnet50",
                   help="torchvision models or module:factory, comma-separated (default resnet18,resnet50)")
    g.add_argument("--precision", default="auto", help="auto (amp on CUDA, else fp32), amp, bf16 or fp32")
    g.add_argument("--iters", type=int, default=50, help="timed steps (default 50)")
    g.add_argument("--warmup", type=int, default=10, help="untimed steps first (default 10)")
    g.add_argument("--device", help="cuda, cuda:N or cpu (default: cuda when there is one)")
    return ap


def check_args(ap, a):
    """The command line's own errors (exit 2), before PyTorch is loaded."""
    if a.gpu_rate:
        if a.batch < 1 or a.iters < 1 or a.warmup < 0:
            ap.error("--gpu-rate: --batch and --iters must be >= 1 and --warmup >= 0")
    else:
        missing = [f for f, v in (("--data", a.data), ("--out", a.out)) if not v]
        if missing:
            ap.error(f"the following arguments are required: {', '.join(missing)}")
    if a.out:
        try:
            atomic.target(a.out)  # now, not after minutes of timing
        except atomic.OutputError as e:
            ap.error(f"--out {e}")
    if a.batch < 1 or a.items < 8 or a.oversub_reps < 1:
        ap.error("--batch and --oversub-reps must be >= 1 and --items >= 8")
    if not a.max_spread > 0 or a.max_repeats < 3 or not a.repeat_s >= 0:
        ap.error("--max-spread must be > 0, --max-repeats >= 3 and --repeat-s >= 0")
    if a.pipelines and a.dataset != "imagefolder":
        ap.error("--pipelines times ImageFolder's decode and torchvision's transforms: "
                 "it needs --dataset imagefolder")
    if a.audio and not os.path.isdir(a.audio):
        ap.error(f"--audio {a.audio}: not a directory")
    if a.videos and not os.path.isdir(a.videos):
        ap.error(f"--videos {a.videos}: not a directory")


def setup(ap, a, torch):
    """The host's judge and the Dataset, the items to time (their pages
    warm): the Probe the steps share. Exits 2 on a Dataset too small."""
    if not os.path.isdir(a.data):
        ap.error(f"--data {a.data}: not a directory")
    torch.manual_seed(a.seed)
    cores = len(os.sched_getaffinity(0))
    global POLICY, HOST
    POLICY = stable.Policy(a.max_spread, a.max_repeats, a.repeat_s)
    HOST = stable.HostLoad()
    for w in stable.judge_host(max(HOST.load1, 0.0), HOST.cores, 0.0, 0.0):
        log(f"warning: {w} (at the start, on {HOST.hostname})")
    try:
        ds = regular_only(pipeline.make_dataset(a.data, a.dataset), f"--data {a.data}")
        n = len(ds)
    except (OSError, RuntimeError, ValueError, TypeError) as e:
        print(f"probe: --data {a.data}: {e}", file=sys.stderr)
        sys.exit(2)
    if n < 2 * a.batch:
        print(f"probe: --data {a.data}: {n} items; need at least two batches ({2 * a.batch})",
              file=sys.stderr)
        sys.exit(2)
    maxw = a.max_workers or cores
    # loader_bound skips the first 2 x workers batches and needs 3 after them.
    need = a.batch * (2 * maxw + 4)
    if min(n, a.items) < need:
        print(f"probe: {min(n, a.items)} items to time ({n} in --data, --items {a.items}); "
              f"batches of {a.batch} over {maxw} workers need {need}", file=sys.stderr)
        sys.exit(2)
    step = max(1, n // a.items)
    idx = list(range(0, n, step))[: a.items]
    paths = pipeline.item_paths(ds)
    if paths:
        pipeline.warm([paths[i] for i in idx])
    return Probe(a, torch.__version__, ds, n, idx, paths, cores)


def main():
    ap = parser()
    a = ap.parse_args()
    check_args(ap, a)
    try:
        import torch
    except ImportError:
        sys.exit("probe: PyTorch is missing: scripts/setup.sh --torch installs Debian's python3-torch "
                 "(a venv sees it only when made with --system-site-packages)")
    if a.gpu_rate:
        from stallsim import gpurate

        sys.exit(gpurate.main_rate(a, log, write_profile))
    p = setup(ap, a, torch)
    write(p, run_steps(p, LOADER_STEPS[a.loader]))


if __name__ == "__main__":
    main()
