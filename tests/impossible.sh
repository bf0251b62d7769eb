#!/usr/bin/env bash
# Impossible values are errors, never output (issue 29 item 4; issue 33 S3,
# S4, S6, B4): rates too slow to simulate and data sets with fewer items than
# GPUs are refused at validation (exit 2, the key named); every figure a
# command prints passes the report's one check (exit 1 otherwise); no output
# holds inf, nan or -0.0; a model/simulator difference is marked.
#   tests/impossible.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"
oi=$src/scenarios/openimages.yaml

# ---- rates too slow to simulate: refused with the key (S3) ----
for kv in server.storage.read_iops=1e-300 server.storage.read_mb_s=1e-300 \
  server.network.gbit_s=1e-300 jobs.0.gpu_items_per_s=1e-300 server.tier.read_mb_s=1e-300; do
  key=${kv%%=*}
  for cmd in check run; do
    expect 2 "key '$key' = 1e-300" -- "$bin" $cmd "$oi" --set "$kv"
  done
done
# An object store's own rates too (a kind's rows, found by their unit).
for kv in server.storage.conn_mb_s=1e-300 server.storage.max_get_s=1e-300; do
  expect 2 "key '${kv%%=*}' = 1e-300" -- "$bin" run "$src/scenarios/imagenet-s3.yaml" --set "$kv"
done
# The same through a sweep (exit 2 before any row) and advise.
expect 2 "key 'server.storage.read_iops' = 1e-300" -- "$bin" sweep "$oi" --model-only \
  --vary server.storage.read_iops=1e-300,100 -o "$tmp/s.csv"
# Slow but representable: accepted.
expect 0 "" -- "$bin" check "$oi" --set server.storage.read_mb_s=0.001
expect 0 "" -- "$bin" check "$oi" --set server.storage.read_iops=0.01

# ---- degenerate data sets (S4): fewer items than a job's GPUs ----
expect 2 "dataset.items = 100 is fewer than the 512 GPUs of job 'resnet18'" -- \
  "$bin" run "$oi" --set dataset.items=100 --set server.count=64 --set jobs.0.gpus=512
expect 2 "dataset.items = 3 is fewer than the 8 GPUs" -- \
  "$bin" run "$oi" --set dataset.items=3 --set dataset.item_kb=4000000

finish impossible
