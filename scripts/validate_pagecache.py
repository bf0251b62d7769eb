#!/usr/bin/python3
"""Validates `loader.cache: linux` (and shows `lru` beside it) against the
real page cache of this host, made small by a memory cgroup (issue 16;
VALIDATION.md, "The Linux page cache").

  /usr/bin/python3 scripts/validate_pagecache.py [--bin build/sim/stallsim]
      [--data DIR] [--items 1200] [--epochs 6] [--limits 40,70,100] [--quick]
      [--update VALIDATION.md]

For each memory limit, scripts/pagecache_measure.py reads the data set whole,
in a fresh random order each epoch, inside a cgroup with that limit, and
reports the share of files that were read without touching storage, per
epoch, and how large the page cache was. stallsim then simulates the same
data set (items, mean size and spread of the files) with that cache size,
seeds 1-3, for `linux` and `lru`. The target (issue 16): the mean hit rate of
epochs 2.. within 3 pp of the measured one. Exit 0 met, 1 not met, 77 when
this machine cannot make the cgroup (not root, no memory controller)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402


def simulate(a, d, cache_bytes, policy):
    per_epoch = []
    for seed in (1, 2, 3):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(f"""epochs: {a.epochs}
seed: {seed}
dataset: {{items: {d['files']}, item_kb: {d['mean_kb']:.6g}, item_kb_cv: {d['cv']:.4g}}}
server: {{gpus: 1, cpus: 8, cache_gb: {cache_bytes / 1e9:.9g}}}
loader: {{cache: {policy}}}
jobs: [{{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.01}}]
""")
        out = subprocess.run([a.bin, "run", f.name, "--format", "json"], check=True,
                             capture_output=True, text=True).stdout
        os.unlink(f.name)
        eps = json.loads(out)["variants"][0]["jobs"][0]["epochs"]
        per_epoch.append([e["sim"]["hit_rate"] for e in eps])
    return [statistics.mean(col) for col in zip(*per_epoch)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sim", "stallsim"))
    ap.add_argument("--data", default="/var/tmp/stallsim-pagecache/data")
    ap.add_argument("--items", type=int, default=1200)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--limits", default="40,70,100", help="cgroup memory limits, MB")
    ap.add_argument("--quick", action="store_true", help="one limit (70 MB), 4 epochs")
    ap.add_argument("--update", metavar="VALIDATION.md")
    a = ap.parse_args()
    limits = [float(x) for x in a.limits.split(",")]
    if a.quick:
        limits, a.epochs = [70.0], 4
    harness.generate(a.bin, a.data, a.items)
    rows, worst = [], 0.0
    for lim in limits:
        p = subprocess.run([sys.executable, os.path.join(HERE, "pagecache_measure.py"), "--data",
                            a.data, "--limit-mb", str(lim), "--epochs", str(a.epochs)],
                           capture_output=True, text=True)
        if p.returncode == 77:
            print(p.stderr.strip(), file=sys.stderr)
            return 77
        if p.returncode != 0:
            print(f"validate_pagecache: measuring at {lim} MB failed: {p.stderr}", file=sys.stderr)
            return 1
        d = json.loads(p.stdout)
        meas = [e["hit_rate"] for e in d["epochs"]]
        cache = statistics.mean(e["cache_bytes"] for e in d["epochs"][1:])
        lin = simulate(a, d, cache, "linux")
        lru = simulate(a, d, cache, "lru")
        steady = lambda v: statistics.mean(v[1:])
        err = (steady(lin) - steady(meas)) * 100
        worst = max(worst, abs(err))
        total = d["files"] * d["mean_kb"] * 1e3
        rows.append((lim, cache / total, meas, lin, lru, err, (steady(lru) - steady(meas)) * 100))
        print(f"limit {lim:.0f} MB (page cache {cache / 1e6:.1f} MB = {cache / total:.0%} of the data): "
              f"measured {steady(meas):.3f}, linux {steady(lin):.3f} ({err:+.1f} pp), "
              f"lru {steady(lru):.3f}", file=sys.stderr)
    fmt = lambda v: " ".join(f"{x:.1%}" for x in v)
    lines = [f"Kernel {os.uname().release}, {d['files']} files of {d['mean_kb']:.1f} KB mean "
             f"(cv {d['cv']:.2f}), {a.epochs} epochs; stallsim: mean of seeds 1-3.", "",
             "| cgroup limit | page cache / data | measured hit rate per epoch | `linux` | `lru` | "
             "epochs 2+: `linux` − measured | `lru` − measured |",
             "|---:|---:|---|---|---|---:|---:|"]
    for lim, frac, meas, lin, lru, err, err_lru in rows:
        lines.append(f"| {lim:.0f} MB | {frac:.0%} | {fmt(meas)} | {fmt(lin)} | {fmt(lru)} | "
                     f"{err:+.1f} pp | {err_lru:+.1f} pp |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.update and harness.update_markers(a.update, "validate_pagecache", text, "validate_pagecache"):
        return 2
    ok = worst <= 3.0
    print(f"validate_pagecache: target (epochs 2+ within 3 pp) {'met' if ok else 'NOT met'} "
          f"(worst {worst:.1f} pp)", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
