# What the measure tests share (sourced by tests/measure.sh and
# tests/measure_http.sh, which set W, their work folder, first): the pass and
# fail counts, expect (exit code and stderr of a command) and col (a field of
# a measured CSV row).
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect CODE STDERR_SUBSTRING -- command...
expect() {
  local code=$1 want=$2
  shift 3
  local rc
  "$@" >"$W/out" 2>"$W/err"
  rc=$?
  if [ "$rc" != "$code" ]; then bad "$* -> exit $rc, want $code; stderr: $(cat "$W/err")"; return; fi
  if [ -n "$want" ] && ! grep -qF -- "$want" "$W/err"; then
    bad "$* -> stderr lacks '$want'; got: $(cat "$W/err")"
    return
  fi
  ok
}

# col CSV EPOCH COLUMN: one field of the measured row of an epoch.
col() {
  awk -F, -v e="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
    $3 == e && $4 == "measured" { print $k }' "$1"
}
