"""How much of each stage of a Dataset's item holds the GIL, for
`loader.kind: threads` (sim/kinds/loader_threads.c): `stallsim-probe
--loader threads` writes it into loader.gil_read_ms, gil_decode_share and
gil_transform_share.

The method: a stage (read the file's bytes, decode them with PIL, the
Dataset's transform; or the whole dataset[i] for a Dataset that is not an
ImageFolder) is timed over the same inputs on 1 thread and on p threads of
a concurrent.futures.ThreadPoolExecutor, p the cores this process may use
(at least 2). The kind's model of a pool, items/s = min(p / CPU, 1 / held),
gives the wall per item on p threads as max(CPU / p, held): where the ratio
of the two walls is above 1/p, the GIL binds and the ratio is the share
held. Below about 1/p the cores bind first and the share is only known to
be at most 1/p (a host with more cores resolves more): such stages share
what the whole item's own measurement leaves, in proportion to their CPU,
so the stages' sum never exceeds what the item holds.

  shares = measure(ds, idx, p, log)   # dict, see measure()

The training loop's own thread pays the GIL too: each time it returns from
a call that released it (the GPU's sync, a torch op of the collate, a wait
on a future) while a pool thread runs Python, CPython's take_gil
(Python/ceval_gil.c) makes it wait a switch interval before it may ask for
it back. reacquires() times the loop beside a busy pool and beside none and
writes the difference as take-backs of a switch interval each
(loader.gil_reacquires_per_batch; validation/studies/gil_reacquire.py shows the
mechanism against sys.setswitchinterval).

  r, how = reacquires(ds, idx, p, batch, item_cpu, held_item, log)

More threads than cores cost more than their CPU (switches between
threads, each thread back from a call that released the GIL waiting its
turn, the loop's own take-backs from more of them): oversub() times the
training loop's batches beside a pool of p, 2p, 4p and 8p threads and
writes the throughput against p threads' as loader.threads_oversub.

  curve, walls = oversub(ds, idx, p, log)
"""

import concurrent.futures
import io
import statistics
import time

from stallsim import stable

REPS = 3
# A ratio within this factor of 1/p is the cores' bound, not the GIL's.
RESOLVED = 1.15


def _wall_per_item(fn, inputs, threads):
    """Seconds of wall time per input for fn over inputs on `threads`
    threads (the pool made first, so its threads' start is not timed), less
    the threads' mean wait for a core: on a busy host other processes take
    the cores, which is not the GIL (a thread waiting for the GIL sleeps; it
    is not runnable)."""

    def timed(x):
        q0 = stable.run_delay()
        fn(x)
        return stable.run_delay() - q0

    with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as ex:
        list(ex.map(fn, inputs[: 2 * threads]))  # warm: the threads exist
        t0 = time.perf_counter()
        delay = sum(ex.map(timed, inputs))
        wall = time.perf_counter() - t0
    return max(wall - delay / threads, wall / 10) / len(inputs)


def _cpu_per_item(fn, inputs):
    """CPU seconds (this thread's) per input, one at a time."""
    c0 = time.thread_time()
    for x in inputs:
        fn(x)
    return (time.thread_time() - c0) / len(inputs)


def stage(fn, inputs, p):
    """(CPU seconds per item alone, the p-thread to 1-thread wall ratio),
    each the median of REPS runs."""
    cpu = statistics.median(_cpu_per_item(fn, inputs) for _ in range(REPS))
    one = statistics.median(_wall_per_item(fn, inputs, 1) for _ in range(REPS))
    many = statistics.median(_wall_per_item(fn, inputs, p) for _ in range(REPS))
    return cpu, (many / one if one > 0 else 1.0)


def reconcile(cpu, ratio, held_item, p):
    """Each stage's share from its CPU seconds and wall ratio on p threads:
    a ratio above RESOLVED / p is the share; the other stages share what
    the whole item holds (held_item seconds) beyond the resolved ones', in
    proportion to their CPU, at most 1/p each. Returns (shares, resolved)."""
    resolved = [k for k in cpu if ratio[k] > RESOLVED / p]
    share = {k: min(1.0, ratio[k]) for k in resolved}
    left = max(0.0, held_item - sum(share[k] * cpu[k] for k in resolved))
    rest = [k for k in cpu if k not in resolved]
    rest_cpu = sum(cpu[k] for k in rest)
    for k in rest:
        share[k] = min(1.0 / p, left / rest_cpu) if rest_cpu > 0 else 0.0
    return share, resolved


