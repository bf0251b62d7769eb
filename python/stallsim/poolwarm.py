"""A thread-pool loader's warm-up, for `loader.kind: threads`
(sim/kinds/loader_threads.c): a fresh training process's first epoch costs
more CPU than its later ones (its first collates write into fresh pages, the
pool's first items too), and `stallsim-probe --loader threads` writes the
difference as loader.threads_warmup_ms, which the kind charges once per
process, on a core in the loop's thread before its first step (where the
measurement put it: those collates, serial with the steps).

The method: a fresh process (this module run as a program) builds the
Dataset, reads its files into the page cache and runs two epochs of
validate_threads' loop over the probe's items (a ThreadPoolExecutor of
`threads` threads, two batches submitted ahead, each collated in the loop's
thread, no GPU work; a fresh pool each epoch, as that loop makes one each
epoch). Its CPU (getrusage of the process: every thread's, user and
system) in the first epoch beyond the second is the warm-up: about the same
on 1, 2, 4 and 8 threads on a 2-core VM (0.7-1.8 s, load 15: a cost per
process, not per thread; VALIDATION.md). CPU, not wall: on a busy host the wall holds the others'
time, the CPU only this process's. Each run is a fresh process; the median
of `reps` runs is kept.

  w, seen = measure(data, dataset, idx, threads, batch, log)
"""

import json
import os
import random
import statistics
import subprocess
import sys


def _cpu_s():
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _child(data, dataset, idx, threads, batch, seed):
    """Two epochs in this fresh process: the CPU seconds of each."""
    import torch  # noqa: F401  (imported before the clock, as a training script has it)

    from stallsim import gilshare, pipeline

    ds = pipeline.make_dataset(data, dataset)
    paths = pipeline.item_paths(ds)
    if paths:
        pipeline.warm([paths[i] for i in idx])
    cpu = []
    for e in range(2):
        order = list(idx)
        random.Random(seed + e).shuffle(order)
        c0 = _cpu_s()
        gilshare._loop(ds, order, None, threads, batch, 0.0)
        cpu.append(_cpu_s() - c0)
    return cpu


def measure(data, dataset, idx, threads, batch, log, reps=3, seed=1):
    """loader.threads_warmup_ms in seconds: the median over reps fresh
    processes of the first epoch's CPU less the second's, at least 0; and
    what was seen (each run's two epochs' CPU seconds)."""
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    runs = []
    for r in range(reps):
        cmd = [sys.executable, "-m", "stallsim.poolwarm", data, dataset,
               ",".join(str(i) for i in idx), str(threads), str(batch), str(seed + 2 * r)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
    extra = statistics.median(max(0.0, a - b) for a, b in runs)
    seen = " ".join(f"{a:.3f}/{b:.3f}" for a, b in runs)
    log(f"warm-up: a fresh process's two epochs over {len(idx)} items on {threads} threads took "
        f"{seen} s of CPU (first/second): {extra * 1e3:.1f} ms more in the first "
        f"(loader.threads_warmup_ms)")
    return extra, seen


if __name__ == "__main__":
    d, spec, ids, t, b, s = sys.argv[1:7]
    print(json.dumps(_child(d, spec, [int(i) for i in ids.split(",")], int(t), int(b), int(s))))
