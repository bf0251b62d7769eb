#!/usr/bin/env bash
# Robustness round 4 (issue 58), the C side: one section per defect, each a
# check that failed on dba7216 (ROBUSTNESS.md says what was tried). The
# Python side is tests/test_robust4.py. Deterministic: no timing figure is
# compared, only bounds far from the expected times.
# usage: robust4.sh STALLSIM SOURCE_DIR
set -u
. "$(dirname "$0")/lib.sh"
in_tmp "$1" "$2"
cp "$small" small.yaml
expect_err=$tmp/err.txt

finish robust4
