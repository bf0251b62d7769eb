#!/usr/bin/env bash
# Simulator speed and memory (docs/benchmarks.md). Runs each case R times (default
# 5) and prints a markdown table of medians: wall time of the whole
# `stallsim run` of one variant (differential runs included), simulated
# item-accesses per second (items x epochs / wall time), peak RSS, and
# simulator memory per item (peak RSS less the same run with --model-only,
# over N). usage: scripts/bench.sh [BUILD_DIR] [REPS]
# BASELINE=OTHER_STALLSIM scripts/bench.sh ...: each repetition also times
# the other binary on the same case, alternating, and a last column gives the
# ratio of medians (this build over the baseline): a speed comparison that
# one noisy machine can make fairly.
# scripts/bench.sh BUILD_DIR REPS bare: only the last table, the exact
# replay against a bare array LRU loop (scripts/bare_lru.c) run beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/sim/stallsim
reps=${2:-5}
only=${3:-}
[ -x "$bin" ] || { echo "bench.sh: build first: $bin not found" >&2; exit 1; }

. scripts/bench_lib.sh # (the repository root is the working folder)

# The exact replay against a bare array LRU loop run beside it (issue 19):
# per size N, REPS pairs alternating, each side timed in CPU seconds (user +
# system: what other work on a shared machine disturbs least) over its whole
# process. stallsim: `run` of ImageNet-1k's LRU variant (dali) over 3 epochs
# with N items and the cache at 35% of the data; the loop: the same N, 3
# epochs, 35% (bare_lru.c). Rates are N x 3 / CPU s; the ratio is the median
# of the pairs' ratios (stallsim's rate over the loop's).
bare_table() {
  local tmp
  tmp=$(mktemp -d)
  "${CC:-cc}" -O2 -std=c11 -o "$tmp/bare_lru" scripts/bare_lru.c
  echo "| items | pairs | stallsim item-accesses/s | bare LRU loop item-accesses/s | ratio (median of pairs) | stallsim peak RSS | loop peak RSS |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  for n in ${BARE_SIZES:-1281167 100000000}; do
    local gb sim=() loop=() ratio=() rs=() rl=() out a b
    gb=$(awk -v n="$n" 'BEGIN{printf "%.0f", 0.35 * n * 114e3 / 1e9}')
    for _ in $(seq "$reps"); do
      out=$( { /usr/bin/time -f "%U %S %M" "$bin" run scenarios/imagenet1k.yaml --variant dali \
        --set dataset.items="$n" --set server.cache_gb="$gb" --format csv >/dev/null; } 2>&1 | tail -n 1)
      a=$(awk -v n="$n" '{print n * 3 / ($1 + $2)}' <<<"$out")
      rs+=("${out##* }")
      out=$( { /usr/bin/time -f "%U %S %M" "$tmp/bare_lru" "$n" 3 0.35 >/dev/null; } 2>&1 | tail -n 1)
      b=$(awk -v n="$n" '{print n * 3 / ($1 + $2)}' <<<"$out")
      rl+=("${out##* }")
      sim+=("$a") loop+=("$b") ratio+=("$(awk -v a="$a" -v b="$b" 'BEGIN{print a / b}')")
    done
    awk -v n="$n" -v r="$reps" -v a="$(printf '%s\n' "${sim[@]}" | median)" \
      -v b="$(printf '%s\n' "${loop[@]}" | median)" -v q="$(printf '%s\n' "${ratio[@]}" | median)" \
      -v ms="$(printf '%s\n' "${rs[@]}" | sort -g | tail -n 1)" \
      -v ml="$(printf '%s\n' "${rl[@]}" | sort -g | tail -n 1)" 'BEGIN{
      printf "| %d | %d | %.1f M/s | %.1f M/s | %.2f | %.0f MB | %.0f MB |\n", n, r, a / 1e6, b / 1e6, q, ms / 1024, ml / 1024 }'
  done
  rm -rf "$tmp"
}
if [ "$only" = bare ]; then
  bare_table
  exit 0
fi

# measure NAME ITEMS EPOCHS ARGS...
measure() {
  local name=$1 items=$2 epochs=$3
  shift 3
  local times=() rss=() base=() old=()
  for _ in $(seq "$reps"); do
    local out
    if [ -n "${BASELINE:-}" ]; then
      out=$( { /usr/bin/time -f "%e" "$BASELINE" run "$@" --format csv >/dev/null; } 2>&1 | tail -n 1)
      old+=("$out")
    fi
    out=$( { /usr/bin/time -f "%e %M" "$bin" run "$@" --format csv >/dev/null; } 2>&1 | tail -n 1)
    times+=("${out% *}")
    rss+=("${out#* }")
    out=$( { /usr/bin/time -f "%M" "$bin" run "$@" --model-only --format csv >/dev/null; } 2>&1 | tail -n 1)
    base+=("$out")
  done
  local t m b o=""
  t=$(printf '%s\n' "${times[@]}" | median)
  [ -n "${BASELINE:-}" ] && o=$(printf '%s\n' "${old[@]}" | median | awk -v t="$t" '{printf " %.3f | %.2f |", $1, t/$1}')
  m=$(printf '%s\n' "${rss[@]}" | median)
  b=$(printf '%s\n' "${base[@]}" | median)
  awk -v n="$name" -v t="$t" -v items="$items" -v e="$epochs" -v m="$m" -v b="$b" -v r="$reps" 'BEGIN{
    printf "| %s | %d | %.3f | %.1f M/s | %.0f MB | %.1f B |", n, r, t, items*e/t/1e6, m/1024, (m-b)*1024/items }'
  echo "$o"
}

