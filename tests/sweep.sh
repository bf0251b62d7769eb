#!/usr/bin/env bash
# `stallsim sweep` tests: grid order and columns, rows equal to `stallsim run
# --format csv`, --threads 1 vs 2 byte-identical, resume after kill -9 at several
# points and after a torn tail, refusal of a partial file from other arguments,
# shards concatenating to the whole grid, bad --vary values (exit 2), --tie.
# usage: sweep.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"

# A grid of 3 x 4 = 12 configurations, 2 variants, 2 epochs, model and sim.
grid=(--vary server.cpus=2,3,4 --vary server.cache_gb=0:1.5:0.5)
"$bin" sweep "$small" "${grid[@]}" -o full.csv --threads 1 2>err.txt
check "sweep exits 0 ($(cat err.txt))" '[ $? = 0 ]'
check "no partial file left" '[ ! -e full.csv.partial ]'
check "metadata says complete" 'grep -q "\"status\": \"complete\"" full.csv.meta.json'
check "metadata has the grid size" 'grep -q "\"grid_size\": 12," full.csv.meta.json'
check "metadata has the seed" 'grep -q "\"seed\": 7," full.csv.meta.json'
check "silent when stderr is not a terminal" '[ ! -s err.txt ]'
check "header: config, varied keys with units, run's columns" \
  '[ "$(head -n 1 full.csv | cut -d, -f1-5)" = "config,server.cpus,server.cache_gb,variant,job" ]'
# rows: 12 configs x 2 variants x 1 job x 2 epochs x 2 sources
check "row count 96" '[ $(($(wc -l <full.csv) - 1)) = 96 ]'
# grid order: first --vary slowest; each configuration's rows together.
order=$(tail -n +2 full.csv | cut -d, -f1-3 | uniq | tr '\n' ' ')
want="0,2,0 1,2,0.5 2,2,1 3,2,1.5 4,3,0 5,3,0.5 6,3,1 7,3,1.5 8,4,0 9,4,0.5 10,4,1 11,4,1.5 "
check "grid order: got '$order'" '[ "$order" = "$want" ]'
# every configuration's rows are exactly what `stallsim run --format csv` prints
same=1
for cpus in 2 3 4; do
  for gb in 0 0.5 1 1.5; do
    "$bin" run "$small" --set server.cpus=$cpus --set server.cache_gb=$gb --format csv | tail -n +2 >run.csv
    grep "^[0-9]*,$cpus,$gb," full.csv | cut -d, -f4- | cmp -s - run.csv || same=0
  done
done
check "rows equal stallsim run --format csv" '[ $same = 1 ]'

# --threads does not change a byte.
"$bin" sweep "$small" "${grid[@]}" -o j2.csv --threads 2 2>/dev/null
check "--threads 1 and --threads 2 byte-identical" 'cmp -s full.csv j2.csv'
"$bin" sweep "$small" "${grid[@]}" -o j5.csv --threads 5 2>/dev/null
check "--threads 5 byte-identical" 'cmp -s full.csv j5.csv'

# Rerun of a complete sweep: nothing to do, file unchanged.
"$bin" sweep "$small" "${grid[@]}" -o full.csv 2>err.txt
check "rerun of a complete sweep exits 0" '[ $? = 0 ] && grep -q "complete already" err.txt'

# Shards (contiguous blocks) concatenate to the whole grid, also when uneven.
for n in 3 5 13; do
  rm -f sh.*.csv
  for i in $(seq 1 $n); do "$bin" sweep "$small" "${grid[@]}" -o sh.$i.csv --shard $i/$n 2>/dev/null; done
  { cat sh.1.csv; for i in $(seq 2 $n); do tail -n +2 sh.$i.csv; done; } >cat.csv
  check "$n shards concatenate to the full grid" 'cmp -s cat.csv full.csv'
done

# Validation scales with the shard: a 1e7-point grid's shard of 10 builds its
# own points and each axis value once (it built all 1e7 before, minutes), and
# a value bad alone is still refused by every shard, also one without it.
t0=$(date +%s)
timeout 60 "$bin" sweep "$small" --vary server.cpus=1:1000:1 --vary jobs.0.batch_per_gpu=1:10000:1 \
  --model-only --shard 1/1000000 -o big.csv 2>err.txt
