#!/usr/bin/env bash
# The storage model against this host's disk throttled by a block-I/O cgroup
# the test creates and removes (scripts/validate_disk.py --quick: 20 MB/s and
# 200 IOPS, 4 reads in flight, `measure --cache page-cold-epoch` against
# `run`; median within 10%). Skips (77) where the machine cannot: not root,
# no blkio/io controller, no Debian python3.   tests/disk.sh STALLSIM SRCDIR
set -u
if ! [ -x /usr/bin/python3 ]; then
  echo "disk: skipped: no /usr/bin/python3 (Debian's python3) on this machine"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$2/scripts/validate_disk.py" --bin "$1" --data "$tmp/data" --quick
