"""Validates a PyTorch DataLoader over a local cache tier (issue 29's
acceptance: "PyTorch + NVMe tier") against real DataLoader runs on this host
(docs/validation/tier.md).

  python3 -m validation.tier [--bin build/sim/stallsim] [--data DIR]
      [--items 1200] [--quick] [--out FILE.md] [--page FILE.md]

A user who puts a local NVMe cache in front of an object store asks what a
DataLoader does once every item comes from the cache. The real counterpart
is a DataLoader reading a fast local copy of the same files with the same
cores: this host's page cache (the probe's item time includes that copy).
1. JPEGs and the profile exactly as validation/torch.py makes them
   (the probe, run as docs/pytorch.md tells a user).
2. Each row runs a real torch.utils.data.DataLoader (validation.torch's row:
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
within 10 % (--quick: 50 % and 20 %, as validation.torch --quick); 1 when
not; 77 without PyTorch."""

import os
import statistics

from validation import predict as pr
from validation import torch as vt
from validation.base import Harness, Target
from validation.fixtures import data as fx

# The object store behind the tier: what a user of S3 would set (the store
# only serves epoch 1 here; epochs 2+ are what is held to the real runs).
STORE = ["server.storage.kind=object", "server.storage.first_byte_ms=20",
         "server.storage.conn_mb_s=80"]
# The tier: the whole set, on a device as fast as the page cache whose copy
# the probe's item time already holds; no DRAM cache in front of it.
TIER = ["server.cache_gb=0", "server.tier.cache_gb=1000", "server.tier.read_mb_s=1e9",
        "server.tier.latency_ms=0"]


def tier_rows(quick):
    rows = [dict(workers=w, compute=c, cache="warm", persistent=False, pin=False)
            for w in (0, 1, 2, 4) for c in (0.01, 0.05)]
    if quick:
        rows = [r for r in rows if (r["workers"], r["compute"]) in
                {(0, 0.01), (2, 0.01), (4, 0.05), (1, 0.05)}]
    return rows


def write_scenario(a, profile):
    n, kb, cv = fx.dataset_stats(a.data)
    scen = os.path.join(os.path.dirname(profile), "tier-validation.yaml")
    with open(scen, "w") as f:
        f.write(f"""# written by validation.tier: the harness's training job
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


class Tier(Harness):
    name = "tier"
    title = "PyTorch over a cache tier (server.tier.*) against a DataLoader over a fast local copy"
    needs = ("torch", "torchvision")
    # --quick (ctest torch_tier, CI) holds 4 rows of 300 items on a shared
    # machine to validation.torch --quick's looser bar, which still fails on
    # the defect this harness was written for (f72e534: every row about
    # half the real epoch); the full run holds the targets.
    targets = [vt.TARGETS[0], Target("every row", "worst", 0.15, quick=0.50)]

    def setup(self, a):
        self.scen = write_scenario(a, vt.probed(a))

    def rows(self, a):
        return tier_rows(a.quick)

    def run_row(self, a, r):
        return vt.loader_row(a, r)

    def predict(self, a, r, m):
        """The tier-served epochs (2 and 3) of `stallsim run` on the row."""
        sets = ["loader.num_workers=%d" % r["workers"],
                "jobs.0.compute_s_per_batch=%g" % r["compute"], "epochs=3"] + STORE + TIER
        sim = pr.predict_epochs(a.bin, self.scen, sets)[1:]
        return pr.compare_row(m["epochs"], m["batches"], r["compute"], sim)

    def row_line(self, r, c):
        return (f"workers={r['workers']} compute={r['compute'] * 1e3:.0f}ms: measured "
                f"{c['meas_t']:.3f} s, predicted over the tier {c['pred_t']:.3f} s: {c['err']:+.1%}")

    def report(self, a, results):
        errs = [abs(c["err"]) for _, c in results]
        pp = [abs(c["pred_stall"] - c["meas_stall"]) * 100 for _, c in results]
        lines = ["| workers | compute ms/batch | measured s/epoch | predicted (tier) | error | "
                 "measured stall | predicted stall |", "|---:|---:|---:|---:|---:|---:|---:|"]
        for r, c in results:
            lines.append(f"| {r['workers']} | {r['compute'] * 1e3:.0f} | {c['meas_t']:.3f} | "
                         f"{c['pred_t']:.3f} | {c['err']:+.1%} | {c['meas_stall']:.1%} | "
                         f"{c['pred_stall']:.1%} |")
        lines += ["", f"{len(results)} rows: median |error| {statistics.median(errs):.1%} in epoch "
                  f"time (worst {max(errs):.1%}), median {statistics.median(pp):.1f} pp in stall "
                  "fraction."]
        return "\n".join(lines) + "\n", dict(med=statistics.median(errs), worst=max(errs))


if __name__ == "__main__":
    Tier.main()