rc=$? dt=$(($(date +%s) - t0))
check "1e7-point grid, shard 1/1000000: exit $rc in $dt s ($(cat err.txt))" \
  '[ $rc = 0 ] && [ $dt -lt 20 ] && [ $(($(wc -l <big.csv) - 1)) = 40 ]'
"$bin" sweep "$small" --vary dataset.shard_items=1,2,100000000 --shard 1/3 --model-only -o bad.csv 2>err.txt
rc=$?
check "a value bad alone stops a shard without it ($(cat err.txt))" \
  '[ $rc = 2 ] && grep -q "configuration 2 (dataset.shard_items=100000000)" err.txt && [ ! -e bad.csv ]'

# --dry-run validates and counts, runs and writes nothing, needs no -o.
out=$("$bin" sweep "$small" "${grid[@]}" --shard 2/3 --dry-run 2>err.txt)
rc=$?
check "--dry-run: exit $rc, '$out' ($(cat err.txt))" \
  '[ $rc = 0 ] && [ "$out" = "12 configurations in the grid; this shard: configurations 4 to 7, 32 rows; nothing run" ] && [ ! -s err.txt ]'
"$bin" sweep "$small" --vary dataset.shard_items=1,100000000 --dry-run -o dry.csv >/dev/null 2>err.txt
rc=$?
check "--dry-run of a bad grid: exit $rc" '[ $rc = 2 ] && [ ! -e dry.csv ] && [ ! -e dry.csv.partial ]'

# A value holding commas (prep.scaling's points) goes in a ';' list.
"$bin" sweep "$small" --vary 'prep.scaling=1:1,2:1.5;1:1,2:2' --model-only -o sc.csv 2>err.txt
rc=$?
a=$(grep '^0,"1:1,2:1.5",' sc.csv | sed 's/^0,"[^"]*",//')
b=$(grep '^1,"1:1,2:2",' sc.csv | sed 's/^1,"[^"]*",//')
check "a ';' list of curves: exit $rc, 2 configurations, each curve's rows its own ($(cat err.txt))" \
  '[ $rc = 0 ] && grep -q "\"grid_size\": 2," sc.csv.meta.json && [ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]'

# Resume after a torn tail: cut the file mid-row, mid-configuration, at a
# configuration boundary and inside the header; rerun; same bytes.
total=$(wc -c <full.csv)
boundary=$(head -n 25 full.csv | wc -c) # header and 3 whole configurations
for cut in 37 500 1000 2345 $boundary $((boundary - 1)) $((total / 2)) $((total - 10)); do
  head -c $cut full.csv >cut.csv.partial
  cp full.csv.meta.json cut.csv.meta.json
  sed -i 's/"status": "complete"/"status": "running"/' cut.csv.meta.json
  "$bin" sweep "$small" "${grid[@]}" -o cut.csv --threads 2 2>err.txt
  check "resume after a cut at byte $cut" 'cmp -s cut.csv full.csv && [ ! -e cut.csv.partial ]'
  # it kept every configuration whose 8 rows were whole (and no more)
  lines=$(head -c $cut full.csv | tr -cd '\n' | wc -c)
  done_cfg=$(( lines > 0 ? (lines - 1) / 8 : 0 ))
  check "cut at byte $cut resumes at configuration $done_cfg ($(cat err.txt))" \
    'grep -q "resuming cut.csv.partial at configuration $done_cfg (" err.txt'
  rm -f cut.csv
done
# A tail of zero bytes (what a power loss can leave) and a stray row.
head -c 3000 full.csv >z.csv.partial
head -c 200 /dev/zero >>z.csv.partial
cp full.csv.meta.json z.csv.meta.json
"$bin" sweep "$small" "${grid[@]}" -o z.csv 2>/dev/null
check "resume after a zero-filled tail" 'cmp -s z.csv full.csv'

