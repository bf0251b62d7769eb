"""Validates the page cache under a memory cgroup with loose files (loader.
cache: linux, issue 55 item 4's ImageFolder row) against a real PyTorch
DataLoader over an ImageFolder of JPEGs on this host's disk, under a device
read limit and a memory cgroup smaller than the data set.

  python3 -m validation.imagefolder [--bin build/sim/stallsim] [--data DIR]
      [--items 4000] [--epochs 3] [--workers 1,2,4,8] [--mb-s 40]
      [--cache-frac 0.5] [--margin-mb 50] [--mem-mb MB] [--compute 0.01]
      [--quick] [--page FILE.md]

1. JPEGs in DIR (`stallsim measure --generate`'s photographs, in ImageFolder's
   class folders), and the profile as docs/pytorch.md tells a PyTorch user:
   stallsim-probe over DIR (validation.torch.probed); its storage step
   (`python3 -m stallsim.storageprobe`) is run again inside the read limit,
   as validation.disk does, for the device's keys.
2. Each row runs in a fresh process inside a block-I/O cgroup that limits
   its reads of the disk holding DIR to --mb-s and a memory cgroup
   (validation.shards' cgroups) whose limit is what `stallsim run` says the
   row's processes hold at their peak (its training process, workers and
   /dev/shm), --margin-mb for the libraries they map, and room for
   --cache-frac of the data (or --mem-mb): torchvision's ImageFolder over DIR
   with the standard transforms (PIL decode, as ImageFolder does), a
   torch.utils.data.DataLoader, batch 32, shuffled, --workers workers; the
   GPU emulated by sleeping --compute a batch. The files' pages are dropped
   before the first epoch only: the later epochs read through what the
   cgroup's page cache kept. Each epoch's wall time and the bytes the cgroup
   read from the disk (blkio.throttle.io_service_bytes, io.stat rbytes).
3. `stallsim compare` holds the epochs against the scenario configured as
   the README says: the probe's profile as host, the data set's items and
   sizes, loader.cache: linux, server.mem_gb the cgroup's limit (the page
   cache then holds what the processes leave: docs/memory.md), the storage
   probe's read_mb_s and latency_ms, read_ahead_kb the disk's own, burst_ms
   100 (blk-throttle budgets bytes over its 100 ms slice); the
   simulator's bytes read beside the cgroup's, epoch by epoch.
Targets: median |error| <= 10 % in epoch time (--quick: 20 %), median bytes
read within 10 % (--quick: 20 %). Exit 0 met, 1 not, 77 where this machine
cannot (not root, no blkio/io or memory controller, the data not on a block
device, no PyTorch)."""

import os
import statistics
import sys

from stallsim import storageprobe
from stallsim.pipeline import evict, timed_epochs
from validation import predict as pr
from validation.base import Skip, Target
from validation.disk import disk_of, storage_keys, throttled
from validation.fixtures import cgroup
from validation.fixtures import data as fx
from validation.shards import ENV_CG, ENV_DEV, Shards, read_ahead_kb

BATCH = 32
# The throttle is blk-throttle's: a budget of bytes over time, its slice
# (throtl_slice) 100 ms: server.storage.burst_ms as the cgroup makes it.
BURST_MS = 100


def loader_row(a, r):
    """One row's epochs, in this (fresh) process, inside the row's cgroups."""
    import torch
    from torch.utils.data import DataLoader

    from stallsim import pipeline

    torch.manual_seed(a.seed)
    ds = pipeline.make_dataset(a.data)
    paths = pipeline.item_paths(ds)
    cg, dev = os.environ[ENV_CG], os.environ[ENV_DEV]
    ver = "v1" if os.path.isfile(os.path.join(cg, "blkio.throttle.io_service_bytes")) else "v2"
    evict(paths)  # the first epoch cold; the later ones through the cgroup's page cache
    marks = []

    def loader_for(e):
        marks.append(cgroup.device_read_bytes(cg, ver, dev))
        kw = dict(batch_size=BATCH, shuffle=True, num_workers=r["workers"])
        if r["workers"] > 0:
            kw["prefetch_factor"] = 2
        return DataLoader(ds, **kw)

    epochs, batches = timed_epochs(loader_for, a.epochs, r["compute"])
    marks.append(cgroup.device_read_bytes(cg, ver, dev))
    return dict(epochs=epochs, batches=batches,
                bytes=[marks[i + 1] - marks[i] for i in range(a.epochs)])


