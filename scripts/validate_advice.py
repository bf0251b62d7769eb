#!/usr/bin/python3
"""Validates stallsim's "what to change" end to end on real PyTorch (issue 53):
a DataLoader whose reads are latency-bound, run at a worker count too small;
stallsim's advice applied to the letter; the real run's GPU utilisation held
to what the advice promised.

  /usr/bin/python3 scripts/validate_advice.py [--bin build/sim/stallsim]
      [--work /var/tmp/stallsim-advice] [--out FILE.md] [--delay-ms 20]
      [--workers 1] [--quick]

The store: nginx serving generated JPEGs in a network namespace this script
creates (scripts/objstore.py), each GET waiting --delay-ms before its first
byte; the Dataset: microbench/torch/http_dataset.py (ImageFolder over HTTP,
one kept-alive connection a worker). Calibrated as docs/pytorch.md tells a
user: the probe on that Dataset through the store, curl's first byte and one
connection's rate. The GPU is emulated by sleeping compute_s a batch, chosen
so that the GPUs would need about half of what this host's cores can
prepare: the reads in flight, not the cores, are what --workers lacks.

Steps: the scenario as written (--workers) is measured and predicted; the
advice (`stallsim run --format json`, its `advice.set`) is applied exactly,
as --set for stallsim and as DataLoader arguments for the real run (a key
this host cannot apply, such as server.cpus, fails the run: the advice must
be in the user's knobs); the advised configuration is measured. Target:
the measured GPU utilisation of the last epoch within 10 points of the
simulator's figure the advice printed, and at or above the advice's target
less 10 points. Exit 1 on a miss, 77 when nothing could be measured
(no PyTorch; not root, no nginx echo module, ip or tc)."""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TORCH = os.path.join(ROOT, "microbench", "torch")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
import harness  # noqa: E402

SPEC = "http_dataset:from_env"
TOL = 0.10          # points of GPU utilisation
HALF = 0.5          # the GPUs need this share of what the cores prepare
APPLICABLE = {"loader.num_workers", "loader.prefetch_factor", "loader.persistent_workers"}


def args_of(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "sim", "stallsim"))
    p.add_argument("--work", default="/var/tmp/stallsim-advice")
    p.add_argument("--out")
    p.add_argument("--delay-ms", type=float, default=20)
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--items", type=int, default=600)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--quick", action="store_true", help="300 items")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    p.add_argument("--compute", type=float, help=argparse.SUPPRESS)
    p.add_argument("--loader", help=argparse.SUPPRESS)
    return p.parse_args(argv)


def run_one(a):
    """One real run in this fresh process: prints a JSON line."""
    import torch
    from torch.utils.data import DataLoader

    from stallsim import pipeline

    torch.manual_seed(1)
    ds = pipeline.make_dataset(a.data, SPEC)
    kw = dict(batch_size=a.batch, shuffle=True, **json.loads(a.loader))
    if kw.get("num_workers", 0) == 0:
        kw.pop("prefetch_factor", None), kw.pop("persistent_workers", None)
    dl = DataLoader(ds, **kw)
    epochs, batches = pipeline.timed_epochs(lambda e: dl, 2, a.compute)
    print(json.dumps(dict(epochs=epochs, batches=batches)))
    return 0


class Job:
    """The store, the calibration and the scenario of one validation."""

    def __init__(self, a, st):
        self.a, self.st = a, st
        self.data = os.path.join(a.work, "img")
        self.env = [f"PYTHONPATH={TORCH}:{os.path.join(ROOT, 'python')}",
                    f"STALLSIM_DATA_URL={st.url}", "STALLSIM_DATA_KEEPALIVE=1"]
        self.sets = []

    def calibrate(self):
        import objstore

        rels = [os.path.relpath(p, self.data) for p in harness.jpegs(self.data)][:40]
        pr = objstore.probe(self.st, rels)
        self.sets = [f"server.storage.first_byte_ms={pr.ttfb_s * 1e3:.6g}",
                     f"server.storage.conn_mb_s={pr.conn_mb_s:.6g}"]
        profile = os.path.join(self.a.work, "host.yaml")
        cmd = self.st.exec_prefix + ["env", *self.env, sys.executable,
                                     os.path.join(TORCH, "probe.py"), "--data", self.data,
                                     "--dataset", SPEC, "--out", profile, "--items", "320"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=self.a.work)
        return profile

    def scenario(self, profile, compute):
        sizes = [os.path.getsize(p) for p in harness.jpegs(self.data)]
        mean = statistics.mean(sizes)
        self.items = len(sizes)
        path = os.path.join(self.a.work, "scen.yaml")
        with open(path, "w") as f:
            f.write(f"""# written by scripts/validate_advice.py
host: {profile}
epochs: 2
dataset: {{items: {len(sizes)}, item_kb: {mean / 1e3:.6g}, item_kb_cv: {statistics.pstdev(sizes) / mean:.4g}}}
server: {{gpus: 1, storage: {{kind: object}}}}
loader: {{kind: pytorch, cache: none, num_workers: {self.a.workers}}}
jobs: [{{name: train, gpus: 1, batch_per_gpu: {self.a.batch}, compute_s_per_batch: {compute:.6g}}}]
""")
        return path

    def predict(self, scen, sets):
        cmd = [self.a.bin, "run", scen, "--format", "json"]
        for s in self.sets + sets:
            cmd += ["--set", s]
        return json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                         text=True).stdout)["variants"][0]

    def measure(self, loader, compute):
        cmd = self.st.exec_prefix + ["env", *self.env, sys.executable, os.path.abspath(__file__),
                                     "--one", "--data", self.data, "--batch", str(self.a.batch),
                                     "--compute", str(compute), "--loader", json.dumps(loader)]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                             cwd=self.a.work).stdout
        m = json.loads(out.strip().splitlines()[-1])
        return m["batches"] * compute / m["epochs"][-1], m["epochs"][-1]


