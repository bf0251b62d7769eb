#!/usr/bin/python3
"""Validates `loader.kind: threads` against real thread-pool loaders on this
host (issue 36 item 4), with the DataLoader on the same data beside it.

  /usr/bin/python3 scripts/validate_threads.py [--bin build/sim/stallsim]
      [--data DIR] [--items 1200] [--epochs 2] [--quick] [--out FILE.md]
      [--torch-profile FILE]

1. JPEGs: the set validation/torch.py uses (harness.generate writes
   them into DIR unless it holds some; default /var/tmp/stallsim-torch/data).
2. The profile: `stallsim-probe --loader threads` (the item's CPU, each
   stage's GIL share timed on 1 and N threads, the collate) into
   DIR/../host-threads.yaml.
3. Each row runs, in a fresh process, torchvision ImageFolder with the
   standard transforms (stallsim.pipeline, as validate_torch), batch 32,
   shuffled, for --epochs epochs with the GPU emulated by sleeping the row's
   compute per batch (a partial last batch in proportion to its items, as
   the scenario's GPU steps it), the page cache warm:
   - threads rows: a concurrent.futures.ThreadPoolExecutor of 1, 2, 4, 8
     threads over dataset[i], prefetch_batches x 32 items submitted ahead of
     the batch the loop takes, each batch collated in the loop's thread
     (default_collate) and handed over in memory (what torchdata.nodes'
     ParallelMapper with method="thread" and SPDL do underneath);
   - DataLoader rows: num_workers 0, 2, 4 on the same data, predicted from
     the pytorch profile (--torch-profile, default DIR/../host-torch.yaml as
     validate_torch wrote it; the probe runs when it is missing).
4. `stallsim run` predicts each row from its profile with --set for what the
   row changes; the table compares them (harness.compare_row: the mean epoch
   time and stall fraction over the epochs).
Targets (issue 36): median |error| <= 10 % in epoch time, <= 5 pp in stall,
every row <= 25 % (--quick: 20 %, 10 pp, 50 %). Exit 0 when the threads
rows meet them, 1 when not, 77 without PyTorch, torchvision or PIL. A
free-threaded interpreter is not tried: Debian ships none this script finds
(python3.13t); it says so."""

import argparse
import collections
import concurrent.futures
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
import harness  # noqa: E402
from stallsim import pipeline  # noqa: E402

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


def timed_epochs(loader_for, epochs, compute_s):
    """pipeline.timed_epochs' loop (each epoch's wall from making its
    iterator to its last step), the GPU's sleep in proportion to the
    batch's items: a partial last batch (1200 = 37 x 32 + 16) steps half as
    long, as the scenario's GPU does (a GPU's step over fewer items is
    shorter; a full sleep put 50 ms an epoch into every 100 ms row that no
    training run has). Returns the epochs' seconds and the last epoch's
    batches in full batches' worth of GPU (37.5)."""
    import time

    eps, gpu = [], 0.0
    for e in range(epochs):
        dl = loader_for(e)
        t0 = time.perf_counter()
        gpu = 0.0
        for batch in dl:
            share = len(batch[1]) / BATCH
            time.sleep(compute_s * share)
            gpu += share
        eps.append(time.perf_counter() - t0)
    return eps, gpu