# Resume after kill -9 at random points of one sweep, run after run: up to
# 8 runs are killed 0.15-1.15 s in (start-up, validation or a few
# configurations each; the delays come from a fixed seed so a failure
# reproduces), then one runs to the end. The grid takes ~4 s uninterrupted
# on an idle 2-core machine, so most kills land mid-sweep.
big=(--set dataset.items=1000000 --vary server.cpus=2,3,4,5 --vary server.cache_gb=0:5:0.5)
"$bin" sweep "$small" "${big[@]}" -o ref.csv --threads 2 2>/dev/null
kills=0
RANDOM=8
for try in 1 2 3 4 5 6 7 8; do
  delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.15 + (r % 100) / 100 }')
  timeout --foreground -s KILL "$delay" "$bin" sweep "$small" "${big[@]}" -o k.csv --threads 2 2>/dev/null
  [ -e k.csv ] && break
  [ -e k.csv.partial ] || continue
  kills=$((kills + 1))
  # the partial file holds a prefix of the uninterrupted bytes (possibly torn mid-row)
  n=$(wc -c <k.csv.partial)
  check "partial after kill $kills is a prefix of the full output" 'cmp -s -n $n k.csv.partial ref.csv'
done
[ -e k.csv ] || "$bin" sweep "$small" "${big[@]}" -o k.csv --threads 1 2>/dev/null
echo "sweep: $kills runs killed mid-sweep before the last"
check "resume after $kills kill -9s gives exactly the uninterrupted rows" 'cmp -s k.csv ref.csv'
check "several kills landed mid-sweep ($kills)" '[ $kills -ge 3 ]'

# A partial file of other arguments is refused and left alone.
head -c 3000 full.csv >o.csv.partial
cp full.csv.meta.json o.csv.meta.json
sum=$(md5sum <o.csv.partial)
"$bin" sweep "$small" --vary server.cpus=2,3 -o o.csv 2>err.txt
check "partial of other arguments: exit 2" '[ $? = 2 ] && grep -q "other arguments" err.txt'
check "partial of other arguments left alone" '[ "$(md5sum <o.csv.partial)" = "$sum" ]'

# An output that is not a regular file is refused, never renamed over (as
# root, a rename over /dev/full would replace the device).
mkfifo fifo.csv
"$bin" sweep "$small" --vary server.cpus=2,3 --model-only -o fifo.csv 2>err.txt
check "-o a FIFO: exit 2" '[ $? = 2 ] && grep -q "not a regular file" err.txt'
check "-o a FIFO: still a FIFO, no partial" '[ -p fifo.csv ] && [ ! -e fifo.csv.partial ]'

# The variant as an axis, job keys, --model-only, --epochs.
"$bin" sweep "$small" --vary variant=minio,base --vary jobs.0.batch_per_gpu=32,64 --model-only --epochs 1 -o v.csv 2>/dev/null
check "variant axis: exit 0" '[ $? = 0 ]'
check "variant axis: header has no extra variant column" \
  '[ "$(head -n 1 v.csv | cut -d, -f1-3)" = "config,jobs.0.batch_per_gpu,variant" ]'
check "variant axis: rows in grid order" \
  '[ "$(tail -n +2 v.csv | cut -d, -f1-3,6 | tr "\n" " ")" = "0,32,minio,model 1,64,minio,model 2,32,base,model 3,64,base,model " ]'

# Bad input: exit 2, naming --vary and the value.
expect2() {
  local want=$1
  shift
  local err
  err=$("$bin" sweep "$small" "$@" -o bad.csv 2>&1 >/dev/null)
  local rc=$?
  if [ $rc = 2 ] && grep -qF -- "$want" <<<"$err" && [ ! -e bad.csv ] && [ ! -e bad.csv.partial ]; then ok; else bad "sweep $* -> exit $rc, stderr: $err"; fi
}
expect2 "--vary server.cpus=2,x: value 'x': expected an integer" --vary server.cpus=2,x
expect2 "value '0': out of bounds" --vary server.cpus=4,0
expect2 "unknown key 'server.cpu'; did you mean 'server.cpus'?" --vary server.cpu=2
expect2 "no variant named 'foo'" --vary variant=base,foo
expect2 "the step must be non-zero" --vary server.cache_gb=0:1:0
expect2 "the step must be non-zero" --vary server.cache_gb=1:0:0.5
expect2 "an integer key needs an integer start and step" --vary server.cpus=1:4:0.5
expect2 "expected a range as start:end:step" --vary server.cache_gb=0:1
expect2 "expected one of: none, lru, minio, fifo, belady" --vary loader.cache=lru,mru
expect2 "an empty value" --vary server.cpus=2,,4
expect2 "is already varied" --vary server.cpus=2 --vary server.cpus=4
# a value valid alone but not with the others: the last configuration
expect2 "configuration 2 (jobs.0.count=4) of --vary is invalid" --vary jobs.0.count=1,1,4
expect2 "stallsim sweep: --jobs" --vary server.cpus=2 --jobs 0
expect2 "stallsim sweep: --threads: expected an integer in [1, 1024]" --vary server.cpus=2 --threads 0

