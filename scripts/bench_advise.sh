#!/usr/bin/env bash
# Times `stallsim advise --model-only` over 10^5 configurations of
# scenarios/openimages.yaml (--vary server.cpus=1:100:1 --vary
# server.cache_gb=1:1000:1): once with its variants taken out (one search of
# 10^5 configurations) and once as shipped (the dali search and the coordl
# alternative: 2 x 10^5), with --threads 1 and 2. Prints the median wall and
# CPU (user + system) seconds of RUNS runs, and the load average before.
#   scripts/bench_advise.sh [BUILD_DIR] [RUNS]     (defaults: build, 5)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/sim/stallsim
runs=${2:-5}
[ -x "$bin" ] || { echo "bench_advise.sh: no $bin; build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed '/^variants:/,$d' scenarios/openimages.yaml >"$tmp/openimages-one.yaml"
grid=(--model-only --vary server.cpus=1:100:1 --vary server.cache_gb=1:1000:1 --minimize server.cpus)
. scripts/bench_lib.sh # (the repository root is the working folder)

# time_case THREADS SCENARIO: "median_wall median_cpu"
time_case() {
  for _ in $(seq 1 "$runs"); do
    /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$bin" advise "$2" "${grid[@]}" --threads "$1" >"$tmp/out.txt"
    awk '{print $1, $2 + $3}' "$tmp/t"
  done >"$tmp/runs"
  echo "$(cut -d' ' -f1 "$tmp/runs" | median) $(cut -d' ' -f2 "$tmp/runs" | median)"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "| advise --model-only | configurations evaluated | --threads | runs | median wall s | median CPU s | configurations/s (wall) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for case in one shipped; do
  if [ $case = one ]; then f=$tmp/openimages-one.yaml n=100000 what="openimages.yaml without its variants"
  else f=scenarios/openimages.yaml n=200000 what="openimages.yaml (dali searched, coordl as its alternative)"; fi
  for th in 1 2; do
    read -r w c < <(time_case $th "$f")
    printf '| %s, `--vary server.cpus=1:100:1 --vary server.cache_gb=1:1000:1 --minimize server.cpus` | %d | %d | %d | %.2f | %.2f | %.0f |\n' \
      "$what" $n $th "$runs" "$w" "$c" "$(awk -v n=$n -v w="$w" 'BEGIN {print n / w}')"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
