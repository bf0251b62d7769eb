#!/usr/bin/env bash
# Regenerates every CSV (and the host profile) the notebooks read, into
# notebooks/data/. Each block is the one command its notebook names.
#   scripts/sweeps.sh [--quick] [BUILD_DIR]     (BUILD_DIR default: build)
# --quick: fewer grid points and 2 epochs (what CI runs, about a minute on
# 2 cores); without it, the full-size figures (a few minutes).
# Old outputs are deleted first, so the data always match this build.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = "--quick" ]; then
  quick=1
  shift
fi
bin=${1:-build}/sim/stallsim
[ -x "$bin" ] || { echo "sweeps.sh: no $bin; build first (cmake -S . -B build && cmake --build build -j)" >&2; exit 1; }
out=notebooks/data
mkdir -p "$out"
# validation.csv is validation/measure.sh's (measured on this host): kept.
find "$out" -maxdepth 1 \( -name '*.csv' ! -name validation.csv -o -name '*.csv.partial' \
  -o -name '*.meta.json' -o -name host.yaml \) -delete
# Timing goes to stderr only; the CSVs are the product.
say() { echo "sweeps.sh: $*" >&2; }

if [ $quick = 1 ]; then
  epochs=(--epochs 2)
  cache_gb=0:700:100
  cpus=8:192:24
  hp_count=1,2,4,8
  servers=(1 2 4)
  ms_cache_gb=200,400
  calib=(--quick)
else
  epochs=()
  cache_gb=0:700:50
  cpus=8:192:8
  hp_count=1:8:1
  servers=(1 2 3 4)
  ms_cache_gb=100:400:100
  calib=()
fi

# notebooks/cache.ipynb: cache size vs hit rate and epoch time, LRU vs MinIO vs belady.
say "cache.csv"
"$bin" sweep scenarios/openimages.yaml --variant dali "${epochs[@]}" \
  --vary loader.cache=lru,minio,belady --vary server.cache_gb=$cache_gb -o $out/cache.csv

# notebooks/cores.ipynb: prep cores vs throughput and prep stall for GPU rates of
# several models (ResNet50 700, ResNet18 2200 items/s per V100 [paper]; 4400 a
# GPU twice as fast), with the dataset cached (200 GB > 146 GB) to isolate prep.
say "cores.csv"
"$bin" sweep scenarios/imagenet1k.yaml --variant dali --set server.cache_gb=200 "${epochs[@]}" \
  --vary jobs.0.gpu_items_per_s=700,2200,4400 --vary server.cpus=$cpus -o $out/cores.csv

# notebooks/hpsearch.ipynb: concurrent jobs of a hyper-parameter search,
# partitioned (dali) vs coordinated (coordl) prep.
say "hpsearch.csv"
"$bin" sweep scenarios/hpsearch.yaml "${epochs[@]}" \
  --vary jobs.0.count=$hp_count --vary variant=dali,coordl -o $out/hpsearch.csv

# notebooks/servers.ipynb: one job over all GPUs of N servers, local (dali) vs
# partitioned (coordl) caching. The job's GPUs follow the server count, so each
# count is its own sweep (a grid is a cartesian product).
for n in "${servers[@]}"; do
  say "multiserver_$n.csv"
  "$bin" sweep scenarios/multiserver.yaml --set server.count=$n --set jobs.0.gpus=$((8 * n)) \
    "${epochs[@]}" --vary variant=dali,coordl --vary server.cache_gb=$ms_cache_gb \
    -o $out/multiserver_$n.csv
done

# notebooks/host.ipynb: this host's profile.
say "host.yaml"
"$bin" calibrate "${calib[@]}" --out $out/host.yaml 2>/dev/null

# notebooks/agreement.ipynb reads all of the above, and notebooks/data/validation.csv
# when validation/measure.sh has written one (measured on this host, minutes).
say "done: $(ls $out | tr '\n' ' ')"
