"""Validates streamed record shards (loader.reader: stream, issue 55) against
a real PyTorch DataLoader over real tar shards on this host's disk, under a
device read limit and a memory cgroup (docs/validation/shards.md).

  python3 -m validation.shards [--bin build/sim/stallsim] [--data DIR]
      [--items 4000] [--epochs 2] [--workers 1,2,4] [--mb-s 40]
      [--mem-mb 3000] [--buffer 1000] [--shard-mb 27] [--compute 0.01]
      [--quick] [--page FILE.md]

1. JPEGs in DIR (`stallsim measure --generate` writes them where missing,
   as the other harnesses do), packed in their sorted order into tar shards
   of about --shard-mb with Python's tarfile (fixtures/datasets/
   http_shards.py's write_shards), in a folder beside DIR.
2. The profile as docs/pytorch.md tells a PyTorch user: stallsim-probe
   over DIR (validation.torch.probed).
3. Each row runs in a fresh process inside a block-I/O cgroup that limits
   its reads of the disk holding the shards to --mb-s (v1
   blkio.throttle.read_bps_device, v2 io.max rbps) and a memory cgroup of
   --mem-mb (v1 memory.limit_in_bytes, v2 memory.max): a
   torch.utils.data.DataLoader, batch 32, over an IterableDataset
   (fixtures/datasets/file_shards.py) whose workers split the shards as
   WebDataset does (worker w of W: shards w, w + W, ... of an order
   shuffled each epoch), stream their members through tarfile, keep a
   shuffle buffer of --buffer raw samples and decode and transform as
   ImageFolder does; the GPU emulated by sleeping --compute a batch (a
   partial batch in proportion). The shards' pages are dropped before each
   epoch (POSIX_FADV_DONTNEED); each epoch's wall time and the bytes the
   cgroup read from the disk (blkio.throttle.io_service_bytes, io.stat
   rbytes) are measured, and the load average at the row's start and end.
4. `stallsim compare` holds the epochs against the scenario on the probe's
   profile with the row's keys: dataset.shard_items of the shards,
   loader.reader: stream, loader.shuffle_buffer, loader.num_workers, the
   device as the cgroup makes it (server.storage.read_mb_s the limit,
   latency_ms 0, read_ahead_kb the disk's own from sysfs) and no page
   cache between epochs (loader.cache: none); the simulator's bytes read
   beside the cgroup's.
Targets: median |error| <= 10 % in epoch time (--quick: 20 %), median
bytes read within 10 % (--quick: 20 %). Exit 0 met, 1 not, 77 where this
machine cannot (not root, no blkio/io or memory controller, the data not
on a block device, no PyTorch)."""

import json
import os
import shutil
import statistics
import subprocess
import sys

from stallsim.pipeline import evict, timed_epochs
from validation import predict as pr
from validation.base import Harness, Skip, Target, load1
from validation.disk import controller, disk_of
from validation.fixtures import cgroup
from validation.fixtures import data as fx

BATCH = 32
ENV_CG, ENV_DEV = "STALLSIM_SHARDS_BLKIO", "STALLSIM_SHARDS_DEV"


def read_ahead_kb(dev):
    """The disk's readahead window (/sys/dev/block/M:N/queue/read_ahead_kb)."""
    try:
        with open(f"/sys/dev/block/{dev}/queue/read_ahead_kb") as f:
            return int(f.read())
    except OSError:
        return 128


def shard_names(folder):
    return sorted(f for f in os.listdir(folder) if f.endswith(".tar"))


def loader_row(a, r):
    """One row's epochs, in this (fresh) process, inside the row's cgroups."""
    import torch
    from torch.utils.data import DataLoader

    from validation.fixtures.datasets.file_shards import FileTarShards

    torch.manual_seed(a.seed)
    names = shard_names(a.shards)
    paths = [os.path.join(a.shards, n) for n in names]
    ds = FileTarShards(a.shards, names, seed=a.seed, buffer=a.buffer)
    cg, dev = os.environ[ENV_CG], os.environ[ENV_DEV]
    ver = "v1" if os.path.isfile(os.path.join(cg, "blkio.throttle.io_service_bytes")) else "v2"
    marks = []

    def loader_for(e):
        ds.set_epoch(e)
        evict(paths)  # every epoch from the disk, as loader.cache: none predicts
        marks.append(cgroup.device_read_bytes(cg, ver, dev))
        kw = dict(batch_size=BATCH, num_workers=r["workers"])
        if r["workers"] > 0:
            kw["prefetch_factor"] = 2
        return DataLoader(ds, **kw)

    epochs, batches = timed_epochs(loader_for, a.epochs, r["compute"],
                                   share=lambda b: len(b[1]) / BATCH)
    marks.append(cgroup.device_read_bytes(cg, ver, dev))
    return dict(epochs=epochs, batches=batches,
                bytes=[marks[i + 1] - marks[i] for i in range(a.epochs)])


