"""memprobe: a DataLoader worker's memory as a memory cgroup charges it.

A forked worker shares the training process's pages until it writes them;
reading a Python object writes its reference count, so a Dataset that keeps
its samples as Python objects has their pages copied into every worker that
reads them (PyTorch issue #13246). What a cgroup charges a worker is then
its private pages, not its resident set (which counts the shared ones too).

    from stallsim.memprobe import worker_private, rollup
    mb = worker_private(ds, idx, batch, seed) / 2**20   # loader.worker_mem_mb
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
