#!/usr/bin/env bash
# validation-suite: stallsim against real components on this host, apart from
# the deterministic suite (README command 2). Runs every ctest test labelled
# validation (tests/CMakeLists.txt: PyTorch, nginx in a network namespace,
# throttled disks, the page cache and memory in cgroups, Chromium, time
# targets), one at a time, after the PyTorch DataLoader kind against real
# PyTorch (scripts/validate_torch.py --quick).
#
# It never fails on load alone and never passes without measuring:
# - before each test it reads the load average; above one per core (the
#   rule calibrate's stability check uses) it waits up to --wait seconds for
#   the host to settle, then runs anyway;
# - a test that fails runs once more (after the same wait); failing again on
#   a host that was busy around either run, it is "not measured: host busy",
#   not a failure; failing again on an idle host, it fails;
# - a test that cannot measure here skips (77) and says why (not root, a tool
#   missing); the summary repeats each reason;
# - if nothing was measured (everything skipped or busy) it says so and
#   exits 77, never 0.
#
# - with --budget, an item starts only if the time it took on the idle VM
#   (the table below; 120 s for an item not in it) still fits in what is
#   left of the budget; the items left are listed "not run: past the
#   budget", never passed (a started item runs to its end, its retry
#   included, so a retry can overrun the budget by one item's time);
# - items run in the table's order (what CI must not leave out first),
#   then any other validation test in ctest's order.
#
# usage: scripts/validation-suite.sh [--build DIR] [--wait S] [--budget S] [--only REGEX] [--no-torch-quick]
#   --build  the configured and built tree (default: build; README command 2 makes it)
#   --wait   seconds to wait for a busy host to settle before a run (default 60)
#   --budget start no item that would not fit in this many seconds from the start (default: none)
#   --only   run only the validation tests whose names match (ctest -R)
#   --no-torch-quick  leave out scripts/validate_torch.py --quick
# Exit: 0 every test that measured passed (at least one did), 1 a test
# failed on an idle host, 2 bad usage or no build, 77 nothing measured.
set -uo pipefail
cd "$(dirname "$0")/.."

build=build
wait_s=60
budget=
only=
torch_quick=1
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?--build needs a folder}; shift ;;
    --wait) wait_s=${2:?--wait needs seconds}; shift ;;
    --budget) budget=${2:?--budget needs seconds}; shift ;;
    --only) only=${2:?--only needs a regular expression}; shift ;;
    --no-torch-quick) torch_quick=0 ;;
    -h | --help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "validation-suite.sh: unknown option '$1' (--help for usage)" >&2; exit 2 ;;
  esac
  shift
done
case $wait_s in '' | *[!0-9]*) echo "validation-suite.sh: --wait: expected whole seconds, got '$wait_s'" >&2; exit 2 ;; esac
case $budget in *[!0-9]*) echo "validation-suite.sh: --budget: expected whole seconds, got '$budget'" >&2; exit 2 ;; esac
[ -f "$build/CTestTestfile.cmake" ] && [ -x "$build/sim/stallsim" ] || {
  echo "validation-suite.sh: no built tree in '$build': build first (README command 2, or" \
    "cmake -S . -B $build && cmake --build $build -j)" >&2
  exit 2
}

cores=$(nproc)
log_dir=$(mktemp -d "${TMPDIR:-/tmp}/stallsim-validation.XXXXXX")
# (VALIDATION_LOADAVG names another file in /proc/loadavg's format: for
# trying the busy and idle paths of this script.)
loadavg=${VALIDATION_LOADAVG:-/proc/loadavg}
load1() { cut -d' ' -f1 "$loadavg"; }
busy() { awk -v l="$(load1)" -v c="$cores" 'BEGIN { exit !(l > c) }'; }
# Waits (bounded) for the load average to fall to one per core; prints the
# load it starts at.
settle() {
  local start waited=0
  start=$(load1)
  while busy && [ $waited -lt "$wait_s" ]; do
    sleep 10
    waited=$((waited + 10))
  done
  echo "$start"
}

# Each item's wall time on the idle 2-vCPU VM (BENCHMARKS.md, "CI stages";
# torch_quick is scripts/validate_torch.py --quick), in the order they run.
# torch_mem's 100 s is an estimate, not an idle run: 83 s of CPU, 295 s wall
# at load 8-21 (VALIDATION.md, "Server memory").
expected_s=(torch_quick:175 torch_probe:40 torch_pipelines:70 netns:180 objectstore:285
  torch_tier:150 torch_shm:45 torch_mem:100 disk:80 pagecache:20 memlimit:5
  measure_validate_quick:10 calib_quick_time:10 html_browser:20 torch_watch:60 gpu_validate:5
  torch_regimes:130)
expected() { # NAME: seconds
  local e
  for e in "${expected_s[@]}"; do [ "${e%%:*}" = "$1" ] && { echo "${e#*:}"; return; }; done
  echo 120
}
found=()
while read -r n; do found+=("$n"); done < <(ctest --test-dir "$build" -N -L validation ${only:+-R "$only"} |
  sed -n 's/^ *Test *#[0-9]*: //p')
