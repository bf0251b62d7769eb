#!/usr/bin/env bash
# validate: holds stallsim's predictions against a real input pipeline on
# this host. Generates a set of JPEGs, calibrates this host on them, then for
# a matrix of configurations (prep threads, GPU compute time per batch, MinIO
# cache size, warm or cold page cache) runs `stallsim measure` (real) and
# `stallsim run` (predicted from the host profile) and writes the
# measured-vs-predicted table, with the commands, into docs/validation/measure.md (between
# the validate:begin/end markers; the rest of the file is left as it is).
#
# usage: validation/measure.sh [--quick] [--build DIR] [--work DIR] [--out FILE] [--items N]
#   --quick   a tiny matrix (4 configurations, 120 images; under 2 minutes): CI
#   --build   the build folder holding sim/stallsim (default: build)
#   --work    scratch folder: data set, profile, raw CSVs (default: $TMPDIR or
#             /var/tmp, /stallsim-validate[-quick]); the data set is kept and reused
#   --out     the markdown file to write (default: docs/validation/measure.md)
#   --items   images in the data set (default 2000; quick 120)
#   --csv     also write every row, tidy (case, then `stallsim run`'s CSV
#             columns; source measured, model, sim), for
#             notebooks/agreement.ipynb (default: notebooks/data/validation.csv;
#             with --quick: WORK/validation.csv)
# Exit: 0 done (whether or not the targets are met), 1 a step failed or a
# result was malformed, 2 bad usage.
set -euo pipefail

quick=0
build=build
out=docs/validation/measure.md
csv=
work=
items=
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=1 ;;
    --build) build=$2; shift ;;
    --work) work=$2; shift ;;
    --out) out=$2; shift ;;
    --items) items=$2; shift ;;
    --csv) csv=$2; shift ;;
    -h | --help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "validate.sh: unknown option '$1' (--help for usage)" >&2; exit 2 ;;
  esac
  shift
