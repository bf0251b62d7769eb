#!/usr/bin/env bash
# stallsim init and the published GPU rates: init over a flag matrix (each
# output passes check and runs), --data measured on a folder of known files,
# bad flags (exit 2, the reason), -o's atomic write that never replaces a
# file without --force, the same flags writing the same bytes; the templates
# (check, run, and the ones init wrote still equal to its output); a job's
# jobs.N.gpu and model taking the table's rate, marked as published with its
# source, a given rate overriding it, unknown names refused with the known
# ones; and docs/reference/gpus.md as `stallsim help gpus --markdown`.
#   tests/init.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"

# The matrix: every loader, storage and server count, rate published or given.
for loader in pytorch pool; do
  for storage in local nfs s3; do
    for servers in 1 3; do
      for rate in "--gpu v100 --model resnet18" "--gpu-items-per-s 900 --model vit_b16" \
        "--gpu V100 --model ResNet-50 --gpu-items-per-s 650"; do
        args="--loader $loader --storage $storage --servers $servers --items 20000 --item-kb 120 $rate"
        # shellcheck disable=SC2086
        if ! "$bin" init $args >m.yaml 2>err; then
          bad "init $args: $(cat err)"
          continue
        fi
        "$bin" check m.yaml >/dev/null 2>err && ok || bad "check of init $args: $(cat err)"
        "$bin" run m.yaml --epochs 1 >out 2>err && grep -q " sim " out && ok \
          || bad "run of init $args: $(head -3 err)"
        case $rate in
        *--gpu-items-per-s\ 650) check "$args: overridden" "grep -q 'given (gpu_items_per_s 650 items/s per GPU), overriding the published v100 resnet50' out" ;;
        --gpu\ v100*) check "$args: published" "grep -q '^gpu rate (job resnet18): published, v100 resnet18: 2200 items/s per GPU at batch 512 (mixed); .*https://' out" ;;
        *) check "$args: no table" "! grep -q '^gpu rate' out" ;;
        esac
      done
    done
  done
done

# --data: 8 files of 1..8 KB (and hidden ones, skipped): 8 items, mean 4.5 KB,
# cv = sqrt(mean of squares - mean^2) / mean = sqrt(25.5 - 20.25) / 4.5.
mkdir -p data/a data/b/c data/.hidden
for i in 1 2 3 4 5 6 7 8; do
  d=data/a
  [ $i -gt 4 ] && d=data/b/c
  head -c $((i * 1000)) /dev/zero >$d/f$i.jpg
done
head -c 99999 /dev/zero >data/.hidden/x.jpg
head -c 99999 /dev/zero >data/.dot.jpg
"$bin" init --data data --gpus 2 --batch 4 --gpu-items-per-s 1000 >d.yaml 2>err && ok || bad "init --data: $(cat err)"
has d.yaml '^  items: 8 +# measured: the files under data$' '^  item_kb: 4.5 +# measured' \
  '^  item_kb_cv: 0.5092 +# measured' '^  # \(2 hidden names'
"$bin" check d.yaml >/dev/null && ok || bad "check of init --data"
# The bytes depend on the flags alone.
"$bin" init --data data --gpus 2 --batch 4 --gpu-items-per-s 1000 >d2.yaml && cmp -s d.yaml d2.yaml && ok \
  || bad "init --data twice: outputs differ"

D="--items 1000 --item-kb 100"
# --host: the keys the profile measures are left out (they would override
# it), the rest written; the file names the profile and runs with it.
prof=$src/scenarios/hosts/h100-device.yaml
"$bin" init --items 20000 --item-kb 110 --gpu v100 --model resnet50 --host "$prof" >h.yaml 2>err \
  && ok || bad "init --host: $(cat err)"
has h.yaml "^host: \"$prof\"" '^  # cpus: from the host profile$' \
  '^    # read_mb_s: from the host profile$' '^  cache_gb: 64 ' '^    kind: fixed '
check "--host: no measured key written" '! grep -qE "^ *(cpus|read_mb_s|latency_ms|queue_depth):" h.yaml'
"$bin" run h.yaml --epochs 1 --format json >hj && ok || bad "run of init --host"
has hj '"server.cpus": 16,' '"server.storage.read_mb_s": 1640.07,'
"$bin" init --items 20000 --item-kb 110 --gpu v100 --model resnet50 --host "$prof" --cpus 12 \
  | grep -q '^  cpus: 12 ' && ok || bad "init --host --cpus: --cpus not written"
expect 2 "--host nowhere.yaml: not a readable file" -- "$bin" init $D --gpu-items-per-s 9 --host nowhere.yaml

