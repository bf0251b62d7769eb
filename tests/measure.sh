#!/usr/bin/env bash
# measure: `stallsim measure` on a small generated JPEG set. Every epoch reads
# and decodes every file exactly once; bytes read equal the files' sizes
# (no cache); MinIO at 100% reads nothing after epoch 1 and at 50% reads the
# rest; bad inputs exit 2 with a message naming what is wrong; bad files are
# counted, reported and skipped.
# usage: measure.sh STALLSIM WORKDIR
set -u
bin=$1
W=$2
rm -rf "$W" && mkdir -p "$W" || exit 1
. "$(dirname "$0")/measure_lib.sh"


scenario measure-test 3
S=$W/s.yaml
D=$W/data
N=40

expect 0 "generating $N JPEGs" -- "$bin" measure "$S" --data "$D" --generate $N --format csv
total=$(find "$D" -name '*.jpg' -printf '%s\n' | awk '{ s += $1 } END { print s }')
nfiles=$(find "$D" -name '*.jpg' | wc -l)
[ "$nfiles" = $N ] && ok || bad "--generate wrote $nfiles files, want $N"
cp "$W/out" "$W/none.csv"
for e in 1 2; do
  grep -qF "epoch $e: " "$W/err" && grep "epoch $e: " "$W/err" | grep -qF "$N items fetched once each, $N decoded, 0 failed; $N files read ($total bytes)" \
    && ok || bad "epoch $e: not every file read and decoded once: $(grep "epoch $e:" "$W/err")"
  [ "$(col "$W/none.csv" $e storage_read_bytes)" = "$total" ] && ok \
    || bad "cache none, epoch $e: storage_read_bytes $(col "$W/none.csv" $e storage_read_bytes), want $total"
  [ "$(col "$W/none.csv" $e hit_rate)" = "0.000000" ] && ok || bad "cache none: hits in epoch $e"
  # T = T_prep + fetch stall and T_prep = T_gpu + prep stall, to the printed digits.
  awk -F, -v e=$e 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      $3 == e { T = $c["epoch_s"]; Tp = $c["t_prep_s"]; Tg = $c["t_gpu_s"]
        d1 = T - (Tp + $c["fetch_stall_s"]); d2 = Tp - (Tg + $c["prep_stall_s"])
        exit !(d1 < 1e-6 && d1 > -1e-6 && d2 < 1e-6 && d2 > -1e-6 && T > 0 && Tg > 0.009) }' \
    "$W/none.csv" && ok || bad "epoch $e: stalls do not add up: $(sed -n "$((e + 1))p" "$W/none.csv")"
done
[ "$(head -n 1 "$W/none.csv" | cut -d, -f1-5)" = "variant,job,epoch,source,epoch_s" ] && ok \
  || bad "csv header differs from run's"

expect 0 "" -- "$bin" measure "$S" --data "$D" --format csv --set loader.cache=minio \
  --minio-size 100% --cache page-cold
cp "$W/out" "$W/minio100.csv"
[ "$(col "$W/minio100.csv" 1 storage_read_bytes)" = "$total" ] && ok || bad "minio 100%: epoch 1 reads"
[ "$(col "$W/minio100.csv" 2 storage_read_bytes)" = "0" ] && ok \
  || bad "minio 100%: epoch 2 read $(col "$W/minio100.csv" 2 storage_read_bytes) bytes, want 0"
[ "$(col "$W/minio100.csv" 2 hit_rate)" = "1.000000" ] && ok || bad "minio 100%: epoch 2 hit rate"
grep -qF "0.0% of their pages still resident" "$W/err" && ok || bad "page-cold: eviction not verified: $(cat "$W/err")"

# 50%: what MinIO holds is never read again; everything else is read each epoch.
expect 0 "" -- "$bin" measure "$S" --data "$D" --format csv --set loader.cache=minio \
  --minio-size $((total / 2))
