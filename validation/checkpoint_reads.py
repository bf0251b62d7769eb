"""Validates checkpoints beside a DataLoader's reads (issue 57 items 1 and 4)
against a real training loop: a torch DataLoader reading an ImageFolder
from this host's disk while the loop saves resnet50's state_dict to the
same disk every --every steps (docs/goodput.md).

  python3 -m validation.checkpoint_reads [--bin build/sim/stallsim]
      [--data DIR] [--items 800] [--epochs 2] [--workers 1,2] [--read-mb-s 10]
      [--write-mb-s 50] [--every 10] [--compute 0.02] [--quick] [--page FILE.md]

1. JPEGs in DIR (`stallsim measure --generate` writes them where missing)
   and the profile as docs/pytorch.md tells a PyTorch user (stallsim-probe
   over DIR: validation.torch.probed).
2. Each row runs in a fresh process inside a block-I/O cgroup that limits
   the disk holding DIR to --read-mb-s of reads and --write-mb-s of writes
   (v1 blkio.throttle.read_bps_device and write_bps_device, v2 io.max rbps
   and wbps: two budgets, one a direction): a DataLoader, batch 32, over
   the ImageFolder (decoded and transformed as torchvision's), the GPU
   emulated by sleeping --compute a batch, and after every --every-th step
   (counted across epochs) torch.save of resnet50's state_dict (random
   weights, about 102 MB) to a file in DIR, then fsync: a synchronous
   checkpoint, the workers reading on meanwhile. The files' pages are
   dropped before each epoch (POSIX_FADV_DONTNEED). Each epoch's wall time
   and each save's are measured, and the load average.
3. `stallsim compare` holds the epochs against the scenario on the probe's
   profile: the device as the cgroup makes it (read_mb_s and write_mb_s the
   limits, latency 0, server.storage.write_apart: true, as blk-throttle
   keeps the directions apart), loader.cache none, and
   jobs.0.checkpoint {gb: the file's bytes, every_steps: --every}; the
   simulator's checkpoint waits beside the saves.
Targets: median |error| <= 10 % in epoch time (--quick 20 %), median
|error| <= 15 % in the checkpoints' time (issue 57's bar; --quick 25 %).
Exit 0 met, 1 not, 77 where this machine cannot (not root, no blkio/io
controller with both throttles, DIR on no block device, no PyTorch)."""

import os
import statistics
import time

from stallsim.pipeline import evict, item_paths, make_dataset, timed_epochs
from validation import predict as pr
from validation.base import Harness, Skip, Target, load1
from validation.disk import disk_of
from validation.fixtures import cgroup
from validation.fixtures import data as fx

BATCH = 32


def both_throttles():
    """(version, root) of a block-I/O controller throttling both directions."""
    return cgroup.io_cgroup("blkio.throttle.write_bps_device", "cgroup.controllers")


def saver(a, sd, saves):
    """on_batch: a synchronous checkpoint after every a.every-th step."""
    import torch

    path = os.path.join(a.data, f"ckpt-{os.getpid()}.pt")
    step = [0]

    def on_batch(epoch, batch):
        step[0] += 1
        if step[0] % a.every:
            return
        t0 = time.perf_counter()
        with open(path, "wb") as f:
            torch.save(sd, f)
            f.flush()
            os.fsync(f.fileno())
        saves.append((epoch, time.perf_counter() - t0, os.path.getsize(path)))
        os.remove(path)

    return on_batch


def loader_row(a, r):
    """One row's epochs, in this (fresh) process, inside the row's cgroup."""
    import torch
    import torchvision
    from torch.utils.data import DataLoader

    torch.manual_seed(a.seed)
    sd = torchvision.models.resnet50().state_dict()
    ds = make_dataset(a.data)
    paths = item_paths(ds)
    saves = []

    def loader_for(e):
        evict(paths)  # every epoch from the disk, as loader.cache: none predicts
        kw = dict(batch_size=BATCH, num_workers=r["workers"], shuffle=True)
        if r["workers"] > 0:
            kw["prefetch_factor"] = 2
        return DataLoader(ds, **kw)

    epochs, batches = timed_epochs(loader_for, a.epochs, r["compute"],
                                   on_batch=saver(a, sd, saves),
                                   share=lambda b: len(b[1]) / BATCH)
    return dict(epochs=epochs, batches=batches, saves=[s for _, s, _ in saves],
                save_epochs=[e for e, _, _ in saves], bytes=max(b for _, _, b in saves))