done
bin=$build/sim/stallsim
[ -x "$bin" ] || { echo "validate.sh: $bin not found: build first (cmake --build $build)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/stallsim
if [ $quick = 1 ]; then
  : "${work:=${TMPDIR:-/var/tmp}/stallsim-validate-quick}"
  : "${csv:=$work/validation.csv}"
  : "${items:=120}"
else
  : "${work:=${TMPDIR:-/var/tmp}/stallsim-validate}"
  : "${items:=2000}"
fi
: "${csv:=notebooks/data/validation.csv}"
mkdir -p "$work/raw" "$(dirname "$csv")"
rm -f "$csv.tmp"
data=$work/data
log=$work/log
: >"$log"
t_begin=$(date +%s)
load_begin=$(cut -d' ' -f1-3 /proc/loadavg)

# The scenario both commands read: one server, one single-GPU job, MinIO.
# Its prep and storage figures come from the host profile (run) or are done
# for real (measure); everything the matrix varies is given with --set.
batch=32
prefetch=2
qd=16
epochs=2
scn=$work/validate.yaml
cat >"$scn" <<EOF
# written by validation/measure.sh
name: validate
seed: 1
epochs: $epochs
dataset: {items: 1, item_kb: 1}   # measure takes them from --data; run from --set
server: {count: 1, gpus: 1, cache_gb: 0, storage: {queue_depth: $qd}}
jobs:
  - {name: job, gpus: 1, batch_per_gpu: $batch, prefetch_batches: $prefetch}
loader: {cache: minio}
EOF

step() { echo "validate: $*" >&2; }

# 1. The data set (generated once, then reused).
step "data set: $items JPEGs in $data"
"$bin" measure "$scn" --data "$data" --generate "$items" --epochs 1 \
  --set jobs.0.gpu_items_per_s=1e9 --format csv >/dev/null 2>>"$log" \
  || { echo "validate.sh: generating the data set failed (see $log)" >&2; exit 1; }
read -r nfiles mean_b cv total_b < <(find "$data" -type f \( -name '*.jpg' -o -name '*.jpeg' \) -printf '%s\n' |
  awk '{ n++; s += $1; q += $1 * $1 } END { m = s / n; v = q / n - m * m;
         printf "%d %.6f %.6f %.0f\n", n, m, (v > 0 ? sqrt(v) / m : 0), s }')

# 2. Calibrate this host on the same images.
profile=$work/host.yaml
cal_cmd=("$bin" calibrate --data "$data" --out "$profile")
[ $quick = 1 ] && cal_cmd+=(--quick)
step "calibrating: ${cal_cmd[*]}"
"${cal_cmd[@]}" 2>>"$log" || { echo "validate.sh: calibrate failed (see $log)" >&2; exit 1; }
# A scenario-section value of the profile, e.g. prof decode_ms_per_mb.
prof() { awk -v k="$1" '/^measured:/ { exit } $1 == k ":" { print $2; exit }' "$profile"; }
dmb=$(prof decode_ms_per_mb)
ditem=$(prof decode_ms_per_item)
aug=$(prof augment_ms)
# Warm page-cache reads at queue depth 1 (a memory copy): the "storage" that
# MinIO's misses go to when the page cache holds the files.
read -r warm_mb_s warm_items_s < <(awk '/^    warm:/ { w = 1; next } /^    cold:/ { w = 0 }
  w && /queue_depth: 1$/ { q = 1; next } w && q && /mb_s:/ { gsub(/[{},]/, " "); for (i = 1; i <= NF; i++) if ($i == "median:") m = $(i + 1) }
  w && q && /items_s:/ { gsub(/[{},]/, " "); for (i = 1; i <= NF; i++) if ($i == "median:") it = $(i + 1); print m, it; exit }' "$profile")
[ -n "$dmb" ] && [ -n "$aug" ] && [ -n "$warm_mb_s" ] \
  || { echo "validate.sh: cannot read the figures of $profile" >&2; exit 1; }
# latency = time per item at qd 1 less the transfer of a mean item.
warm_lat_ms=$(awk -v it="$warm_items_s" -v mb="$warm_mb_s" -v m="$mean_b" \
  'BEGIN { l = 1e3 / it - m / 1e6 / mb * 1e3; printf "%.6f", (l > 0 ? l : 0) }')
prep_ms=$(awk -v a="$dmb" -v b="$ditem" -v c="$aug" -v m="$mean_b" 'BEGIN { printf "%.6f", a * m / 1e6 + b + c }')
step "profile: decode $dmb ms/MB + $ditem ms, augment $aug ms -> $prep_ms ms/item; warm reads $warm_mb_s MB/s, ${warm_lat_ms} ms"

# 3. The matrix. Compute per batch is k x the predicted prep time of a batch
# on the given threads: k = 0 is loader-bound, k = 2 GPU-bound.
if [ $quick = 1 ]; then
  matrix="1:0:0:warm 2:2:100:cold 1:1:50:cold 2:0.5:0:warm"
else
  matrix=
  for t in 1 2; do for k in 0 0.5 1 2; do for f in 0 50 100; do for p in warm cold; do
    matrix="$matrix $t:$k:$f:$p"
  done; done; done; done
fi
dataset_sets=(--set dataset.items="$nfiles" --set dataset.item_kb="$(awk -v m="$mean_b" 'BEGIN { printf "%.6f", m / 1e3 }')"
  --set dataset.item_kb_cv="$cv")
rows=$work/rows.tsv
: >"$rows"
cmds=$work/commands.txt
: >"$cmds"
nconf=$(wc -w <<<"$matrix")
i=0
for cell in $matrix; do
  IFS=: read -r t k f p <<<"$cell"
  i=$((i + 1))
  if [ "$k" = 0 ]; then
    rate=(--set jobs.0.gpu_items_per_s=1e9)
  else
    rate=(--set "jobs.0.compute_s_per_batch=$(awk -v k="$k" -v b=$batch -v p="$prep_ms" -v t="$t" 'BEGIN { printf "%.6f", k * b * p / 1e3 / t }')")
  fi
  cache_gb=$(awk -v f="$f" -v d="$total_b" 'BEGIN { printf "%.9f", f / 100 * d / 1e9 }')
  if [ "$p" = warm ]; then
    mode=page-warm
    storage=(--set server.storage.read_mb_s="$warm_mb_s" --set server.storage.latency_ms="$warm_lat_ms")
  else
    mode=page-cold-epoch
    storage=()
  fi
  name="t$t-k$k-minio$f-$p"
  mcmd=("$bin" measure "$scn" --data "$data" --set server.cpus="$t" "${rate[@]}" --minio-size "$f%" --cache $mode --format csv)
  rcmd=("$bin" run "$scn" --set host="$profile" --set server.cpus="$t" "${rate[@]}" "${dataset_sets[@]}"
    --set server.cache_gb="$cache_gb" --set server.storage.queue_depth=$qd "${storage[@]}" --format csv)
  printf '%s\n  %s\n  %s\n' "$name" "${mcmd[*]}" "${rcmd[*]}" >>"$cmds"
  step "[$i/$nconf] $name"
  "${mcmd[@]}" >"$work/raw/$name.measured.csv" 2>"$work/raw/$name.measured.err" \
    || { cat "$work/raw/$name.measured.err" >>"$log"; echo "validate.sh: measure failed: ${mcmd[*]} (see $log)" >&2; exit 1; }
  cat "$work/raw/$name.measured.err" >>"$log"
  # The share of their busy time the prep threads spent on a CPU (the lower of
  # the T and T_prep passes), per epoch: below 100% another process held it.
  sed -n 's/.* epoch \([0-9]*\): .*prep threads on a CPU \([0-9.]*\)% of their busy time (T_prep pass \([0-9.]*\)%).*/\1 \2 \3/p' \
    "$work/raw/$name.measured.err" | awk '{ print $1 "\t" ($2 < $3 ? $2 : $3) }' >"$work/raw/$name.share"
  "${rcmd[@]}" >"$work/raw/$name.run.csv" 2>>"$log" || { echo "validate.sh: run failed: ${rcmd[*]} (see $log)" >&2; exit 1; }
  # One row per epoch: predicted (sim) and measured epoch time and stall fraction.
  awk -F, -v name="$name" -v t="$t" -v k="$k" -v f="$f" -v p="$p" -v want="$epochs" -v sharef="$work/raw/$name.share" '
    BEGIN { while ((getline l < sharef) > 0) { split(l, a, "\t"); share[a[1]] = a[2] } }
    FNR == 1 { for (c = 1; c <= NF; c++) col[$c] = c; next }
    { e = $col["epoch"]; src = $col["source"]
      split("epoch_s prep_stall_s fetch_stall_s hit_rate t_gpu_s t_prep_s", need, " ")
      for (c in need) if (!(need[c] in col) || $col[need[c]] !~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) { print "malformed " FILENAME ": " $0 > "/dev/stderr"; bad = 1 }
      if (src == "sim" || src == "measured") {
        T[src, e] = $col["epoch_s"]; S[src, e] = ($col["prep_stall_s"] + $col["fetch_stall_s"]) / $col["epoch_s"]
        H[src, e] = $col["hit_rate"]; n[src]++ } }
    END { if (bad || n["sim"] != want || n["measured"] != want) { print "validate: " name ": expected " want " epochs from each side" > "/dev/stderr"; exit 1 }
      for (e = 1; e <= want; e++) {
        if (!(e in share)) { print "validate: " name ": no CPU share for epoch " e > "/dev/stderr"; exit 1 }
        printf "%s\t%s\t%s\t%s\t%s\t%d\t%.4f\t%.4f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\n", name, t, k, f, p, e,
          T["sim", e], T["measured", e], 100 * (T["sim", e] - T["measured", e]) / T["measured", e],
          100 * S["sim", e], 100 * S["measured", e], 100 * (S["sim", e] - S["measured", e]),
          100 * H["sim", e], 100 * H["measured", e], share[e] } }' \
    "$work/raw/$name.run.csv" "$work/raw/$name.measured.csv" >>"$rows" || exit 1
  # The tidy rows, for the notebooks: the header once, then both sides.
  [ -s "$csv.tmp" ] || sed -n '1s/^/case,/p' "$work/raw/$name.run.csv" >"$csv.tmp"
  sed "1d; s/^/$name,/" "$work/raw/$name.run.csv" "$work/raw/$name.measured.csv" >>"$csv.tmp"
done
mv "$csv.tmp" "$csv"
t_end=$(date +%s)
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# 4. The table and its summary.
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
abs_col() { awk -F'\t' -v c="$1" '{ x = $c; print (x < 0 ? -x : x) }' "${2:-$rows}"; }
med_t=$(abs_col 9 | med)
med_s=$(abs_col 12 | med)
awk -F'\t' '$6 > 1' "$rows" >"$work/steady.tsv"
med_t2=$(abs_col 9 "$work/steady.tsv" | med)
med_s2=$(abs_col 12 "$work/steady.tsv" | med)
awk -F'\t' '$15 >= 90' "$rows" >"$work/alone.tsv"
n_alone=$(wc -l <"$work/alone.tsv")
med_t3=$(abs_col 9 "$work/alone.tsv" | med)
med_s3=$(abs_col 12 "$work/alone.tsv" | med)
worst_t=$(awk -F'\t' '{ x = $9 < 0 ? -$9 : $9; if (x >= m) { m = x; r = $1 " epoch " $6 " (" $9 "%: predicted " $7 " s, measured " $8 " s)" } } END { print r }' "$rows")
worst_s=$(awk -F'\t' '{ x = $12 < 0 ? -$12 : $12; if (x >= m) { m = x; r = $1 " epoch " $6 " (" $12 " pp: predicted " $10 "%, measured " $11 "%)" } } END { print r }' "$rows")
verdict() { awk -v x="$1" -v lim="$2" 'BEGIN { print (x <= lim ? "met" : "**not met**") }'; }

block=$work/block.md
{
  echo "<!-- validate:begin (written by validation/measure.sh; do not edit by hand) -->"
  echo "Command: \`validation/measure.sh$([ $quick = 1 ] && echo " --quick")\`$([ "$(nice)" != 0 ] && echo " at niceness $(nice)") ($nconf configurations, $(wc -l <"$rows") rows, $((t_end - t_begin)) s wall)."
  echo
  echo "Machine: $(uname -n), $(nproc) CPUs ($(awk -F': *' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1e6 }' /proc/meminfo) RAM, $(uname -sr); stallsim $("$bin" --version | cut -d' ' -f2) at $(git -C "$(dirname "$0")/.." rev-parse --short HEAD 2>/dev/null || echo '?'); $(date -u +%Y-%m-%dT%H:%MZ). Load average at start $load_begin, at end $load_end."
  echo
  echo "Data: $nfiles generated JPEGs, $(awk -v d="$total_b" 'BEGIN { printf "%.1f MB", d / 1e6 }'), mean $(awk -v m="$mean_b" 'BEGIN { printf "%.1f KB", m / 1e3 }'), cv $cv. Profile: \`${cal_cmd[*]}\` → decode $dmb ms/MB + $ditem ms, augment $aug ms ($prep_ms ms per mean item on one core); warm page-cache reads $warm_mb_s MB/s + $warm_lat_ms ms."
  echo
  echo "Scenario: one GPU, batch $batch, prefetch $prefetch batches, $epochs epochs, queue depth $qd, MinIO loader (the matrix's cache sizes). Each cell: \`stallsim measure\` with \`--cache page-warm\` (MinIO misses served by the page cache; predicted with the warm read figures) or \`--cache page-cold-epoch\` (the files are evicted before every epoch; predicted with the profile's cold storage model), and \`stallsim run\` with the host profile. k = GPU compute per batch over the predicted prep time of a batch on t threads (k = 0: \`gpu_items_per_s=1e9\`)."
  echo
  echo "CPU: the share of their busy time the prep threads spent on a CPU (thread CPU clock over wall time, the lower of the T and T_prep passes); below 100% another process on this shared VM held the CPU."
  echo
  echo "| t | k | MinIO % | page cache | epoch | predicted s | measured s | error | stall pred | stall meas | diff pp | hit pred | hit meas | CPU |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %.3f | %.3f | %+.1f%% | %.1f%% | %.1f%% | %+.1f | %.0f%% | %.0f%% | %.0f%% |\n", $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15 }' "$rows"
  echo
  echo "Summary over all $(wc -l <"$rows") rows: median |error| in epoch time **$med_t%** (target ≤ 10%: $(verdict "$med_t" 10)); median |difference| in stall fraction **$med_s pp** (target ≤ 5 pp: $(verdict "$med_s" 5))."
  echo "Steady state (epochs ≥ 2): $med_t2% and $med_s2 pp. Rows whose prep threads had a CPU ≥ 90% of their busy time ($n_alone of $(wc -l <"$rows")): $med_t3% and $med_s3 pp."
  echo "Worst epoch time: $worst_t. Worst stall fraction: $worst_s."
  echo
  echo "<details><summary>every command</summary>"
  echo
  echo '```'
  cat "$cmds"
  echo '```'
  echo "</details>"
  echo "<!-- validate:end -->"
} >"$block"

if [ -f "$out" ] && grep -q '<!-- validate:begin' "$out" && grep -q '<!-- validate:end -->' "$out"; then
  awk -v blk="$block" '/<!-- validate:begin/ { while ((getline l < blk) > 0) print l; skip = 1; next }
    /<!-- validate:end -->/ { skip = 0; next } !skip' "$out" >"$out.tmp" && mv "$out.tmp" "$out"
else
  { echo "# Validation: stallsim's predictions against a real pipeline on this host"; echo; cat "$block"; } >"$out"
fi
step "wrote $out: median |error| $med_t% (epoch time), $med_s pp (stall fraction); $((t_end - t_begin)) s"
