#!/usr/bin/env bash
# Robustness round 3 (issue 33): one section per defect, each a check that
# failed on f72e534 (ROBUSTNESS.md, "Round 3", says what it did then).
# Deterministic: no timing figure is compared, only bounds far from the
# expected times.
# usage: robust3.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"
cp "$small" small.yaml
expect_err=$tmp/err.txt
grid=(--vary server.cpus=1:3:1 --model-only)

# ---- D1: an output that is a symbolic link is written through, never replaced
echo old >target.csv
ln -s target.csv link.csv
"$bin" sweep small.yaml "${grid[@]}" -o link.csv 2>/dev/null
check "D1 sweep -o LINK: the link stays a link" '[ -L link.csv ]'
check "D1 sweep -o LINK: the target holds the CSV" 'head -1 target.csv | grep -q "^config,"'
echo old >trace.json
ln -s trace.json tlink.json
"$bin" run small.yaml --epochs 1 --trace tlink.json >/dev/null 2>&1
check "D1 run --trace LINK: the link stays a link" '[ -L tlink.json ]'
check "D1 run --trace LINK: the target holds the trace" 'grep -q displayTimeUnit trace.json'
# A link to this process's stdout (what /dev/stdout is) writes to stdout.
ln -s /proc/self/fd/1 so
"$bin" sweep small.yaml "${grid[@]}" -o so >f.txt 2>/dev/null
check "D1 sweep -o (link to stdout): the link stays" '[ -L so ]'
check "D1 sweep -o (link to stdout): rows on stdout" '[ "$(wc -l <f.txt)" = 13 ]'
"$bin" run small.yaml --epochs 1 --trace so >t.txt 2>r.txt
check "D1 run --trace (link to stdout): trace alone on stdout" \
  'python3 -c "import json,sys; json.load(open(sys.argv[1]))" t.txt 2>/dev/null || grep -q "^{\"displayTimeUnit" t.txt'
check "D1 run --trace (link to stdout): the results on stderr" 'grep -q "small.yaml" r.txt'
"$bin" run small.yaml --epochs 1 --trace - >t2.txt 2>/dev/null
check "D1 run --trace -: the trace on stdout" 'cmp -s t.txt t2.txt'
ln -s /dev/zero dn
expect 2 "a symbolic link to /dev/zero, which is not a regular file" "$bin" run small.yaml --trace dn
check "D1 a link to a device stays" '[ -L dn ] && [ -c /dev/zero ]'
ln -s nowhere/x.csv dangling
expect 2 "a symbolic link that leads to no file" "$bin" sweep small.yaml "${grid[@]}" -o dangling
check "D1 a dangling link stays" '[ -L dangling ]'

# ---- D2: a finished sweep's output is not touched by a sweep of other arguments
"$bin" sweep small.yaml "${grid[@]}" -o m.csv 2>/dev/null
cp m.csv m0.csv
cp m.csv.meta.json m0.json
expect 2 "is the output of a sweep with other arguments" \
  "$bin" sweep small.yaml --vary server.cpus=1:8:1 --epochs 3 -o m.csv
check "D2 the finished CSV unchanged" 'cmp -s m.csv m0.csv'
check "D2 its metadata unchanged (still complete)" 'cmp -s m.csv.meta.json m0.json'
check "D2 no partial file left" '[ ! -e m.csv.partial ]'
expect 0 "complete already" "$bin" sweep small.yaml "${grid[@]}" -o m.csv

# ---- B2, B3: output paths are checked before the work starts
expect 2 "-o nodir/x.csv: cannot write into folder nodir" \
  "$bin" sweep small.yaml "${grid[@]}" -o nodir/x.csv
expect 2 "--html nodir/x.html: cannot write into folder nodir" \
  "$bin" sweep small.yaml "${grid[@]}" -o h.csv --html nodir/x.html
check "B3 nothing written before the refusal" '[ ! -e h.csv ] && [ ! -e h.csv.partial ]'
expect 2 "--trace nodir/t.json: cannot write into folder nodir" \
  "$bin" run small.yaml --trace nodir/t.json

finish robust3
