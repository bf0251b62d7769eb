"""Validates a synchronous checkpoint's write time (issue 57) against a real
torch.save of a real model's state_dict onto this host's disk under a write
limit the harness sets (docs/validation/checkpoint.md).

  python3 -m validation.checkpoint [--bin build/sim/stallsim] [--data DIR]
      [--quick] [--reps 3] [--page FILE.md]

For each row a block-I/O cgroup limits writes to the disk that holds DIR
(v1 blkio.throttle.write_bps_device; v2 io.max wbps), and a fresh process in
it builds torchvision's resnet50 (random weights: a state_dict's bytes do
not depend on their values, about 102 MB) and times `torch.save` of its
state_dict to a file in DIR followed by fsync, as a checkpoint is durable
only once written (the median of --reps). fsync matters twice: under cgroup
v1 the flusher threads' writeback is charged to no cgroup, so only the
writes the process itself issues are throttled, and fsync issues them. A row
whose rate beats its limit by more than a fifth skips the harness: the
throttle did not hold. `stallsim run` predicts the same checkpoint: one
rank writing the file's bytes (checkpoint.gb) at the limit
(server.storage.write_mb_s) on a fixed disk, one checkpoint in the epoch.
The table also gives torch.save into memory alone (io.BytesIO, the median
of --reps): the serialisation stallsim does not count. Added before the
write it over-predicted (+10 % and +14 % at 100 MB/s, load 5.6-5.8 on 2
cores: the whole save took less than the bytes at the limit alone, so the
serialisation overlaps the throttled writes or some writeback escapes the
v1 throttle before the fsync), so it is shown, not counted. Exit 0 when every row is within 15 % (issue 57's
bar; --quick 25 %), 1 when not, 77 when this machine cannot (not root, no
block-I/O controller with a write throttle, DIR on no block device,
no PyTorch)."""

import io
import os
import statistics
import subprocess
import time

from validation import predict as pr
from validation.base import Harness, Skip, Target
from validation.disk import disk_of
from validation.fixtures import cgroup
from validation.fixtures.cgroup import remove_cgroup

MB = 1e6  # write_mb_s and the table count 1e6 bytes, as the cgroup's bytes/s


def write_controller():
    """(version, root) of a block-I/O controller that throttles writes, or None."""
    return cgroup.io_cgroup("blkio.throttle.write_bps_device")


def timed_save(sd, path):
    """Seconds from torch.save's start until the file is on the disk."""
    import torch

    t0 = time.perf_counter()
    with open(path, "wb") as f:
        torch.save(sd, f)
        f.flush()
        os.fsync(f.fileno())
    return time.perf_counter() - t0


def in_memory(sd):
    """Seconds torch.save takes into memory: its serialisation alone."""
    import torch

    t0 = time.perf_counter()
    torch.save(sd, io.BytesIO())
    return time.perf_counter() - t0


def one_checkpoint(path, tool, nbytes, storage):
    """A scenario of one GPU, 10 steps an epoch and one checkpoint of nbytes
    at the epoch's last step, on `storage` (its YAML mapping's body): the
    epoch's checkpoint_s is one write (validation.checkpoint_put's too)."""
    with open(path, "w") as f:
        f.write(f"""# written by validation.{tool}
name: {tool.replace("_", "-")}-validation
epochs: 1
dataset: {{items: 320, item_kb: 100}}
server: {{cpus: 4, gpus: 1, cache_gb: 0,
  storage: {{{storage}}}}}
loader: {{cache: none}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.01,
      checkpoint: {{gb: {nbytes / 1e9:.9g}, every_steps: 10, writers: 1}}}}
""")
    return path


def write_scenario(a, nbytes):
    """The fixed disk's: the limit comes per row (server.storage.write_mb_s)."""
    return one_checkpoint(os.path.join(a.data, "checkpoint-validation.yaml"), "checkpoint",
                          nbytes, "kind: fixed, read_mb_s: 1000, latency_ms: 0.1")