class CheckpointReads(Harness):
    name = "checkpoint_reads"
    title = "Checkpoints beside a DataLoader's reads on one disk (torch.save every N steps)"
    data = "/var/tmp/stallsim-ckptreads/data"
    items = 800
    needs = ("torch", "torchvision")
    targets = [Target("median epoch time", "med", 0.10, quick=0.20),
               Target("median checkpoint time", "med_ckpt", 0.15, quick=0.25)]

    def add_arguments(self, ap):
        ap.add_argument("--workers", default="1,2", help="num_workers of the rows")
        ap.add_argument("--read-mb-s", type=float, default=10, help="the disk's read limit, MB/s")
        ap.add_argument("--write-mb-s", type=float, default=50, help="its write limit, MB/s")
        ap.add_argument("--every", type=int, default=10, help="steps between checkpoints")
        ap.add_argument("--compute", type=float, default=0.02, help="GPU seconds a batch")

    def configure(self, a):
        if a.quick:
            a.items, a.epochs, a.workers = min(a.items, 400), 2, "2"

    def requires(self, a):
        if os.geteuid() != 0:
            return "needs root to create a block-I/O cgroup"
        self.ctl = both_throttles()
        return None if self.ctl else "no blkio (v1) or io (v2) controller with a write throttle"

    def setup(self, a):
        from validation.torch import probed

        self.profile = probed(a)
        self.dev = disk_of(a.data)
        if not self.dev:
            raise Skip(f"{a.data} is not on a block device")
        # every JPEG there: the ImageFolder reads them all
        sizes = [os.path.getsize(p) for p in fx.jpegs(a.data)]
        self.n, self.mean = len(sizes), statistics.mean(sizes)
        self.cv = statistics.pstdev(sizes) / self.mean
        self.scen = None  # written with the first row's checkpoint bytes

    def write_scenario(self, a, nbytes):
        scen = os.path.join(os.path.dirname(os.path.abspath(a.data)), "ckptreads-validation.yaml")
        with open(scen, "w") as f:
            f.write(f"""# written by validation.checkpoint_reads: the harness's training job
name: ckptreads-validation
host: {self.profile}
epochs: {a.epochs}
dataset: {{items: {self.n}, item_kb: {self.mean / 1e3:.6g}, item_kb_cv: {self.cv:.4g}}}
server: {{gpus: 1, cache_gb: 0, storage: {{kind: fixed, read_mb_s: {a.read_mb_s:g}, latency_ms: 0,
  write_mb_s: {a.write_mb_s:g}, write_apart: true}}}}
loader: {{kind: pytorch, cache: none}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: {a.compute:g},
      checkpoint: {{gb: {nbytes / 1e9:.9g}, every_steps: {a.every}, writers: 1}}}}
""")
        return scen

    def rows(self, a):
        return [dict(workers=int(w), compute=a.compute) for w in a.workers.split(",")]

    def measure(self, a, r):
        ver, root = self.ctl
        try:
            cg = cgroup.throttled(ver, root, self.dev, "ckptr", rbps=a.read_mb_s * 1e6,
                                  wbps=a.write_mb_s * 1e6)
        except OSError as e:
            raise Skip(f"cannot create a block-I/O cgroup under {root}: {e}")
        try:
            load0 = load1()
            m = self.isolated(a, r, wrap=cgroup.joining(cg))
            m["load"] = (load0, load1())
            return m
        finally:
            cgroup.remove_cgroup(cg)

    def run_row(self, a, r):
        return loader_row(a, r)

    def predict(self, a, r, m):
        if not self.scen:
            self.scen = self.write_scenario(a, m["bytes"])
        sets = [f"loader.num_workers={r['workers']}", f"jobs.0.compute_s_per_batch={r['compute']:g}"]
        path = os.path.join(os.path.dirname(self.scen), "measured-row.yaml")
        c = pr.compare_measured(a.bin, self.scen, sets, m["epochs"], round(m["batches"]),
                                r["compute"], BATCH, path)
        sim = pr.epoch_metrics(pr.run_json(a.bin, self.scen, sets), "sim")
        c["meas_ck"] = sum(m["saves"]) / len(m["epochs"])
        c["pred_ck"] = statistics.mean(e["checkpoint_s"] for e in sim)
        c["ck_err"] = (c["pred_ck"] - c["meas_ck"]) / c["meas_ck"]
        c["saves"], c["load"] = len(m["saves"]), m["load"]
        return c

    def row_line(self, r, c):
        return (f"{r['workers']} workers: epoch {c['meas_t']:.2f} s, predicted {c['pred_t']:.2f} s "
                f"({c['err']:+.1%}); checkpoints {c['meas_ck']:.2f} s an epoch, predicted "
                f"{c['pred_ck']:.2f} s ({c['ck_err']:+.1%}); load {c['load'][0]:.1f}-"
                f"{c['load'][1]:.1f}")

    def report(self, a, results):
        lines = [f"{self.n} JPEGs of {self.mean / 1e3:.1f} KB mean; the disk {self.dev} limited to "
                 f"{a.read_mb_s:g} MB/s of reads and {a.write_mb_s:g} MB/s of writes; a "
                 f"checkpoint (resnet50's state_dict, torch.save + fsync) every {a.every} steps; "
                 f"GPU {a.compute * 1e3:g} ms a batch of {BATCH}; {a.epochs} epochs, each from "
                 "the disk.", "",
                 "| workers | measured s/epoch | predicted | error | checkpoints s/epoch | "
                 "predicted | error | saves | load average (start-end) |",
                 "|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r, c in results:
            lines.append(f"| {r['workers']} | {c['meas_t']:.2f} | {c['pred_t']:.2f} | "
                         f"{c['err']:+.1%} | {c['meas_ck']:.2f} | {c['pred_ck']:.2f} | "
                         f"{c['ck_err']:+.1%} | {c['saves']} | "
                         f"{c['load'][0]:.1f}-{c['load'][1]:.1f} |")
        med = statistics.median(abs(c["err"]) for _, c in results)
        med_ck = statistics.median(abs(c["ck_err"]) for _, c in results)
        lines += ["", f"{len(results)} rows: median |error| {med:.1%} in epoch time, "
                  f"{med_ck:.1%} in the checkpoints' time."]
        return "\n".join(lines) + "\n", dict(med=med, med_ckpt=med_ck)


if __name__ == "__main__":
    CheckpointReads.main()
