"""memprobe: a DataLoader worker's memory as a memory cgroup charges it.

A forked worker shares the training process's pages until it writes them;
reading a Python object writes its reference count, so a Dataset that keeps
its samples as Python objects has their pages copied into every worker that
reads them (PyTorch issue #13246). What a cgroup charges a worker is then
its private pages, not its resident set (which counts the shared ones too).

    from stallsim.memprobe import worker_growth, worker_private, rollup
    fixed, per_item, points = worker_growth(ds, n, batch, seed)
    # loader.worker_mem_mb = fixed / 2**20,
    # loader.worker_mem_mb_per_kitem = per_item * 1000 / 2**20

The pages copied grow with the samples a worker reads, and a worker among W
reads 1/W of the epoch: worker_growth measures one worker reading shares of
the Dataset, drawn at random over all of it as a shuffling sampler deals them
(a share spread over the whole sample list touches many more of its pages
than the same count read in order), and fits fixed + per item.

The training process's own memory (jobs.N.host_mem_gb, or
loader.process_mem_mb from the profile): process_memory runs an epoch of
the user's Dataset through a DataLoader in a fresh process (spawned, so
nothing the probe allocated before counts) and samples that process's
/proc/self/status after every batch:

    from stallsim.memprobe import process_memory
    m = process_memory(data, "imagefolder", batch, seed, workers, items)
    # loader.process_mem_mb = m["rss_anon"] / 2**20 at its peak

RssAnon is what a memory cgroup charges the process itself: VmRSS also
counts the libraries' file pages (the page cache, reclaimable) and the
batches mapped from /dev/shm (RssShmem, counted as /dev/shm); its
Private_Dirty (smaps_rollup) falls once workers are forked, as the pages they
share with it are no longer private (over 320 generated JPEGs with 2
workers: Private_Dirty 125 MiB before the fork, 9 MiB after, RssAnon 126
MiB throughout).
"""


