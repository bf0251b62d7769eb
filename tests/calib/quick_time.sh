#!/bin/sh
# calib_quick_time (validation): `calibrate --quick` writes a valid profile
# within its budget (30 s, or CALIB_QUICK_LIMIT_S) on this host. A time
# target: it depends on how busy the host is, so it is a validation test
# (python3 -m validation --suite checks the load and retries it once).
# usage: quick_time.sh "CALIBRATE-COMMAND" CHECKER WORKDIR
set -u
CAL=$1 CHECK=$2 W=$3
LIMIT=${CALIB_QUICK_LIMIT_S:-30}
rm -rf "$W" && mkdir -p "$W/tmp" || exit 1
start=$(date +%s)
TMPDIR="$W/tmp" $CAL --quick --out "$W/quick.yaml" 2>"$W/quick.err"
rc=$?
elapsed=$(($(date +%s) - start))
echo "calibrate --quick: exit $rc in ${elapsed} s (limit ${LIMIT} s; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
[ "$rc" = 0 ] || { echo "FAIL: --quick exit $rc"; cat "$W/quick.err"; exit 1; }
"$CHECK" "$W/quick.yaml" || { echo "FAIL: --quick profile invalid"; exit 1; }
[ "$elapsed" -le "$LIMIT" ] || { echo "FAIL: --quick took ${elapsed} s (limit ${LIMIT} s)"; exit 1; }
rm -rf "$W"
echo "calib_quick_time: met"