# --jobs still works, with a note; -o - streams the same CSV to stdout, and
# leaves no file called '-' nor metadata.
"$bin" sweep "$small" "${grid[@]}" -o old.csv --jobs 2 2>err.txt
check "--jobs: same rows as --threads" 'cmp -s full.csv old.csv'
check "--jobs: a deprecation note" 'grep -q "deprecated.*--threads" err.txt'
"$bin" sweep "$small" "${grid[@]}" -o - --threads 2 >stream.csv 2>err.txt
check "-o - exits 0 ($(cat err.txt))" '[ $? = 0 ]'
check "-o - writes the CSV to stdout" 'cmp -s full.csv stream.csv'
check "-o - makes no file named -" '[ ! -e ./- ] && [ ! -e ./-.meta.json ] && [ ! -e ./-.partial ]'
expect2 "stallsim sweep: --shard" --vary server.cpus=2 --shard 3/2

# A varied key a variant run sets itself is noted (the variant wins), only for the variants run.
"$bin" sweep "$small" --model-only --vary loader.cache=lru,none -o - >/dev/null 2>note.err
check "note: minio sets the varied loader.cache ($(cat note.err))" \
  'grep -qx "stallsim sweep: note: variant .minio. sets loader.cache itself, so --vary loader.cache does not change it there" note.err'
"$bin" sweep "$small" --model-only --vary loader.cache=lru,none --variant base -o - >/dev/null 2>note.err
check "no note when that variant is not run ($(cat note.err))" '[ ! -s note.err ]'
expect2 "nothing to sweep" --set server.cpus=2
expect2 "--variant and --vary variant" --vary variant=base --variant base

# Two sweeps on one -o: the second is refused while the first holds the lock
# (naming it), and the first's output is whole.
"$bin" sweep "$small" "${big[@]}" -o lock.csv --threads 1 2>lock1.err &
first=$!
for _ in $(seq 50); do [ -s lock.csv.partial ] && break; sleep 0.1; done
"$bin" sweep "$small" "${big[@]}" -o lock.csv --threads 1 2>lock2.err
rc2=$?
wait $first
rc1=$?
check "second sweep on one -o: exit 2 ($(cat lock2.err))" '[ $rc2 = 2 ]'
check "second sweep names the first" 'grep -q "another process (pid $first) is writing lock.csv.partial" lock2.err'
check "first sweep: exit 0 ($(cat lock1.err))" '[ $rc1 = 0 ]'
check "first sweep's CSV whole" 'cmp -s ref.csv lock.csv'

