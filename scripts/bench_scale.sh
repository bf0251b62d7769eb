#!/usr/bin/env bash
# How the exact replay scales with the dataset (docs/benchmarks.md, scaling
# table): `stallsim run scenarios/imagenet1k.yaml` (both variants, LRU and
# MinIO, 3 epochs) with dataset.items = N and the cache held at 35% of the
# data (server.cache_gb = 0.35 x N x 114 KB), R runs each; prints a markdown
# row per N: median wall s, median CPU s (user + system: the figure a
# shared machine disturbs least), item-accesses per CPU second (N x 3
# epochs x 2 variants), and the largest peak RSS (/usr/bin/time's maximum
# resident set). usage: scripts/bench_scale.sh BIN REPS N...
#
# --cluster (issue 37): `stallsim run scenarios/cluster-s3.yaml` (an
# ImageNet-22k-sized set, 14.2 M items of 110 KB, 200 GB caches, a shared
# object store, 2 epochs), each variant alone (dali: a cache on every server,
# loose; coordl: partitioned caches, loose; dali-shards: a cache on every
# server, 1 GB tar shards) at server.count = S and 8 S GPUs, R runs each;
# prints a markdown row per S and variant: median wall s, median CPU s, the
# largest peak RSS, how the simulator ran it (exact, or "sampled: K of N
# servers, bound ±x %") and its total simulated time; then each variant's
# CPU and RSS at the largest S over those at the smallest (same run).
# usage: scripts/bench_scale.sh --cluster BIN REPS S...
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1-}" = --cluster ]; then
  shift
  exec bash scripts/bench_cluster.sh "$@"
fi
bin=$1
reps=$2
shift 2
[ -x "$bin" ] || { echo "bench_scale.sh: $bin not found" >&2; exit 1; }
. scripts/bench_lib.sh # (the repository root is the working folder)
echo "| items | runs | median wall s | median CPU s | item-accesses per CPU s | peak RSS |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in "$@"; do
  gb=$(awk -v n="$n" 'BEGIN{printf "%.0f", 0.35 * n * 114e3 / 1e9}')
  wall=() cpu=() rss=()
  for _ in $(seq "$reps"); do
    out=$( { /usr/bin/time -f "%e %U %S %M" "$bin" run scenarios/imagenet1k.yaml \
      --set dataset.items="$n" --set server.cache_gb="$gb" --format csv >/dev/null; } 2>&1 | tail -n 1)
    read -r e u s m <<<"$out"
    wall+=("$e") cpu+=("$(awk -v u="$u" -v s="$s" 'BEGIN{print u + s}')") rss+=("$m")
  done
  w=$(printf '%s\n' "${wall[@]}" | median)
  c=$(printf '%s\n' "${cpu[@]}" | median)
  m=$(printf '%s\n' "${rss[@]}" | sort -g | tail -n 1)
  awk -v n="$n" -v r="$reps" -v w="$w" -v c="$c" -v m="$m" 'BEGIN{
    printf "| %.0e | %d | %.2f | %.2f | %.1f M/s | %.0f MB |\n", n, r, w, c, n * 6 / c / 1e6, m / 1024 }'
done
