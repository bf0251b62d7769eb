#!/usr/bin/env bash
# Each server's memory in `run`'s outputs (sim/report/memout.c) and the
# memory track of --trace (trace.c), in closed form: 2 training processes of
# 1.5 GiB, each with 2 workers of 20 MiB + 0.5 MiB per 1000 items read (2000
# items over 2 GPUs and 2 workers: 500 items, 20.25 MiB), and /dev/shm's 5
# batches a process of 32 x 602112 B of images and 256 B of labels (4704 +
# 1 pages): rss = 3072 + 81 + shm MiB. The same three figures in text, CSV,
# JSON and HTML; none where nothing of memory is given.
# usage: memout.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"

cat >mem.yaml <<'YAML'
epochs: 2
dataset: {items: 2000, item_kb: 110}
server: {gpus: 2, cache_gb: 1, mem_gb: 8}
prep: {out_kb: 602.112}
loader: {kind: pytorch, num_workers: 2, worker_mem_mb: 20, worker_mem_mb_per_kitem: 0.5}
jobs: [{gpus: 2, batch_per_gpu: 32, compute_s_per_batch: 0.01, host_mem_gb: 1.5, gpu_mem_gb: 2}]
YAML
want=$(python3 -c '
shm = 2 * 5 * (4705 * 4096) / 2**20
rss = 3072 + 4 * 20.25 + shm
gpu = (2e9 + 3 * 32 * 602112) / 2**20
print(f"{shm:.1f} {rss:.1f}")')
read -r shm rss <<<"$want"
near() { python3 -c "import sys; sys.exit(abs(float('$1') - float('$2')) > 0.06)"; }

out=$("$bin" run mem.yaml)
row=$(awk '/^memory by server at its peak/ {getline; getline; print $(NF - 2), $(NF - 1)}' <<<"$out")
near "${row% *}" "$shm" && near "${row#* }" "$rss" && ok || bad "text: '$row', want $shm $rss: $out"

csv=$("$bin" run mem.yaml --format csv)
got=$(python3 -c '
import csv, sys
r = list(csv.DictReader(sys.stdin))[0]
print(r["shm_peak_mb"], r["rss_peak_mb"])' <<<"$csv")
near "${got% *}" "$shm" && near "${got#* }" "$rss" && ok || bad "csv: '$got', want $shm $rss"

json=$("$bin" run mem.yaml --format json)
got=$(python3 -c '
import json, sys
m = json.load(sys.stdin)["variants"][0]["memory_servers"][0]
print(m["shm_peak_mb"], m["rss_peak_mb"], m["gpu_mem_peak_mb"] > 1907)' <<<"$json")
[ "${got##* }" = True ] && near "$(cut -d' ' -f1 <<<"$got")" "$shm" \
  && near "$(cut -d' ' -f2 <<<"$got")" "$rss" && ok || bad "json: '$got', want $shm $rss"

"$bin" run mem.yaml --format html >mem.html
grep -q "<h2>Memory by server</h2>" mem.html && grep -q "<td>$rss</td>" mem.html && ok \
  || bad "html: no memory table with rss $rss"

# The trace: a memory track per server, its components at the start.
"$bin" run mem.yaml --trace mem.trace.json >/dev/null
got=$(python3 -c '
import json
e = [x for x in json.load(open("mem.trace.json"))["traceEvents"]
     if x.get("name") == "memory of server 1: MiB"]
a = e[0]["args"]
print(len(e) > 1, round(a["training processes"] + a["workers"] + a["/dev/shm"], 1))')
[ "${got% *}" = True ] && near "${got#* }" "$rss" && ok || bad "trace memory track: '$got', want $rss"

# Nothing of memory given: none of it in any output.
sed -i 's/, mem_gb: 8//; s/, worker_mem_mb: 20, worker_mem_mb_per_kitem: 0.5//; s/, host_mem_gb: 1.5//' mem.yaml
n=$( ("$bin" run mem.yaml; "$bin" run mem.yaml --format csv
  "$bin" run mem.yaml --format json) | grep -c "shm_peak_mb\|memory by server")
"$bin" run mem.yaml --trace plain.json >/dev/null
[ "$n" = 0 ] && ! grep -q "memory of server" plain.json && ok \
  || bad "memory shown where nothing of it is given ($n lines)"
finish memout
