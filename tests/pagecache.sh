#!/usr/bin/env bash
# loader.cache: linux against this host's page cache in a memory cgroup the
# test creates and removes (scripts/validate_pagecache.py --quick: 1200
# generated JPEGs, a 70 MB limit, 4 epochs; the mean hit rate of epochs 2+
# within 3 pp). Skips (77) where the machine cannot: not root, no memory
# controller.   tests/pagecache.sh STALLSIM SRCDIR
set -u
if ! [ -x /usr/bin/python3 ]; then
  echo "pagecache: skipped: no /usr/bin/python3 (Debian's python3) on this machine"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$2/scripts/validate_pagecache.py" --bin "$1" --data "$tmp/data" --quick
