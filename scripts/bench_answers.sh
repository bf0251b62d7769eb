#!/usr/bin/env bash
# A/B of what the answers cost (issue 53): the bottleneck named by lifts in
# every run and sweep row, and run's advice proven by simulator runs. Two
# builds alternate run by run so both see the same load; prints the medians
# of RUNS rounds, wall and CPU (user + system) seconds, and B/A.
#   scripts/bench_answers.sh BUILD_A BUILD_B [RUNS]     (RUNS default 3)
# Cases: run of openimages.yaml and imagenet-s3.yaml (simulated, every
# variant), run --model-only of openimages.yaml, and a 10^4-configuration
# --model-only sweep of openimages.yaml (--threads 1).
set -u
cd "$(dirname "$0")/.."
A=$1 B=$2
runs=${3:-3}
for d in "$A" "$B"; do [ -x "$d/sim/stallsim" ] || { echo "bench_answers.sh: no $d/sim/stallsim" >&2; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. scripts/bench_lib.sh
cases=("run-openimages" "run-imagenet-s3" "run-openimages-model" "sweep-model-1e4")
one() { # BIN CASE
  case $2 in
  run-openimages) t "$1" run scenarios/openimages.yaml ;;
  run-imagenet-s3) t "$1" run scenarios/imagenet-s3.yaml ;;
  run-openimages-model) t "$1" run scenarios/openimages.yaml --model-only ;;
  sweep-model-1e4)
    rm -f "$tmp/s.csv"*
    t "$1" sweep scenarios/openimages.yaml --model-only --threads 1 --vary server.cpus=1:100:1 \
      --vary server.cache_gb=10:1000:10 -o "$tmp/s.csv" ;;
  esac
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
for r in $(seq 1 "$runs"); do
  for c in "${cases[@]}"; do
    one "$A/sim/stallsim" "$c" >>"$tmp/A.$c"
    one "$B/sim/stallsim" "$c" >>"$tmp/B.$c"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| case | A wall s | B wall s | B/A wall | A CPU s | B CPU s | B/A CPU |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
for c in "${cases[@]}"; do
  aw=$(cut -d' ' -f1 "$tmp/A.$c" | median) bw=$(cut -d' ' -f1 "$tmp/B.$c" | median)
  ac=$(cut -d' ' -f2 "$tmp/A.$c" | median) bc=$(cut -d' ' -f2 "$tmp/B.$c" | median)
  awk -v c="$c" -v aw="$aw" -v bw="$bw" -v ac="$ac" -v bc="$bc" \
    'BEGIN { printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", c, aw, bw, bw / aw, ac, bc, bc / ac }'
done
