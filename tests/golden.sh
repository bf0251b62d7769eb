#!/usr/bin/env bash
# Golden outputs: every shipped scenario as text, CSV and JSON, one sweep
# (CSV and metadata) and the key reference, compared byte for byte with
# tests/golden/. A refactoring must leave them unchanged; an intended change
# regenerates them in its own commit, with the reason in its message:
#   tests/golden.sh BIN SRCDIR --update
# Datasets are cut to 150000 items so the whole set runs in seconds.
set -uo pipefail
bin=$1
src=$2
update=${3:-}
cd "$src" || exit 1
gold=tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0

check() { # NAME COMMAND...: the command's stdout against $gold/NAME
  local name=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ $rc -ne 0 ]; then
    echo "golden: $name: exit $rc: $(head -3 "$tmp/err")"
    fail=1
    return
  fi
  n=$((n + 1))
  if [ "$update" = --update ]; then
    cp "$tmp/out" "$gold/$name"
  elif ! cmp -s "$tmp/out" "$gold/$name"; then
    echo "golden: $name differs from $gold/$name (command: $*):"
    diff "$gold/$name" "$tmp/out" | head -8
    fail=1
  fi
}

for sc in fma hpsearch imagenet1k imagenet22k multiserver openimages webdataset; do
  for fmt in text csv json; do
    check "$sc.$fmt" "$bin" run "scenarios/$sc.yaml" --set dataset.items=150000 --format $fmt
  done
done
# thishost's own profile is this machine's (not committed): the H100 one is.
for fmt in text csv json; do
  check "thishost.$fmt" "$bin" run scenarios/thishost.yaml --set host=hosts/h100-device.yaml \
    --set dataset.items=150000 --format $fmt
  check "small.$fmt" "$bin" run tests/data/small.yaml --format $fmt
done
check "small-model-only.text" "$bin" run tests/data/small.yaml --model-only
# A video pipeline (prep.pipeline: video): keyframes, NVDEC engines, uint8 hand-over.
for fmt in text csv json; do
  check "video.$fmt" "$bin" run scenarios/video.yaml --format $fmt
done
# A variant name over 10 characters (the columns follow the longest) and
# advice in words (the GIL's bound), text only.
check "imagenet-threads.text" "$bin" run scenarios/imagenet-threads.yaml --set dataset.items=150000
# A launch's start-up storm (startup.*): its first-step table and 503s.
check "launch-storm.text" "$bin" run scenarios/launch-storm.yaml
# Checkpoints and failures: the goodput table.
check "checkpoints.text" "$bin" run scenarios/checkpoints.yaml
check "keys.text" "$bin" help keys

# A sweep: its CSV and metadata (less the command line, which names $tmp).
sweep() {
  "$bin" sweep scenarios/openimages.yaml --epochs 2 --set dataset.items=50000 \
    --vary loader.cache=lru,minio,belady --vary server.cache_gb=0:150:50 -o "$tmp/s.csv" \
    2>/dev/null && cat "$tmp/s.csv"
}
sweep_meta() { grep -v '"command_line"' "$tmp/s.csv.meta.json"; }
check "sweep.csv" sweep
check "sweep.meta.json" sweep_meta

if [ "$update" = --update ]; then
  echo "golden: wrote $n files to $gold"
elif [ $fail = 0 ]; then
  echo "golden: $n outputs unchanged"
fi
exit $fail
