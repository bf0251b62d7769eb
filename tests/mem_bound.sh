#!/usr/bin/env bash
# The memory-bandwidth bound on prep cores through `stallsim run`: the text
# and JSON say when it binds (past a measured curve and under linear
# scaling), when it does not, and nothing of it without both keys.
# usage: mem_bound.sh STALLSIM SOURCE_DIR
set -u
bin=$1
cd "$2" || exit 1
small=tests/data/small.yaml # 4 cores, 1.5 ms of prep a mean item (1 + 0.5)
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
has() { # WHAT FILE TEXT: the file holds the text
  grep -qF -- "$3" "$2" || fail "$1: no '$3' in: $(grep -F 'prep' "$2" | head -3)"
}
lacks() {
  ! grep -qF -- "$3" "$2" || fail "$1: unexpected '$3'"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # NAME ARGS...: text and JSON of small.yaml under the --set ARGS
  local name=$1
  shift
  "$bin" run $small --model-only "$@" >"$tmp/$name.text" 2>"$tmp/$name.err" ||
    fail "$name: text exit $?: $(cat "$tmp/$name.err")"
  "$bin" run $small --model-only --format json "$@" >"$tmp/$name.json" 2>>"$tmp/$name.err" ||
    fail "$name: json exit $?: $(cat "$tmp/$name.err")"
}

# Past the curve's last point (2 threads at 1.8, then 0.8 a core: 3.4 at
# 4 cores); 2 GB/s x 1.5 ms / 1.5 MB bounds it at 2 cores.
run curve --set 'prep.scaling=1:1, 2:1.8' --set server.mem_gbps=2 --set prep.mem_mb_per_item=1.5
has curve "$tmp/curve.text" "4 per server prepare as 2 (prep.scaling): EXTRAPOLATED past the measured 2 threads"
has curve "$tmp/curve.text" "; bound by memory bandwidth at 2 cores (server.mem_gbps 2 GB/s x 1.5 ms of prep per item / prep.mem_mb_per_item 1.5 MB = 2 cores)"
has curve "$tmp/curve.json" '"prep_cores": {"per_server": 4, "effective": 2, "extrapolated": true, "memory_bound": {"cores": 2, "binds": true}}'
# Linear scaling, the same bound: 4 cores prepare as 2.
run linear --set server.mem_gbps=2 --set prep.mem_mb_per_item=1.5
has linear "$tmp/linear.text" "4 per server prepare as 2 (linear scaling); bound by memory bandwidth at 2 cores"
has linear "$tmp/linear.json" '"effective": 2, "extrapolated": false, "memory_bound": {"cores": 2, "binds": true}'
# A wide bound (20 cores) does not bind; the output says so.
run wide --set server.mem_gbps=20 --set prep.mem_mb_per_item=1.5
has wide "$tmp/wide.text" "4 per server prepare as 4 (linear scaling); the memory-bandwidth bound, 20 cores, does not bind"
has wide "$tmp/wide.json" '"memory_bound": {"cores": 20, "binds": false}'
# The bound changes the prediction: the bound run is slower than the wide one.
t_bound=$(sed -n 's/.*"total_s": {"model": \([0-9.e+]*\).*/\1/p' "$tmp/linear.json" | head -1)
t_wide=$(sed -n 's/.*"total_s": {"model": \([0-9.e+]*\).*/\1/p' "$tmp/wide.json" | head -1)
awk -v a="$t_bound" -v b="$t_wide" 'BEGIN { exit !(a > 1.5 * b) }' ||
  fail "bound at 2 of 4 cores: total ${t_bound} s, not well above the unbound ${t_wide} s"
# Neither key, or one of them 0: no word of it, as before.
run none
run off --set server.mem_gbps=2 --set prep.mem_mb_per_item=0
for name in none off; do
  for fmt in text json; do lacks $name "$tmp/$name.$fmt" "memory"; done
  cmp -s "$tmp/none.text" "$tmp/$name.text" || fail "$name: text differs from no keys"
done

[ "$fails" = 0 ] && echo "all memory-bound run checks passed"
[ "$fails" = 0 ]
