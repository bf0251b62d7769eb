#!/usr/bin/python3
"""Measures the Linux page cache's hit rate per epoch over a data set read in
a fresh random order each epoch, inside a memory cgroup that makes the page
cache small enough to thrash (issue 16), and prints one JSON object.

  /usr/bin/python3 scripts/pagecache_measure.py --data DIR --limit-mb L
      [--epochs 4] [--files N] [--seed 1]

The cgroup is created for the run and removed after it: cgroup v1
(/sys/fs/cgroup/memory, memory.limit_in_bytes) or v2 (memory.max). A child
process joins it, the files are evicted (POSIX_FADV_DONTNEED), then the
child reads every file whole, epoch after epoch. A file is a hit when
reading it fetched nothing from storage (/proc/self/io read_bytes did not
move); bytes_hit is 1 - bytes fetched / bytes read. After each epoch the
cgroup's file pages (memory.stat) say how large the page cache was.
Exit 77 (with the reason) where this machine cannot: not root, no memory
controller."""

import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def cgroup_paths():
    v1 = "/sys/fs/cgroup/memory"
    if os.path.isfile(os.path.join(v1, "memory.limit_in_bytes")):
        return v1, "memory.limit_in_bytes", ("total_active_file", "total_inactive_file", "active_file", "inactive_file")
    v2 = "/sys/fs/cgroup"
    if os.path.isfile(os.path.join(v2, "cgroup.controllers")):
        with open(os.path.join(v2, "cgroup.controllers")) as f:
            if "memory" in f.read().split():
                return v2, "memory.max", ("active_file", "inactive_file")
    return None


def file_bytes(cg, keys):
    stat = {}
    with open(os.path.join(cg, "memory.stat")) as f:
        for line in f:
            k, v = line.split()
            stat[k] = int(v)
    # v1 reports the group's own pages without the total_ prefix too; take
    # the hierarchy's totals where present.
    if "total_active_file" in stat:
        return stat["total_active_file"] + stat["total_inactive_file"], stat["total_active_file"]
    return stat["active_file"] + stat["inactive_file"], stat["active_file"]


def read_io():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    return 0


def child(a, files, cg, keys, w):
    out = []
    buf = bytearray(1 << 20)
    for e in range(a.epochs):
        order = list(range(len(files)))
        random.Random(a.seed * 1000 + e).shuffle(order)
        hits = fetched = total = 0
        t0 = time.perf_counter()
        for i in order:
            before = read_io()
            with open(files[i], "rb", buffering=0) as f:
                while True:
                    n = f.readinto(buf)
                    if not n:
                        break
                    total += n
            got = read_io() - before
            fetched += got
            hits += got == 0
        fb, act = file_bytes(cg, keys)
        out.append(dict(hit_rate=hits / len(files), bytes_hit=1 - fetched / total,
                        cache_bytes=fb, active_bytes=act, seconds=time.perf_counter() - t0))
    os.write(w, json.dumps(out).encode())
    os._exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--limit-mb", type=float, required=True)
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--files", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if os.geteuid() != 0:
        harness.skip("pagecache_measure", "needs root to create a memory cgroup")
    cgp = cgroup_paths()
    if not cgp:
        harness.skip("pagecache_measure", "no memory cgroup controller (v1 /sys/fs/cgroup/memory or v2 memory)")
    root, limit_file, keys = cgp
    files = harness.jpegs(a.data)
    if a.files:
        files = files[: a.files]
    if len(files) < 10:
        print(f"pagecache_measure: --data {a.data}: {len(files)} JPEGs; need 10", file=sys.stderr)
        sys.exit(2)
    cg = os.path.join(root, f"stallsim-pagecache-{os.getpid()}")
    try:
        os.mkdir(cg)
    except OSError as e:
        harness.skip("pagecache_measure", f"cannot create {cg}: {e}")
    try:
        with open(os.path.join(cg, limit_file), "w") as f:
            f.write(str(int(a.limit_mb * 1e6)))
        harness.evict(files)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            child(a, files, cg, keys, w)
        os.close(w)
        data = b""
        while True:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            data += chunk
        _, status = os.waitpid(pid, 0)
        if status != 0 or not data:
            print("pagecache_measure: the reader failed", file=sys.stderr)
            sys.exit(1)
        epochs = json.loads(data)
        if epochs[0]["hit_rate"] > 0.05 or epochs[0]["cache_bytes"] == 0:
            print(f"pagecache_measure: the files were not evicted before epoch 1 (hit rate "
                  f"{epochs[0]['hit_rate']:.1%}, {epochs[0]['cache_bytes']} bytes charged to the "
                  f"cgroup): the figures would be wrong", file=sys.stderr)
            sys.exit(1)
        sizes = [os.path.getsize(p) for p in files]
        mean = sum(sizes) / len(sizes)
        sd = (sum((s - mean) ** 2 for s in sizes) / len(sizes)) ** 0.5
        print(json.dumps(dict(files=len(files), mean_kb=mean / 1e3, cv=sd / mean,
                              limit_mb=a.limit_mb, kernel=os.uname().release, epochs=epochs)))
    finally:
        # The child has exited; its pages stay charged, and a v1 group with
        # pages goes away once they are reparented on rmdir.
        harness.remove_cgroup(cg)


if __name__ == "__main__":
    main()
