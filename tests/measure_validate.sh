#!/usr/bin/env bash
# measure_validate: validation/measure.sh --quick end to end (calibrate, then
# measure and run side by side): it must finish, and write a table whose rows
# all carry numbers (predicted, measured, errors) and a summary. Whether the
# error targets are met is docs/validation/measure.md's business, not this test's.
# usage: measure_validate.sh SOURCE_DIR BUILD_DIR WORKDIR
set -u
src=$1 build=$2 W=$3
rm -rf "$W" && mkdir -p "$W" || exit 1
bash "$src/validation/measure.sh" --quick --build "$build" --work "$W" --out "$W/V.md" 2>"$W/err" \
  || { echo "FAIL: validate.sh --quick exited $?"; cat "$W/err"; exit 1; }
fail=0
rows=$(grep -c '^| [12] | ' "$W/V.md")
[ "$rows" = 8 ] || { echo "FAIL: $rows table rows, want 8 (4 configurations x 2 epochs)"; fail=1; }
# Every row: predicted and measured seconds > 0, a signed error, stall fractions, a pp difference.
num='-?[0-9]+(\.[0-9]+)?'
bad=$(grep '^| [12] | ' "$W/V.md" | grep -Evc "^\| [12] \| [0-9.]+ \| [0-9]+ \| (warm|cold) \| [12] \| [0-9]+\.[0-9]+ \| [0-9]+\.[0-9]+ \| [-+][0-9]+\.[0-9]% \| $num% \| $num% \| [-+][0-9]+\.[0-9] \| [0-9]+% \| [0-9]+% \| [0-9]+% \|$")
[ "$bad" = 0 ] || { echo "FAIL: $bad malformed rows:"; grep '^| [12] | ' "$W/V.md"; fail=1; }
grep -Eq "^Summary over all 8 rows: median \|error\| in epoch time \*\*[0-9.]+%\*\*" "$W/V.md" \
  || { echo "FAIL: no summary with a median error"; fail=1; }
grep -q "^Worst epoch time: t" "$W/V.md" || { echo "FAIL: no worst case named"; fail=1; }
[ $fail = 0 ] && echo "measure_validate: ok ($rows rows)"
exit $fail
