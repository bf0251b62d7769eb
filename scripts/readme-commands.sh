#!/usr/bin/env bash
# Runs README command N exactly as the README shows it, so the README and CI
# cannot drift: the text after "# N." in the fenced block under "## The two
# commands", up to the next blank line, goes to bash as it is.
#   scripts/readme-commands.sh 1    # build and predict OpenImages
#   scripts/readme-commands.sh 2    # build and run the deterministic test suite
#   scripts/readme-commands.sh --print N
set -euo pipefail
cd "$(dirname "$0")/.."
print=0
if [ "${1:-}" = --print ]; then
  print=1
  shift
fi
n=${1:?usage: scripts/readme-commands.sh [--print] N}
cmd=$(awk -v n="$n" '
  /^## The two commands/ { section = 1; next }
  section && /^## / { exit }
  section && /^```/ { inblock = !inblock; if (!inblock && taking) exit; next }
  inblock && taking && (/^$/ || /^# [0-9]+\./) { exit }
  inblock && taking { print }
  inblock && $0 ~ "^# " n "\\. " { taking = 1 }
' README.md)
[ -n "$cmd" ] || { echo "readme-commands.sh: README.md has no command $n" >&2; exit 2; }
if [ $print = 1 ]; then
  printf '%s\n' "$cmd"
  exit 0
fi
echo "readme-commands.sh: README command $n: $cmd" >&2
exec bash -euo pipefail -c "$cmd"