class ImageFolder(Shards):
    name = "imagefolder"
    title = ("An ImageFolder DataLoader through the page cache (loader.cache: linux) in a memory "
             "cgroup on a throttled disk")
    data = "/var/tmp/stallsim-imagefolder/data"
    items = 4000
    epochs = 3
    needs = ("torch", "torchvision")
    targets = [Target("median epoch time", "med", 0.10, quick=0.20),
               Target("median bytes read", "med_bytes", 0.10, quick=0.20)]

    def add_arguments(self, ap):
        ap.add_argument("--workers", default="1,2,4,8", help="num_workers of the rows")
        ap.add_argument("--mb-s", type=float, default=40, help="the device's read limit, MB/s")
        ap.add_argument("--mem-mb", type=float, default=0,
                        help="the memory cgroup's limit (default: per row, what stallsim says "
                             "the row's processes hold, --margin-mb, and --cache-frac of the data)")
        ap.add_argument("--cache-frac", type=float, default=0.5,
                        help="the part of the data the page cache has room for (default limit)")
        ap.add_argument("--margin-mb", type=float, default=50,
                        help="beside the processes (default limit): what they map of files "
                             "(Python's and PyTorch's libraries), which the cgroup charges too")
        ap.add_argument("--compute", type=float, default=0.01, help="GPU seconds a batch")

    def configure(self, a):
        if a.quick:  # CI's: few items, two rows, two epochs; the room still short of them
            a.items, a.epochs, a.workers = min(a.items, 600), 2, "1,4"
            a.cache_frac, a.margin_mb = min(a.cache_frac, 0.25), min(a.margin_mb, 25)

    def setup(self, a):
        from validation.torch import probed

        self.profile = probed(a)
        files = fx.jpegs(a.data)
        self.dev = disk_of(a.data)
        if not self.dev:
            raise Skip(f"{a.data} is not on a block device")
        self.ra = read_ahead_kb(self.dev)
        self.keys = self.probe_storage(a, len(files))
        n, kb, cv = fx.dataset_stats(a.data)
        self.n, self.kb, self.data_mb = n, kb, sum(os.path.getsize(p) for p in files) / 1e6
        self.scen = self.write_scenario(a, n, kb, cv)

    def probe_storage(self, a, items):
        """The storage probe's read_mb_s and latency_ms inside the read limit."""
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(storageprobe.__file__)))
        prof = os.path.join(os.path.dirname(os.path.abspath(a.data)), "storage-probe.yaml")
        quick = " --readers 1,4 --reps 2" if a.quick else ""
        ver, root = self.ctl
        throttled(self.dev, ver, root, "bps", a.mb_s * 1e6,
                  f"env PYTHONPATH={pkg} {sys.executable} -m stallsim.storageprobe "
                  f"--data {a.data} --items {items} --out {prof}{quick}")
        keys = storage_keys(prof)
        if "read_mb_s" not in keys:
            raise RuntimeError(f"the storage probe wrote no read_mb_s in {prof}")
        return keys

    def write_scenario(self, a, n, kb, cv):
        scen = os.path.join(os.path.dirname(os.path.abspath(a.data)), "imagefolder-validation.yaml")
        with open(scen, "w") as f:
            f.write(f"""# written by validation.imagefolder: the harness's training job
name: imagefolder-validation
host: {self.profile}
epochs: {a.epochs}
dataset: {{items: {n}, item_kb: {kb:.6g}, item_kb_cv: {cv:.4g}}}
server: {{gpus: 1, mem_gb: 0,
  storage: {{kind: fixed, read_mb_s: {self.keys['read_mb_s']:.6g}, latency_ms: {self.keys.get('latency_ms', 0):.6g}, read_ahead_kb: {self.ra}, burst_ms: {BURST_MS:g}}}}}
loader: {{kind: pytorch, cache: linux}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: {a.compute:g}}}
""")
        return scen

    def teardown(self, a):
        pass

    def run_row(self, a, r):
        return loader_row(a, r)

    def row_sets(self, r):
        return [f"loader.num_workers={r['workers']}", f"jobs.0.compute_s_per_batch={r['compute']:g}"]

    def limit_mb(self, a, r):
        """The row's memory limit: --mem-mb, else what stallsim says its
        processes hold at their peak (training process, workers, /dev/shm),
        --margin-mb, and room for --cache-frac of the data."""
        if a.mem_mb > 0:
            return a.mem_mb
        out = pr.run_json(a.bin, self.scen, self.row_sets(r) + ["server.mem_gb=0"])
        held = out["variants"][0]["jobs"][0]["mem_peak_gib"]["server"] * 2 ** 30 / 1e6
        return held + a.margin_mb + a.cache_frac * self.data_mb

    def measure(self, a, r):
        limit, a.mem_mb = a.mem_mb, self.limit_mb(a, r)
        try:
            m = super().measure(a, r)
        finally:
            m_limit, a.mem_mb = a.mem_mb, limit
        m["limit_mb"] = m_limit
        return m

    def predict(self, a, r, m):
        sets = self.row_sets(r) + [f"server.mem_gb={m['limit_mb'] / 1e3:.6g}"]
        path = os.path.join(os.path.dirname(self.scen), "measured-row.yaml")
        c = pr.compare_measured(a.bin, self.scen, sets, m["epochs"], m["batches"], r["compute"],
                                BATCH, path)
        sim = pr.epoch_metrics(pr.run_json(a.bin, self.scen, sets), "sim")
        c["meas_bytes"], c["pred_bytes"] = m["bytes"], [e["storage_read_bytes"] for e in sim]
        mb, pb = sum(m["bytes"]), sum(c["pred_bytes"])
        c["bytes_err"] = (pb - mb) / mb if mb else None
        c["load"], c["limit_mb"] = m["load"], m["limit_mb"]
        return c

    def row_line(self, r, c):
        mb = " ".join(f"{x / 1e6:.0f}" for x in c["meas_bytes"])
        pb = " ".join(f"{x / 1e6:.0f}" for x in c["pred_bytes"])
        return (f"{r['workers']} workers, limit {c['limit_mb']:.0f} MB: measured {c['meas_t']:.2f} s, "
                f"predicted {c['pred_t']:.2f} s "
                f"({c['err']:+.1%}); read {mb} MB, predicted {pb} MB; "
                f"load {c['load'][0]:.1f}-{c['load'][1]:.1f}")

    def report(self, a, results):
        lines = [f"{self.n} JPEGs of {self.kb:.1f} KB mean ({self.data_mb:.0f} MB) in an "
                 f"ImageFolder; the disk {self.dev} limited to {a.mb_s:g} MB/s (the storage "
                 f"probe inside it: {self.keys['read_mb_s']:.1f} MB/s, "
                 f"{self.keys.get('latency_ms', 0):.2f} ms), read_ahead_kb {self.ra}; a memory "
                 f"cgroup a row ({self.limit_text(a)}); GPU {a.compute * 1e3:g} ms a batch of {BATCH}; "
                 f"{a.epochs} epochs, the first cold.", "",
                 "| workers | memory limit MB | measured s/epoch | predicted | error | MB read per epoch | "
                 "predicted | error (all epochs) | measured stall | predicted stall | "
                 "load average (start-end) |",
                 "|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---|"]
        for r, c in results:
            be = f"{c['bytes_err']:+.1%}" if c["bytes_err"] is not None else "-"
            mb = " ".join(f"{x / 1e6:.0f}" for x in c["meas_bytes"])
            pb = " ".join(f"{x / 1e6:.0f}" for x in c["pred_bytes"])
            lines.append(f"| {r['workers']} | {c['limit_mb']:.0f} | {c['meas_t']:.2f} | {c['pred_t']:.2f} | "
                         f"{c['err']:+.1%} | {mb} | {pb} | {be} | {c['meas_stall']:.1%} | "
                         f"{c['pred_stall']:.1%} | {c['load'][0]:.1f}-{c['load'][1]:.1f} |")
        med = statistics.median(abs(c["err"]) for _, c in results)
        berrs = [abs(c["bytes_err"]) for _, c in results if c["bytes_err"] is not None]
        med_b = statistics.median(berrs) if berrs else None
        lines += ["", f"{len(results)} rows: median |error| {med:.1%} in epoch time"
                  + (f", {med_b:.1%} in bytes read." if med_b is not None else ".")]
        return "\n".join(lines) + "\n", dict(med=med, med_bytes=med_b)


    @staticmethod
    def limit_text(a):
        if a.mem_mb > 0:
            return f"{a.mem_mb:g} MB"
        return (f"what stallsim says its processes hold + {a.margin_mb:g} MB + "
                f"{a.cache_frac:.0%} of the data")


if __name__ == "__main__":
    ImageFolder.main()
