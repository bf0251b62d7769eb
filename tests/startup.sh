#!/usr/bin/env bash
# Before the first step (issue 56): the start-up phase in every output (the
# text's first-step table, CSV's and JSON's first_step_s, startup_s,
# startup_requests, startup_throttled), its keys refused with their position
# when wrong, and readers left idle by fewer shards than ranks x workers
# warned with the counts and the fix, never where every reader has a shard.
#   tests/startup.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"
storm=$src/scenarios/launch-storm.yaml

# ---- the first-step table and its columns ----
"$bin" run "$storm" --variant one-rank >"$tmp/t.txt"
has "$tmp/t.txt" '^variant +job +first_step_s +\(sim\) +startup_s +\(sim\) +requests +throttled +resume_s$' \
  '^one-rank +vlm +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +2002 +0 +0\.000$'
"$bin" run "$storm" --variant every-worker --format csv >"$tmp/t.csv"
has "$tmp/t.csv" ',first_step_s,startup_s,startup_requests,startup_throttled,startup_lists,startup_heads,startup_gets,startup_approximate,resume_s,checkpoint_s,vs_model,model_differs$'
check "storm: 512 resolvers x 2002 requests, some refused (csv)" 'awk -F, "NR == 1 {
  for (i = 1; i <= NF; i++) c[\$i] = i; next }
  \$c[\"source\"] == \"sim\" { ok = \$c[\"startup_requests\"] == 1025024 && \$c[\"startup_throttled\"] > 0 &&
  \$c[\"first_step_s\"] > \$c[\"startup_s\"] && \$c[\"startup_s\"] >= 1025024 / 5500 }
  END { exit !ok }" "$tmp/t.csv"'
"$bin" run "$storm" --variant every-rank --format json >"$tmp/t.json"
has "$tmp/t.json" '"startup_requests": 256256' '"startup_lists": 256, "startup_heads": 256000, "startup_gets": 0' '"first_step_s": [0-9.]+' '"startup_approximate": true'
# No start-up asked: none counted, the first step still the first batch's wait.
"$bin" run "$src/scenarios/openimages.yaml" --set dataset.items=20000 --variant dali \
  --format csv >"$tmp/o.csv"
check "no start-up: startup_s 0, first_step_s > 0" 'awk -F, "NR == 1 {
  for (i = 1; i <= NF; i++) c[\$i] = i; next }
  \$c[\"epoch\"] == 1 { if (\$c[\"startup_s\"] != 0 || \$c[\"startup_requests\"] != 0 ||
  !(\$c[\"first_step_s\"] > 0)) bad = 1 } END { exit bad }" "$tmp/o.csv"'

# ---- advise over the start-up: a first-step target read in the first epoch ----
"$bin" advise "$storm" --variant every-worker --vary startup.resolve=every-worker,every-rank,one-rank \
  --vary server.storage.prefixes=1,4,16 --target 'first_step_s<=30' \
  --minimize server.storage.prefixes >"$tmp/adv.txt" 2>&1
has "$tmp/adv.txt" "^target: first_step_s<=30 \(model, the run's first epoch for the start-up's metrics" \
  '^recommendation: startup.resolve=one-rank, server.storage.prefixes=1 ' \
  '^  simulator: .*: meets the target$'
expect 2 "unknown metric" -- "$bin" advise "$storm" --vary server.storage.prefixes=1,4 \
  --target 'first_batch_s<=3'

# ---- its keys: a wrong value is refused with the key ----
expect 2 "startup.resolve" -- "$bin" run "$storm" --set startup.resolve=every-node
expect 2 "startup.threads" -- "$bin" run "$storm" --set startup.threads=0
expect 2 "startup.metadata_mb" -- "$bin" run "$storm" --set startup.metadata_mb=-1

# ---- readers left idle: 16 shards for 8 ranks x 8 workers ----
cat >"$tmp/idle.yaml" <<'Y'
epochs: 1
dataset: {items: 16000, item_kb: 100, shard_items: 1000}
server: {cpus: 16, gpus: 8, cache_gb: 0}
loader: {kind: pytorch, num_workers: 8}
jobs: [{name: j, gpus: 8, batch_per_gpu: 32, compute_s_per_batch: 0.01}]
Y
"$bin" run "$tmp/idle.yaml" >/dev/null 2>"$tmp/idle.err"
has "$tmp/idle.err" "idle.yaml:2:52: warning: job 'j': 16 shards for 64 readers \(8 GPUs x 8 each\): 48 workers idle, and the busiest reads 1 shard\(s\); cut at least 64 shards \(dataset.shard_items <= 250\)"
# 64 shards for 64 readers, or the pool's lanes (one stream): no warning.
"$bin" run "$tmp/idle.yaml" --set dataset.shard_items=250 >/dev/null 2>"$tmp/ok.err"
check "64 shards: no idle warning" '! grep -q "workers idle" "$tmp/ok.err"'
"$bin" run "$tmp/idle.yaml" --set loader.kind=pool --set loader.num_workers=0 >/dev/null 2>"$tmp/pool.err" ||
  "$bin" run "$tmp/idle.yaml" >/dev/null 2>&1
check "pool lanes: no idle warning" '! grep -q "workers idle" "$tmp/pool.err"'
# Streamed (loader.reader: stream, shard i to reader i mod 64): the idle
# workers' share falls on the others and the epoch is slower.
ep() { "$bin" run "$tmp/idle.yaml" --set loader.reader=stream "$@" --format csv 2>/dev/null |
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $4 == "sim" { print $c["epoch_s"] }'; }
idle=$(ep) fed=$(ep --set dataset.shard_items=250)
check "idle readers: the epoch slower ($idle s against $fed s)" "awk 'BEGIN { exit !($idle > 1.2 * $fed) }'"

finish startup