def rollup(pid, field):
    """A field of /proc/PID/smaps_rollup in bytes (0 once the process is gone
    or where the kernel has no smaps_rollup)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def worker_private(ds, idx, batch, seed, every=1):
    """One worker's private pages at their peak (Private_Dirty: the pages it
    copied or allocated), sampled every `every` batches over the items idx
    of ds, as a DataLoader with one worker loads them."""
    import torch
    from torch.utils.data import DataLoader, Subset
    g = torch.Generator()
    g.manual_seed(seed)
    dl = DataLoader(Subset(ds, list(idx)), batch_size=batch, shuffle=True, num_workers=1,
                    generator=g)
    it = iter(dl)
    pids = [w.pid for w in getattr(it, "_workers", [])]
    peak = 0
    for k, _ in enumerate(it):
        if k % every == 0:
            for p in pids:
                peak = max(peak, rollup(p, "Private_Dirty"))
    del it
    return peak


def worker_share(ds, idx, batch):
    """One worker's private pages at their peak while it reads the items
    idx of ds in that order, as worker 0 of a DataLoader does: the indices
    reach it through the queue (a sampler in this process), so the worker
    touches the Dataset's own objects and nothing of a Subset's."""
    from torch.utils.data import DataLoader
    dl = DataLoader(ds, batch_size=batch, sampler=list(idx), num_workers=1)
    it = iter(dl)
    pids = [w.pid for w in getattr(it, "_workers", [])]
    peak = 0
    for k, _ in enumerate(it):
        if k % 4 == 0:
            peak = max([peak] + [rollup(p, "Private_Dirty") for p in pids])
    peak = max([peak] + [rollup(p, "Private_Dirty") for p in pids])
    del it
    return peak


def _worst(points, fixed, per):
    return max(abs((fixed + per * k) / max(b, 1) - 1) for k, b in points)


def _ternary(f, lo, hi, steps=100):
    """The minimum of a convex f on [lo, hi]: (x, f(x))."""
    for _ in range(steps):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if f(m1) <= f(m2):
            hi = m2
        else:
            lo = m1
    x = (lo + hi) / 2
    return x, f(x)


def fit_growth(points):
    """fixed + per_item x items through (items, bytes) points, the line
    whose worst relative error over the points is least (a worker among W
    reads one of these shares, and each is judged by its error in per cent,
    small shares as much as large ones; the worst error over a line's two
    parts is convex, so nested ternary searches find it). Neither part is
    negative."""
    top = max(b for _, b in points)
    span = max(k for k, _ in points) or 1

    def best_fixed(per):
        return _ternary(lambda f: _worst(points, f, per), 0.0, top)

    per, _ = _ternary(lambda p: best_fixed(p)[1], 0.0, 2 * top / span)
    return best_fixed(per)[0], per


def worker_growth(ds, n, batch, seed, shares=(8, 4, 2, 1), most=None):
    """A worker's private pages as fixed + per item read: one worker reads
    most/d items for each d of shares (the share of an epoch of `most`
    items that a worker among d reads; default most = all n), drawn at
    random over all n items of ds by a permutation of `seed`, as a shuffling
    sampler deals them. Returns (fixed bytes, bytes per item,
    [(items read, bytes)])."""
    import torch
    g = torch.Generator()
    g.manual_seed(seed)
    perm = torch.randperm(n, generator=g).tolist()
    top = n if most is None else max(1, min(most, n))
    points = []
    for d in shares:
        k = max(min(batch, top), top // d)
        points.append((k, worker_share(ds, perm[:k], batch)))
    fixed, per = fit_growth(points)
    return fixed, per, points


def status(fields=("VmRSS", "RssAnon", "RssFile", "RssShmem")):
    """This process's /proc/self/status memory fields, in bytes (0 where the
    kernel has none)."""
    got = dict.fromkeys(fields, 0)
    try:
        with open("/proc/self/status") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name in got:
                    got[name] = int(rest.split()[0]) * 1024
    except OSError:
        pass
    return got


def _epoch_child(data, spec, batch, seed, workers, items, out):
    """In a fresh process: the user's Dataset, then one shuffled epoch (its
    first `items` items) through a DataLoader with `workers` workers, the
    loop holding each batch as training does; this process's memory before
    the DataLoader and at its peak, sampled after every batch."""
    try:
        import torch
        from torch.utils.data import DataLoader

        from stallsim import pipeline
        torch.manual_seed(seed)
        ds = pipeline.make_dataset(data, spec)
        before = status()
        before["Private_Dirty"] = rollup("self", "Private_Dirty")
        g = torch.Generator()
        g.manual_seed(seed)
        dl = DataLoader(ds, batch_size=batch, shuffle=True, num_workers=workers, generator=g)
        peak = dict(before)
        seen = 0
        for x in dl:
            now = status()
            now["Private_Dirty"] = rollup("self", "Private_Dirty")
            peak = {k: max(peak[k], now[k]) for k in peak}
            seen += batch
            if seen >= items:
                break
            del x
        out.put({"before": before, "peak": peak, "items": min(seen, len(ds)),
                 "workers": workers})
    except BaseException as e:  # the parent says what failed
        out.put({"error": f"{type(e).__name__}: {e}"})


def process_memory(data, spec, batch, seed, workers, items, timeout=3600):
    """The training process's memory over an epoch of the user's Dataset
    (`items` items of it, `workers` workers): a dict of "before" (the
    Dataset built, no DataLoader yet) and "peak" (each field's highest over
    the epoch), each VmRSS, RssAnon, RssFile, RssShmem and Private_Dirty in
    bytes. Runs in a spawned process: none of the caller's memory counts.
    Raises RuntimeError saying why when the child fails."""
    import multiprocessing
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_epoch_child, args=(data, spec, batch, seed, workers, items, q))
    p.start()
    try:
        r = q.get(timeout=timeout)
    except Exception as e:
        p.kill()
        raise RuntimeError(f"the training process's memory: no answer ({e})") from e
    finally:
        p.join(60)
    if "error" in r:
        raise RuntimeError(f"the training process's memory: {r['error']}")
    return r
