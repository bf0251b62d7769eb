"""Validates `loader.kind: pytorch` against real PyTorch DataLoader runs on
this host (issue 14; docs/validation/torch.md).

  python3 -m validation.torch [--bin build/sim/stallsim] [--data DIR]
      [--items 1200] [--epochs 2] [--quick] [--out FILE.md] [--page FILE.md]

1. JPEGs: DIR if it holds some, else `stallsim measure --generate` writes
   photograph-like ones there (default /var/tmp/stallsim-torch/data).
2. The profile, as docs/pytorch.md tells a PyTorch user: the probe
   (stallsim-probe) --data DIR --out DIR/../host-torch.yaml.
3. Each row of the matrix runs a real torch.utils.data.DataLoader in a fresh
   process: torchvision ImageFolder with the standard transforms, batch 32,
   shuffle, the row's num_workers / persistent_workers / pin_memory, the GPU
   emulated by sleeping the row's compute time per batch; each epoch's wall
   time runs from iter(loader) to the end of its last step.
4. `stallsim compare` holds the row's epochs (written as a measured
   profile, stallsim.watch's format) against the same configuration
   predicted from the profile with --set only for what the row changes:
   the one comparison path (tests/test_harness_compare.py checks it gives
   the figures the harness's own arithmetic gave).
Page cache: "warm" reads every file first and predicts with reads served at
no cost beyond what the probe timed (the probe times dataset[i] with the page
cache warm); "evicted" drops the files' pages before the first epoch
(POSIX_FADV_DONTNEED) and predicts with loader.cache lru over the probe's
cold-read storage fit.
Exit 0 when the targets hold (median |error| <= 10 % in epoch time and
<= 5 pp in stall, every row within 25 %; --quick, CI's 6 rows: 20 %, 10 pp,
50 %), 1 when they do not, 77 without PyTorch."""

import os
import statistics
import sys

from stallsim import pipeline
from validation import predict as pr
from validation.base import Harness, Target
from validation.fixtures import data as fx
from validation.fixtures.probe import run_probe

BATCH = 32
# The bars (--quick's: CI's 6 rows on a shared machine, looser, but still
# catching a broken mechanism: a serialised loader is off by 40-170 %);
# the other PyTorch harnesses hold theirs to the same.
TARGETS = [Target("median", "med", 0.10, quick=0.20),
           Target("median stall", "med_pp", 5, quick=10, fmt="{} pp"),
           Target("every row", "worst", 0.25, quick=0.50)]


def torch_rows(quick):
    rows = []
    computes = [0.01, 0.05, 0.2]
    for w in [0, 1, 2, 3, 4]:
        for c in computes:
            rows.append(dict(workers=w, compute=c, cache="warm", persistent=False, pin=False))
    for w in [0, 2, 4]:
        rows.append(dict(workers=w, compute=0.01, cache="evicted", persistent=False, pin=False))
    for w in [1, 2, 4]:
        rows.append(dict(workers=w, compute=0.01, cache="warm", persistent=True, pin=False))
    for w in [2]:
        rows.append(dict(workers=w, compute=0.01, cache="warm", persistent=False, pin=True))
        rows.append(dict(workers=w, compute=0.05, cache="warm", persistent=True, pin=True))
    if quick:
        keep = {(0, 0.01), (2, 0.05), (4, 0.01), (1, 0.2)}
        rows = [r for r in rows if (r["workers"], r["compute"]) in keep or r["cache"] == "evicted"][:6]
    return rows


def loader_row(a, r):
    """One row of real DataLoader epochs, in this (fresh) process."""
    import torch
    from torch.utils.data import DataLoader

    torch.manual_seed(a.seed)
    ds = pipeline.make_dataset(a.data)
    paths = pipeline.item_paths(ds)
    if r["cache"] == "evicted":
        pipeline.evict(paths)
    else:
        pipeline.warm(paths)
    kw = dict(batch_size=BATCH, shuffle=True, num_workers=r["workers"], pin_memory=r["pin"])
    if r["workers"] > 0:
        kw.update(persistent_workers=r["persistent"], prefetch_factor=2)
    dl = DataLoader(ds, **kw)
    epochs, batches = pipeline.timed_epochs(lambda e: dl, a.epochs, r["compute"])
    return dict(epochs=epochs, batches=batches)


