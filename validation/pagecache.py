"""Validates `loader.cache: linux` (and shows `lru` beside it) against the
real page cache of this host, made small by a memory cgroup (issue 16;
docs/validation/pagecache.md).

  python3 -m validation.pagecache [--bin build/sim/stallsim] [--data DIR]
      [--items 1200] [--epochs 6] [--limits 40,70,100] [--quick] [--page FILE.md]

For each memory limit, a row (in its own process) reads the data set whole,
in a fresh random order each epoch, inside a cgroup with that limit, and
reports the share of files that were read without touching storage, per
epoch, and how large the page cache was. The cgroup is created for the row
and removed after it: cgroup v1 (/sys/fs/cgroup/memory,
memory.limit_in_bytes) or v2 (memory.max). A child process joins it, the
files are evicted (POSIX_FADV_DONTNEED), then the child reads every file
whole, epoch after epoch. A file is a hit when reading it fetched nothing
from storage (/proc/self/io read_bytes did not move); bytes_hit is 1 - bytes
fetched / bytes read. After each epoch the cgroup's file pages (memory.stat)
say how large the page cache was, and the block I/O counters of a blkio
cgroup the child also joins (v1 blkio.throttle.io_service_bytes' Read, v2
io.stat's rbytes) how many bytes it read from the data's disk: whole pages,
and whatever readahead read, as the kernel read them (issue 55).
stallsim then simulates the same data set (items, mean size and spread of
the files) with that cache size and the disk's read_ahead_kb, seeds 1-3,
for `linux` and `lru`. The targets: the mean hit rate of epochs 2.. within
3 pp of the measured one (issue 16); the bytes read from the disk, epoch 1
(cold) and epochs 2.. (issue 55), within 5 % of `linux`'s. Exit 0 met, 1
not met, 77 when this machine cannot make the cgroup (not root, no memory
controller)."""

import json
import os
import random
import statistics
import subprocess
import tempfile
import time

from stallsim.pipeline import evict
from validation.base import Harness, Skip, Target
from validation.disk import disk_of
from validation.fixtures import cgroup
from validation.fixtures import data as fx


def read_io():
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    return 0


def reader(a, files, cg, io, w):
    """In the cgroup: every file read whole each epoch, in a fresh random
    order; the epochs' figures written to w as JSON. io: (blkio cgroup,
    version, disk) whose read bytes each epoch reports, or None."""
    out = []
    buf = bytearray(1 << 20)
    dev0 = cgroup.device_read_bytes(*io) if io else 0
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
        fb, act = cgroup.file_bytes(cg)
        dev = cgroup.device_read_bytes(*io) if io else 0
        out.append(dict(hit_rate=hits / len(files), bytes_hit=1 - fetched / total,
                        cache_bytes=fb, active_bytes=act, seconds=time.perf_counter() - t0,
                        task_read_bytes=fetched, device_bytes=dev - dev0 if io else None))
        dev0 = dev
    os.write(w, json.dumps(out).encode())
    os._exit(0)