names=()
for e in "${expected_s[@]}"; do
  for n in "${found[@]}"; do [ "$n" = "${e%%:*}" ] && names+=("$n"); done
done
for n in "${found[@]}"; do
  [[ " ${expected_s[*]} " == *" $n:"* ]] || names+=("$n")
done
[ ${#names[@]} -gt 0 ] || [ $torch_quick = 1 ] || { echo "validation-suite.sh: no validation test matches" >&2; exit 2; }

# One run of one item: sets $outcome (passed, failed, skipped) and $why.
run_ctest() { # NAME LOG
  ctest --test-dir "$build" -R "^$1\$" -L validation --output-on-failure -V >"$2" 2>&1
  if grep -q "^1/1 Test *#[0-9]*: $1 \.*  *Passed" "$2"; then
    outcome=passed
  elif grep -q "^1/1 Test *#[0-9]*: $1 \.*\*\*\*Skipped" "$2"; then
    outcome=skipped
  else
    outcome=failed
  fi
}
run_torch_quick() { # NAME LOG
  local rc=0
  if [ ! -x /usr/bin/python3 ]; then
    echo "validate_torch: skipped: /usr/bin/python3 missing" >"$2"
    rc=77
  else
    /usr/bin/python3 scripts/validate_torch.py --quick --bin "$build/sim/stallsim" \
      --data "${TMPDIR:-/var/tmp}/stallsim-ci-torch/data" >"$2" 2>&1 || rc=$?
  fi
  case $rc in 0) outcome=passed ;; 77) outcome=skipped ;; *) outcome=failed ;; esac
}
skip_reason() { # LOG: the test's own words for why it skipped
  sed 's/^[0-9]*: //' "$1" | grep -E "skipped|SKIP|skipping" |
    grep -vE "^ *([0-9]+/[0-9]+ Test|Start |Test command|[0-9]+ - )|tests skipped" | head -n 1 | cut -c1-200
}

results=()
measured=0 failures=0
unrun=0
run_item() { # NAME RUNNER
  local name=$1 runner=$2 l1 l2 log=$log_dir/$1.log t0
  local left=$((${budget:-0} - ($(date +%s) - t_begin)))
  if [ -n "$budget" ] && [ "$(expected "$name")" -gt "$left" ]; then
    unrun=$((unrun + 1))
    results+=("$(printf '%-24s %s' "$name" "not run: past the budget (--budget $budget s: $left s left, it takes about $(expected "$name") s)")")
    echo "validation: $name: not run: past the budget ($left s left of $budget, it takes about $(expected "$name") s)" >&2
    return
  fi
  l1=$(settle)
  t0=$(date +%s)
  echo "validation: $name (load average $l1 on $cores cores) ..." >&2
  "$runner" "$name" "$log"
  local first=$outcome
  if [ "$outcome" = failed ]; then
    cp "$log" "$log.first"
    echo "validation: $name failed; once more (output: $log.first)" >&2
    l2=$(settle)
    "$runner" "$name" "$log"
  fi
  local dt=$(($(date +%s) - t0)) line
  case $outcome in
    passed)
      measured=$((measured + 1))
      line="passed ($dt s)"
      [ "$first" = failed ] && line="passed on the retry ($dt s; first run: $log.first)" ;;
    skipped)
      line="skipped: $(skip_reason "$log")" ;;
    failed)
      if awk -v a="$l1" -v b="$l2" -v c="$(load1)" -v n="$cores" 'BEGIN { exit !(a > n || b > n || c > n) }'; then
        line="not measured: host busy (load average $l1, then $l2, now $(load1) on $cores cores); failed twice ($log)"
      else
        failures=$((failures + 1))
        measured=$((measured + 1))
        line="FAILED twice on an idle host (load average $l1, then $l2 on $cores cores): $log"
      fi ;;
  esac
  results+=("$(printf '%-24s %s' "$name" "$line")")
  echo "validation: $name: $line" >&2
}

t_begin=$(date +%s)
load_begin=$(cut -d' ' -f1-3 "$loadavg")
# The PyTorch kind against real PyTorch first: under --budget it is the
# item CI must not leave out.
[ $torch_quick = 1 ] && { [ -z "$only" ] || [[ torch_quick =~ $only ]]; } && run_item torch_quick run_torch_quick
for n in "${names[@]}"; do run_item "$n" run_ctest; done

echo
echo "validation summary ($(uname -n), $cores cores; load average $load_begin at the start," \
  "$(cut -d' ' -f1-3 "$loadavg") at the end; $(($(date +%s) - t_begin)) s; logs in $log_dir):"
printf '  %s\n' "${results[@]}"
if [ $failures -gt 0 ]; then
  echo "validation: $failures FAILED (on an idle host, twice)"
  exit 1
fi
if [ $measured = 0 ]; then
  echo "validation: NOTHING MEASURED: every item skipped, found the host busy or was not run (reasons above);" \
    "this is not a pass"
  exit 77
fi
echo "validation: $measured measured and passed; the rest skipped, not measured or not run (reasons above)"
