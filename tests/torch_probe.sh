#!/usr/bin/env bash
# The PyTorch probe on this host: it times a real DataLoader over generated
# JPEGs and writes a host profile that `stallsim check` and `run` accept with
# loader.kind: pytorch, with every figure positive where it must be; bad
# input gets a clear error and exit 2. Skips (77) without Debian's PyTorch.
#   tests/torch_probe.sh STALLSIM SRCDIR
set -u
. "$(dirname "$0")/lib.sh"
py=/usr/bin/python3
if ! $py -c 'import torch, torchvision' 2>/dev/null; then
  echo "torch_probe: skipped: Debian's python3-torch and python3-torchvision are not installed (scripts/setup.sh --torch)"
  exit 77
fi
in_tmp "$1" "$2"
printf 'dataset: {items: 1, item_kb: 100}\njobs: [{gpus: 1, batch_per_gpu: 1, compute_s_per_batch: 0.001}]\n' >"$tmp/gen.yaml"
"$bin" measure "$tmp/gen.yaml" --data "$tmp/data" --generate 160 --epochs 1 >/dev/null 2>&1 \
  || { echo "FAIL: generating JPEGs"; exit 1; }
probe="$src/python/probe.py"
if ! $py "$probe" --data "$tmp/data" --out "$tmp/host.yaml" --batch 16 --items 160 --max-workers 2 --oversub-reps 1 2>"$tmp/err"; then
  echo "FAIL: probe failed: $(cat "$tmp/err")"
  exit 1
fi
# Every cost the DataLoader spends is in the profile, measured.
for k in decode_ms_per_item decode_ms_per_mb collate_ms_per_item share_ms_per_item \
  copy_ms_per_mb receive_ms_per_mb transfer_ms_per_item step_ms worker_start_ms worker_init_ms worker_warmup_ms worker_exit_ms worker_mem_mb worker_mem_mb_per_kitem process_mem_mb core_efficiency latency_ms read_mb_s; do
  v=$(awk -v k="$k:" '$1 == k {print $2}' "$tmp/host.yaml")
  awk -v v="$v" 'BEGIN{exit !(v != "" && v + 0 >= 0)}' && ok || bad "profile key $k: '$v' (probe: $(cat "$tmp/err"))"
done
# Shared memory's pages cost a worker per MB handed over: 2 MB items cost
# more than 0.25 MB ones (0.69-0.89 ms/MB on a 2-core VM).
cp=$(awk '$1 == "copy_ms_per_mb:" {print $2}' "$tmp/host.yaml")
awk -v v="$cp" 'BEGIN{exit !(v > 0.01 && v < 100)}' && ok || bad "loader.copy_ms_per_mb '$cp'"
# The cost of more workers than cores, measured at 1, 2, 4, 8, 16 x: five
# points from 1:1, each efficiency in (0, 1] (stallsim check parses it below).
curve=$(awk -F'"' '$1 ~ /^ *oversub: $/ {print $2}' "$tmp/host.yaml")
awk -v c="$curve" 'BEGIN{n = split(c, p, ", "); ok = n == 5 && p[1] == "1:1"
  for (i = 2; i <= n; i++) { split(p[i], kv, ":"); if (!(kv[2] > 0 && kv[2] <= 1)) ok = 0 }
  exit !ok}' && ok || bad "loader.oversub '$curve' (probe: $(cat "$tmp/err"))"
grep -q "^    item_wait_ms: " "$tmp/host.yaml" && ok || bad "no measured.method.item_wait_ms"
# The training process's own memory: more than the interpreter and PyTorch
# alone hold (tens of MiB), measured in a process of its own.
pm=$(awk '$1 == "process_mem_mb:" {print $2}' "$tmp/host.yaml")
awk -v v="$pm" 'BEGIN{exit !(v > 20 && v < 100000)}' && grep -q "^      peak_RssAnon: " "$tmp/host.yaml" \
  && ok || bad "loader.process_mem_mb '$pm'"
# An item costs something: a + b x mean size > 0.
item=$(awk '$1=="decode_ms_per_item:"{a=$2} $1=="decode_ms_per_mb:"{b=$2} $1=="mean_kb:"{m=$2} END{print a + b*m/1000}' "$tmp/host.yaml")
awk -v v="$item" 'BEGIN{exit !(v > 0.05 && v < 1000)}' && ok || bad "item cost $item ms (probe: $(cat "$tmp/err"))"
cat >"$tmp/scen.yaml" <<Y
host: host.yaml
dataset: {items: 160, item_kb: 100}
server: {gpus: 1}
loader: {num_workers: 2}
jobs: [{gpus: 1, batch_per_gpu: 16, compute_s_per_batch: 0.01}]
Y
"$bin" check "$tmp/scen.yaml" >/dev/null 2>"$tmp/err" && ok || bad "check with the profile: $(cat "$tmp/err")"
out=$("$bin" run "$tmp/scen.yaml" --format csv 2>&1)
[ $? = 0 ] && grep -q pytorch <<<"$("$bin" run "$tmp/scen.yaml" --format json)" && ok || bad "run: $out"
# Bad input: a clear message and exit 2.
$py "$probe" --data "$tmp/none" --out "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "not a directory" "$tmp/err" && ok || bad "missing --data: $(cat "$tmp/err")"
mkdir -p "$tmp/empty"
$py "$probe" --data "$tmp/empty" --out "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "probe: --data" "$tmp/err" && ! grep -q Traceback "$tmp/err" && ok || bad "empty --data: $(cat "$tmp/err")"
$py "$probe" --data "$tmp/data" --dataset nosuch:thing --out "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "cannot load thing from nosuch" "$tmp/err" && ok || bad "bad --dataset: $(cat "$tmp/err")"
$py "$probe" --data "$tmp/data" --items 40 --out "$tmp/x.yaml" >/dev/null 2>"$tmp/err"
[ $? = 2 ] && grep -q "need" "$tmp/err" && ok || bad "too few items: $(cat "$tmp/err")"
[ ! -e "$tmp/x.yaml" ] && ok || bad "a failed probe left a profile"
finish torch_probe