def write_scenario(scen, profile, epochs, data, batch=BATCH, name="torch-validation",
                   tool="validation.torch"):
    """The harness's training job over data's JPEGs on the probe's profile
    (predict() sets what each row changes); returns scen."""
    n, kb, cv = fx.dataset_stats(data)
    with open(scen, "w") as f:
        f.write(f"""# written by {tool}: the harness's training job
name: {name}
host: {profile}
epochs: {epochs}
dataset: {{items: {n}, item_kb: {kb:.6g}, item_kb_cv: {cv:.4g}}}
server: {{gpus: 1, cache_gb: 1000}}
loader: {{kind: pytorch, cache: lru}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: {batch}, compute_s_per_batch: 0.01}}
""")
    return scen


def row_sets(r):
    """The --set list that makes the scenario the row's configuration."""
    sets = ["loader.num_workers=%d" % r["workers"],
            "jobs.0.compute_s_per_batch=%g" % r["compute"],
            "loader.persistent_workers=%s" % ("true" if r["persistent"] else "false"),
            "loader.pin_memory=%s" % ("true" if r["pin"] else "false")]
    if r["cache"] == "warm":
        # Every read hits the page cache, whose copy the probe's item time holds.
        sets += ["loader.cache=none", "server.storage.latency_ms=0", "server.storage.read_mb_s=1e9"]
    return sets


def predict(a, scen, r):
    """`stallsim run` on the row: the simulator's (epoch_s, t_gpu_s) per epoch
    (validation/gpu/gpu_validate.py's rows)."""
    return pr.predict_epochs(a.bin, scen, row_sets(r))


def probed(a):
    """JPEGs in a.data (generated when missing) and the probe's profile beside
    them, as docs/pytorch.md makes it: the profile's path."""
    if not fx.has_jpegs(a.data):
        print(f"validate_torch: generating {a.items} JPEGs in {a.data}", file=sys.stderr)
    fx.generate(a.bin, a.data, a.items)
    profile = os.path.join(os.path.dirname(os.path.abspath(a.data)), "host-torch.yaml")
    run_probe("--data", a.data, "--out", profile)
    return profile


class Torch(Harness):
    name = "torch"
    title = "PyTorch DataLoader (loader.kind: pytorch) against real PyTorch"
    needs = ("torch", "torchvision")
    targets = TARGETS

    def setup(self, a):
        profile = probed(a)
        self.scen = write_scenario(os.path.join(os.path.dirname(profile), "torch-validation.yaml"),
                                   profile, a.epochs, a.data)

    def rows(self, a):
        return torch_rows(a.quick)

    def run_row(self, a, r):
        return loader_row(a, r)

    def predict(self, a, r, m):
        """The row through `stallsim compare` (issue 36: one comparison path):
        the measured epochs as a measured profile beside the scenario, the
        row's --set applied; tests/test_harness_compare.py holds it to
        compare_row."""
        path = os.path.join(os.path.dirname(self.scen), "measured-row.yaml")
        return pr.compare_measured(a.bin, self.scen, row_sets(r), m["epochs"], m["batches"],
                                   r["compute"], BATCH, path)

    def row_line(self, r, c):
        return (f"workers={r['workers']} compute={r['compute'] * 1e3:.0f}ms {r['cache']}"
                f"{' persistent' if r['persistent'] else ''}{' pin' if r['pin'] else ''}: "
                f"measured {c['meas_t']:.3f} s ({c['meas_stall']:.1%} stall), predicted "
                f"{c['pred_t']:.3f} s ({c['pred_stall']:.1%}): {c['err']:+.1%}")

    def report(self, a, results):
        errs = [abs(c["err"]) for _, c in results]
        stall_pp = [abs(c["pred_stall"] - c["meas_stall"]) * 100 for _, c in results]
        med, worst, med_pp = statistics.median(errs), max(errs), statistics.median(stall_pp)
        lines = ["| workers | compute ms/batch | page cache | persistent | pin | measured s/epoch | "
                 "predicted | error | measured stall | predicted stall |",
                 "|---:|---:|---|---|---|---:|---:|---:|---:|---:|"]
        for r, c in results:
            lines.append(f"| {r['workers']} | {r['compute'] * 1e3:.0f} | {r['cache']} | "
                         f"{'yes' if r['persistent'] else 'no'} | {'yes' if r['pin'] else 'no'} | "
                         f"{c['meas_t']:.3f} | {c['pred_t']:.3f} | {c['err']:+.1%} | "
                         f"{c['meas_stall']:.1%} | {c['pred_stall']:.1%} |")
        lines.append("")
        lines.append(f"{len(results)} rows: median |error| {med:.1%} in epoch time (worst "
                     f"{worst:.1%}), median {med_pp:.1f} pp in stall fraction.")
        return "\n".join(lines) + "\n", dict(med=med, worst=worst, med_pp=med_pp)


if __name__ == "__main__":
    Torch.main()
