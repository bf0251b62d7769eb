"""Validates a checkpoint's multipart upload to an object store (issue 57
item 4: server.storage.kind object's write path) against real PUTs to nginx
in a network namespace the harness creates (validation/fixtures/objstore.py
with its dav module, docs/goodput.md).

  python3 -m validation.checkpoint_put [--bin build/sim/stallsim]
      [--part-mb 8] [--reps 3] [--quick] [--page FILE.md]

The checkpoint is torch.save of resnet50's state_dict (random weights,
about 102 MB) in /dev/shm, split into equal parts of at most --part-mb
(boto3's multipart_chunksize, 8 MB). Once, unshaped, one connection PUTs
parts of 1-16 MB: the fit of a PUT's time, a fixed part (first_byte_ms)
and a connection's rate (conn_mb_s). Each row shapes the namespace's
loopback to a rate (a tbf qdisc on both directions) and `writers` curl
processes PUT the parts, each on one keep-alive connection, its share one
after another (boto3's transfer threads); the median of --reps uploads.
`stallsim run` predicts the same checkpoint: one rank writing the file's
bytes as `writers` files in parts of part_mb, first_byte_ms and conn_mb_s
as fitted, max_mb_s the shaped rate. Targets: every row within 15 %
(issue 57's bar; --quick 25 %), median within 10 % (--quick 20 %). Exit 0
met, 1 not, 77 where this machine cannot (not root, no nginx or its dav
module, ip or tc; no PyTorch)."""

import os
import shutil
import statistics
import subprocess
import tempfile

from validation import predict as pr
from validation.base import Harness, Skip, Target
from validation.checkpoint import one_checkpoint
from validation.fixtures import objput, objstore

MB = 1e6


def write_scenario(folder, nbytes, fit, part_mb):
    """The object store's, at the fitted PUT time (fit: seconds, MB/s)."""
    return one_checkpoint(
        os.path.join(folder, "checkpoint-put-validation.yaml"), "checkpoint_put", nbytes,
        f"kind: object, first_byte_ms: {fit[0] * 1e3:.6g}, conn_mb_s: {fit[1]:.6g}, "
        f"part_mb: {part_mb:g}")


class CheckpointPut(Harness):
    name = "checkpoint_put"
    title = "A checkpoint's multipart upload against real PUTs to nginx in a network namespace"
    needs = ("torch", "torchvision")
    targets = [Target("every row", "worst", 0.15, quick=0.25),
               Target("median |error|", "med", 0.10, quick=0.20)]

    def add_arguments(self, ap):
        ap.add_argument("--part-mb", type=float, default=8, help="the multipart part size")
        ap.add_argument("--reps", type=int, default=3, help="uploads a row, the median taken")

    def requires(self, a):
        if os.geteuid() != 0:
            return "not root: a network namespace and its qdisc need root"
        try:
            _, _, nginx, _ = objstore.check(latency=False, rate=True, client=True)
        except objstore.Cannot as e:
            return str(e)
        v = subprocess.run([nginx, "-V"], capture_output=True, text=True)
        return None if "http_dav_module" in v.stderr + v.stdout else "nginx has no dav module (PUT)"

    def setup(self, a):
        import torch
        import torchvision

        torch.manual_seed(a.seed)
        self.work = tempfile.mkdtemp(dir="/dev/shm", prefix="stallsim-ckput-")
        path = os.path.join(self.work, "ckpt.pt")
        torch.save(torchvision.models.resnet50().state_dict(), path)
        self.nbytes = os.path.getsize(path)
        os.makedirs(os.path.join(self.work, "parts"))
        self.parts = objput.split(path, int(a.part_mb * MB), os.path.join(self.work, "parts"))
        self.root = os.path.join(self.work, "store")
        os.makedirs(self.root)
        with objstore.ObjectStore(self.root, puts=True) as st:
            self.fit = objput.put_probe(st, self.work)
        self.clear()
        self.scen = write_scenario(self.work, self.nbytes, self.fit, a.part_mb)

    def clear(self):
        """The uploads so far removed (tmpfs is memory)."""
        for n in os.listdir(self.root):
            if not n.startswith("."):
                shutil.rmtree(os.path.join(self.root, n), True)

    def teardown(self, a):
        if getattr(self, "work", None):
            shutil.rmtree(self.work, True)

    def rows(self, a):
        rates = (400,) if a.quick else (400, 800)
        writers = (1, 8) if a.quick else (1, 4, 8)
        return [dict(mbit=m, writers=w) for m in rates for w in writers]

    def measure(self, a, r):
        secs = []
        try:
            with objstore.ObjectStore(self.root, rate_mbit=r["mbit"], puts=True) as st:
                for k in range(a.reps):
                    secs.append(objput.upload(st, self.parts, r["writers"], f"row{k}"))
                    self.clear()
        except objstore.Cannot as e:
            raise Skip(str(e))
        return dict(secs=secs)

    def predict(self, a, r, m):
        sets = [f"server.storage.max_mb_s={r['mbit'] / 8:g}",
                f"jobs.0.checkpoint.writers={r['writers']}"]
        e = pr.run_json(a.bin, self.scen, sets)["variants"][0]["jobs"][0]["epochs"][0]
        meas = statistics.median(m["secs"])
        pred = e["sim"]["checkpoint_s"]
        return dict(meas=meas, pred=pred, model=e["model"]["checkpoint_s"], err=(pred - meas) / meas)

    def row_line(self, r, c):
        return (f"{r['mbit']} Mbit/s, {r['writers']} writers: measured {c['meas']:.3f} s, "
                f"predicted {c['pred']:.3f} s ({c['err']:+.1%})")

    def report(self, a, results):
        lines = [f"resnet50's checkpoint, {self.nbytes / MB:.1f} MB in {len(self.parts)} parts of "
                 f"at most {a.part_mb:g} MB; one connection's PUT fit: {self.fit[0] * 1e3:.2f} ms "
                 f"+ bytes at {self.fit[1]:.0f} MB/s (unshaped); {a.reps} uploads a row.", "",
                 "| shaped Mbit/s | writers | measured s (median) | predicted s (sim) | model s | "
                 "error |", "|---:|---:|---:|---:|---:|---:|"]
        for r, c in results:
            lines.append(f"| {r['mbit']} | {r['writers']} | {c['meas']:.3f} | {c['pred']:.3f} | "
                         f"{c['model']:.3f} | {c['err']:+.1%} |")
        errs = [abs(c["err"]) for _, c in results]
        lines += ["", f"{len(results)} rows: median |error| {statistics.median(errs):.1%}, "
                  f"worst {max(errs):.1%}."]
        return "\n".join(lines) + "\n", dict(med=statistics.median(errs), worst=max(errs))


if __name__ == "__main__":
    CheckpointPut.main()
