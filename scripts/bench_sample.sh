#!/usr/bin/env bash
# Sampled simulation (docs/benchmarks.md, "Cache-size curves and sampled runs"): ImageNet-like items (114 KB,
# cv 0.6) on one 8-GPU server, an LRU cache of a fixed share of the data,
# 3 epochs, at 1e7, 1e8 (item by item and sampled) and 1e9 items (sampled).
# Each case R times (default 3): median wall s, median peak RSS (GNU time),
# and the sampled run's largest error over the epochs against the exact run
# of the same size (hit rate in pp, epoch time in %).
# usage: scripts/bench_sample.sh [BUILD_DIR] [REPS] [CACHE_SHARE] [RATE]
# EXACT_REPS=K: K runs of the 1e8 item-by-item case (default REPS; it takes
# the longest by far).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/sim/stallsim
reps=${2:-3}
share=${3:-0.8}
rate=${4:-0.01}
[ -x "$bin" ] || { echo "bench_sample.sh: build first: $bin not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/s.yaml" <<'YAML'
name: sampled-bench
seed: 1
epochs: 3
dataset: {items: 10000000, item_kb: 114, item_kb_cv: 0.6}
server: {count: 1, cpus: 24, gpus: 8, cache_gb: 1, storage: {read_mb_s: 525, latency_ms: 0.1, queue_depth: 32}}
prep: {decode_ms_per_mb: 20, augment_ms: 0.9}
jobs: [{name: resnet50, gpus: 8, batch_per_gpu: 256, gpu_items_per_s: 700, prefetch_batches: 2}]
loader: {cache: lru}
YAML
. scripts/bench_lib.sh # (the repository root is the working folder)
# case ITEMS MODE(exact|sampled): prints "wall rss_kb" medians; the CSV of the last run in $tmp/ITEMS.MODE.csv
case_() {
  local n=$1 mode=$2 above r=$reps
  [ "$n" = 100000000 ] && [ "$mode" = exact ] && r=${EXACT_REPS:-$reps}
  local gb
  gb=$(awk -v n="$n" -v s="$share" 'BEGIN{printf "%.6g", n * 114e3 * s / 1e9}')
  [ "$mode" = exact ] && above=4000000000 || above=0
  local ts=() ms=()
  for _ in $(seq "$r"); do
    out=$( { /usr/bin/time -f "%e %M" "$bin" run "$tmp/s.yaml" --set dataset.items="$n" \
      --set server.cache_gb="$gb" --set sim.sample_above_items=$above --set sim.sample_rate="$rate" \
      --format csv >"$tmp/$n.$mode.csv"; } 2>&1 | tail -n 1)
    ts+=("${out% *}") ms+=("${out#* }")
  done
  echo "$(printf '%s\n' "${ts[@]}" | median) $(printf '%s\n' "${ms[@]}" | median) $r"
}
# err ITEMS: largest |hit rate| difference (pp) and relative epoch time (%) of sampled vs exact
err() {
  awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    $4 == "sim" { h[$3] = $col["hit_rate"]; t[$3] = $col["epoch_s"] }
    $4 == "sample" { dh = $col["hit_rate"] - h[$3]; dt = ($col["epoch_s"] - t[$3]) / t[$3];
      if (dh < 0) dh = -dh; if (dt < 0) dt = -dt; if (dh > mh) mh = dh; if (dt > mt) mt = dt }
    END { printf "%.3f pp | %.3f %%", 100 * mh, 100 * mt }' "$tmp/$1.exact.csv" "$tmp/$1.sampled.csv"
}
echo "| items x 3 epochs | mode | runs | median wall s | median peak RSS | sampled vs exact: hit rate, epoch time (largest over epochs) |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in 10000000 100000000; do
  read -r te me re < <(case_ "$n" exact)
  read -r ts ms rs < <(case_ "$n" sampled)
  printf '| %.0e | item by item | %d | %.2f | %.0f MB | |\n' "$n" "$re" "$te" "$(echo "$me / 1024" | bc -l)"
  printf '| %.0e | sampled (rate %s) | %d | %.2f | %.0f MB | %s |\n' "$n" "$rate" "$rs" "$ts" "$(echo "$ms / 1024" | bc -l)" "$(err "$n")"
done
read -r ts ms rs < <(case_ 1000000000 sampled)
printf '| %.0e | sampled (rate %s, 4 M-item cap) | %d | %.2f | %.0f MB | (no exact run: %s) |\n' 1000000000 "$rate" "$rs" "$ts" "$(echo "$ms / 1024" | bc -l)" \
  "$(awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $4 == "sample" { printf "epoch %d hit %.4f ", $3, $col["hit_rate"] }' "$tmp/1000000000.sampled.csv")"