# Bad flags: exit 2 and the reason, nothing written.
D="--items 1000 --item-kb 100"
expect 2 "--loader: expected pytorch or pool, got 'dali'" -- "$bin" init $D --gpu-items-per-s 9 --loader dali
expect 2 "--storage: expected local, nfs or s3, got 'ceph'" -- "$bin" init $D --gpu-items-per-s 9 --storage ceph
expect 2 "--items: expected an integer in [1, 4000000000] (dataset.items), got 'many'" -- "$bin" init --items many --item-kb 1 --gpu-items-per-s 9
expect 2 "--gpus: out of bounds: expected an integer in [1, 4096] (server.gpus), got '0'" -- "$bin" init $D --gpu-items-per-s 9 --gpus 0
expect 2 "--item-kb: out of bounds" -- "$bin" init --items 10 --item-kb 0 --gpu-items-per-s 9
# The GPU list grows with the table: check its start, and apart from it the message's end.
expect 2 "--gpu: no published rate for GPU 'nosuch-gpu' in the GPU rate table (stallsim help gpus; the GPUs it has: v100, " -- "$bin" init $D --gpu nosuch-gpu --model resnet50
expect 2 "); give --gpu-items-per-s R instead" -- "$bin" init $D --gpu nosuch-gpu --model resnet50
expect 2 "--model: no published rate for model 'vgg16' in the GPU rate table (stallsim help gpus; its models on that GPU: resnet18, resnet50" -- "$bin" init $D --gpu v100 --model vgg16
expect 2 "--gpu 'v100' picks a published rate with --model" -- "$bin" init $D --gpu v100
expect 2 "the GPU rate: give --gpu and --model" -- "$bin" init $D
expect 2 "--gpu-items-per-s: expected a rate > 0" -- "$bin" init $D --gpu-items-per-s 0
expect 2 "the dataset: give --data DIR" -- "$bin" init --gpu-items-per-s 9
expect 2 "--data measures the files: leave out --items" -- "$bin" init --data data --items 3 --gpu-items-per-s 9
expect 2 "--data nowhere: No such file or directory" -- "$bin" init --data nowhere --gpu-items-per-s 9
expect 2 "not a folder" -- "$bin" init --data d.yaml --gpu-items-per-s 9
mkdir empty
expect 2 "no files under it" -- "$bin" init --data empty --gpu-items-per-s 9
expect 2 "unknown option '--gpu-rate'" -- "$bin" init $D --gpu-rate 9
expect 2 "does not pass check" -- "$bin" init --items 10 --item-kb 100 --servers 2 --gpu-items-per-s 9
expect 2 "--output: " -- "$bin" init $D --gpu-items-per-s 9 -o no/such/folder.yaml
# -o: never over a file without --force; --force replaces it whole.
echo keep >o.yaml
expect 2 "--output o.yaml exists: --force replaces it" -- "$bin" init $D --gpu-items-per-s 9 -o o.yaml
check "-o kept the file" '[ "$(cat o.yaml)" = keep ]'
expect 0 "" -- "$bin" init $D --gpu-items-per-s 9 -o o.yaml --force
"$bin" init $D --gpu-items-per-s 9 | cmp -s - o.yaml && ok || bad "-o --force: not init's output"
check "no temporary left" '[ "$(ls | grep -c tmp)" = 0 ]'

# The templates check and run; those init wrote are still its output.
cd "$src" || exit 1
for t in scenarios/templates/*.yaml; do
  "$bin" check "$t" >/dev/null 2>"$tmp/err" && ok || bad "check $t: $(cat "$tmp/err")"
  "$bin" run "$t" --set dataset.items=20000 --epochs 1 >"$tmp/out" 2>"$tmp/err" && ok \
    || bad "run $t: $(head -3 "$tmp/err")"
  cmd=$(sed -n '/^# A starter scenario, written by:$/{n;s/^#   stallsim //p;}' "$t")
  [ -n "$cmd" ] || continue
  # shellcheck disable=SC2086
  eval "\"\$bin\" $cmd" | cmp -s - <(sed -n '/^# A starter scenario, written by:$/,$p' "$t") && ok \
    || bad "$t is no longer what 'stallsim $cmd' writes (scripts/gen-templates.sh BIN rewrites it)"
done

# A scenario's jobs.N.gpu and model: the published rate, and the JSON says whence.
s=tests/data/small.yaml
pub=(--set jobs.0.gpu=v100 --set jobs.0.model=resnet50 --set jobs.0.gpu_items_per_s=0 --epochs 1)
"$bin" run $s "${pub[@]}" --format json >"$tmp/j" && ok || bad "run with jobs.0.gpu"
has "$tmp/j" '"gpu_items_per_s": 700,' '"published_rate": \{"used": true, "items_per_s": 700, "batch": 512, "gpu": "v100", "model": "resnet50", "precision": "mixed", "source": "Mohan'
"$bin" run $s --set jobs.0.gpu=v100 --set jobs.0.model=resnet50 --epochs 1 --format json >"$tmp/j"
has "$tmp/j" '"gpu_items_per_s": 1500,' '"published_rate": \{"used": false'
"$bin" run $s "${pub[@]}" --set jobs.0.compute_s_per_batch=0.1 >"$tmp/t"
has "$tmp/t" '^gpu rate \(job net\): given \(compute_s_per_batch 0.1 s\), overriding the published v100 resnet50'
expect 2 "job 'net': no published rate for GPU 'nosuch-gpu' in the GPU rate table (stallsim help gpus); the GPUs it has: v100, " \
  -- "$bin" check $s "${pub[@]/v100/nosuch-gpu}"
expect 2 ". Give the rate instead: jobs.0.gpu_items_per_s" -- "$bin" check $s "${pub[@]/v100/nosuch-gpu}"
expect 2 "jobs.0.gpu 'v100' picks a published rate with jobs.0.model, which is not given" \
  -- "$bin" check $s --set jobs.0.gpu=v100 --set jobs.0.gpu_items_per_s=0
# A given rate needs no row: any GPU name is then for the reader.
expect 0 "" -- "$bin" check $s --set jobs.0.gpu=b200 --set jobs.0.model=resnet50

# The reference page is the table's own output.
ref=$("$bin" help gpus --markdown)
doc=$(sed -n '/<!-- gpus:begin -->/,/<!-- gpus:end -->/p' docs/reference/gpus.md | sed '1d;$d')
[ "$ref" == "$doc" ] && ok || bad "docs/reference/gpus.md is stale (stallsim help gpus --markdown)"

finish init
