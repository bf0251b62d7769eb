#!/usr/bin/env bash
# Times `stallsim sweep` and prints the table kept in docs/benchmarks.md:
# a 100-configuration sweep of scenarios/openimages.yaml (both variants
# simulated) with --threads 1 and 2, and --model-only over 10^5 configurations.
#   scripts/bench_sweep.sh [BUILD_DIR] [RUNS]     (defaults: build, 3)
# Each figure is the median wall time of RUNS runs (a fresh output each run).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build}/sim/stallsim
runs=${2:-3}
[ -x "$bin" ] || { echo "bench_sweep.sh: no $bin; build first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

calc() { awk "BEGIN {print $1}"; }
. scripts/bench_lib.sh # (the repository root is the working folder)

# time_case CONFIGS JOBS -- sweep arguments...: prints the median wall seconds
time_case() {
  local jobs=$1
  shift
  for _ in $(seq 1 "$runs"); do
    rm -f "$tmp"/out.csv*
    local t0 t1
    t0=$(date +%s.%N)
    "$bin" sweep "$@" --threads "$jobs" -o "$tmp/out.csv" 2>/dev/null
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}'
  done | median
}

oi=(scenarios/openimages.yaml --vary server.cache_gb=10:1000:10)
mo=(scenarios/openimages.yaml --model-only --vary server.cpus=1:100:1 --vary server.cache_gb=1:1000:1)

echo "| sweep | configurations | --threads | runs | median wall s | configurations/s |"
echo "| --- | --- | --- | --- | --- | --- |"
declare -A wall
for jobs in 1 2; do
  w=$(time_case $jobs "${oi[@]}")
  wall[oi$jobs]=$w
  printf '| openimages.yaml, `--vary server.cache_gb=10:1000:10` (2 variants simulated, 3 epochs) | 100 | %d | %d | %.2f | %.2f |\n' \
    $jobs "$runs" "$w" "$(calc "100 / $w")"
done
for jobs in 1 2; do
  w=$(time_case $jobs "${mo[@]}")
  wall[mo$jobs]=$w
  printf '| openimages.yaml `--model-only`, `--vary server.cpus=1:100:1 --vary server.cache_gb=1:1000:1` (2 variants) | 100000 | %d | %d | %.2f | %.0f |\n' \
    $jobs "$runs" "$w" "$(calc "100000 / $w")"
done
printf '\n--threads 1 / --threads 2 wall time: %.2fx (simulated), %.2fx (model only)\n' \
  "$(calc "${wall[oi1]} / ${wall[oi2]}")" "$(calc "${wall[mo1]} / ${wall[mo2]}")"
