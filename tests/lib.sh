# What the shell tests share; source it first (`. "$(dirname "$0")/lib.sh"`),
# then count each check with ok or bad and end with `finish NAME`, which
# prints "NAME: P passed, F failed" and is the script's exit status.
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# check NAME SHELL_CONDITION: the condition is evaluated where check is called
# (so it sees the caller's files and $?), and counted.
check() { if eval "$2"; then ok; else bad "$1"; fi; }

# expect CODE STDERR_SUBSTRING [--] COMMAND...: the command exits CODE and its
# stderr holds the substring (an empty one matches anything). Its stdout goes
# to $expect_out and its stderr to $expect_err where the script names those
# files (to read them afterwards), else nowhere.
expect() {
  local code=$1 want=$2 err rc
  shift 2
  [ "${1-}" != -- ] || shift
  if [ -n "${expect_err-}" ]; then
    "$@" >"${expect_out:-/dev/null}" 2>"$expect_err"
    rc=$?
    err=$(cat "$expect_err")
  else
    err=$("$@" 2>&1 >"${expect_out:-/dev/null}")
    rc=$?
  fi
  if [ "$rc" != "$code" ]; then bad "$* -> exit $rc, want $code; stderr: $err"; return; fi
  if [ -n "$want" ] && ! grep -qF -- "$want" <<<"$err"; then
    bad "$* -> stderr lacks '$want'; got: $err"
    return
  fi
  ok
}

# has FILE ERE...: the file has a line matching each pattern, one count each.
has() {
  local f=$1 re
  shift
  for re in "$@"; do
    grep -qE -- "$re" "$f" && ok || bad "$f lacks /$re/: $(grep -E -- "${re%%:*}" "$f" | head -2)"
  done
}

# in_tmp STALLSIM SOURCE_DIR: sets bin (absolute), src and small (the small
# test scenario), and works in a fresh folder $tmp, removed on exit.
in_tmp() {
  bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  src=$(cd "$2" && pwd)
  small=$src/tests/data/small.yaml
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  cd "$tmp" || exit 1
}

finish() {
  echo "$1: $pass passed, $fail failed"
  [ "$fail" = 0 ]
}
