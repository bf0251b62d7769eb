#!/usr/bin/env bash
# run --format html and sweep --html: one self-contained page each (no
# script, nothing from the network), byte-deterministic; rendered in headless
# Chromium (Debian's chromium: scripts/setup.sh --html), with no console
# message and the charts on the screenshot, counted by their pixels
# (tests/html_check.py). Skips (77) without chromium or /usr/bin/python3.
# usage: html.sh STALLSIM SOURCE_DIR [pages|browser]
#   pages: the pages only (deterministic: the `html` test); browser (default):
#   the pages, then Chromium (a validation test: `html_browser`)
set -u
bin=$1
src=$(cd "$2" && pwd)
mode=${3:-browser}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib.sh"
cd "$src" || exit 1
small=tests/data/small.yaml

# The pages.
"$bin" run $small --format html >"$tmp/run.html" && ok || bad "run --format html"
# The run page carries run's "what to change" block, as text.
grep -q "<h2>What to change</h2>" "$tmp/run.html" && grep -q "GPU [0-9]*% busy" "$tmp/run.html" && ok \
  || bad "run --format html: no 'what to change' section"
"$bin" run $small --format html >"$tmp/run2.html" && cmp -s "$tmp/run.html" "$tmp/run2.html" && ok \
  || bad "run --format html: two runs differ"
"$bin" run $small --format html --model-only >"$tmp/model.html" && grep -q "analytical model" "$tmp/model.html" \
  && ok || bad "run --format html --model-only"
sweep=(sweep $small --variant base --vary server.cache_gb=0:2:0.5 --vary server.cpus=2,4,8,16 --threads 2)
"$bin" "${sweep[@]}" -o "$tmp/s.csv" --html "$tmp/sweep.html" && ok || bad "sweep --html"
"$bin" "${sweep[@]}" -o - --html "$tmp/sweep2.html" >"$tmp/s2.csv" && cmp -s "$tmp/sweep.html" "$tmp/sweep2.html" \
  && cmp -s "$tmp/s.csv" "$tmp/s2.csv" && ok || bad "sweep --html with -o -: another page or CSV"
# Complete already: the page is drawn again from the CSV, the same.
"$bin" "${sweep[@]}" -o "$tmp/s.csv" --html "$tmp/sweep3.html" 2>/dev/null && cmp -s "$tmp/sweep.html" "$tmp/sweep3.html" \
  && ok || bad "sweep --html of a complete sweep: another page"
grep -q "vs server.cache_gb (GB)" "$tmp/sweep.html" && grep -q "vs server.cpus (cores)" "$tmp/sweep.html" \
  && ok || bad "sweep page: an axis (with its unit) is missing"
"$bin" sweep $small --vary variant=base,minio --vary jobs.0.batch_per_gpu=32,64 --model-only -o "$tmp/v.csv" \
  --html "$tmp/v.html" && grep -q "vs variant" "$tmp/v.html" && grep -q "vs jobs.0.batch_per_gpu (items)" "$tmp/v.html" \
  && ok || bad "sweep --html over variants and a job key"

# Self-contained: nothing to run and nothing to fetch.
for f in run model sweep v; do
  p=$tmp/$f.html
  head -c 15 "$p" | grep -q '^<!DOCTYPE html>' && ok || bad "$f.html: no doctype"
  if grep -qiE '<script|<link|<img|<iframe|<object|<embed|@import|@font-face|url\(|https?://|src=|href=' "$p"; then
    bad "$f.html fetches or runs something: $(grep -oiE '<script|<link|<img|<iframe|<object|<embed|@import|@font-face|url\(|https?://|src=|href=' "$p" | head -3 | tr '\n' ' ')"
  else ok; fi
  [ "$(grep -c '<svg' "$p")" -ge 1 ] && ok || bad "$f.html has no chart"
done

# Refused targets.
expect 2 "an input of this sweep" "$bin" sweep $small --vary server.cpus=2,4 -o "$tmp/e.csv" --html $small
expect 2 "the sweep's own output" "$bin" sweep $small --vary server.cpus=2,4 -o "$tmp/e.csv" --html "$tmp/e.csv"
expect 2 "the sweep's own output" "$bin" sweep $small --vary server.cpus=2,4 -o "$tmp/e.csv" --html "$tmp/e.csv.partial"
expect 2 "not a regular file" "$bin" sweep $small --vary server.cpus=2,4 -o "$tmp/e.csv" --html /dev/null
expect 2 "expected text, csv, json or html" "$bin" run $small --format htm
expect 2 "--format html is run's page" "$bin" measure $small --data "$tmp" --format html
[ ! -e "$tmp/e.csv" ] && ok || bad "a refused sweep wrote its CSV"

[ "$mode" = pages ] && { finish html; exit; }

# Headless Chromium.
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chrome" ] || [ ! -x /usr/bin/python3 ]; then
  echo "html: $pass passed, $fail failed; SKIP: the browser checks need Debian's chromium and" \
    "/usr/bin/python3 (scripts/setup.sh --html)"
  [ $fail = 0 ] || exit 1
  exit 77
fi
shoot() { # PAGE PNG LOG WIDTH HEIGHT
  HOME=$tmp timeout 120 "$chrome" --headless --disable-gpu --no-sandbox --hide-scrollbars \
    --user-data-dir="$tmp/profile" --window-size="$4,$5" --screenshot="$2" \
    --enable-logging=stderr --v=0 "file://$1" >"$3" 2>&1 && [ -s "$2" ]
}
page_check() { /usr/bin/python3 tests/html_check.py "$@"; }
shoot "$tmp/run.html" "$tmp/run.png" "$tmp/run.log" 1300 1800 && out=$(page_check "$tmp/run.png" "$tmp/run.log" run) \
  && ok || bad "run page in chromium: $out"
shoot "$tmp/sweep.html" "$tmp/sweep.png" "$tmp/sweep.log" 1800 1400 \
  && out=$(page_check "$tmp/sweep.png" "$tmp/sweep.log" sweep) && ok || bad "sweep page in chromium: $out"
# The checks can fail: a page that logs an error, and a page without charts.
printf '<!DOCTYPE html><html><body><p>x</p><script>console.error("boom")</script></body></html>' >"$tmp/bad.html"
shoot "$tmp/bad.html" "$tmp/bad.png" "$tmp/bad.log" 800 600 && ! page_check "$tmp/bad.png" "$tmp/bad.log" run >/dev/null \
  && grep -q boom "$tmp/bad.log" && ok || bad "the console check misses a console.error"
sed 's#<svg.*##; s#<rect.*##; s#<line.*##; s#<polyline.*##; s#<circle.*##' "$tmp/run.html" >"$tmp/blank.html"
shoot "$tmp/blank.html" "$tmp/blank.png" "$tmp/blank.log" 1300 1800 && ! page_check "$tmp/blank.png" "$tmp/blank.log" run >/dev/null \
  && ok || bad "the pixel check passes a page without charts"
finish html
