#!/usr/bin/env bash
# The notebooks' data module (stallsim.data, python/stallsim/data.py) on sweeps and runs
# of this stallsim, malformed files included, and the cores notebook executed
# headless on a user's own one-axis sweep. Skips (77) without Debian's
# python3 and pandas (scripts/setup.sh --notebooks).
#   tests/notebooks.sh STALLSIM SRCDIR
set -u
py=/usr/bin/python3
if ! [ -x $py ] || ! $py -c 'import pandas, matplotlib' 2>/dev/null; then
  echo "notebooks: skipped: Debian's python3 with pandas and matplotlib is not installed (scripts/setup.sh --notebooks)"
  exit 77
fi
exec $py "$2/tests/test_notebooks.py" "$1" "$2"
