#!/usr/bin/env bash
# Goodput in `run`'s outputs (sim/report/goodout.c): the same figures in
# text, CSV, JSON and HTML where a variant checkpoints or fails, none where
# none does; the dollars per useful epoch recomputed from the JSON's own cost
# and epochs (the run's dollars an hour x useful_epoch_s); a figure that
# does not exist (no work kept, no prices) empty in CSV, absent in JSON, "-"
# in text and HTML; the CSV read by python/stallsim's load_run.
# usage: goodout.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"

cat >g.yaml <<'YAML'
epochs: 2
seed: 3
dataset: {items: 4000, item_kb: 100}
server: {gpus: 2, cpus: 8, cache_gb: 1, storage: {kind: fixed, read_mb_s: 500}}
loader: {kind: pytorch, num_workers: 2}
jobs: [{gpus: 2, batch_per_gpu: 32, compute_s_per_batch: 0.05,
        checkpoint: {gb: 1, every_steps: 20, writers: 2}}]
failures: {mtbf_gpu_h: 2, restart_s: 30, horizon_h: 24}
prices: {gpu_hour: 2, core_hour: 0.05}
variants:
  base: {}
  nockpt: {jobs.0.checkpoint.every_steps: 0}
  calm: {failures.mtbf_gpu_h: 0, jobs.0.checkpoint.every_steps: 0}
YAML

# Nothing of goodput where nothing asks for it.
"$bin" run "$small" --format csv | head -1 | grep -q goodput && bad "small.yaml's CSV has goodput" || ok
"$bin" run "$small" --format json | grep -q '"goodput"' && bad "small.yaml's JSON has goodput" || ok
"$bin" run "$small" --format html | grep -q '<h2>Goodput</h2>' && bad "small.yaml's page has goodput" || ok

for f in csv json html text; do
  "$bin" run g.yaml --format $f >g.$f 2>err.txt || bad "run --format $f: $(cat err.txt)"
done
"$bin" run g.yaml --format csv --set prices.gpu_hour=0 --set prices.core_hour=0 >free.csv 2>err.txt \
  || bad "unpriced run: $(cat err.txt)"
"$bin" run g.yaml --set prices.gpu_hour=0 --set prices.core_hour=0 >free.text 2>err.txt

out=$(python3 - <<'PY'
import csv, json, math
cols = ["goodput", "useful_epoch_s", "cost_per_useful_epoch_usd", "goodput_restarts",
        "goodput_lost_s", "goodput_restart_s", "goodput_checkpoint_s", "goodput_best_every_steps"]
keys = ["goodput", "useful_epoch_s", "cost_per_useful_epoch_usd", "restarts", "lost_s",
        "restart_s", "checkpoint_s", "best_every_steps"]
rows = list(csv.DictReader(open("g.csv")))
head = open("g.csv").readline().strip().split(",")
bad = []
if head[-len(cols):] != cols or head.index("model_differs") != len(head) - len(cols) - 1:
    bad.append(f"CSV columns: {head[-9:]}")
doc = json.load(open("g.json"))
for v in doc["variants"]:
    job = v["jobs"][0]
    mine = [r for r in rows if r["variant"] == v["name"]]
    if v["name"] == "calm":
        # asks for nothing: no JSON object, but the CSV's columns have its figures
        if "goodput" in job: bad.append("calm: a goodput object")
        if any(r["goodput"] == "" for r in mine): bad.append("calm: empty goodput in CSV")
        continue
    g = job["goodput"]
    for r in mine:
        src = g[r["source"]]
        for c, k in zip(cols, keys):
            if (r[c] == "") != (k not in src):
                bad.append(f"{v['name']} {r['source']} {c}: CSV {r[c]!r}, JSON {src.get(k)}")
            elif r[c] != "" and not math.isclose(float(r[c]), src[k], rel_tol=1e-6, abs_tol=1e-9):
                bad.append(f"{v['name']} {r['source']} {c}: CSV {r[c]}, JSON {src[k]}")
    # dollars per useful epoch: the run's dollars over its wall, x useful_epoch_s (sim)
    sim = g["sim"]
    if "useful_epoch_s" in sim:
        wall = sum(e["sim"]["epoch_s"] for e in job["epochs"])
        want = job["cost_usd"]["run"]["total"] / wall * sim["useful_epoch_s"]
        if not math.isclose(want, sim["cost_per_useful_epoch_usd"], rel_tol=1e-6):
            bad.append(f"{v['name']}: cost per useful epoch {sim['cost_per_useful_epoch_usd']}, want {want}")
        if not 0 < sim["goodput"] <= 1: bad.append(f"{v['name']}: goodput {sim['goodput']}")
    elif v["name"] != "nockpt":
        bad.append(f"{v['name']}: no useful_epoch_s")
nock = [r for r in rows if r["variant"] == "nockpt" and r["source"] == "sim"]
if not nock or any(r["useful_epoch_s"] != "" or r["cost_per_useful_epoch_usd"] != "" for r in nock):
    bad.append("nockpt: the simulator keeps nothing of the horizon, yet a useful epoch")
free = list(csv.DictReader(open("free.csv")))
if not free or any(r["cost_per_useful_epoch_usd"] != "" or r["useful_epoch_s"] == "" for r in free
                   if r["variant"] == "base"):
    bad.append("unpriced: a cost per useful epoch, or no useful epoch")
# the page: the base row's simulated goodput as the JSON has it
page = open("g.html").read()
pct = f'{100 * doc["variants"][0]["jobs"][0]["goodput"]["sim"]["goodput"]:.1f}%'
sec = page.split("<h2>Goodput</h2>", 1)
if len(sec) < 2 or f"<td class=\"name\">base</td><td class=\"name\">job</td>" not in sec[1] \
        or pct not in sec[1].split("</table>")[0]:
    bad.append(f"HTML: no goodput table with base's {pct}")
print("\n".join(bad))
PY
)
[ -z "$out" ] && ok || bad "$out"

# Text: the dollars column where priced, "-" where nothing is kept; none unpriced.
grep -qE '^base +job +[0-9.]+% +[0-9.]+% .* [0-9.]+$' g.text && ok || bad "text: base's row: $(grep '^base ' g.text)"
grep -q 'usd/useful' g.text && grep -qE '^nockpt .* -$' g.text && ok || bad "text: no usd/useful column or nockpt's '-'"
grep -q 'usd/useful' free.text && bad "unpriced text has usd/useful" || ok

# load_run reads it (pandas: Debian's python).
if /usr/bin/python3 -c 'import pandas' 2>/dev/null; then
  PYTHONPATH=$src/python /usr/bin/python3 -c '
import math, sys
from stallsim.data import load_run
r = load_run("g.csv").df
n = r[(r.variant == "nockpt") & (r.source == "sim")]
assert n.useful_epoch_s.isna().all() and (r.goodput <= 1).all(), r' 2>err.txt && ok || bad "load_run: $(tail -3 err.txt)"
else
  echo "goodout: load_run check skipped: no pandas in /usr/bin/python3"
fi
finish goodout
