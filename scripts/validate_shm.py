#!/usr/bin/python3
"""Validates stallsim's shared-memory verdict for a PyTorch DataLoader
against real DataLoaders whose /dev/shm is a small tmpfs (issue 35;
VALIDATION.md, "Shared memory: the bus error before the run").

  /usr/bin/python3 scripts/validate_shm.py [--bin build/sim/stallsim]
      [--data DIR] [--items 1200] [--quick] [--out FILE.md]
      [--update VALIDATION.md]

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

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import harness  # noqa: E402

COMPUTE_S = 0.05  # per batch after the first
FILL_S = 120  # the most the first step waits for the workers to fill their slots


def matrix(quick):
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


def run_one(a):
    """One row inside the namespace: prints a JSON line."""
    import torch
    from torch.utils.data import DataLoader
    from torchvision import datasets, transforms

    torch.manual_seed(1)
    tf = transforms.Compose([transforms.RandomResizedCrop(a.size), transforms.ToTensor()])
    ds = datasets.ImageFolder(a.data, transform=tf)
    kw = dict(batch_size=a.batch, shuffle=True, num_workers=a.workers)
    if a.workers > 0:
        kw["prefetch_factor"] = a.prefetch
    base = used_bytes()
    peak = [base]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            u = used_bytes()
            if u > peak[0]:
                peak[0] = u
            time.sleep(0.002)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    t0 = time.monotonic()
    # The GPU emulated as a slow first step: the training loop holds its
    # first batch until the workers have filled every slot (the tmpfs stops
    # growing for 2 s), the worst moment for /dev/shm; then it drains.
    need = a.prefetch * a.workers + 2 if a.workers else 3
    crashed, err, got = False, "", 0
    try:
        for _ in DataLoader(ds, **kw):
            got += 1
            if got == 1:
                # Filled when nothing grew for 2 s and for thrice the longest
                # wait between two batches so far (a slow worker on a busy host).
                last, still, gap = peak[0], time.monotonic(), 0.0
                while time.monotonic() - still < max(2.0, 3 * gap) and \
                        time.monotonic() - t0 < FILL_S:
                    time.sleep(0.1)
                    if peak[0] != last:
                        now = time.monotonic()
                        last, gap, still = peak[0], max(gap, now - still), now
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
        full = peak[0] >= 0.9 * st.f_blocks * st.f_frsize
        crashed = full or any(k in str(e) for k in ("Bus error", "shared memory", "No space left"))
        if not crashed:
            raise
    stop.set()
    t.join()
    print(json.dumps(dict(crashed=crashed, error=err, peak=peak[0] - base, batches=got)))


def measure(a, r):
    """The row in its own mount namespace with a tmpfs of r['shm'] MB on /dev/shm."""
    inner = (f"mount -t tmpfs -o size={r['shm']}m stallsim-shm /dev/shm && exec "
             f"{sys.executable} {os.path.abspath(__file__)} --one --data {a.data} "
             f"--workers {r['workers']} --batch {r['batch']} --prefetch {r['prefetch']} "
             f"--size {r['size']}")
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", inner],
                       capture_output=True, text=True, timeout=600)
    lines = [x for x in p.stdout.splitlines() if x.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"row {r}: exit {p.returncode}: {p.stderr[-800:]}")
    return json.loads(lines[-1])


def predict(a, scen, r):
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


def write_scenario(a):
    scen = os.path.join(os.path.dirname(os.path.abspath(a.data)), "shm-validation.yaml")
    n = len(harness.jpegs(a.data))
    with open(scen, "w") as f:
        f.write(f"""# written by scripts/validate_shm.py: the harness's DataLoader
name: shm-validation
epochs: 1
dataset: {{items: {n}, item_kb: 110}}
server: {{gpus: 1}}
loader: {{kind: pytorch}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: 32, compute_s_per_batch: {COMPUTE_S}}}
""")
    return scen


def table_text(table):
    lines = ["| /dev/shm MB | workers | batch | prefetch | image | measured | predicted | "
             "measured peak MB | predicted peak MB | error |",
             "|---:|---:|---:|---:|---:|---|---|---:|---:|---:|"]
    for r, m, crash_p, peak_p, err in table:
        lines.append(f"| {r['shm']} | {r['workers']} | {r['batch']} | {r['prefetch']} | "
                     f"{r['size']} | {'bus error' if m['crashed'] else 'ran'} | "
                     f"{'bus error' if crash_p else 'fits'} | {m['peak'] / 1e6:.1f} | "
                     f"{peak_p:.1f} | {'' if err is None else f'{err:+.1%}'} |")
    agree = sum(1 for r, m, c, _, _ in table if c == m["crashed"])
    errs = [abs(e) for *_, e in table if e is not None]
    lines += ["", f"{len(table)} rows: verdict agrees on {agree}; peak /dev/shm on the "
              f"{len(errs)} rows that ran with workers: median |error| "
              f"{statistics.median(errs) if errs else 0:.1%}, worst {max(errs) if errs else 0:.1%}."]
    return "\n".join(lines) + "\n", agree == len(table), (max(errs) if errs else 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sim", "stallsim"))
    ap.add_argument("--data", default="/var/tmp/stallsim-shm/data")
    ap.add_argument("--items", type=int, default=1200)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--update", metavar="VALIDATION.md")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    for k, v in (("workers", 0), ("batch", 32), ("prefetch", 2), ("size", 224)):
        ap.add_argument("--" + k, type=int, default=v, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        return run_one(a)
    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        return harness.skip("validate_shm", "PyTorch is missing (scripts/setup.sh --torch)")
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return harness.skip("validate_shm", "needs root and unshare(1) for a private /dev/shm")
    harness.generate(a.bin, a.data, a.items)
    scen = write_scenario(a)
    table = []
    for r in matrix(a.quick):
        m = measure(a, r)
        crash_p, why, peak_p = predict(a, scen, r)
        err = None if m["crashed"] or r["workers"] == 0 else (peak_p * 1e6 - m["peak"]) / m["peak"]
        table.append((r, m, crash_p, peak_p, err))
        print(f"{r}: measured {'bus error' if m['crashed'] else 'ran'} peak "
              f"{m['peak'] / 1e6:.1f} MB; predicted {'bus error' if crash_p else 'fits'} "
              f"{peak_p:.1f} MB {why[0][:120]}", file=sys.stderr, flush=True)
    text, agree, worst = table_text(table)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.update and harness.update_markers(a.update, "validate_shm", text, "validate_shm"):
        return 2
    ok = agree and worst <= 0.10
    print(f"validate_shm: targets (every verdict agrees, peaks within 10 %) "
          f"{'met' if ok else 'NOT met'}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
