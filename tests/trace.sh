#!/usr/bin/env bash
# stallsim run --trace: a valid Chrome trace (tests/trace_check.py checks the
# JSON, every event, tracks that do not overlap, and that over whole epochs
# the GPU waits sum to the reported prep and fetch stalls), for every loader
# kind, record shards, a tier, partitioned caching and coordinated prep; the
# window; determinism; and the flags' errors.
# usage: trace.sh STALLSIM SOURCE_DIR
set -u
bin=$1
src=$(cd "$2" && pwd)
py=/usr/bin/python3
[ -x $py ] || { echo "trace: SKIP: no /usr/bin/python3 to parse the JSON"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
cd "$src" || exit 1
small=tests/data/small.yaml

# Whole epochs: the waits are the reported stalls, in every shape of the engine.
while IFS= read -r args; do
  [ -n "$args" ] || continue
  if "$bin" run $small $args --format json --trace "$tmp/t.json" --trace-epochs all \
    --trace-iters all >"$tmp/r.json" && out=$($py tests/trace_check.py "$tmp/t.json" "$tmp/r.json" 2>&1); then
    ok
  else
    bad "run $args --trace (whole epochs): $out"
  fi
done <<'ARGS'
--epochs 2
--set loader.kind=pytorch --set loader.num_workers=3 --set loader.pin_memory=true
--set loader.kind=pytorch --set loader.num_workers=0
--set dataset.shard_items=64 --set loader.open_shards=4
--set loader.kind=pytorch --set loader.num_workers=2 --set dataset.shard_items=64 --set loader.shuffle_buffer=500
--set server.count=2 --set jobs.0.gpus=4 --set loader.dist_cache=partitioned --set loader.cache=minio --variant base
--set server.tier.cache_gb=1 --variant base
--set loader.shuffle_buffer=1000 --variant minio
ARGS
args="scenarios/hpsearch.yaml --set dataset.items=20000 --epochs 2"
"$bin" run $args --format json --trace "$tmp/t.json" --trace-epochs all --trace-iters all >"$tmp/r.json" \
  && out=$($py tests/trace_check.py "$tmp/t.json" "$tmp/r.json" 2>&1) && grep -q "^trace_check: 32 whole" <<<"$out" \
  && ok || bad "hpsearch (8 jobs, coordinated prep): $out"

# The default window: epoch 1, iterations 1-20 of each variant, one process each.
"$bin" run $small --trace "$tmp/d.json" >/dev/null && out=$($py - "$tmp/d.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
procs = sorted(e["args"]["name"] for e in ev if e["name"] == "process_name")
assert procs == ["variant base", "variant minio"], procs
assert d["otherData"]["epochs"] == "1-1" and d["otherData"]["iterations"] == "1-20", d["otherData"]
for e in ev:
    a = e.get("args", {})
    if "epoch" in a:
        assert a["epoch"] == 1 and 1 <= a["batch"] <= 20, e
gpu = [e for e in ev if e.get("cat") == "gpu"]
assert len(gpu) == 40, len(gpu)
names = {e["name"] for e in ev}
for want in ("storage 1: requests in flight", "staged batches (net)", "cache of server 1: GB held",
             "hit rate so far in the epoch (net)", "wait: fetch", "wait: prep"):
    assert want in names, want
cats = {e.get("cat") for e in ev}
assert "prep" in cats
PY
) && ok || bad "default window: $out"
out=$($py tests/trace_check.py "$tmp/d.json" 2>&1) && ok || bad "default window well formed: $out"

# A window: epoch 2, iterations 5-9, one variant.
"$bin" run $small --trace "$tmp/w.json" --trace-epochs 2 --trace-iters 5-9 --trace-variant minio >/dev/null \
  && out=$($py - "$tmp/w.json" <<'PY'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
assert sorted(e["args"]["name"] for e in ev if e["name"] == "process_name") == ["variant minio"]
b = sorted({(e["args"]["epoch"], e["args"]["batch"]) for e in ev if "epoch" in e.get("args", {})})
assert b == [(2, k) for k in range(5, 10)], b
PY
) && ok || bad "window 2 / 5-9 / minio: $out"

# Two servers, partitioned caching: each server's cache, and the NICs' remote reads.
"$bin" run $small --set server.count=2 --set jobs.0.gpus=4 --set loader.dist_cache=partitioned \
  --set loader.cache=minio --variant base --trace "$tmp/p.json" --trace-epochs 2 >/dev/null \
  && out=$($py - "$tmp/p.json" <<'PY'
import json, sys
names = {e["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "C"}
for want in ("cache of server 1: GB held", "cache of server 2: GB held",
             "NIC of server 1: transfers in flight", "NIC of server 2: transfers in flight"):
    assert want in names, (want, names)
PY
) && ok || bad "partitioned caching's counters: $out"

# Same scenario and seed: the same bytes.
"$bin" run $small --trace "$tmp/d2.json" >/dev/null && cmp -s "$tmp/d.json" "$tmp/d2.json" && ok \
  || bad "two runs gave different traces"
"$bin" run $small --trace "$tmp/d3.json" --set seed=8 >/dev/null && ! cmp -s "$tmp/d.json" "$tmp/d3.json" \
  && ok || bad "another seed gave the same trace"
# The report on stdout is the same with and without a trace.
[ "$("$bin" run $small --format csv)" == "$("$bin" run $small --format csv --trace "$tmp/x.json")" ] \
  && ok || bad "--trace changed the results"

# Errors.
expect 2 "add --trace FILE.json" "$bin" run $small --trace-epochs 1
expect 2 "add --trace FILE.json" "$bin" run $small --trace-variant base
expect 2 "expected A-B" "$bin" run $small --trace "$tmp/e.json" --trace-iters 5-2
expect 2 "expected A-B" "$bin" run $small --trace "$tmp/e.json" --trace-epochs 0
expect 2 "expected A-B" "$bin" run $small --trace "$tmp/e.json" --trace-iters x
expect 2 "drop --model-only" "$bin" run $small --trace "$tmp/e.json" --model-only
expect 2 "is the scenario itself" "$bin" run $small --trace $small
cp $small "$tmp/s.yaml"
ln "$tmp/s.yaml" "$tmp/link.json"
expect 2 "is the scenario itself" "$bin" run "$tmp/s.yaml" --trace "$tmp/link.json"
expect 2 "not a variant this run runs" "$bin" run $small --variant base --trace "$tmp/e.json" --trace-variant minio
expect 2 "the traced variants run 2 epochs; the trace would be empty" "$bin" run $small --trace "$tmp/e.json" --trace-epochs 3-4
expect 2 "the trace would be empty" "$bin" run $small --trace "$tmp/e.json" --trace-iters 158-200
"$bin" run $small --trace "$tmp/last.json" --trace-iters 157-200 --trace-epochs 2 >/dev/null \
  && grep -q '"name":"compute batch 157"' "$tmp/last.json" && ok || bad "the last iteration's window"
expect 2 "not a regular file" "$bin" run $small --trace /dev/null
expect 2 "No such file or directory (the folder" "$bin" run $small --trace "$tmp/no/such/dir/t.json"
expect 2 "add --trace FILE.json" "$bin" check $small --trace-iters 3
[ ! -e "$tmp/e.json" ] && ok || bad "a refused run wrote its trace"
finish trace