def read_in(a, files, cg, io):
    """The reader forked into cg (and io's blkio cgroup): its epochs."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        for g in {cg, io[0]} if io else {cg}:
            with open(os.path.join(g, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        reader(a, files, cg, io, w)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        data += chunk
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        raise RuntimeError("the reader failed")
    epochs = json.loads(data)
    if epochs[0]["hit_rate"] > 0.05 or epochs[0]["cache_bytes"] == 0:
        raise RuntimeError(f"the files were not evicted before epoch 1 (hit rate "
                           f"{epochs[0]['hit_rate']:.1%}, {epochs[0]['cache_bytes']} bytes charged "
                           "to the cgroup): the figures would be wrong")
    return epochs


def measure_limit(a, limit_mb):
    """One row: the data set read in a memory cgroup of limit_mb."""
    if os.geteuid() != 0:
        raise Skip("needs root to create a memory cgroup")
    cgp = cgroup.memory_cgroup()
    if not cgp:
        raise Skip("no memory cgroup controller (v1 /sys/fs/cgroup/memory or v2 memory)")
    root, limit_file, _ = cgp
    files = fx.jpegs(a.data)
    if len(files) < 10:
        raise RuntimeError(f"--data {a.data}: {len(files)} JPEGs; need 10")
    cg = os.path.join(root, f"stallsim-pagecache-{os.getpid()}")
    try:
        os.mkdir(cg)
    except OSError as e:
        raise Skip(f"cannot create {cg}: {e}")
    io = io_group(a.data, root)
    try:
        with open(os.path.join(cg, limit_file), "w") as f:
            f.write(str(int(limit_mb * 1e6)))
        evict(files)
        epochs = read_in(a, files, cg, io)
    finally:
        # The child has exited; its pages stay charged, and a v1 group with
        # pages goes away once they are reparented on rmdir.
        cgroup.remove_cgroup(cg)
        if io and io[0] != cg:
            cgroup.remove_cgroup(io[0])
    sizes = [os.path.getsize(p) for p in files]
    mean = sum(sizes) / len(sizes)
    sd = (sum((s - mean) ** 2 for s in sizes) / len(sizes)) ** 0.5
    return dict(files=len(files), mean_kb=mean / 1e3, cv=sd / mean, limit_mb=limit_mb,
                kernel=os.uname().release, epochs=epochs, read_ahead_kb=read_ahead_kb(io),
                data_bytes=sum(sizes))


def io_group(data, mem_root):
    """(cgroup, version, disk) counting the reader's bytes from the disk
    holding data: a v1 blkio cgroup made for the row, or v2's memory
    cgroup itself (its io.stat); None where neither can count."""
    ctl, dev = cgroup.io_cgroup(), disk_of(data)
    if not ctl or not dev:
        return None
    ver, root = ctl
    if ver == "v2":
        return (os.path.join(mem_root, f"stallsim-pagecache-{os.getpid()}"), ver, dev)
    cg = os.path.join(root, f"stallsim-pagecache-{os.getpid()}")
    try:
        os.mkdir(cg)
        # v1 counts a cgroup's bios in blk-throttle, which this kernel skips
        # for a group with no rule on the disk (the counters stay 0): a rule
        # no read comes near makes it count them.
        with open(os.path.join(cg, "blkio.throttle.read_bps_device"), "w") as f:
            f.write(f"{dev} {10 ** 15}")
    except OSError:
        cgroup.remove_cgroup(cg)
        return None
    return (cg, ver, dev)


def read_ahead_kb(io):
    """The disk's readahead window (its queue's read_ahead_kb), else Linux's
    default."""
    try:
        with open(f"/sys/dev/block/{io[2]}/queue/read_ahead_kb") as f:
            return int(f.read())
    except (OSError, TypeError, ValueError):
        return 128


def simulate(a, d, cache_bytes, policy):
    """The hit rate and the bytes read from storage per epoch, the mean of
    seeds 1-3."""
    per_epoch, per_bytes = [], []
    for seed in (1, 2, 3):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
            f.write(f"""epochs: {a.epochs}