class Checkpoint(Harness):
    name = "checkpoint"
    title = "A checkpoint's write time against torch.save of resnet50 under a disk write limit"
    data = "/var/tmp/stallsim-checkpoint"
    needs = ("torch", "torchvision")
    targets = [Target("every row", "worst", 0.15, quick=0.25),
               Target("median |error|", "med", 0.10, quick=0.20)]

    def add_arguments(self, ap):
        ap.add_argument("--reps", type=int, default=3, help="saves a row, the median taken")

    def requires(self, a):
        if os.geteuid() != 0:
            return "not root: a block-I/O cgroup needs root"
        self.ctl = write_controller()
        if not self.ctl:
            return "no block-I/O controller with a write throttle (blkio v1, or v2's io)"
        os.makedirs(a.data, exist_ok=True)
        self.dev = disk_of(a.data)
        if not self.dev:
            return f"{a.data} is on no block device (a tmpfs or overlay): nothing to throttle"
        return None

    def setup(self, a):
        self.scen = None  # written with the first row's bytes

    def rows(self, a):
        return [dict(mb_s=m) for m in ((100,) if a.quick else (50, 100, 200))]

    def measure(self, a, r):
        ver, root = self.ctl
        cg = cgroup.throttled(ver, root, self.dev, "ckpt", wbps=r["mb_s"] * MB)
        try:
            return self.isolated(a, r, wrap=cgroup.joining(cg))
        finally:
            remove_cgroup(cg)

    def run_row(self, a, r):
        import torch
        import torchvision

        torch.manual_seed(a.seed)
        sd = torchvision.models.resnet50().state_dict()
        serialize = statistics.median(in_memory(sd) for _ in range(a.reps))
        path = os.path.join(a.data, f"ckpt-{os.getpid()}.pt")
        secs = []
        try:
            for _ in range(a.reps):
                secs.append(timed_save(sd, path))
                nbytes = os.path.getsize(path)
                os.remove(path)
        finally:
            if os.path.exists(path):
                os.remove(path)
        if nbytes / min(secs) > 1.2 * r["mb_s"] * MB:
            raise Skip(f"the write limit did not hold: {nbytes / min(secs) / MB:.0f} MB/s under "
                       f"{r['mb_s']} MB/s (writeback outside the cgroup?)")
        return dict(bytes=nbytes, secs=secs, serialize=serialize)

    def predict(self, a, r, m):
        if not self.scen:
            self.scen = write_scenario(a, m["bytes"])
        out = pr.run_json(a.bin, self.scen, [f"server.storage.write_mb_s={r['mb_s']}"])
        e = out["variants"][0]["jobs"][0]["epochs"][0]
        meas = statistics.median(m["secs"])
        pred = e["sim"]["checkpoint_s"]
        return dict(meas=meas, pred=pred, model=e["model"]["checkpoint_s"], bytes=m["bytes"],
                    serialize=m["serialize"], err=(pred - meas) / meas)

    def row_line(self, r, c):
        return (f"{r['mb_s']} MB/s: torch.save + fsync {c['meas']:.3f} s, predicted "
                f"{c['pred']:.3f} s: {c['err']:+.1%}")

    def report(self, a, results):
        errs = [abs(c["err"]) for _, c in results]
        lines = ["| write limit MB/s | file MB | measured s (median) | torch.save to memory s | "
                 "predicted s (sim) | model s | error |", "|---:|---:|---:|---:|---:|---:|---:|"]
        for r, c in results:
            lines.append(f"| {r['mb_s']} | {c['bytes'] / MB:.1f} | {c['meas']:.3f} | "
                         f"{c['serialize']:.3f} | {c['pred']:.3f} | {c['model']:.3f} | "
                         f"{c['err']:+.1%} |")
        lines += ["", f"{len(results)} rows: median |error| {statistics.median(errs):.1%}, worst "
                  f"{max(errs):.1%}; {a.reps} saves a row."]
        return "\n".join(lines) + "\n", dict(med=statistics.median(errs), worst=max(errs))


if __name__ == "__main__":
    Checkpoint.main()
