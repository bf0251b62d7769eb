#!/usr/bin/python3
"""Validates a PyTorch DataLoader over a local cache tier (issue 29's
acceptance: "PyTorch + NVMe tier") against real DataLoader runs on this host
(VALIDATION.md, "PyTorch over a cache tier").

  /usr/bin/python3 scripts/validate_tier.py [--bin build/sim/stallsim]
      [--data DIR] [--items 1200] [--quick] [--out FILE.md]
      [--update VALIDATION.md]

A user who puts a local NVMe cache in front of an object store asks what a
DataLoader does once every item comes from the cache. The real counterpart
is a DataLoader reading a fast local copy of the same files with the same
cores: this host's page cache (the probe's item time includes that copy).
1. JPEGs and the profile exactly as scripts/validate_torch.py makes them
   (the probe, run as docs/pytorch.md tells a user).
2. Each row runs a real torch.utils.data.DataLoader (validate_torch's row:
   ImageFolder, batch 32, shuffle, the row's num_workers, the GPU emulated by
   sleeping the row's compute per batch, the files warm in the page cache).
3. `stallsim run` predicts the user's configuration: the data in an object
   store (first byte 20 ms), no DRAM cache, a tier that holds the whole set
   on a device as fast as the page cache (server.tier.*), 3 epochs; epochs
   2 and 3 are served by the tier and are held to the real epochs.
Before the cores were simulated (main f72e534) a tier hit was costed as the
store's GET in the workers' contention factor, so the workers looked idle
and the prediction was several times too fast.
Exit 0 when every row is within 15 % (the issue's target) and the median
within 10 % (--quick: 50 % and 20 %, as validate_torch.py --quick); 1 when
not; 77 without PyTorch."""

import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402
import validate_torch as vt  # noqa: E402

# The object store behind the tier: what a user of S3 would set (the store
# only serves epoch 1 here; epochs 2+ are what is held to the real runs).
STORE = ["server.storage.kind=object", "server.storage.first_byte_ms=20",
         "server.storage.conn_mb_s=80"]
# The tier: the whole set, on a device as fast as the page cache whose copy
# the probe's item time already holds; no DRAM cache in front of it.
TIER = ["server.cache_gb=0", "server.tier.cache_gb=1000", "server.tier.read_mb_s=1e9",
        "server.tier.latency_ms=0"]


def matrix(quick):
    rows = [dict(workers=w, compute=c, cache="warm", persistent=False, pin=False)
            for w in (0, 1, 2, 4) for c in (0.01, 0.05)]
    if quick:
        rows = [r for r in rows if (r["workers"], r["compute"]) in
                {(0, 0.01), (2, 0.01), (4, 0.05), (1, 0.05)}]
    return rows


def predict(a, scen, r):
    """The tier-served epochs (2 and 3) of `stallsim run` on the row."""
    sets = ["loader.num_workers=%d" % r["workers"], "jobs.0.compute_s_per_batch=%g" % r["compute"],
            "epochs=3"] + STORE + TIER
    return harness.predict_epochs(a.bin, scen, sets)[1:]


def write_scenario(a, profile):
    n, kb, cv = vt.dataset_stats(a.data)
    scen = os.path.join(os.path.dirname(profile), "tier-validation.yaml")
    with open(scen, "w") as f:
        f.write(f"""# written by scripts/validate_tier.py: the harness's training job
name: tier-validation
host: {profile}
epochs: 3
dataset: {{items: {n}, item_kb: {kb:.6g}, item_kb_cv: {cv:.4g}}}
server: {{gpus: 1}}
loader: {{kind: pytorch, cache: lru}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: {vt.BATCH}, compute_s_per_batch: 0.01}}
""")
    return scen


def table_text(table):
    errs = [abs(t[3]) for t in table]
    pp = [abs(t[5] - t[4]) * 100 for t in table]
    lines = ["| workers | compute ms/batch | measured s/epoch | predicted (tier) | error | "
             "measured stall | predicted stall |", "|---:|---:|---:|---:|---:|---:|---:|"]
    for r, mt, pt, err, ms, ps in table:
        lines.append(f"| {r['workers']} | {r['compute'] * 1e3:.0f} | {mt:.3f} | {pt:.3f} | "
                     f"{err:+.1%} | {ms:.1%} | {ps:.1%} |")
    lines += ["", f"{len(table)} rows: median |error| {statistics.median(errs):.1%} in epoch time "
              f"(worst {max(errs):.1%}), median {statistics.median(pp):.1f} pp in stall fraction."]
    return "\n".join(lines) + "\n", statistics.median(errs), max(errs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sim", "stallsim"))
    ap.add_argument("--data", default="/var/tmp/stallsim-torch/data")
    ap.add_argument("--items", type=int, default=1200)
    ap.add_argument("--epochs", type=int, default=2, help="real epochs a row runs")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", help="write the Markdown table here")
    ap.add_argument("--update", metavar="VALIDATION.md",
                    help="put the table between the file's validate_tier:begin/end markers")
    a = ap.parse_args()
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        print("validate_tier: skipped: PyTorch is missing (scripts/setup.sh --torch installs "
              "Debian's python3-torch and python3-torchvision)", file=sys.stderr)
        return 77
    harness.generate(a.bin, a.data, a.items)
    profile = os.path.join(os.path.dirname(os.path.abspath(a.data)), "host-torch.yaml")
    subprocess.run([sys.executable, os.path.join(ROOT, "microbench", "torch", "probe.py"),
                    "--data", a.data, "--out", profile], check=True)
    scen = write_scenario(a, profile)
    table = []
    for r in matrix(a.quick):
        m = vt.measure_row(a, r)
        c = harness.compare_row(m["epochs"], m["batches"], r["compute"], predict(a, scen, r))
        table.append((r, c["meas_t"], c["pred_t"], c["err"], c["meas_stall"], c["pred_stall"]))
        print(f"workers={r['workers']} compute={r['compute'] * 1e3:.0f}ms: measured "
              f"{c['meas_t']:.3f} s, predicted over the tier {c['pred_t']:.3f} s: {c['err']:+.1%}",
              file=sys.stderr, flush=True)
    text, med, worst = table_text(table)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.update and harness.update_markers(a.update, "validate_tier", text, "validate_tier"):
        return 2
    # --quick (ctest torch_tier, CI) holds 4 rows of 300 items on a shared
    # machine to validate_torch --quick's looser bar, which still fails on
    # the defect this harness was written for (f72e534: every row about
    # half the real epoch); the full run holds the targets.
    lim = (0.20, 0.50) if a.quick else (0.10, 0.15)
    ok = med <= lim[0] and worst <= lim[1]
    print(f"validate_tier: targets (median <= {lim[0]:.0%}, every row <= {lim[1]:.0%}) "
          f"{'met' if ok else 'NOT met'}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