seed: {seed}
dataset: {{items: {d['files']}, item_kb: {d['mean_kb']:.6g}, item_kb_cv: {d['cv']:.4g}}}
server: {{gpus: 1, cpus: 8, cache_gb: {cache_bytes / 1e9:.9g}, storage: {{read_ahead_kb: {d['read_ahead_kb']}}}}}
loader: {{cache: {policy}}}
jobs: [{{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.01}}]
""")
        out = subprocess.run([a.bin, "run", f.name, "--format", "json"], check=True,
                             capture_output=True, text=True).stdout
        os.unlink(f.name)
        eps = json.loads(out)["variants"][0]["jobs"][0]["epochs"]
        per_epoch.append([e["sim"]["hit_rate"] for e in eps])
        per_bytes.append([e["sim"]["storage_read_bytes"] for e in eps])
    return ([statistics.mean(col) for col in zip(*per_epoch)],
            [statistics.mean(col) for col in zip(*per_bytes)])


def steady(v):
    return statistics.mean(v[1:])


class Pagecache(Harness):
    name = "pagecache"
    title = "The Linux page cache (loader.cache: linux) against this host's, in a memory cgroup"
    data = "/var/tmp/stallsim-pagecache/data"
    epochs = 6
    targets = [Target("epochs 2+, every limit", "worst", 3.0, fmt="{} pp"),
               Target("bytes from the disk, epoch 1 and epochs 2+, every limit", "worst_bytes",
                      5.0, fmt="{} %")]

    def add_arguments(self, ap):
        ap.add_argument("--limits", default="40,70,100", help="cgroup memory limits, MB")

    def configure(self, a):
        if a.quick:  # one limit (70 MB), 4 epochs
            a.epochs = 4

    def setup(self, a):
        fx.generate(a.bin, a.data, a.items)

    def rows(self, a):
        return [dict(limit=70.0)] if a.quick else [dict(limit=float(x)) for x in a.limits.split(",")]

    def run_row(self, a, r):
        return measure_limit(a, r["limit"])

    def predict(self, a, r, d):
        meas = [e["hit_rate"] for e in d["epochs"]]
        cache = statistics.mean(e["cache_bytes"] for e in d["epochs"][1:])
        (lin, lin_b), (lru, _) = simulate(a, d, cache, "linux"), simulate(a, d, cache, "lru")
        total = d["files"] * d["mean_kb"] * 1e3
        res = dict(d=d, cache=cache, frac=cache / total, meas=meas, lin=lin, lru=lru,
                   err=(steady(lin) - steady(meas)) * 100,
                   err_lru=(steady(lru) - steady(meas)) * 100, lin_b=lin_b, dev=None)
        dev = [e.get("device_bytes") for e in d["epochs"]]
        if None not in dev:
            # epoch 1 alone (cold: every file's pages once) and the steady
            # epochs' mean, each as % of the measured bytes
            res.update(dev=dev, err_b1=(lin_b[0] / dev[0] - 1) * 100 if dev[0] else None,
                       err_b=(steady(lin_b) / steady(dev) - 1) * 100 if steady(dev) else None)
        return res

    def row_line(self, r, c):
        line = (f"limit {r['limit']:.0f} MB (page cache {c['cache'] / 1e6:.1f} MB = {c['frac']:.0%} "
                f"of the data): measured {steady(c['meas']):.3f}, linux {steady(c['lin']):.3f} "
                f"({c['err']:+.1f} pp), lru {steady(c['lru']):.3f}")
        if c["dev"]:
            line += (f"; from the disk, epoch 1 {c['dev'][0] / 1e6:.1f} MB (linux "
                     f"{c['lin_b'][0] / 1e6:.1f}), epochs 2+ {steady(c['dev']) / 1e6:.1f} MB "
                     f"(linux {steady(c['lin_b']) / 1e6:.1f})")
        return line

    def report(self, a, results):
        def fmt(v):
            return " ".join(f"{x:.1%}" for x in v)
        d = results[-1][1]["d"]
        lines = [f"Kernel {os.uname().release}, {d['files']} files of {d['mean_kb']:.1f} KB mean "
                 f"(cv {d['cv']:.2f}), {a.epochs} epochs; stallsim: mean of seeds 1-3.", "",
                 "| cgroup limit | page cache / data | measured hit rate per epoch | `linux` | `lru` | "
                 "epochs 2+: `linux` − measured | `lru` − measured |",
                 "|---:|---:|---|---|---|---:|---:|"]
        for r, c in results:
            lines.append(f"| {r['limit']:.0f} MB | {c['frac']:.0%} | {fmt(c['meas'])} | "
                         f"{fmt(c['lin'])} | {fmt(c['lru'])} | {c['err']:+.1f} pp | "
                         f"{c['err_lru']:+.1f} pp |")
        lines += self.bytes_table(d, results)
        errs = [abs(c[k]) for _, c in results if c["dev"] for k in ("err_b1", "err_b")
                if c[k] is not None]
        return "\n".join(lines) + "\n", dict(worst=max(abs(c["err"]) for _, c in results),
                                              worst_bytes=max(errs) if errs else None)

    @staticmethod
    def bytes_table(d, results):
        """Bytes read from the disk (the cgroup's block I/O counters) against
        `linux`'s: none where this host could not count them."""
        if not any(c["dev"] for _, c in results):
            return ["", "Bytes read from the disk: not measured (no blkio or io cgroup "
                    "controller, or the data's disk not found)."]
        lines = ["", f"Bytes read from the disk (the cgroup's block I/O counters; the data is "
                 f"{d['data_bytes'] / 1e6:.1f} MB, read_ahead_kb {d['read_ahead_kb']}) against "
                 "`linux`'s, which reads whole pages and reads ahead:", "",
                 "| cgroup limit | measured MB per epoch | `linux` | epoch 1: `linux` vs measured | "
                 "epochs 2+ |", "|---:|---|---|---:|---:|"]
        for r, c in results:
            if not c["dev"]:
                continue
            mb = " ".join(f"{x / 1e6:.1f}" for x in c["dev"])
            lb = " ".join(f"{x / 1e6:.1f}" for x in c["lin_b"])
            e1 = f"{c['err_b1']:+.1f} %" if c["err_b1"] is not None else "-"
            e2 = f"{c['err_b']:+.1f} %" if c["err_b"] is not None else "-"
            lines.append(f"| {r['limit']:.0f} MB | {mb} | {lb} | {e1} | {e2} |")
        return lines


if __name__ == "__main__":
    Pagecache.main()
