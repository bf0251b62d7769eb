#!/usr/bin/env bash
# The semantic fuzzer's CI run: seed 1, a fixed count (never a time, so the
# outcome depends on the code alone), two processes; known findings are
# reported and tolerated, any other fails. usage: ci.sh STALLSIM
set -u
py=/usr/bin/python3
if ! "$py" -c 'import yaml' 2>/dev/null; then
  echo "semfuzz: skipped: needs Debian's python3 with python3-yaml (scripts/setup.sh installs it)"
  exit 77
fi
exec "$py" "$(dirname "$0")/semfuzz.py" --stallsim "$1" --seed 1 --count 150 --jobs 2 \
  --shrink-per-invariant 1 --shrink-budget 80
