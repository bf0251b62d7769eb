#!/usr/bin/env bash
# scripts/bench_scale.sh --cluster's rows (see there): every variant of
# scenarios/cluster-s3.yaml at each server count, timed with /usr/bin/time.
# usage: scripts/bench_cluster.sh BIN REPS S...
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$1
reps=$2
shift 2
[ -x "$bin" ] || { echo "bench_cluster.sh: $bin not found" >&2; exit 1; }
. scripts/bench_lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
variants="dali coordl dali-shards"
echo "| servers | GPUs | variant | runs | median wall s | median CPU s | peak RSS | simulated as | total_s (sim) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for s in "$@"; do
  for v in $variants; do
    wall=() cpu=() rss=()
    for _ in $(seq "$reps"); do
      /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$bin" run scenarios/cluster-s3.yaml \
        --variant "$v" --set server.count="$s" --set jobs.0.gpus=$((8 * s)) --format json >"$tmp/json" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
      read -r e u sy m <"$tmp/time"
      wall+=("$e") cpu+=("$(awk -v u="$u" -v s="$sy" 'BEGIN{print u + s}')") rss+=("$m")
    done
    how=$(grep -o '"text": "sampled[^"]*"' "$tmp/json" | sed 's/"text": "//; s/"$//' || true)
    total=$(grep -o '"total_s": {[^}]*"sim": [0-9.e+]*' "$tmp/json" | sed 's/.*"sim": //')
    w=$(printf '%s\n' "${wall[@]}" | median)
    c=$(printf '%s\n' "${cpu[@]}" | median)
    m=$(printf '%s\n' "${rss[@]}" | sort -g | tail -n 1)
    echo "$s $v $c $m" >>"$tmp/rows"
    awk -v s="$s" -v v="$v" -v r="$reps" -v w="$w" -v c="$c" -v m="$m" -v how="${how:-exact}" -v t="$total" 'BEGIN{
      printf "| %d | %d | %s | %d | %.2f | %.2f | %.2f GB | %s | %.1f |\n", s, 8 * s, v, r, w, c, m / 1048576, how, t }'
  done
done
lo=$1
hi=${*: -1}
if [ "$lo" != "$hi" ]; then
  echo
  echo "| variant | CPU s at $hi / at $lo servers | peak RSS at $hi / at $lo |"
  echo "| --- | --- | --- |"
  for v in $variants; do
    awk -v v="$v" -v lo="$lo" -v hi="$hi" '$2 == v && $1 == lo {c0 = $3; m0 = $4} $2 == v && $1 == hi {c1 = $3; m1 = $4}
      END {printf "| %s | %.2f | %.2f |\n", v, c1 / c0, m1 / m0}' "$tmp/rows"
  done
fi
