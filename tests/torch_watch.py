#!/usr/bin/env python3
"""stallsim.watch on a real torch DataLoader (validation; exit 77 without
PyTorch): a map-style Dataset whose items sleep ITEM_S each, 2 workers, a
step that sleeps STEP_S. Asserts what cannot flake: the batch size read from
the collated tensors, the iterations, each epoch = its waits + its steps,
the differential passes' T_prep served by the twin DataLoader over the same
items (the method named), T_gpu >= the step, and that `stallsim compare`
reads the profile (exit 0, JSON).
  tests/torch_watch.py SRCDIR STALLSIM"""

import json
import os
import subprocess
import sys
import tempfile
import time

src, stallsim = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "python"))
try:
    import torch
    from torch.utils.data import DataLoader, Dataset
except ImportError:
    print("torch_watch: skipped: PyTorch is missing (scripts/setup.sh --torch)")
    sys.exit(77)
from stallsim import watch as W  # noqa: E402

ITEM_S, STEP_S, ITEMS, BATCH = 0.002, 0.005, 192, 16


class Sleepy(Dataset):
    def __len__(self):
        return ITEMS

    def __getitem__(self, i):
        time.sleep(ITEM_S)
        return torch.full((3, 8, 8), float(i)), i


loader = DataLoader(Sleepy(), batch_size=BATCH, shuffle=True, num_workers=2)
tmp = tempfile.mkdtemp()
out = os.path.join(tmp, "measured.yaml")
for epoch in range(2):
    for images, labels in W.watch(loader, out=out, differential=8):
        time.sleep(STEP_S)
rec = W.recorder(out)
assert rec.batch == BATCH, rec.batch
assert [e["iterations"] for e in rec.epochs] == [ITEMS // BATCH] * 2, rec.epochs
for e in rec.epochs:
    assert e["epoch_ns"] == e["wait_ns"] + e["step_ns"] and e["complete"]
    assert e["step_ns"] >= (ITEMS // BATCH) * STEP_S * 1e9
d = rec.differential
assert d["iterations"] == 6 and "twin DataLoader" in d["t_prep_method"], d
assert d["t_gpu_ms"] >= STEP_S * 1e3 and d["t_ms"] >= STEP_S * 1e3, d
scen = os.path.join(tmp, "s.yaml")
with open(scen, "w") as f:
    f.write(f"dataset: {{items: {ITEMS}, item_kb: 1}}\nserver: {{cpus: 2}}\n"
            f"loader: {{kind: pytorch, num_workers: 2}}\n"
            f"jobs: [{{gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: {STEP_S}}}]\n")
r = subprocess.run([stallsim, "compare", out, scen, "--format", "json"], capture_output=True,
                   text=True)
assert r.returncode == 0, r.stderr
j = json.loads(r.stdout)
assert j["split_ms"]["measured"]["t_gpu"] > 0 and len(j["epochs"]) == 2, j
print("torch_watch: ok; compare said:", j["explain"]["text"])