# -o naming an input (the scenario, a host profile) is refused; the input stays.
cp "$small" own.yaml
printf 'profile_version: 1\nscenario:\n  server: {cpus: 4}\n' > prof.yaml
printf 'host: prof.yaml\n' >> own.yaml
sum=$(cat own.yaml prof.yaml | cksum)
"$bin" sweep own.yaml --vary server.cache_gb=0,1 -o own.yaml 2>in1.err
rc=$?
check "-o the scenario: exit 2 ($(cat in1.err))" '[ $rc = 2 ] && grep -q "would write over own.yaml, an input of this sweep (the scenario)" in1.err'
"$bin" sweep own.yaml --vary server.cache_gb=0,1 -o prof.yaml 2>in2.err
rc=$?
check "-o the host profile: exit 2 ($(cat in2.err))" '[ $rc = 2 ] && grep -q "an input of this sweep (the host profile ./prof.yaml)" in2.err'
check "inputs untouched" '[ "$(cat own.yaml prof.yaml | cksum)" = "$sum" ] && [ ! -e own.yaml.partial ] && [ ! -e prof.yaml.meta.json ]'
# The same for a price file, a host profile that only a --vary value names,
# and the scenario under another name (a hard link): compared as files.
printf 'prices_version: 1\nsource: test\ndate: today\nprices: {gpu_hour: 1}\n' >price.yaml
printf 'profile_version: 1\nscenario:\n  server: {cpus: 3}\n' >prof2.yaml
ln own.yaml own-link.yaml
sum=$(cat own.yaml prof.yaml prof2.yaml price.yaml | cksum)
"$bin" sweep own.yaml --set prices=price.yaml --vary server.cache_gb=0,1 --model-only -o price.yaml 2>in3.err
rc=$?
check "-o the price file: exit 2 ($(cat in3.err))" '[ $rc = 2 ] && grep -q "would write over price.yaml, an input of this sweep (the price file ./price.yaml)" in3.err'
"$bin" sweep own.yaml --vary host=prof.yaml,prof2.yaml --model-only -o prof2.yaml 2>in4.err
rc=$?
check "-o a host profile named by --vary: exit 2 ($(cat in4.err))" '[ $rc = 2 ] && grep -q "(the host profile ./prof2.yaml)" in4.err'
"$bin" sweep own.yaml --vary server.cache_gb=0,1 --model-only -o own-link.yaml 2>in5.err
rc=$?
check "-o a link to the scenario: exit 2 ($(cat in5.err))" '[ $rc = 2 ] && grep -q "(the scenario)" in5.err'
check "inputs untouched (prices, --vary host, link)" '[ "$(cat own.yaml prof.yaml prof2.yaml price.yaml | cksum)" = "$sum" ] && [ ! -e price.yaml.partial ] && [ ! -e prof2.yaml.partial ]'

# Memory: each worker thread holds a simulation, so --threads N needs N of
# the largest. Under a memory limit that holds one but not two, --threads 2
# is refused at once, saying which --threads fits (check, one simulation,
# passes). Sized from check's own figures under the same limit; item by item
# (sim.sample_above_items past the sizes: a sampled run needs far less).
lim=1500000
if grep -qa __asan_init "$bin"; then
  echo "sweep: memory-limit case skipped: ASan reserves more address space than ulimit -v allows"
  fig=skip
else
  fig=$( (ulimit -v $lim; "$bin" check "$small" --variant base --set dataset.items=1e9 --set sim.sample_above_items=4e9 2>&1) |
    sed -n 's/.*needs \([0-9.]*\) GiB of memory, this machine has \([0-9.]*\) GiB.*/\1 \2/p')
fi
items=
[ "$fig" = skip ] || items=$(awk -v f="$fig" 'BEGIN { split(f, a, " "); if (a[1] > 0) printf "%.0f", 0.7 * a[2] / (a[1] / 1e9) }')
if [ -n "$items" ]; then
  ( ulimit -v $lim; "$bin" check "$small" --variant base --set dataset.items=$items --set sim.sample_above_items=4e9 >/dev/null 2>mem0.err )
  check "one simulation of $items items fits under ulimit -v $lim ($(cat mem0.err))" '[ $? = 0 ]'
  start=$(date +%s)
  ( ulimit -v $lim; "$bin" sweep "$small" --variant base --set dataset.items=$items \
      --set sim.sample_above_items=4e9 --vary server.cpus=2,3 --threads 2 -o mem.csv 2>mem.err )
  rc=$?
  check "--threads 2 that cannot fit: exit 2 ($(cat mem.err))" '[ $rc = 2 ] && grep -q "runs 2 simulations at once.*--threads 1 fits" mem.err'
  check "--threads 2 that cannot fit: said at once, nothing written" '[ $(( $(date +%s) - start )) -le 5 ] && [ ! -e mem.csv.partial ] && [ ! -e mem.csv.meta.json ]'
elif [ "$fig" != skip ]; then
  bad "memory figures not found in check's message: '$fig'"
fi

# A cache-size curve's replay is counted before anything runs: one too big
# for the memory is refused (exit 2, nothing written), not failed midway.
if ! grep -qa __asan_init "$bin"; then
  (ulimit -v 400000; "$bin" sweep "$small" --variant base --vary server.cache_gb=0:2:0.002 \
    --epochs 200 -o big.csv --threads 2 >/dev/null 2>err.txt)
  rc=$?
  check "a curve whose replay does not fit: exit $rc ($(cat err.txt))" \
    '[ $rc = 2 ] && grep -q "the cache-size curve.s replay (0.8 GiB)" err.txt && [ ! -e big.csv.partial ]'