cp "$W/out" "$W/minio50.csv"
held=$(grep "epoch 2:" "$W/err" | sed -n 's/.*MinIO holds \([0-9]*\) bytes.*/\1/p')
r2=$(col "$W/minio50.csv" 2 storage_read_bytes)
[ -n "$held" ] && [ "$held" -le $((total / 2)) ] && [ "$((r2 + held))" = "$total" ] && ok \
  || bad "minio 50%: holds '$held' (limit $((total / 2))), epoch 2 read '$r2', total $total"

# lru = the OS page cache, counted with mincore: cold first epoch, warm
# second. The OS need not keep every page until epoch 2 (CI saw 70% and 80%
# kept while other tests ran), so epoch 2 is held to what mincore found: most
# files whole, and bytes read from storage exactly when some file was not.
expect 0 "" -- "$bin" measure "$S" --data "$D" --format csv --set loader.cache=lru --cache page-cold
cp "$W/out" "$W/lru.csv"
h2=$(col "$W/lru.csv" 2 hit_rate) r2=$(col "$W/lru.csv" 2 storage_read_bytes)
[ "$(col "$W/lru.csv" 1 hit_rate)" = "0.000000" ] && [ "$(col "$W/lru.csv" 1 storage_read_bytes)" = "$total" ] \
  && awk -v h="$h2" -v r="$r2" -v t="$total" 'BEGIN{exit !(h >= 0.5 && (h == 1) == (r == 0) && r < t)}' \
  && ok || bad "lru page-cold: hit rates $(col "$W/lru.csv" 1 hit_rate) $h2, epoch 2 read $r2 of $total"

expect 0 "" -- "$bin" measure "$S" --data "$D" --format json --epochs 1
grep -q '"measured": {"epoch_s": ' "$W/out" && ok || bad "json lacks the measured metrics"
expect 0 "" -- "$bin" measure "$S" --data "$D" --epochs 1
grep -q "^ *job  *1  measured " "$W/out" && ok || bad "text lacks the measured row: $(cat "$W/out")"