def make_cgroup(root, name):
    path = os.path.join(root, f"stallsim-shards-{name}-{os.getpid()}")
    try:
        os.mkdir(path)
    except OSError as e:
        raise Skip(f"cannot create {path}: {e}")
    return path


class Shards(Harness):
    name = "shards"
    title = "Streamed tar shards (loader.reader: stream) against a real DataLoader on a throttled disk"
    data = "/var/tmp/stallsim-shards/data"
    items = 4000
    needs = ("torch", "torchvision")
    targets = [Target("median epoch time", "med", 0.10, quick=0.20),
               Target("median bytes read", "med_bytes", 0.10, quick=0.20)]

    def add_arguments(self, ap):
        ap.add_argument("--workers", default="1,2,4", help="num_workers of the rows")
        ap.add_argument("--mb-s", type=float, default=40, help="the device's read limit, MB/s")
        ap.add_argument("--mem-mb", type=float, default=3000, help="the memory cgroup's limit")
        ap.add_argument("--buffer", type=int, default=1000, help="each worker's shuffle buffer")
        ap.add_argument("--shard-mb", type=float, default=27, help="shards of about this size")
        ap.add_argument("--compute", type=float, default=0.01, help="GPU seconds a batch")

    def configure(self, a):
        if a.quick:  # CI's: fewer items and workers, one epoch past the first
            a.items, a.epochs, a.workers = min(a.items, 1200), 2, "1,4"
        a.shards = os.path.join(os.path.dirname(os.path.abspath(a.data)), "shards")

    def requires(self, a):
        if os.geteuid() != 0:
            return "needs root to create block-I/O and memory cgroups"
        self.ctl, self.mem = controller(), cgroup.memory_cgroup()
        if not self.ctl:
            return "no blkio (v1) or io (v2) cgroup controller"
        return None if self.mem else "no memory cgroup controller"

    def setup(self, a):
        from validation.fixtures.datasets.http_shards import write_shards
        from validation.torch import probed

        self.profile = probed(a)
        files = fx.jpegs(a.data)[:a.items]
        sizes = [os.path.getsize(p) for p in files]
        self.mean = statistics.mean(sizes)
        self.S = max(2, int(a.shard_mb * 1e6 // self.mean))
        shutil.rmtree(a.shards, True)  # this run's items and shard size, never a stale set
        write_shards(files, self.S, a.shards)
        self.dev = disk_of(a.shards)
        if not self.dev:
            raise Skip(f"{a.shards} is not on a block device")
        self.ra = read_ahead_kb(self.dev)
        self.scen = self.write_scenario(a, sizes)

    def write_scenario(self, a, sizes):
        cv = statistics.pstdev(sizes) / self.mean
        scen = os.path.join(os.path.dirname(a.shards), "shards-validation.yaml")
        with open(scen, "w") as f:
            f.write(f"""# written by validation.shards: the harness's training job
name: shards-validation
host: {self.profile}
epochs: {a.epochs}
dataset: {{items: {len(sizes)}, item_kb: {self.mean / 1e3:.6g}, item_kb_cv: {cv:.4g}, shard_items: {self.S}}}
server: {{gpus: 1, cache_gb: 0, storage: {{kind: fixed, read_mb_s: {a.mb_s:g}, latency_ms: 0, read_ahead_kb: {self.ra}}}}}
loader: {{kind: pytorch, cache: none, reader: stream, shuffle_buffer: {a.buffer}}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: {a.compute:g}}}
""")
        return scen

    def teardown(self, a):
        if os.path.isdir(getattr(a, "shards", "")) and a.quick:
            shutil.rmtree(a.shards, True)

    def rows(self, a):
        return [dict(workers=int(w), compute=a.compute) for w in a.workers.split(",")]

    def measure(self, a, r):
        """The row in its own process, inside a throttled block-I/O cgroup
        and a memory cgroup made for it and removed after."""
        ver, root = self.ctl
        blk = make_cgroup(root, "io")
        # (v2: one hierarchy, where a process is in one group: the same group)
        mem = blk if self.mem[0] == root else make_cgroup(self.mem[0], "mem")
        try:
            if ver == "v1":
                with open(os.path.join(blk, "blkio.throttle.read_bps_device"), "w") as f:
                    f.write(f"{self.dev} {int(a.mb_s * 1e6)}")
            else:
                with open(os.path.join(blk, "io.max"), "w") as f:
                    f.write(f"{self.dev} rbps={int(a.mb_s * 1e6)}")
            with open(os.path.join(mem, self.mem[1]), "w") as f:
                f.write(str(int(a.mem_mb * 1e6)))
            os.environ[ENV_CG], os.environ[ENV_DEV] = blk, self.dev
            joins = " && ".join(f"echo $$ > {g}/cgroup.procs" for g in sorted({blk, mem}))
            load0 = load1()
            m = self.isolated(a, r, wrap=lambda cmd: ["sh", "-c", f"{joins} && exec \"$@\"",
                                                      "sh", *cmd])
            m["load"] = (load0, load1())
            return m
        finally:
            cgroup.remove_cgroup(blk)
            if mem != blk:
                cgroup.remove_cgroup(mem)

    def run_row(self, a, r):
        return loader_row(a, r)

    def predict(self, a, r, m):
        sets = [f"loader.num_workers={r['workers']}", f"jobs.0.compute_s_per_batch={r['compute']:g}"]
        path = os.path.join(os.path.dirname(self.scen), "measured-row.yaml")
        # (each worker's last batch is partial and steps in proportion: a
        # whole number of iterations for compare's profile)
        c = pr.compare_measured(a.bin, self.scen, sets, m["epochs"], round(m["batches"]),
                                r["compute"], BATCH, path)
        sim = pr.epoch_metrics(pr.run_json(a.bin, self.scen, sets), "sim")
        c["meas_bytes"] = statistics.mean(m["bytes"])
        c["pred_bytes"] = statistics.mean(e["storage_read_bytes"] for e in sim)
        c["bytes_err"] = (c["pred_bytes"] - c["meas_bytes"]) / c["meas_bytes"] if c["meas_bytes"] else None
        c["load"] = m["load"]
        return c

    def row_line(self, r, c):
        return (f"{r['workers']} workers: measured {c['meas_t']:.2f} s, predicted {c['pred_t']:.2f} s "
                f"({c['err']:+.1%}); read {c['meas_bytes'] / 1e6:.0f} MB, predicted "
                f"{c['pred_bytes'] / 1e6:.0f} MB; load {c['load'][0]:.1f}-{c['load'][1]:.1f}")

    def report(self, a, results):
        lines = [f"{a.items} JPEGs of {self.mean / 1e3:.1f} KB mean in tar shards of {self.S} "
                 f"({self.S * self.mean / 1e6:.1f} MB); the disk {self.dev} limited to {a.mb_s:g} "
                 f"MB/s, read_ahead_kb {self.ra}; memory cgroup {a.mem_mb:g} MB; shuffle buffer "
                 f"{a.buffer} a worker; GPU {a.compute * 1e3:g} ms a batch of {BATCH}; "
                 f"{a.epochs} epochs, each from the disk.", "",
                 "| workers | measured s/epoch | predicted | error | MB read / epoch | predicted "
                 "| error | measured stall | predicted stall | load average (start-end) |",
                 "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r, c in results:
            be = f"{c['bytes_err']:+.1%}" if c["bytes_err"] is not None else "-"
            lines.append(f"| {r['workers']} | {c['meas_t']:.2f} | {c['pred_t']:.2f} | "
                         f"{c['err']:+.1%} | {c['meas_bytes'] / 1e6:.0f} | "
                         f"{c['pred_bytes'] / 1e6:.0f} | {be} | {c['meas_stall']:.1%} | "
                         f"{c['pred_stall']:.1%} | {c['load'][0]:.1f}-{c['load'][1]:.1f} |")
        med = statistics.median(abs(c["err"]) for _, c in results)
        berrs = [abs(c["bytes_err"]) for _, c in results if c["bytes_err"] is not None]
        med_b = statistics.median(berrs) if berrs else None
        lines += ["", f"{len(results)} rows: median |error| {med:.1%} in epoch time"
                  + (f", {med_b:.1%} in bytes read." if med_b is not None else ".")]
        return "\n".join(lines) + "\n", dict(med=med, med_bytes=med_b)


if __name__ == "__main__":
    Shards.main()
