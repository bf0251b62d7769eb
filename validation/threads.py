"""Validates `loader.kind: threads` against real thread-pool loaders on this
host (issue 36 item 4), with the DataLoader on the same data beside it.

  python3 -m validation.threads [--bin build/sim/stallsim] [--data DIR]
      [--items 1200] [--epochs 2] [--quick] [--out FILE.md] [--page FILE.md]
      [--torch-profile FILE]

1. JPEGs: the set validation/torch.py uses (validation.fixtures.data.generate writes
   them into DIR unless it holds some; default /var/tmp/stallsim-torch/data).
2. The profile: `stallsim-probe --loader threads` (the item's CPU, each
   stage's GIL share timed on 1 and N threads, the collate) into
   DIR/../host-threads.yaml.
3. Each row runs, in a fresh process, torchvision ImageFolder with the
   standard transforms (stallsim.pipeline, as validation.torch), batch 32,
   shuffled, for --epochs epochs with the GPU emulated by sleeping the row's
   compute per batch (a partial last batch in proportion to its items, as
   the scenario's GPU steps it: stallsim.pipeline.timed_epochs' share), the page cache warm:
   - threads rows: a concurrent.futures.ThreadPoolExecutor of 1, 2, 4, 8
     threads over dataset[i], prefetch_batches x 32 items submitted ahead of
     the batch the loop takes, each batch collated in the loop's thread
     (default_collate) and handed over in memory (what torchdata.nodes'
     ParallelMapper with method="thread" and SPDL do underneath);
   - DataLoader rows: num_workers 0, 2, 4 on the same data, predicted from
     the pytorch profile (--torch-profile, default DIR/../host-torch.yaml as
     validation.torch wrote it; the probe runs when it is missing).
4. `stallsim run` predicts each row from its profile with --set for what the
   row changes; the table compares them (validation.predict.compare_row: the mean epoch
   time and stall fraction over the epochs).
Targets (issue 36): median |error| <= 10 % in epoch time, <= 5 pp in stall,
every row <= 25 % (--quick: 20 %, 10 pp, 50 %). Exit 0 when the threads
rows meet them, 1 when not, 77 without PyTorch, torchvision or PIL. A
free-threaded interpreter is not tried: Debian ships none this script finds
(python3.13t); it says so."""

import collections
import concurrent.futures
import os
import resource
import shutil
import statistics

from stallsim import pipeline
from validation import predict as pr
from validation.base import Harness, Target, load1
from validation.fixtures import data as fx
from validation.fixtures.probe import run_probe

BATCH, PREFETCH = 32, 2


def thread_batches(ds, order, threads, batch, ahead):
    """Batches of ds over order from a pool of `threads` threads, `ahead`
    batches of items submitted past the one being taken, collated here."""
    from torch.utils.data import default_collate

    with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as ex:
        futs, it = collections.deque(), iter(order)

        def fill():
            while len(futs) < ahead * batch:
                i = next(it, None)
                if i is None:
                    return
                futs.append(ex.submit(ds.__getitem__, i))

        fill()
        while futs:
            items = [futs.popleft().result() for _ in range(min(batch, len(futs)))]
            fill()  # batch k + ahead is submitted once batch k is taken
            yield default_collate(items)