def _imagefolder_stages(ds, idx):
    """The stages of an ImageFolder item and their inputs, each stage's
    input the previous one's output (made once, untimed)."""
    from PIL import Image

    paths = [ds.samples[i][0] for i in idx]

    def read(path):
        with open(path, "rb") as f:
            return f.read()

    def decode(data):
        img = Image.open(io.BytesIO(data))
        return img.convert("RGB")

    raw = [read(p) for p in paths]
    imgs = [decode(b) for b in raw]
    transform = ds.transform or (lambda x: x)
    return [("read", read, paths), ("decode", decode, raw), ("transform", transform, imgs)]


def measure(ds, idx, p, log):
    """GIL shares of ds's items over idx on p threads: a dict with
    read_ms (GIL-held CPU ms of the read), decode and transform (shares of
    their CPU), cpu_ms {stage: CPU ms per item}, ratio {stage: p-thread /
    1-thread wall}, resolved [stages whose ratio resolved their share], and
    item_share and item_cpu_ms (the whole item's, in this process's thread,
    warm) beside."""
    p = max(2, p)
    item_cpu, item_ratio = stage(lambda i: ds[i], list(idx), p)
    item_resolved = item_ratio > RESOLVED / p
    held_item = min(1.0, item_ratio) * item_cpu  # at most this, when unresolved
    log(f"GIL: whole item {item_cpu * 1e3:.3f} ms CPU, {p} threads at {item_ratio:.3f} x the "
        f"1-thread wall per item ({'GIL-bound' if item_resolved else f'at most 1/{p}: cores bind'})")
    if not hasattr(ds, "samples") or not hasattr(ds, "transform"):
        share = min(1.0, held_item / item_cpu) if item_cpu > 0 else 0.0
        return dict(read_ms=0.0, decode=share, transform=share, cpu_ms={"item": item_cpu * 1e3},
                    ratio={"item": item_ratio}, resolved=["item"] if item_resolved else [],
                    item_share=share, item_cpu_ms=item_cpu * 1e3)
    cpu, ratio = {}, {}
    for name, fn, inputs in _imagefolder_stages(ds, idx):
        cpu[name], ratio[name] = stage(fn, inputs, p)
        log(f"GIL: {name} {cpu[name] * 1e3:.3f} ms CPU, {p} threads at {ratio[name]:.3f} x")
    share, resolved = reconcile(cpu, ratio, held_item, p)
    return dict(read_ms=share["read"] * cpu["read"] * 1e3, decode=share["decode"],
                transform=share["transform"], cpu_ms={k: v * 1e3 for k, v in cpu.items()},
                ratio=ratio, resolved=resolved,
                item_share=held_item / item_cpu if item_cpu > 0 else 0.0,
                item_cpu_ms=item_cpu * 1e3)


def _loop(ds, order, items, threads, batch, step_s):
    """validate_threads' loop (batches of `batch` submitted two ahead to a
    pool of `threads`, each taken, the next submitted, collated here, then
    a sleep of step_s for the GPU), or, threads 0, the same collate and
    sleep over `items` made beforehand. Per batch, the loop's seconds
    beyond the sleep outside the wait for its items (submit, collate, the
    sleep's overrun) and its thread's wait for a core in them."""
    import collections
    from torch.utils.data import default_collate

    out = []

    def timed_step(take):
        t0, q0 = time.perf_counter(), stable.run_delay()
        default_collate(take)
        time.sleep(step_s)
        return time.perf_counter() - t0 - step_s, stable.run_delay() - q0

    if threads == 0:
        for k in range(0, len(items) - batch + 1, batch):
            out.append(timed_step(items[k:k + batch]))
        return out
    with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as ex:
        futs, it = collections.deque(), iter(order)

        def fill():
            while len(futs) < 2 * batch:
                i = next(it, None)
                if i is None:
                    return
                futs.append(ex.submit(ds.__getitem__, i))

        fill()
        while len(futs) >= batch:
            take = [futs.popleft().result() for _ in range(batch)]
            t0, q0 = time.perf_counter(), stable.run_delay()
            fill()
            sub, subq = time.perf_counter() - t0, stable.run_delay() - q0
            wall, q = timed_step(take)
            out.append((sub + wall, subq + q))
    return out


