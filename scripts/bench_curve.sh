#!/usr/bin/env bash
# A 50-point cache-size sweep against one run (docs/benchmarks.md, "Cache-size curves and sampled runs"):
# `sweep --vary server.cache_gb=...` answered from one cache-size curve
# (sim/mrc) plus three full simulations, timed against `stallsim run` of the
# same scenario, alternating in each repetition; medians and the ratio of
# medians. usage: scripts/bench_curve.sh [BUILD_DIR] [REPS] [SCENARIO VARIANT RANGE]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/sim/stallsim
reps=${2:-5}
scn=${3:-scenarios/imagenet1k.yaml}
variant=${4:-dali}
range=${5:-0:147:3}
[ -x "$bin" ] || { echo "bench_curve.sh: build first: $bin not found" >&2; exit 1; }
. scripts/bench_lib.sh # (the repository root is the working folder)
t() { /usr/bin/time -f "%e" "$@" 2>&1 >/dev/null | tail -n 1; }
points=$("$bin" sweep "$scn" --variant "$variant" --vary "server.cache_gb=$range" --model-only -o - 2>/dev/null |
  tail -n +2 | cut -d, -f1 | sort -u | wc -l)
run=() two=() one=()
for _ in $(seq "$reps"); do
  run+=("$(t "$bin" run "$scn" --variant "$variant" --format csv)")
  two+=("$(t "$bin" sweep "$scn" --variant "$variant" --vary "server.cache_gb=$range" -o -)")
  one+=("$(t "$bin" sweep "$scn" --variant "$variant" --vary "server.cache_gb=$range" --threads 1 -o -)")
done
r=$(printf '%s\n' "${run[@]}" | median)
a=$(printf '%s\n' "${two[@]}" | median)
b=$(printf '%s\n' "${one[@]}" | median)
echo "| case | runs | one run s | sweep s (threads $(nproc)) | sweep / run | sweep s (--threads 1) | sweep / run |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
awk -v n="$scn $variant, $points sizes ($range GB)" -v reps="$reps" -v r="$r" -v a="$a" -v b="$b" 'BEGIN{
  printf "| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f |\n", n, reps, r, a, a/r, b, b/r }'
