"""Validates stallsim's shared-memory verdict for a PyTorch DataLoader
against real DataLoaders whose /dev/shm is a small tmpfs (issue 35;
docs/validation/shm.md).

  python3 -m validation.shm [--bin build/sim/stallsim] [--data DIR]
      [--items 1200] [--quick] [--out FILE.md] [--page FILE.md]

A DataLoader's workers put each collated batch into shared memory; a pod
whose /dev/shm is Docker's 64 MB kills its workers with "Bus error" as soon
as the batches in flight do not fit. Each row runs a real
torch.utils.data.DataLoader in a private mount namespace (unshare -m) whose
/dev/shm is a tmpfs of the row's size, created for the row and gone with it:
ImageFolder over real JPEGs, RandomResizedCrop to the row's image size,
ToTensor, the row's batch, num_workers and prefetch_factor, the GPU emulated
by a first step that waits until the workers have filled every slot. A thread
samples the tmpfs's used bytes (statvfs) every 2 ms. Each row records
whether the run died with a bus error and the peak /dev/shm it used.
`stallsim check` predicts the same configuration (server.shm_mb set to the
row's tmpfs) and says whether it would fit; `stallsim run --format json`
gives the predicted peak (shm_peak_mib; MB in the table). Targets: the crash/no-crash verdict
agrees on every row; the measured peak within 10 % of the prediction on the
rows that ran. Exit 1 when not; 77 without PyTorch, root or unshare."""


import json
import os
import shlex
import shutil
import statistics
import subprocess
import threading
import time

from validation.base import Harness, Target
from validation.fixtures import data as fx

COMPUTE_S = 0.05  # per batch after the first
FILL_S = 120  # the most the first step waits for the workers to fill their slots


def shm_rows(quick):
    rows = []
    for shm in (64, 256, 1024):
        for w, b, pf, size in ((0, 64, 2, 224), (1, 32, 2, 224), (2, 16, 2, 224),
                               (2, 32, 2, 224), (2, 64, 2, 224), (4, 32, 2, 224),
                               (4, 64, 4, 224), (8, 32, 2, 224), (8, 64, 2, 224),
                               (2, 64, 2, 112), (4, 64, 2, 320), (4, 128, 2, 224)):
            rows.append(dict(shm=shm, workers=w, batch=b, prefetch=pf, size=size))
    if quick:
        keep = {(64, 0, 64), (64, 2, 16), (64, 2, 32), (256, 4, 64), (256, 8, 32), (1024, 8, 64)}
        rows = [r for r in rows if (r["shm"], r["workers"], r["batch"]) in keep]
    return rows


def used_bytes():
    st = os.statvfs("/dev/shm")
    return (st.f_blocks - st.f_bfree) * st.f_frsize


class PeakSampler:
    """A thread that samples the tmpfs's used bytes every 2 ms: peak[0]."""

    def __init__(self):
        self.base = used_bytes()
        self.peak = [self.base]
        self.stop = threading.Event()
        self.t = threading.Thread(target=self.sample, daemon=True)
        self.t.start()

    def sample(self):
        while not self.stop.is_set():
            u = used_bytes()
            if u > self.peak[0]:
                self.peak[0] = u
            time.sleep(0.002)

    def close(self):
        self.stop.set()
        self.t.join()


def hold_until_filled(peak, t0):
    """The GPU emulated as a slow first step: the training loop holds its
    first batch until the workers have filled every slot (the tmpfs stops
    growing for 2 s), the worst moment for /dev/shm. Filled when nothing
    grew for 2 s and for thrice the longest wait between two batches so far
    (a slow worker on a busy host)."""
    last, still, gap = peak[0], time.monotonic(), 0.0
    while time.monotonic() - still < max(2.0, 3 * gap) and time.monotonic() - t0 < FILL_S:
        time.sleep(0.1)
        if peak[0] != last:
            now = time.monotonic()
            last, gap, still = peak[0], max(gap, now - still), now


def shm_row(a, r):
    """One row inside the namespace: whether it died of /dev/shm, the peak."""
    import torch
    from torch.utils.data import DataLoader
    from torchvision import datasets, transforms

    torch.manual_seed(1)
    tf = transforms.Compose([transforms.RandomResizedCrop(r["size"]), transforms.ToTensor()])
    ds = datasets.ImageFolder(a.data, transform=tf)
    kw = dict(batch_size=r["batch"], shuffle=True, num_workers=r["workers"])
    if r["workers"] > 0:
        kw["prefetch_factor"] = r["prefetch"]
    s = PeakSampler()
    t0 = time.monotonic()
    need = r["prefetch"] * r["workers"] + 2 if r["workers"] else 3
    crashed, err, got = False, "", 0
    try:
        for _ in DataLoader(ds, **kw):
            got += 1
            if got == 1:
                hold_until_filled(s.peak, t0)
            else:
                time.sleep(COMPUTE_S)
            if got >= need:
                break
    except RuntimeError as e:
        # A worker that meets a full tmpfs dies by SIGBUS when it touches a
        # page ("killed by signal: Bus error"), or first fails to grow its
        # segment ("No space left on device"), which the iterator may report
        # only as "exited unexpectedly": each is the run dying of /dev/shm,
        # provided the tmpfs was full when it did.
        err = str(e).splitlines()[0][:200]
        st = os.statvfs("/dev/shm")
        full = s.peak[0] >= 0.9 * st.f_blocks * st.f_frsize
        crashed = full or any(k in str(e) for k in ("Bus error", "shared memory", "No space left"))
        if not crashed:
            raise
    s.close()
    return dict(crashed=crashed, error=err, peak=s.peak[0] - s.base, batches=got)


