#!/usr/bin/env bash
# The PyTorch probe's per-pipeline costs (--pipelines, --audio) on a tiny set:
# it writes every key a job's prep.pipeline needs, measured and positive,
# and the profile lets `stallsim check` and `run` take image_eval and audio
# jobs (which stallsim refuses without those keys); bad input gets a clear
# error and exit 2. Skips (77) without Debian's torch, torchvision and
# torchaudio.
#   tests/torch_pipelines.sh STALLSIM SRCDIR
set -u
. "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
if ! $py -c 'import torch, torchvision, torchaudio' 2>/dev/null; then
  echo "torch_pipelines: skipped: Debian's python3-torch, python3-torchvision and python3-torchaudio are not all installed (scripts/setup.sh --torch)"
  exit 77
fi
in_tmp "$1" "$2"
printf 'dataset: {items: 1, item_kb: 100}\njobs: [{gpus: 1, batch_per_gpu: 1, compute_s_per_batch: 0.001}]\n' >"$tmp/gen.yaml"
"$bin" measure "$tmp/gen.yaml" --data "$tmp/data" --generate 96 --epochs 1 >/dev/null 2>&1 \
  || { echo "FAIL: generating JPEGs"; exit 1; }
PYTHONPATH="$src" $py -c "from validation.fixtures.data import write_wavs; write_wavs('$tmp/wav', 40, min_s=0.5, max_s=2)" \
  || { echo "FAIL: writing WAVs"; exit 1; }
probe="$src/python/probe.py"
if ! $py "$probe" --data "$tmp/data" --out "$tmp/host.yaml" --batch 8 --items 96 --max-workers 2 \
  --pipelines --audio "$tmp/wav" 2>"$tmp/err"; then
  echo "FAIL: probe failed: $(cat "$tmp/err")"
  exit 1
fi
key() { awk -v k="$1:" '$1 == k {print $2}' "$tmp/host.yaml"; }
# The pipelines' own costs: measured, and more than nothing.
for k in augment_ms eval_ms audio_ms_per_mb decode_mean_ms audio_item_mean_ms audio_out_kb; do
  v=$(key "$k")
  awk -v v="$v" 'BEGIN{exit !(v != "" && v + 0 > 0)}' && ok || bad "profile key $k: '$v' (probe: $(cat "$tmp/err"))"
done
for k in decode_ms_per_item decode_ms_per_mb audio_ms_per_item; do
  v=$(key "$k")
  awk -v v="$v" 'BEGIN{exit !(v != "" && v + 0 >= 0)}' && ok || bad "profile key $k: '$v'"
done
# The decode fit is decode alone: below the training item's mean time.
awk -v d="$(key decode_mean_ms)" -v t="$(key item_mean_ms)" 'BEGIN{exit !(d > 0 && d < t)}' \
  && ok || bad "decode alone $(key decode_mean_ms) ms is not below the training item's $(key item_mean_ms) ms"
cat >"$tmp/scen.yaml" <<Y
host: host.yaml
dataset: {items: 40, item_kb: $(key audio_mean_kb)}
server: {gpus: 1}
loader: {num_workers: 1}
jobs: [{gpus: 1, batch_per_gpu: 8, compute_s_per_batch: 0.01}]
Y
for p in audio image_eval image_train; do
  "$bin" check "$tmp/scen.yaml" --set jobs.0.prep.pipeline=$p >/dev/null 2>"$tmp/err" \
    && ok || bad "check with jobs.0.prep.pipeline=$p: $(cat "$tmp/err")"
done
"$bin" run "$tmp/scen.yaml" --set jobs.0.prep.pipeline=audio --format json >"$tmp/run.json" 2>"$tmp/err" \
  && grep -q '"epoch_s"' "$tmp/run.json" && ok || bad "run with the audio pipeline: $(cat "$tmp/err")"
# Bad input: a clear message and exit 2, no traceback, no profile.
$py "$probe" --data "$tmp/data" --dataset nosuch:thing --pipelines --out "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "needs --dataset imagefolder" "$tmp/err" && ok || bad "--pipelines with a factory: $(cat "$tmp/err")"
$py "$probe" --data "$tmp/data" --audio "$tmp/none" --out "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "not a directory" "$tmp/err" && ok || bad "missing --audio: $(cat "$tmp/err")"
mkdir -p "$tmp/empty"
$py "$probe" --data "$tmp/data" --batch 8 --items 96 --max-workers 2 --audio "$tmp/empty" \
  --out "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "no .wav files" "$tmp/err" && ! grep -q Traceback "$tmp/err" && ok || bad "empty --audio: $(cat "$tmp/err")"
[ ! -e "$tmp/x.yaml" ] && ok || bad "a failed probe left a profile"
finish torch_pipelines
