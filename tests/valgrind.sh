#!/usr/bin/env bash
# valgrind memcheck of the stallsim program: `stallsim run` of a small
# scenario (every variant, text and JSON) and `stallsim check` of every file
# of the bad-input corpus must show no invalid access, no use of
# uninitialised memory and no leak. Exits 77 (ctest: skipped) without valgrind.
# usage: valgrind.sh STALLSIM SOURCE_DIR
set -u
bin=$1
cd "$2" || exit 1
if ! command -v valgrind >/dev/null; then
  echo "valgrind not installed (scripts/setup.sh installs it): skipped"
  exit 77
fi
vg=(valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible
    --errors-for-leak-kinds=definite,indirect,possible)
fail=0
runs=0
check() { # expected-exit command...
  local want=$1
  shift
  "${vg[@]}" "$@" >/dev/null 2>"$log"
  local rc=$?
  runs=$((runs + 1))
  if [ "$rc" != "$want" ]; then
    echo "FAIL (exit $rc, want $want): $*"
    cat "$log"
    fail=$((fail + 1))
  fi
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
check 0 "$bin" run tests/data/small.yaml
check 0 "$bin" run tests/data/small.yaml --format json --epochs 1 --set loader.cache=belady
check 0 "$bin" run tests/data/small.yaml --format csv --epochs 1 --set server.count=2 --set jobs.0.gpus=4 \
  --set loader.cache=minio --set loader.dist_cache=partitioned
for f in tests/bad/*.yaml; do check 2 "$bin" check "$f"; done
echo "valgrind: $runs runs, $fail with memory errors or leaks"
[ "$fail" = 0 ]