def write_scenario(a):
    scen = os.path.join(os.path.dirname(os.path.abspath(a.data)), "shm-validation.yaml")
    n = len(fx.jpegs(a.data))
    with open(scen, "w") as f:
        f.write(f"""# written by validation.shm: the harness's DataLoader
name: shm-validation
epochs: 1
dataset: {{items: {n}, item_kb: 110}}
server: {{gpus: 1}}
loader: {{kind: pytorch}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: 32, compute_s_per_batch: {COMPUTE_S}}}
""")
    return scen


def shm_predict(a, scen, r):
    """stallsim's verdict (check's exit and message) and predicted peak (MB)."""
    sets = [f"loader.num_workers={r['workers']}", f"loader.prefetch_factor={r['prefetch']}",
            f"jobs.0.batch_per_gpu={r['batch']}",
            f"prep.out_kb={3 * r['size'] * r['size'] * 4 / 1e3:g}"]
    args = []
    for s in sets:
        args += ["--set", s]
    chk = subprocess.run([a.bin, "check", scen, "--set", f"server.shm_mb={r['shm']}"] + args,
                         capture_output=True, text=True)
    run = subprocess.run([a.bin, "run", scen, "--format", "json", "--model-only"] + args,
                         capture_output=True, text=True, check=True)
    peak = json.loads(run.stdout)["variants"][0]["jobs"][0]["shm_peak_mib"]["server"] * 1.048576
    return chk.returncode != 0, chk.stderr.strip().splitlines()[-1:] or [""], peak


class Shm(Harness):
    name = "shm"
    title = "Shared memory: the bus error before the run (server.shm_mb) against real DataLoaders"
    data = "/var/tmp/stallsim-shm/data"
    needs = ("torch", "torchvision")
    targets = [Target("verdicts that differ", "disagree", 0, fmt="{}"),
               Target("every peak", "worst", 0.10)]

    def requires(self, a):
        if os.geteuid() != 0 or not shutil.which("unshare"):
            return "needs root and unshare(1) for a private /dev/shm"
        return None

    def setup(self, a):
        fx.generate(a.bin, a.data, a.items)
        self.scen = write_scenario(a)

    def rows(self, a):
        return shm_rows(a.quick)

    def run_row(self, a, r):
        return shm_row(a, r)

    def measure(self, a, r):
        """The row in its own mount namespace with a tmpfs of r['shm'] MB on /dev/shm."""
        def wrap(cmd):
            inner = (f"mount -t tmpfs -o size={r['shm']}m stallsim-shm /dev/shm && exec "
                     f"{shlex.join(cmd)}")
            return ["unshare", "-m", "--propagation", "private", "sh", "-c", inner]
        return self.isolated(a, r, wrap=wrap, timeout=600)

    def predict(self, a, r, m):
        crash_p, why, peak_p = shm_predict(a, self.scen, r)
        err = None if m["crashed"] or r["workers"] == 0 else (peak_p * 1e6 - m["peak"]) / m["peak"]
        return dict(m=m, crash_p=crash_p, why=why, peak_p=peak_p, err=err)

    def row_line(self, r, c):
        m = c["m"]
        return (f"{r}: measured {'bus error' if m['crashed'] else 'ran'} peak "
                f"{m['peak'] / 1e6:.1f} MB; predicted {'bus error' if c['crash_p'] else 'fits'} "
                f"{c['peak_p']:.1f} MB {c['why'][0][:120]}")

    def report(self, a, results):
        lines = ["| /dev/shm MB | workers | batch | prefetch | image | measured | predicted | "
                 "measured peak MB | predicted peak MB | error |",
                 "|---:|---:|---:|---:|---:|---|---|---:|---:|---:|"]
        for r, c in results:
            m, err = c["m"], c["err"]
            lines.append(f"| {r['shm']} | {r['workers']} | {r['batch']} | {r['prefetch']} | "
                         f"{r['size']} | {'bus error' if m['crashed'] else 'ran'} | "
                         f"{'bus error' if c['crash_p'] else 'fits'} | {m['peak'] / 1e6:.1f} | "
                         f"{c['peak_p']:.1f} | {'' if err is None else f'{err:+.1%}'} |")
        agree = sum(1 for _, c in results if c["crash_p"] == c["m"]["crashed"])
        errs = [abs(c["err"]) for _, c in results if c["err"] is not None]
        lines += ["", f"{len(results)} rows: verdict agrees on {agree}; peak /dev/shm on the "
                  f"{len(errs)} rows that ran with workers: median |error| "
                  f"{statistics.median(errs) if errs else 0:.1%}, worst {max(errs) if errs else 0:.1%}."]
        return "\n".join(lines) + "\n", dict(disagree=len(results) - agree,
                                             worst=max(errs) if errs else 0)


if __name__ == "__main__":
    Shm.main()