# Bad inputs.
expect 2 "missing --data" -- "$bin" measure "$S"
expect 2 "missing the scenario" -- "$bin" measure --data "$D"
expect 2 "no-such-dir" -- "$bin" measure "$S" --data "$W/no-such-dir"
mkdir -p "$W/empty"
expect 2 "no readable JPEG" -- "$bin" measure "$S" --data "$W/empty"
mkdir -p "$W/junk"
echo "not a jpeg" >"$W/junk/a.jpg"
echo "text" >"$W/junk/b.txt"
expect 2 "no readable JPEG files (1 bad, 1 other)" -- "$bin" measure "$S" --data "$W/junk"
cp "$D"/class_00/*.jpg "$W/junk/"
good=$(find "$D"/class_00 -name '*.jpg' | wc -l)
first=$(find "$W/junk" -name 'img_*.jpg' | sort | head -n 1)
# A truncated JPEG passes the header check and fails to decode in every epoch.
head -c 3000 "$first" >"$W/junk/trunc.jpg"
expect 0 "skipping $W/junk/a.jpg" -- "$bin" measure "$S" --data "$W/junk" --format csv
grep -qF "1 file(s) not named *.jpg/*.jpeg skipped" "$W/err" && ok || bad "non-JPEG name not counted"
items=$((good + 1))
grep "epoch 1:" "$W/err" | grep -qF "$items items fetched once each, $good decoded, 1 failed" && ok \
  || bad "truncated JPEG not counted as failed: $(cat "$W/err")"
grep -qF "skipping $W/junk/trunc.jpg" "$W/err" && ok || bad "truncated JPEG not reported"
expect 2 "key 'server.count'" -- "$bin" measure "$S" --data "$D" --set server.count=2
expect 2 "key 'loader.cache'" -- "$bin" measure "$S" --data "$D" --set loader.cache=fifo
expect 2 "key 'loader.cache': measure runs none, lru" -- "$bin" measure "$S" --data "$D" --set loader.cache=linux
expect 2 "key 'prep.on_gpu'" -- "$bin" measure "$S" --data "$D" --set prep.on_gpu=true
expect 2 "key 'jobs'" -- "$bin" measure "$S" --data "$D" --set server.gpus=2 --set jobs.0.count=2
expect 2 "--minio-size" -- "$bin" measure "$S" --data "$D" --set loader.cache=minio --minio-size lots
expect 2 "--cache: expected" -- "$bin" measure "$S" --data "$D" --cache lukewarm
expect 2 "--io-threads" -- "$bin" measure "$S" --data "$D" --io-threads 0
expect 2 "key 'server.cpus'" -- "$bin" measure "$S" --data "$D" --set server.cpus=none
expect 0 "" -- "$bin" measure --help
# Reader threads: an object store's request slots are connections (all of
# them, past the 16 a disk's queue gets); a disk's queue depth caps at 16.
expect 0 "" -- "$bin" measure "$S" --data "$D" --epochs 1 --format json \
  --set server.storage.kind=object --set server.storage.reader_threads=40
grep -qF '"fetch_threads": 40' "$W/out" && ok || bad "object store, 40 reader threads: $(grep -o '"fetch_threads": [0-9]*' "$W/out")"
expect 0 "" -- "$bin" measure "$S" --data "$D" --epochs 1 --format json --set server.storage.queue_depth=40
grep -qF '"fetch_threads": 16' "$W/out" && ok || bad "disk, queue depth 40: $(grep -o '"fetch_threads": [0-9]*' "$W/out")"
# The text header shows the paths it echoes with control characters escaped.
ln -sfn "$D" "$W/esc"$'\e'"[31m"
expect 0 "" -- "$bin" measure "$S" --data "$W/esc"$'\e'"[31m" --epochs 1
grep -qF 'esc\x1b[31m' "$W/out" && ! grep -q $'\e' "$W/out" && ok || bad "measure's header prints a raw ESC: $(head -n 2 "$W/out" | od -c | head)"
rm -f "$W/esc"$'\e'"[31m"
# An incomplete generated set is completed and said so: a run that a full
# disk or a kill cut short left no record (.stallsim-generated), one file
# truncated and one missing; a finished set with a file removed since.
G=$W/gen
cp -r "$D" "$G"
[ -f "$G/.stallsim-generated" ] && ok || bad "--generate left no record of a finished set"
rm -f "$G/.stallsim-generated" "$G/class_01/img_000001.jpg"
truncate -s 100 "$G/class_02/img_000002.jpg"
expect 0 "holds 39 generated JPEG(s) but no record that the run writing them finished" -- \
  "$bin" measure "$S" --data "$G" --generate $N --epochs 1 --format csv
grep "epoch 1: " "$W/err" | grep -qF "$N items fetched once each, $N decoded, 0 failed" && ok \
  || bad "the completed set is not whole: $(grep "epoch 1:" "$W/err")"
rm -f "$G/class_03/img_000003.jpg"
expect 0 "holds 39 of the 40 JPEGs a finished --generate wrote" -- \
  "$bin" measure "$S" --data "$G" --generate $N --epochs 1 --format csv
expect 0 "" -- "$bin" measure "$S" --data "$G" --generate $N --epochs 1 --format csv
! grep -q "generating" "$W/err" && ok || bad "a finished set generated again: $(cat "$W/err")"
# Data under folders more than 64 levels down is not searched, and said so.
deep=$G
for i in $(seq 70); do deep=$deep/d; done
mkdir -p "$deep" && cp "$G/class_00/img_000000.jpg" "$deep/"
expect 0 "1 folder(s) more than 64 levels down not searched" -- \
  "$bin" measure "$S" --data "$G" --epochs 1 --format csv
rm -rf "$G"
# A figure the data gave that the scenario cannot take names the data, not
# --set: one item of 400 MB (a sparse tail) among 119 small ones is cv 10.4,
# above dataset.item_kb_cv's bound of 10.
"$bin" measure "$S" --data "$W/skew" --generate 120 --epochs 1 --format csv >/dev/null 2>&1
truncate -s 400M "$(find "$W/skew" -name '*.jpg' | sort | head -n 1)"
expect 2 "--data $W/skew (measured): error: key 'dataset.item_kb_cv': out of bounds" -- \
  "$bin" measure "$S" --data "$W/skew" --epochs 1
rm -rf "$W/skew"

finish measure