def run_one(a):
    """One row, in this (fresh) process: prints a JSON line."""
    import torch
    from torch.utils.data import DataLoader

    torch.manual_seed(a.seed)
    ds = pipeline.make_dataset(a.data)
    pipeline.warm(pipeline.item_paths(ds))
    if a.threads > 0:
        def loader_for(e):
            return thread_batches(ds, torch.randperm(len(ds)).tolist(), a.threads, BATCH, PREFETCH)
    else:
        dl = DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=a.workers,
                        **(dict(prefetch_factor=2) if a.workers > 0 else {}))

        def loader_for(e):
            return dl
    epochs, batches = timed_epochs(loader_for, a.epochs, a.compute)
    # The CPU the row used (its threads, and its workers once joined): on a
    # busy host, how much of the cores the run got beside the others'.
    cpu = sum(resource.getrusage(w).ru_utime + resource.getrusage(w).ru_stime
              for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(json.dumps(dict(epochs=epochs, batches=batches, cpu_s=cpu)))


def matrix(quick):
    rows = [dict(threads=t, workers=0, compute=c) for c in (0.01, 0.1) for t in (1, 2, 4, 8)]
    rows += [dict(threads=0, workers=w, compute=0.01) for w in (0, 2, 4)]
    if quick:
        rows = [r for r in rows if r["compute"] == 0.01 and r["threads"] in (0, 1, 4)]
    return rows


def measure_row(a, r):
    cmd = [sys.executable, os.path.abspath(__file__), "--one", "--data", a.data, "--threads",
           str(r["threads"]), "--workers", str(r["workers"]), "--compute", str(r["compute"]),
           "--epochs", str(a.epochs), "--seed", str(a.seed)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def write_scenario(path, profile, kind, epochs, data):
    from validation.fixtures.data import dataset_stats

    n, kb, cv = dataset_stats(data)
    with open(path, "w") as f:
        f.write(f"""# written by scripts/validate_threads.py: the harness's training job
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


def predict(a, scen, r):
    # Every read hits the page cache, whose copy the probe's item time holds.
    sets = ["jobs.0.compute_s_per_batch=%g" % r["compute"], "server.storage.latency_ms=0",
            "server.storage.read_mb_s=1e9"]
    if r["threads"] > 0:
        sets += ["loader.threads=%d" % r["threads"], "jobs.0.prefetch_batches=%d" % PREFETCH]
    else:
        sets += ["loader.num_workers=%d" % r["workers"]]
    return harness.predict_epochs(a.bin, scen, sets)


def probe(a, out, loader):
    cmd = [sys.executable, "-m", "stallsim.probe", "--data", a.data, "--out", out,
           "--loader", loader]
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    subprocess.run(cmd, check=True, env=env)


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sim", "stallsim"))
    ap.add_argument("--data", default="/var/tmp/stallsim-torch/data")
    ap.add_argument("--items", type=int, default=1200)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", help="write the Markdown table here")
    ap.add_argument("--torch-profile", help="the pytorch profile for the DataLoader rows")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--threads", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--compute", type=float, default=0.0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        return run_one(a)
    try:
        import PIL  # noqa: F401
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        harness.skip("validate_threads", f"{e.name} is missing (scripts/setup.sh --torch installs "
                     "Debian's python3-torch, python3-torchvision and python3-pil)")
    if not os.path.exists(a.bin):
        harness.skip("validate_threads", f"{a.bin} is not built")
    harness.generate(a.bin, a.data, a.items)
    base = os.path.dirname(os.path.abspath(a.data))
    prof_t = os.path.join(base, "host-threads.yaml")
    probe(a, prof_t, "threads")
    prof_p = a.torch_profile or os.path.join(base, "host-torch.yaml")
    if not os.path.exists(prof_p):
        probe(a, prof_p, "pytorch")
    scen_t = write_scenario(os.path.join(base, "threads-validation.yaml"), prof_t, "threads",
                            a.epochs, a.data)
    scen_p = write_scenario(os.path.join(base, "threads-validation-torch.yaml"), prof_p,
                            "pytorch", a.epochs, a.data)
    done = []
    for r in matrix(a.quick):
        m = measure_row(a, r)
        c = harness.compare_row(m["epochs"], m["batches"], r["compute"],
                                predict(a, scen_t if r["threads"] else scen_p, r))
        # The share of the host's cores (server.cpus in the profile) the
        # row's process used over its epochs, the import and start included.
        c["cpu_got"] = m["cpu_s"] / (sum(m["epochs"]) * len(os.sched_getaffinity(0)))
        done.append((r, c))
        print(f"{'threads' if r['threads'] else 'workers'}={r['threads'] or r['workers']} "
              f"compute={r['compute'] * 1e3:.0f}ms: measured {c['meas_t']:.3f} s "
              f"({c['meas_stall']:.1%} stall), predicted {c['pred_t']:.3f} s "
              f"({c['pred_stall']:.1%}): {c['err']:+.1%}; the run used {c['cpu_got']:.0%} of "
              "the cores", file=sys.stderr, flush=True)
    thr = [x for x in done if x[0]["threads"]]
    dl = [x for x in done if not x[0]["threads"]]
    med, worst, med_pp, line = summary(thr, "thread pool")
    lines = table_of(done) + ["", line + "."]
    if dl:
        lines.append(summary(dl, "DataLoader (the pytorch kind)")[3] + ".")
    ft = shutil.which("python3.13t") or shutil.which("python3t")
    lines.append("Free-threaded interpreter: " + (f"{ft} found but not run by this script."
                                                  if ft else "none on this host (not measured)."))
    try:
        with open("/proc/loadavg") as f:
            lines.append(f"Host: {os.cpu_count()} CPUs, load average at the end "
                         f"{' '.join(f.read().split()[:3])}.")
    except OSError:
        pass
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    lim = (0.20, 10, 0.5) if a.quick else (0.10, 5, 0.25)
    ok = med <= lim[0] and med_pp <= lim[1] and worst <= lim[2]
    print(f"validate_threads: targets for the thread pool (median <= {lim[0]:.0%}, <= {lim[1]} "
          f"pp, every row <= {lim[2]:.0%}) {'met' if ok else 'NOT met'}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