if [ -n "${BASELINE:-}" ]; then
  echo "| case | runs | median wall s | item-accesses/s | peak RSS | sim state per item | baseline wall s | this / baseline |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
else
  echo "| case | runs | median wall s | item-accesses/s | peak RSS | sim state per item |"
  echo "| --- | --- | --- | --- | --- | --- |"
fi
measure "ImageNet-1k, 8 GPUs, LRU at 50%, 3 epochs" 1281167 3 \
  scenarios/imagenet1k.yaml --variant dali --set server.cache_gb=73
# The PyTorch DataLoader kind (issue 14): 3 workers per GPU on 24 cores,
# synchronous reads, batch by batch per rank (no baseline: older builds lack
# the kind).
# (The kind refuses the pool's prefetch_batches, which imagenet1k.yaml sets:
# a copy without it.)
if "$bin" help kinds 2>/dev/null | grep -q pytorch; then
  torch_scn=$(mktemp --suffix=.yaml)
  trap 'rm -f "$torch_scn"' EXIT
  sed '/prefetch_batches/d' scenarios/imagenet1k.yaml >"$torch_scn"
  BASELINE= measure "ImageNet-1k, 8 GPUs, loader.kind=pytorch (3 workers per GPU), LRU at 50%, 3 epochs" 1281167 3 \
    "$torch_scn" --variant dali --set server.cache_gb=73 --set loader.kind=pytorch \
    --set loader.num_workers=3
fi
# The object-store kind and record shards (issue 15; no baseline: older
# builds lack them): ImageNet-1k in S3 with 512 readers and a latency tail;
# the same in ~1 GB tar shards, 64 open.
if "$bin" help kinds 2>/dev/null | grep -q object; then
  BASELINE= measure "ImageNet-1k in an object store (512 readers, first-byte tail), LRU at 35%, 3 epochs" \
    1281167 3 scenarios/imagenet-s3.yaml --variant readers-512
  BASELINE= measure "ImageNet-1k in ~1 GB tar shards in an object store (64 open), LRU at 35%, 3 epochs" \
    1281167 3 scenarios/imagenet-s3.yaml --variant shards
fi
# The hard-disk kind and the tier (issue 16; no baseline: older builds lack
# them): ImageNet-1k on a 7200-rpm disk with NCQ (tests/data/hdd-imagenet.yaml,
# 2 epochs), and in S3 behind a 200 GB NVMe tier that holds it all.
if "$bin" help kinds 2>/dev/null | grep -q hdd; then
  BASELINE= measure "ImageNet-1k on a hard disk (NCQ 32, SPTF), 2 epochs" 1281167 2 \
    tests/data/hdd-imagenet.yaml --variant loose
  BASELINE= measure "ImageNet-1k in an object store behind a 200 GB NVMe tier (64 readers), 3 epochs" \
    1281167 3 scenarios/imagenet-s3.yaml --variant readers-64-nvme
fi
measure "ImageNet-22k, 8 GPUs, LRU at 50%, 3 epochs" 14197122 3 \
  scenarios/imagenet22k.yaml --variant dali --set server.cache_gb=653
measure "OpenImages, both variants (LRU, MinIO), 3 epochs" $((1743042 * 2)) 3 scenarios/openimages.yaml
# Many jobs and many servers (issue 4): item-accesses count each stream's
# lookups (8 partitioned jobs look every item up 8 times an epoch).
measure "8 jobs x ImageNet-1k, partitioned prep, shared LRU at 50% (hpsearch dali), 3 epochs" \
  $((1281167 * 8)) 3 scenarios/hpsearch.yaml --variant dali
i22k=(--set dataset.items=14197122 --set dataset.item_kb=110 --set server.cache_gb=500)
measure "2 servers x 8 GPUs x ImageNet-22k, local LRU at 32% each (multiserver dali), 3 epochs" \
  14197122 3 scenarios/multiserver.yaml --variant dali "${i22k[@]}"
measure "2 servers x 8 GPUs x ImageNet-22k, partitioned MinIO (multiserver coordl), 3 epochs" \
  14197122 3 scenarios/multiserver.yaml --variant coordl "${i22k[@]}"
echo
bare_table