fi

# Names with a comma or a quote (a job, a variant) are quoted CSV fields
# (RFC 4180) in the sweep too, and a resume reads them back: it keeps every
# whole configuration instead of starting over.
sed -e 's/name: net/name: "net, v2"/' -e 's/^  minio:/  "mi,\\"nio":/' "$small" >names.yaml
"$bin" sweep names.yaml "${grid[@]}" --threads 2 -o names.csv 2>err.txt
check "names: sweep exits 0 ($(cat err.txt))" '[ $? = 0 ]'
check "names: quoted fields" 'grep -q "^0,2,0,base,\"net, v2\",1,model," names.csv && grep -q "^0,2,0,\"mi,\"\"nio\",\"net, v2\",1,model," names.csv'
if command -v python3 >/dev/null; then
  python3 -c '
import csv
rows = list(csv.reader(open("names.csv")))
assert len(rows) == 97 and {len(r) for r in rows} == {len(rows[0])}, len(rows)' && ok || bad "names.csv does not parse back"
fi
head -n 25 names.csv >nres.csv.partial # the header and 3 whole configurations
cp names.csv.meta.json nres.csv.meta.json
sed -i 's/"status": "complete"/"status": "running"/' nres.csv.meta.json
"$bin" sweep names.yaml "${grid[@]}" --threads 2 -o nres.csv 2>err.txt
check "names: resume keeps the 3 whole configurations ($(cat err.txt))" 'grep -q "resuming nres.csv.partial at configuration 3 (" err.txt'
check "names: resumed CSV byte-identical" 'cmp -s nres.csv names.csv'

# --tie: two varied keys move as one (value i with value i); the tied axis
# adds no configurations and its rows are those of run with both values set.
"$bin" sweep "$small" --model-only --vary server.cpus=2,3,4 --vary server.cache_gb=0,1 \
  --vary server.storage.queue_depth=4,8,16 --tie server.cpus=server.storage.queue_depth -o tie.csv 2>err.txt
check "tie: sweep exits 0 ($(cat err.txt))" '[ $? = 0 ]'
check "tie: 6 configurations" 'grep -q "\"grid_size\": 6," tie.csv.meta.json && grep -q "\"tied_to\": \"server.cpus\"" tie.csv.meta.json'
order=$(tail -n +2 tie.csv | cut -d, -f1-4 | uniq | tr '\n' ' ')
check "tie: paired values, got '$order'" '[ "$order" = "0,2,0,4 1,2,1,4 2,3,0,8 3,3,1,8 4,4,0,16 5,4,1,16 " ]'
want=$("$bin" run "$small" --model-only --format csv --set server.cpus=3 --set server.cache_gb=1 --set server.storage.queue_depth=8 | tail -n +2)
check "tie: configuration 3 is run's output" '[ "$(grep "^3," tie.csv | cut -d, -f5-)" = "$want" ]'
# Shards of a tied grid validate each free value once and concatenate to the whole.
for i in 1 2 3; do
  "$bin" sweep "$small" --model-only --vary server.cpus=2,3,4 --vary server.cache_gb=0,1 \
    --vary server.storage.queue_depth=4,8,16 --tie server.cpus=server.storage.queue_depth --shard $i/3 -o tie.$i.csv 2>err.txt \
    || bad "tie shard $i: $(cat err.txt)"
done
{ cat tie.1.csv; tail -n +2 tie.2.csv; tail -n +2 tie.3.csv; } >tie.all.csv
check "tie: shards concatenate to the whole" 'cmp -s tie.all.csv tie.csv'
for t in server.cpus=server.cache_gb server.cpus=server.nope server.cpus=server.gpus server.cpus=server.cpus server.cpus; do
  "$bin" sweep "$small" --model-only --vary server.cpus=2,3,4 --vary server.cache_gb=0,1 --tie $t -o tbad.csv 2>err.txt
  rc=$?
  check "--tie $t: exit 2 with the reason ($(cat err.txt))" '[ $rc = 2 ] && grep -q "^stallsim sweep: --tie $t: " err.txt && [ ! -e tbad.csv.partial ]'
done

finish sweep