def reacquires(ds, idx, p, batch, item_cpu, held_item, log, switch_s=None):
    """The training loop's GIL take-backs a batch (loader.gil_reacquires_
    per_batch): the loop's own seconds a batch beside a busy pool of p
    threads less the same beside none (the median batch of each, the first
    two left out), over the switch interval times the share of time the
    pool holds the GIL while it works, min(1, held_item x its items/s) at
    the kind's closed form's rate min(p / CPU, cores / CPU, 1 / held).
    The step sleeps twice the pool's batch (on the cores, or on the GIL
    where it binds), so the pool keeps ahead and the loop never waits for
    it. Returns (take-backs, dict of
    what was measured)."""
    import os

    switch_s = switch_s or __import__("sys").getswitchinterval()
    cores = max(1, len(os.sched_getaffinity(0)))
    order = list(idx)
    n = (len(order) // batch) * batch
    if n < 4 * batch:
        return 0.0, dict(note="too few items to time the loop")
    order = order[:n]
    items = [ds[i] for i in order]
    step = 2 * batch * max(item_cpu / min(p, cores), held_item)
    # Less the loop's wait for a core: the pool's threads share the cores
    # with it, which the kind charges apart (jobs.N.train_cpu_ms on the
    # cores); a thread waiting for the GIL sleeps, it is not runnable.
    b = _loop(ds, order, None, p, batch, step)[2:]
    a = _loop(ds, order, items, 0, batch, step)[2:]
    busy = statistics.median(w - q for w, q in b)
    alone = statistics.median(w - q for w, q in a)
    def ms(xs):
        return statistics.median(xs) * 1e3

    log(f"GIL take-backs: the loop's wall a batch beyond the step {ms(w for w, _ in b):.2f} ms "
        f"beside the pool ({ms(q for _, q in b):.2f} of it waiting for a core), "
        f"{ms(w for w, _ in a):.2f} alone ({ms(q for _, q in a):.2f})")
    rate = min(p / item_cpu, cores / item_cpu, 1 / held_item if held_item > 0 else float("inf"))
    share = min(1.0, rate * held_item)
    extra = max(0.0, busy - alone)
    r = extra / (switch_s * share) if share > 0 else 0.0
    log(f"GIL take-backs: the loop {busy * 1e3:.2f} ms a batch beside {p} busy threads, "
        f"{alone * 1e3:.2f} alone (step {step * 1e3:.0f} ms); the pool holds the GIL "
        f"{share:.2f} of its time: {r:.2f} take-backs of {switch_s * 1e3:g} ms a batch")
    return r, dict(busy_ms=busy * 1e3, alone_ms=alone * 1e3, step_ms=step * 1e3,
                   pool_gil_share=share, switch_ms=switch_s * 1e3)


OVERSUB_PER_CORE = (2, 4, 8)


def _wall_plain(fn, inputs, threads):
    """Seconds of wall time per input for fn over inputs on `threads`
    threads (the pool made and warmed first). Unlike _wall_per_item, the
    waits for a core stay in: past the cores, this process's own threads
    are what the others wait behind, which is the cost measured here."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as ex:
        list(ex.map(fn, inputs[: 2 * threads]))
        t0 = time.perf_counter()
        list(ex.map(fn, inputs))
        return (time.perf_counter() - t0) / len(inputs)


def _loop_wall(ds, order, threads, batch):
    """Seconds of wall time per item of validate_threads' loop over order
    on `threads` threads with no GPU work: the pool's items and the loop's
    own collates and GIL take-backs, which grow with the threads beside it
    (validation/studies/gil_reacquire.py), together."""
    t0 = time.perf_counter()
    _loop(ds, order, None, threads, batch, 0.0)
    return (time.perf_counter() - t0) / ((len(order) // batch) * batch)


def oversub(ds, idx, p, log, batch=None):
    """loader.threads_oversub: the whole item (ds[i] over idx) on p threads
    and on 2, 4 and 8 x p, each the median of REPS runs: with `batch`, the
    training loop's batches beside the pool (_loop_wall: what a run past
    the cores pays, the loop's take-backs included); without, the pool
    alone. The efficiency at k threads a core is p threads' wall per item
    over k x p threads', at most 1 (a pool never gains past the cores: a
    ratio above 1 is noise) and at least 0.05. Returns (the curve as
    "1:1, 2:E2, ...", {threads: wall seconds per item})."""
    p = max(1, p)
    inputs = list(idx)
    if batch and len(inputs) >= 4 * batch:
        def wall(n):
            return _loop_wall(ds, inputs, n, batch)
    else:
        def wall(n):
            return _wall_plain(lambda i: ds[i], inputs, n)
    walls = {p: statistics.median(wall(p) for _ in range(REPS))}
    points = ["1:1"]
    for k in OVERSUB_PER_CORE:
        walls[k * p] = statistics.median(wall(k * p) for _ in range(REPS))
        eff = min(1.0, max(0.05, walls[p] / walls[k * p])) if walls[k * p] > 0 else 1.0
        points.append(f"{k}:{eff:.3g}")
    curve = ", ".join(points)
    log("threads past the cores: wall per item " +
        ", ".join(f"{n} threads {w * 1e3:.3f} ms" for n, w in walls.items()) +
        f" -> loader.threads_oversub \"{curve}\"")
    return curve, walls
