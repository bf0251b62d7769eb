#!/usr/bin/env bash
# A/B of two builds of sweep and advise, interleaved run by run so both see the same load:
# a 10^4-configuration --model-only sweep, a 6-configuration simulated sweep
# (--no-curve, 2 epochs) and a 10^5-configuration --model-only advise of
# scenarios/openimages.yaml, --threads 2. Prints the medians of RUNS rounds,
# wall and CPU (user + system) seconds, and B/A.
#   scripts/bench_grid_ab.sh BUILD_A BUILD_B [RUNS]     (RUNS default 5)
set -u
cd "$(dirname "$0")/.."
A=$1 B=$2
runs=${3:-5}
for d in "$A" "$B"; do [ -x "$d/sim/stallsim" ] || { echo "bench_grid_ab.sh: no $d/sim/stallsim" >&2; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. scripts/bench_lib.sh
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
for r in $(seq 1 "$runs"); do
  for b in A B; do
    if [ $b = A ]; then bin=$A/sim/stallsim; else bin=$B/sim/stallsim; fi
    rm -f "$tmp"/o.csv*
    echo "sweep_mo $b $(t $bin sweep scenarios/openimages.yaml --model-only --vary server.cpus=1:100:1 --vary server.cache_gb=10:1000:10 --threads 2 -o "$tmp/o.csv")"
    rm -f "$tmp"/o.csv*
    echo "sweep_sim $b $(t $bin sweep scenarios/openimages.yaml --no-curve --vary server.cpus=8,16,24,32,48,64 --epochs 2 --threads 2 -o "$tmp/o.csv")"
    echo "advise_mo $b $(t $bin advise scenarios/openimages.yaml --model-only --vary server.cpus=1:100:1 --vary server.cache_gb=1:1000:1 --minimize server.cpus --threads 2)"
  done
done >"$tmp/all"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
for c in sweep_mo sweep_sim advise_mo; do
  for f in 3 4; do
    b=$(awk -v c=$c -v f=$f '$1 == c && $2 == "A" {print $f}' "$tmp/all" | median)
    n=$(awk -v c=$c -v f=$f '$1 == c && $2 == "B" {print $f}' "$tmp/all" | median)
    echo "$c $([ $f = 3 ] && echo wall || echo cpu): A $b s, B $n s (medians of $runs), B/A $(awk -v a="$b" -v b="$n" 'BEGIN {printf "%.3f", b / a}')"
  done
done
cat "$tmp/all"
