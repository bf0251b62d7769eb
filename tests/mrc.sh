#!/usr/bin/env bash
# Cache-size curves and sampled runs through the command line: a
# `--vary server.cache_gb` sweep answered from the curve has, at every size,
# the hit rates of the `--no-curve` sweep that simulates each size; only the
# first, middle and last sizes carry `sim` rows; a sweep with a second axis or
# FIFO is simulated as before; a run past sim.sample_above_items says so in
# text, CSV and JSON, and one below it does not.
# usage: mrc.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"

for v in base minio; do
  "$bin" sweep "$small" --variant $v --epochs 3 --vary server.cache_gb=0:2.2:0.2 -o curve.$v.csv 2>curve.$v.err
  check "$v: curve sweep exits 0" '[ $? = 0 ]'
  "$bin" sweep "$small" --variant $v --epochs 3 --vary server.cache_gb=0:2.2:0.2 --no-curve -o all.$v.csv 2>/dev/null
  check "$v: --no-curve sweep exits 0" '[ $? = 0 ]'
  check "$v: stderr names the curve and its check" 'grep -q "from one cache-size curve" curve.$v.err && grep -q "hit rate differs by at most 0 pp" curve.$v.err'
  # config,gb,variant,job,epoch,source,...: hit_rate's column from the header
  col=$(head -n 1 all.$v.csv | tr , '\n' | grep -n '^hit_rate$' | cut -d: -f1)
  awk -F, -v c="$col" '$6 == "curve" { print $1, $5, $c }' curve.$v.csv >curve.hits
  awk -F, -v c="$col" '$6 == "sim" { print $1, $5, $c }' all.$v.csv >sim.hits
  check "$v: 12 sizes x 3 epochs of curve rows" '[ "$(wc -l <curve.hits)" = 36 ]'
  check "$v: the curve's hit rates are the simulator's at every size" 'cmp -s curve.hits sim.hits'
  check "$v: some sizes hit partly" 'awk "\$3 > 0.05 && \$3 < 0.95" curve.hits | grep -q .'
  check "$v: sim rows at configurations 0, 5, 11 only" \
    '[ "$(awk -F, "\$6 == \"sim\" { print \$1 }" curve.$v.csv | sort -un | tr "\n" " ")" = "0 5 11 " ]'
done
"$bin" sweep "$small" --variant base --vary server.cache_gb=0:2.2:0.2 --vary server.cpus=4,5 -o two.csv 2>/dev/null
check "two axes: simulated as before" '! grep -q ",curve," two.csv && [ "$(grep -c ",sim," two.csv)" = 48 ]'
"$bin" sweep "$small" --variant base --set loader.cache=fifo --vary server.cache_gb=0:2.2:0.2 -o fifo.csv 2>fifo.err
check "fifo: simulated as before, and said why" '! grep -q ",curve," fifo.csv && grep -q "every cache size simulated" fifo.err'

"$bin" run "$small" --variant base --set sim.sample_above_items=1000 --format csv >s.csv
check "sampled CSV rows say sample" 'grep -q ",sample," s.csv && ! grep -q ",sim," s.csv'
"$bin" run "$small" --variant base --set sim.sample_above_items=1000 >s.txt
check "sampled text says so" 'grep -q "^sampled (base): more items than sim.sample_above_items" s.txt'
"$bin" run "$small" --variant base --set sim.sample_above_items=1000 --format json >s.json
check "sampled JSON says so" 'grep -q "\"sim_sampled\": {\"items_share\"" s.json'
"$bin" run "$small" --variant base --format csv >e.csv
check "below the threshold: item by item" 'grep -q ",sim," e.csv && ! grep -q ",sample," e.csv'

"$bin" sweep "$small" --variant base --set sim.sample_above_items=1000 --vary server.cache_gb=0:2.2:0.2 -o samp.csv 2>samp.err
check "sampled cache sweep: every size a sampled run, said why" \
  '[ "$(grep -c ",sample," samp.csv)" = 24 ] && ! grep -q ",sim,\|,curve," samp.csv && grep -q "each size is a sampled run" samp.err'

finish mrc
