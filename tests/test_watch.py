#!/usr/bin/env python3
"""stallsim.watch without PyTorch: a plain iterable that sleeps W before each
batch and a loop body that sleeps S. Sleeps last at least as long as asked,
never less, so the test asserts only what cannot flake on a busy host: the
structure (epochs, iterations, batch size, the profile's keys), that every
wait >= W and every step >= S, that each epoch is exactly its waits plus its
steps, and the differential passes' lower bounds (T >= W + S, T_prep >= W +
S, T_gpu >= S). Then `stallsim compare` reads the profile it wrote (exit 0,
valid JSON with the same epoch times).
  tests/test_watch.py SRCDIR STALLSIM"""

import json
import os
import subprocess
import sys
import tempfile
import time

src, stallsim = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "python"))
from stallsim import watch as W  # noqa: E402

WAIT, STEP, N, BATCH = 0.004, 0.002, 12, 8
assert "torch" not in sys.modules


class Slow:
    """Re-iterable (the same order each time), a batch of BATCH items after WAIT."""

    def __iter__(self):
        for i in range(N):
            time.sleep(WAIT)
            yield [i] * BATCH


tmp = tempfile.mkdtemp()
out = os.path.join(tmp, "measured.yaml")
seen = []
for epoch in range(2):
    for b in W.watch(Slow(), out=out, differential=5):
        seen.append(b[0])
        time.sleep(STEP)
rec = W.recorder(out)
# 3 passes of 5 in the first epoch, then two whole epochs.
assert len(seen) == 3 * 5 + 2 * N, len(seen)
assert seen[:5] == list(range(5)) and seen[5:10] == list(range(5)), seen[:10]
assert seen[10:15] == [4] * 5, seen[10:15]  # T_gpu: the last batch held
assert len(rec.epochs) == 2 and rec.batch == BATCH
for e in rec.epochs:
    assert e["iterations"] == N and e["complete"], e
    assert e["epoch_ns"] == e["wait_ns"] + e["step_ns"]
    assert e["wait_min_ns"] >= WAIT * 1e9, e["wait_min_ns"]
    assert e["step_ns"] >= N * STEP * 1e9
d = rec.differential
assert d["iterations"] == 4  # 5, the first quarter (1) left out
assert d["t_ms"] >= (WAIT + STEP) * 1e3 and d["t_prep_ms"] >= (WAIT + STEP) * 1e3, d
assert d["t_gpu_ms"] >= STEP * 1e3, d
text = open(out).read()
for key in ("measured_version: 1", "batch: 8", "  1: {iterations: 12", "  2: {iterations: 12",
            "differential:", "t_gpu_ms:"):
    assert key in text, (key, text)

# A loop that leaves early: the epoch is marked incomplete.
W.reset()
for i, b in enumerate(W.watch(Slow(), out=out)):
    if i == 2:
        break
rec = W.recorder(out)
assert rec.epochs[0]["iterations"] == 3 and not rec.epochs[0]["complete"], rec.epochs
assert "complete: false" in open(out).read()

# An empty pass is no epoch, and writes nothing.
empty = os.path.join(tmp, "empty.yaml")
for b in W.watch([], out=empty):
    pass
assert W.recorder(empty).epochs == [] and not os.path.exists(empty)

# Per rank: RANK names the file of a rank > 0.
assert W.rank_path("m.yaml", 0) == "m.yaml" and W.rank_path("m.yaml", 3) == "m.rank3.yaml"
assert W.batch_items({"x": [[1, 2]] * 5}) == 5 and W.batch_items(object()) == 0

# The two-epoch profile, written again, through stallsim compare.
W.reset()
for epoch in range(2):
    for b in W.watch(Slow(), out=out):
        time.sleep(STEP)
scen = os.path.join(tmp, "s.yaml")
with open(scen, "w") as f:
    f.write(f"dataset: {{items: {N * BATCH}, item_kb: 100}}\n"
            f"jobs: [{{gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: {STEP}}}]\n")
r = subprocess.run([stallsim, "compare", out, scen, "--format", "json"], capture_output=True,
                   text=True)
assert r.returncode == 0, r.stderr
j = json.loads(r.stdout)
meas = [e["measured"]["epoch_s"] for e in j["epochs"]]
want = [e["epoch_ns"] / 1e9 for e in W.recorder(out).epochs]
assert len(meas) == 2 and all(abs(a - b) <= 1e-6 * b for a, b in zip(meas, want)), (meas, want)
assert j["epochs"][0]["predicted"]["batches"] == N
print("test_watch: ok")
