#!/usr/bin/env bash
# Round 3 (issue 33) S8, C3: stallsim.data (python/stallsim/data.py) on malformed files.
# Skips (77) without Debian's python3 and pandas (scripts/setup.sh --notebooks).
#   tests/robust3_data.sh STALLSIM SRCDIR
set -u
py=/usr/bin/python3
if ! [ -x $py ] || ! $py -c 'import pandas' 2>/dev/null; then
  echo "robust3_data: skipped: Debian's python3 with pandas is not installed (scripts/setup.sh --notebooks)"
  exit 77
fi
exec $py "$2/tests/test_data_robust.py" "$1" "$2"