def loader_row(a, r):
    """One row, in this (fresh) process."""
    import torch
    from torch.utils.data import DataLoader

    torch.manual_seed(a.seed)
    ds = pipeline.make_dataset(a.data)
    pipeline.warm(pipeline.item_paths(ds))
    if r["threads"] > 0:
        def loader_for(e):
            return thread_batches(ds, torch.randperm(len(ds)).tolist(), r["threads"], BATCH,
                                  PREFETCH)
    else:
        dl = DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=r["workers"],
                        **(dict(prefetch_factor=2) if r["workers"] > 0 else {}))

        def loader_for(e):
            return dl
    # The GPU's sleep in proportion to the batch's items: a partial last
    # batch (1200 = 37 x 32 + 16) steps half as long, as the scenario's GPU
    # does (a full sleep put 50 ms an epoch into every 100 ms row that no
    # training run has); the batches in full batches' worth (37.5).
    epochs, batches = pipeline.timed_epochs(loader_for, a.epochs, r["compute"],
                                            share=lambda b: len(b[1]) / BATCH)
    # The CPU the row used (its threads, and its workers once joined): on a
    # busy host, how much of the cores the run got beside the others'.
    cpu = sum(resource.getrusage(w).ru_utime + resource.getrusage(w).ru_stime
              for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return dict(epochs=epochs, batches=batches, cpu_s=cpu)


def threads_rows(quick):
    rows = [dict(threads=t, workers=0, compute=c) for c in (0.01, 0.1) for t in (1, 2, 4, 8)]
    rows += [dict(threads=0, workers=w, compute=0.01) for w in (0, 2, 4)]
    if quick:
        rows = [r for r in rows if r["compute"] == 0.01 and r["threads"] in (0, 1, 4)]
    return rows


def write_scenario(path, profile, kind, epochs, data):
    n, kb, cv = fx.dataset_stats(data)
    with open(path, "w") as f:
        f.write(f"""# written by validation.threads: the harness's training job
name: threads-validation
host: {profile}
epochs: {epochs}
dataset: {{items: {n}, item_kb: {kb:.6g}, item_kb_cv: {cv:.4g}}}
server: {{gpus: 1, cache_gb: 1000}}
loader: {{kind: {kind}, cache: none}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: 0.01}}
""")
    return path


def threads_predict(a, scen, r):
    # Every read hits the page cache, whose copy the probe's item time holds.
    sets = ["jobs.0.compute_s_per_batch=%g" % r["compute"], "server.storage.latency_ms=0",
            "server.storage.read_mb_s=1e9"]
    if r["threads"] > 0:
        sets += ["loader.threads=%d" % r["threads"], "jobs.0.prefetch_batches=%d" % PREFETCH]
    else:
        sets += ["loader.num_workers=%d" % r["workers"]]
    return pr.predict_epochs(a.bin, scen, sets)


def table_of(rows):
    lines = ["| loader | threads / workers | compute ms/batch | measured s/epoch | predicted | "
             "error | measured stall | predicted stall | cores' CPU the run got |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r, c in rows:
        kind = "ThreadPoolExecutor" if r["threads"] else "DataLoader"
        n = r["threads"] or r["workers"]
        lines.append(f"| {kind} | {n} | {r['compute'] * 1e3:.0f} | {c['meas_t']:.3f} | "
                     f"{c['pred_t']:.3f} | {c['err']:+.1%} | {c['meas_stall']:.1%} | "
                     f"{c['pred_stall']:.1%} | {c['cpu_got']:.0%} |")
    return lines


def summary(rows, what):
    errs = [abs(c["err"]) for _, c in rows]
    pp = [abs(c["pred_stall"] - c["meas_stall"]) * 100 for _, c in rows]
    med, worst, med_pp = statistics.median(errs), max(errs), statistics.median(pp)
    return med, worst, med_pp, (f"{what}: {len(rows)} rows, median |error| {med:.1%} in epoch "
                                f"time (worst {worst:.1%}), median {med_pp:.1f} pp in stall")


class Threads(Harness):
    name = "threads"
    title = "Thread-pool loaders (loader.kind: threads) against ThreadPoolExecutor"
    needs = ("PIL", "torch", "torchvision")
    targets = [Target("median, thread pool", "med", 0.10, quick=0.20),
               Target("median stall, thread pool", "med_pp", 5, quick=10, fmt="{} pp"),
               Target("every thread-pool row", "worst", 0.25, quick=0.50)]

    def add_arguments(self, ap):
        ap.add_argument("--torch-profile", help="the pytorch profile for the DataLoader rows")

    def requires(self, a):
        return None if os.path.exists(a.bin) else f"{a.bin} is not built"

    def setup(self, a):
        fx.generate(a.bin, a.data, a.items)
        base = os.path.dirname(os.path.abspath(a.data))
        prof_t = os.path.join(base, "host-threads.yaml")
        run_probe("--data", a.data, "--out", prof_t, "--loader", "threads")
        prof_p = a.torch_profile or os.path.join(base, "host-torch.yaml")
        if not os.path.exists(prof_p):
            run_probe("--data", a.data, "--out", prof_p, "--loader", "pytorch")
        self.scen_t = write_scenario(os.path.join(base, "threads-validation.yaml"), prof_t,
                                     "threads", a.epochs, a.data)
        self.scen_p = write_scenario(os.path.join(base, "threads-validation-torch.yaml"), prof_p,
                                     "pytorch", a.epochs, a.data)

    def rows(self, a):
        return threads_rows(a.quick)

    def run_row(self, a, r):
        return loader_row(a, r)

    def predict(self, a, r, m):
        c = pr.compare_row(m["epochs"], m["batches"], r["compute"],
                           threads_predict(a, self.scen_t if r["threads"] else self.scen_p, r))
        # The share of the host's cores (server.cpus in the profile) the
        # row's process used over its epochs, the import and start included.
        c["cpu_got"] = m["cpu_s"] / (sum(m["epochs"]) * len(os.sched_getaffinity(0)))
        return c

    def row_line(self, r, c):
        return (f"{'threads' if r['threads'] else 'workers'}={r['threads'] or r['workers']} "
                f"compute={r['compute'] * 1e3:.0f}ms: measured {c['meas_t']:.3f} s "
                f"({c['meas_stall']:.1%} stall), predicted {c['pred_t']:.3f} s "
                f"({c['pred_stall']:.1%}): {c['err']:+.1%}; the run used {c['cpu_got']:.0%} of "
                "the cores")

    def report(self, a, done):
        thr = [x for x in done if x[0]["threads"]]
        dl = [x for x in done if not x[0]["threads"]]
        med, worst, med_pp, line = summary(thr, "thread pool")
        lines = table_of(done) + ["", line + "."]
        if dl:
            lines.append(summary(dl, "DataLoader (the pytorch kind)")[3] + ".")
        ft = shutil.which("python3.13t") or shutil.which("python3t")
        lines.append("Free-threaded interpreter: " + (f"{ft} found but not run by this script."
                                                      if ft else "none on this host (not measured)."))
        lines.append(f"Host: {os.cpu_count()} CPUs, load average at the end {load1():.2f}.")
        return "\n".join(lines) + "\n", dict(med=med, worst=worst, med_pp=med_pp)


if __name__ == "__main__":
    Threads.main()
