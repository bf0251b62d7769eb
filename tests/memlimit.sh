#!/usr/bin/env bash
# A memory cgroup's limit is the memory a run has: `stallsim run` inside a
# cgroup limited to 256 MB refuses a simulation that needs 0.6 GiB (exit 2,
# naming the 0.25 GiB it has) instead of being killed by the kernel, and
# runs one that fits. The test creates the cgroup (v1 memory.limit_in_bytes,
# or v2 memory.max), runs inside it and removes it; it skips (77) where the
# machine cannot: not root, no memory controller.
#   tests/memlimit.sh STALLSIM SRCDIR
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
small=$(cd "$2" && pwd)/tests/data/small.yaml
if [ "$(id -u)" -ne 0 ]; then
  echo "memlimit: skipped: not root (creating a memory cgroup needs root)"
  exit 77
fi
if [ -d /sys/fs/cgroup/memory ] && [ -w /sys/fs/cgroup/memory ]; then
  cg=/sys/fs/cgroup/memory/stallsim-memlimit-$$
  limit_file=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
  cg=/sys/fs/cgroup/stallsim-memlimit-$$
  limit_file=memory.max
else
  echo "memlimit: skipped: no writable memory cgroup controller (v1 /sys/fs/cgroup/memory, or v2 with memory in cgroup.subtree_control)"
  exit 77
fi
mkdir "$cg" || { echo "memlimit: skipped: cannot create $cg"; exit 77; }
trap 'rmdir "$cg" 2>/dev/null' EXIT
echo $((256 * 1024 * 1024)) >"$cg/$limit_file"
tmp=$(mktemp -d)
trap 'rmdir "$cg" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0
inside() { # run the arguments as a process of the cgroup
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$cg" "$@"
}
inside "$bin" run "$small" --set dataset.items=20000000 --epochs 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 2 ] && grep -q "needs 0.6 GiB of memory, this machine has 0.2 GiB" "$tmp/err" && [ ! -s "$tmp/out" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: 0.6 GiB in a 256 MB cgroup: exit $rc, want 2; stderr: $(head -c 400 "$tmp/err")"
fi
inside "$bin" run "$small" --epochs 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 0 ] && [ -s "$tmp/out" ]; then
  pass=$((pass + 1))
else
  fail=$((fail + 1)); echo "FAIL: a small run in the cgroup: exit $rc; stderr: $(head -c 400 "$tmp/err")"
fi
echo "memlimit: $pass passed, $fail failed"
[ $fail = 0 ]