def compute_for(job, scen0):
    """compute_s a batch for GPUs that need HALF of what the cores prepare:
    the model's rate with the reads free and workers plenty."""
    v = job.predict(scen0, ["loader.num_workers=16", "server.storage.first_byte_ms=0.001",
                            "jobs.0.compute_s_per_batch=0.0001"])
    rate = v["jobs"][0]["epochs"][-1]["model"]["throughput_items_s"]
    return job.a.batch / (HALF * rate)


def loader_args(sets):
    """The advice's keys as DataLoader arguments; KeyError names one no
    DataLoader argument sets (the advice left the user's knobs)."""
    out = {"num_workers": 0}
    for k, v in sets.items():
        if k not in APPLICABLE:
            raise KeyError(k)
        name = k.split(".", 1)[1]
        out[name] = v == "true" if v in ("true", "false") else int(float(v))
    return out


def table_of(rows):
    lines = ["| configuration | loader.num_workers | GPU predicted (sim) | GPU measured | "
             "epoch predicted s | epoch measured s |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['what']} | {r['workers']} | {100 * r['pred']:.1f} % | "
                     f"{100 * r['meas']:.1f} % | {r['pred_s']:.2f} | {r['meas_s']:.2f} |")
    return "\n".join(lines)


def validate(a, st):
    job = Job(a, st)
    profile = job.calibrate()
    scen = job.scenario(profile, 0.01)
    compute = compute_for(job, scen)
    scen = job.scenario(profile, compute)
    v = job.predict(scen, [])
    adv = v["advice"]
    print(f"validate_advice: compute {compute * 1e3:.1f} ms a batch; advice {adv['status']}: "
          f"{adv['set']} -> sim {adv.get('sim_gpu_util')}", file=sys.stderr, flush=True)
    if adv["status"] != "found":
        return None, f"the advice found nothing to apply: {json.dumps(adv)}"
    try:
        loader = loader_args(adv["set"])
    except KeyError as e:
        return None, f"the advice sets {e.args[0]}, which no DataLoader argument applies"
    before = v["jobs"][0]["epochs"][-1]["sim"]
    rows = []
    for what, ld, pred, pred_s in (
            ("as written", {"num_workers": a.workers}, before["gpu_util"], before["epoch_s"]),
            ("advice applied", loader, adv["sim_gpu_util"], adv["epoch_s"])):
        meas, meas_s = job.measure(ld, compute)
        rows.append(dict(what=what, workers=ld["num_workers"], pred=pred, meas=meas,
                         pred_s=pred_s, meas_s=meas_s))
    return rows, adv


def report(rows, adv, a, loads):
    after = rows[-1]
    ok = abs(after["meas"] - after["pred"]) <= TOL and after["meas"] >= adv["target"] - TOL
    text = (f"Advice followed on real PyTorch: `{' '.join(sys.argv)}`; store delay "
            f"{a.delay_ms:g} ms; load average {loads[0]:.2f} -> {loads[1]:.2f}\n\n"
            f"{table_of(rows)}\n\nadvice: set {adv['set']}, promised GPU "
            f"{100 * adv['sim_gpu_util']:.1f} % (simulator); target: measured within "
            f"{100 * TOL:.0f} points of it: {'met' if ok else 'MISSED'}\n")
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0 if ok else 1


def main(argv=None):
    a = args_of(argv if argv is not None else sys.argv[1:])
    if a.one:
        return run_one(a)
    try:
        import torch  # noqa: F401
    except ImportError:
        return harness.skip("validate_advice", "no PyTorch (scripts/setup.sh --torch)")
    import objstore

    try:
        objstore.check(True, False)
    except Exception as e:  # objstore.Cannot: not root, a tool missing
        return harness.skip("validate_advice", str(e))
    os.makedirs(a.work, exist_ok=True)
    harness.generate(a.bin, os.path.join(a.work, "img"), 300 if a.quick else a.items)
    l0 = os.getloadavg()[0]
    with objstore.ObjectStore(os.path.join(a.work, "img"), latency_ms=a.delay_ms) as st:
        rows, adv = validate(a, st)
    if rows is None:
        print(f"validate_advice: {adv}", file=sys.stderr)
        return 1
    return report(rows, adv, a, (l0, os.getloadavg()[0]))


if __name__ == "__main__":
    sys.exit(main())
