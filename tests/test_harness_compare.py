#!/usr/bin/env python3
"""The validation harnesses' one comparison path (issue 36): a row through
`stallsim compare` (validation.predict.compare_measured) gives the figures the
harness's own arithmetic gave (validation.predict.compare_row over `stallsim run`'s
JSON): the same mean epoch times, error and stall fractions, within the
JSON's 9 significant digits. Synthetic measured rows over validate_torch's
scenario shape, so no PyTorch is needed: deterministic.
  tests/test_harness_compare.py SRCDIR STALLSIM"""

import os
import sys
import tempfile

src, stallsim = sys.argv[1], sys.argv[2]
sys.path.insert(0, src)
from validation import predict as harness  # noqa: E402

tmp = tempfile.mkdtemp()
scen = os.path.join(tmp, "torch-validation.yaml")
with open(scen, "w") as f:
    f.write("""name: torch-validation
epochs: 2
dataset: {items: 1200, item_kb: 110, item_kb_cv: 0.3}
server: {gpus: 1, cpus: 4, cache_gb: 1000}
prep: {decode_ms_per_item: 2, decode_ms_per_mb: 5}
loader: {kind: pytorch, cache: lru}
jobs:
  - {name: train, gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.01}
""")
rows = [(0, 0.01, [5.31, 4.97]), (2, 0.05, [2.2, 2.05]), (4, 0.2, [7.9, 7.71]),
        (1, 0.01, [3.0, 3.3])]
n = 0
for workers, compute, epochs in rows:
    sets = [f"loader.num_workers={workers}", f"jobs.0.compute_s_per_batch={compute:g}",
            "loader.cache=none", "server.storage.latency_ms=0", "server.storage.read_mb_s=1e9"]
    batches = 38
    old = harness.compare_row(epochs, batches, compute, harness.predict_epochs(stallsim, scen, sets))
    new = harness.compare_measured(stallsim, scen, sets, epochs, batches, compute, 32,
                                   os.path.join(tmp, "measured.yaml"))
    for k in ("meas_t", "pred_t", "err", "meas_stall", "pred_stall"):
        assert abs(old[k] - new[k]) <= 1e-7 * max(1.0, abs(old[k])), (workers, compute, k, old, new)
        n += 1
print(f"test_harness_compare: {n} figures the same by both paths")
