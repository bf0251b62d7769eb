#!/usr/bin/env bash
# stallsim compare: a fixed measured profile (tests/data/measured.yaml,
# written once by stallsim.watch over a sleeping iterable: 4 ms before each
# batch, a 6 ms step, 40 batches of 8, 2 epochs, differential=10) against
# tests/data/compare.yaml: text, JSON and HTML byte for byte against
# tests/golden/compare.*, the same bytes twice, JSON that a strict parser
# takes (no inf/nan), and every bad-input class: file:line:col, the key,
# what was expected, exit 2.
#   tests/compare.sh STALLSIM SRCDIR [--update]
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"
update=${3:-}
m=$src/tests/data/measured.yaml
s=$src/tests/data/compare.yaml
cd "$src" || exit 1 # the paths in the outputs are relative, as a user types them

for fmt in text json html; do
  out=$tmp/compare.$fmt
  "$bin" compare tests/data/measured.yaml tests/data/compare.yaml --variant base --format $fmt \
    >"$out" 2>"$tmp/err"
  rc=$?
  if [ $rc != 0 ]; then
    bad "compare --format $fmt: exit $rc: $(head -3 "$tmp/err")"
    continue
  fi
  if [ "$update" = --update ]; then
    cp "$out" "tests/golden/compare.$fmt"
  else
    cmp -s "$out" "tests/golden/compare.$fmt" && ok \
      || bad "compare --format $fmt differs from tests/golden/compare.$fmt: $(diff "tests/golden/compare.$fmt" "$out" | head -6)"
  fi
  "$bin" compare tests/data/measured.yaml tests/data/compare.yaml --variant base --format $fmt \
    | cmp -s - "$out" && ok || bad "compare --format $fmt: not the same bytes twice"
done
python3 - "$tmp/compare.json" <<'PY' && ok || bad "compare --format json: not strict JSON"
import json, sys
def no(c):
    raise ValueError(f"non-finite number {c}")
j = json.load(open(sys.argv[1]), parse_constant=no)
assert len(j["epochs"]) == 2 and j["explain"]["input"] and j["split_ms"]["measured"]["t"] > 0, j
PY
# The explanation follows the input: a slower prep in the scenario is named.
"$bin" compare "$m" "$s" --variant slow-prep | grep -q "^most likely: prep:" && ok \
  || bad "compare --variant slow-prep does not name prep"
# The measured step as the scenario's: named when it is the gap.
"$bin" compare "$m" "$s" --variant base --set jobs.0.compute_s_per_batch=0.02 \
  | grep -q "^most likely: the step:" && ok || bad "a 20 ms step is not named"
"$bin" compare "$m" "$s" --variant base --set dataset.items=3200 \
  | grep -q "^most likely: the batches per epoch: 40 measured, 400" && ok \
  || bad "batches per epoch are not named"

# Usage.
expect 2 "expected the measured profile first" -- "$bin" compare --variant base "$m" "$s"
expect 2 "missing the scenario file" -- "$bin" compare "$m"
expect 2 "has 2 variants" -- "$bin" compare "$m" "$s"
expect 2 "expected text, json or html" -- "$bin" compare "$m" "$s" --variant base --format csv
expect 0 "" -- "$bin" compare --help
expect 0 "" -- "$bin" help measured

# Bad measured profiles: each one key wrong in a copy of the fixture.
bad_file() { # NAME SED_EXPR: a copy with the edit
  sed "$2" "$m" >"$tmp/$1.yaml"
}
bad_file typo 's/wait_p50_ms:/wait_p5O_ms:/'
expect 2 "typo.yaml:14:98: error: unknown key 'epochs.1.wait_p5O_ms'" -- "$bin" compare "$tmp/typo.yaml" "$s" --variant base
expect 2 "did you mean 'epochs.N.wait_p50_ms'" -- "$bin" compare "$tmp/typo.yaml" "$s" --variant base
bad_file negative '/^  1:/s/epoch_s: 0.43336993/epoch_s: -1/'
expect 2 "key 'epochs.1.epoch_s': expected a number in (0, 1e+10] (finite), got '-1'" -- \
  "$bin" compare "$tmp/negative.yaml" "$s" --variant base
bad_file inf '/^  1:/s/wait_s: 0.175040435/wait_s: .inf/'
expect 2 "key 'epochs.1.wait_s': expected a number in [0, 1e+10] (finite), got '.inf'" -- \
  "$bin" compare "$tmp/inf.yaml" "$s" --variant base
bad_file nan '/^  1:/s/wait_s: 0.175040435/wait_s: nan/'
expect 2 "key 'epochs.1.wait_s'" -- "$bin" compare "$tmp/nan.yaml" "$s" --variant base
bad_file sum '/^  1:/s/wait_s: 0.175040435/wait_s: 0.3/'
expect 2 "key 'epochs.1.epoch_s': expected wait_s + step_s" -- \
  "$bin" compare "$tmp/sum.yaml" "$s" --variant base
bad_file gap '/^  2:/s/^  2:/  3:/'
expect 2 "key 'epochs.2': missing" -- "$bin" compare "$tmp/gap.yaml" "$s" --variant base
bad_file noversion '/^measured_version/d'
expect 2 "expected 'measured_version: 1'" -- "$bin" compare "$tmp/noversion.yaml" "$s" --variant base
bad_file version2 's/^measured_version: 1/measured_version: 2/'
expect 2 "key 'measured_version': expected a whole number equal to 1" -- \
  "$bin" compare "$tmp/version2.yaml" "$s" --variant base
bad_file noiters '/^  1:/s/iterations: 40, //'
expect 2 "key 'epochs.1.iterations': missing" -- "$bin" compare "$tmp/noiters.yaml" "$s" --variant base
bad_file halfdiff '/t_gpu_ms/d'
expect 2 "halfdiff.yaml:17:3: error: key 'differential.t_gpu_ms': missing" -- \
  "$bin" compare "$tmp/halfdiff.yaml" "$s" --variant base
bad_file boolean '/^  1:/s/complete: true/complete: yes/'
expect 2 "expected true or false, got 'yes'" -- "$bin" compare "$tmp/boolean.yaml" "$s" --variant base
printf 'measured_version: 1\nepochs: [1, 2]\n' >"$tmp/list.yaml"
expect 2 "key 'epochs': expected epochs as a mapping of epoch numbers" -- \
  "$bin" compare "$tmp/list.yaml" "$s" --variant base
printf 'measured_version: 1\nepochs: {0: {iterations: 1}}\n' >"$tmp/zero.yaml"
expect 2 "expected epochs as a mapping of epoch numbers 1 to" -- \
  "$bin" compare "$tmp/zero.yaml" "$s" --variant base
printf 'measured_version: 1\nepochs: {1: {iterations: 1, epoch_s: 1, wait_s: 0.5, step_s: 0.5}\n' \
  >"$tmp/broken.yaml"
expect 2 "broken.yaml:" -- "$bin" compare "$tmp/broken.yaml" "$s" --variant base
expect 2 "" -- "$bin" compare "$tmp/absent.yaml" "$s" --variant base
# A bad scenario key on the command line is the scenario's error, exit 2.
expect 2 "server.cpu" -- "$bin" compare "$m" "$s" --variant base --set server.cpu=3
finish compare
