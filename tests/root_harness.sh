#!/usr/bin/env bash
# A validation harness that needs root and a cgroup controller, in its quick
# form, on data it generates in a folder it removes:
#   pagecache: validation/pagecache.py (loader.cache: linux against the
#     page cache in a memory cgroup; 70 MB, 4 epochs; epochs 2+ within 3 pp);
#   disk: validation/disk.py (the storage model against the disk
#     throttled by a block-I/O cgroup; 20 MB/s and 200 IOPS, and the ssd kind
#     from the curve calibrate measures inside the 200 IOPS throttle, 4 reads
#     in flight; the probe's concurrent readers (stallsim.storageprobe)
#     inside a 40 MB/s throttle, 1 and 4 reads in flight; median within 10%);
#   object: validation/object.py (the object-store kind against nginx in
#     a network namespace, first bytes delayed, loopback shaped; 7 rows:
#     measure, PyTorch loose and PyTorch over tar shards).
#   shards: validation/shards.py (streamed tar shards, loader.reader:
#     stream, against a DataLoader over tar shards on the disk throttled
#     by a block-I/O cgroup, in a memory cgroup; 1 and 4 workers).
#   imagefolder: validation/imagefolder.py (loader.cache: linux with loose
#     files: a DataLoader over an ImageFolder on the throttled disk, in a
#     memory cgroup smaller than the data; 1 and 4 workers).
# The harness creates and removes its cgroups and namespaces, and skips (77)
# where the machine cannot: not root, no such controller, no nginx or its
# echo module, no Debian python3.
#   tests/root_harness.sh pagecache|disk|object|shards|imagefolder STALLSIM SRCDIR
set -u
name=$1
if ! [ -x /usr/bin/python3 ]; then
  echo "$name: skipped: no /usr/bin/python3 (Debian's python3) on this machine"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$3" && /usr/bin/python3 -m "validation.$name" --bin "$2" --data "$tmp/data" --quick
