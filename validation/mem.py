"""validation.mem: stallsim's server memory (server.mem_gb: the training
process, its DataLoader workers' private pages, /dev/shm's batches) against
a real DataLoader in a memory cgroup this harness creates and removes.

The Dataset is the common one that holds its sample list as Python objects
(a path and a label a sample): every worker that reads a sample writes its
reference counts, so the kernel copies the list's pages into each worker,
the growth PyTorch's issue #13246 reports. What a user would measure for
stallsim, measured here the same way (no cgroup figure is used for it):
  - jobs.N.host_mem_gb: the training process's anonymous memory by the
    probe's own stallsim.memprobe.process_memory (the profile's
    loader.process_mem_mb: a fresh process, an epoch through a DataLoader
    with 2 workers, /proc/self/status RssAnon at its peak);
  - loader.worker_mem_mb and worker_mem_mb_per_kitem: one worker's private
    pages at their peak reading 1/8, 1/4, 1/2 and all of the samples drawn
    at random, fitted as fixed + per item read, by the probe's own
    stallsim.memprobe.worker_growth (/proc/PID/smaps_rollup of the worker,
    Private_Dirty);
  - /dev/shm: stallsim's own figure from the batch's size (validation/shm.py
    checks it).
Then, for each num_workers:
  - worker: each real worker's private pages at their peak (the mean over
    the workers) against stallsim's figure for a worker's share of the
    epoch (target: 15 %);
  - peak: the cgroup's own peak charge (memory.max_usage_in_bytes) of a run
    without a limit, against stallsim's server memory (target: 15 %);
  - verdict: the same run under a limit between the configurations'
    predictions: does the kernel's OOM killer end it, as stallsim says
    (check exits 2 naming server.mem_gb) or not (target: every row agrees).

The cgroup is v1's (memory.limit_in_bytes, memory.max_usage_in_bytes,
memory.oom_control) or v2's (memory.max, memory.peak, memory.events),
whichever the host mounts. --quick (ctest `torch_mem`, label validation)
runs 0, 1, 2 and 4 workers over 100,000 samples; the full run 0 to 8 over
200,000. Only memory is compared, never time: the figures do not depend on
the host's load (the runs only take longer on a busy host).

usage: python3 -m validation.mem [--bin build/sim/stallsim] [--quick] [--page FILE.md]
Exit 0 targets met, 1 missed, 77 cannot measure here (not root, no memory
cgroup with a peak to read, no PyTorch in /usr/bin/python3), 2 bad usage.
"""

import json
import os
import re
import subprocess
import sys
import time

from stallsim.memprobe import process_memory, rollup, worker_growth
from validation import ROOT
from validation.base import Harness, RowFailed, Skip, Target
from validation.fixtures.cgroup import remove_cgroup

MIB = 1048576.0
GIB = 1073741824.0


class Cgroup:
    """The host's memory cgroup hierarchy: v1's memory controller, or v2's
    unified one with the memory controller and memory.peak (Linux 5.19)."""
    V1 = ("/sys/fs/cgroup/memory", "memory.limit_in_bytes", "memory.max_usage_in_bytes",
          "memory.oom_control")
    V2 = ("/sys/fs/cgroup", "memory.max", "memory.peak", "memory.events")

    def __init__(self):
        self.base = None
        for base, limit, peak, oom in (self.V1, self.V2):
            probe = os.path.join(base, peak)
            if base == self.V2[0]:
                try:
                    with open(os.path.join(base, "cgroup.subtree_control")) as f:
                        if "memory" not in f.read().split():
                            continue
                except OSError:
                    continue
                probe = os.path.join(base, "cgroup.controllers")
            if os.access(base, os.W_OK) and os.path.exists(probe):
                self.base, self.limit, self.peak, self.oom = base, limit, peak, oom
                return

    def why_not(self):
        return (None if self.base else
                "no writable memory cgroup: neither cgroup v1's memory controller at "
                "/sys/fs/cgroup/memory nor cgroup v2 with the memory controller enabled at "
                "/sys/fs/cgroup")

    def kills(self, cg):
        with open(os.path.join(cg, self.oom)) as f:
            m = re.search(r"oom_kill (\d+)", f.read())
        return int(m.group(1)) if m else 0

    def make(self, name):
        cg = os.path.join(self.base, name)
        os.mkdir(cg)
        if not os.path.exists(os.path.join(cg, self.peak)):
            remove_cgroup(cg)
            raise Skip(f"{self.base}: no {self.peak} (cgroup v2 has it from Linux 5.19)")
        return cg


class Samples:
    """A Dataset over n samples kept as (path, label) Python objects."""

    def __init__(self, n, side):
        self.samples = [(f"/data/train/n{i % 1000:08d}/img_{i:09d}.JPEG", i % 1000) for i in range(n)]
        self.side = side

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        import torch
        path, label = self.samples[i]
        x = torch.full((3, self.side, self.side), float(len(path) % 7))
        return x, label


def samples(root):
    """The Dataset as a probe's --dataset factory sees it: root is
    "NxSIDE" (memprobe.process_memory builds it in a fresh process)."""
    n, side = root.split("x")
    return Samples(int(n), int(side))


def inner(a, workers, measure_worker):
    """One training run (inside the cgroup when the parent put it there):
    the training process's anonymous memory at its peak or, with
    measure_worker, one worker's private pages as the probe measures them."""
    from torch.utils.data import DataLoader
    ds = Samples(a.n, a.side)
    if measure_worker:
        fixed, per, points = worker_growth(ds, a.n, a.batch, 0)
        return {"fixed": fixed, "per_item": per, "points": points}
    if workers:
        dl = DataLoader(ds, batch_size=a.batch, shuffle=True, num_workers=workers,
                        prefetch_factor=2)
    else:
        dl = DataLoader(ds, batch_size=a.batch, shuffle=True)
    host, it = 0, iter(dl)
    pids = [w.pid for w in getattr(it, "_workers", [])]
    peaks = {p: 0 for p in pids}
    for k, (x, y) in enumerate(it):
        if k % 4 == 0:
            host = max(host, rollup(os.getpid(), "Anonymous"))
            for p in pids:
                peaks[p] = max(peaks[p], rollup(p, "Private_Dirty"))
        float(x.sum())
    for p in pids:
        peaks[p] = max(peaks[p], rollup(p, "Private_Dirty"))
    worker = sum(peaks.values()) / len(pids) if pids else 0
    return {"host": host, "worker": worker}


def stallsim_sets(a, workers, host, growth):
    return ["--set", "server.gpus=1", "--set", "jobs.0.gpus=1",
            "--set", f"jobs.0.batch_per_gpu={a.batch}", "--set", f"dataset.items={a.n}",
            "--set", f"prep.out_kb={3 * a.side * a.side * 4 / 1000}",
            "--set", "loader.kind=pytorch", "--set", f"loader.num_workers={workers}",
            "--set", f"loader.worker_mem_mb={growth[0] / MIB}",
            "--set", f"loader.worker_mem_mb_per_kitem={growth[1] * 1e3 / MIB}",
            "--set", f"jobs.0.host_mem_gb={host / GIB}"]


def predict(a, workers, host, growth, limit_gib=None):
    """stallsim's server memory for the run (GiB), and check's verdict under a limit."""
    sets = stallsim_sets(a, workers, host, growth)
    scn = os.path.join(ROOT, "tests", "data", "small.yaml")  # its variant "base": as written
    if limit_gib is not None:
        p = subprocess.run([a.bin, "check", scn, "--variant", "base"] + sets +
                           ["--set", f"server.mem_gb={limit_gib}"], capture_output=True, text=True)
        if p.returncode not in (0, 2):
            sys.exit(f"validate_mem: stallsim check failed: {p.stderr[-500:]}")
        return p.returncode == 2 and "OOM killer" in p.stderr
    p = subprocess.run([a.bin, "run", scn, "--variant", "base", "--epochs", "1",
                        "--format", "json"] + sets, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"validate_mem: stallsim run failed: {p.stderr[-500:]}")
    d = json.loads(p.stdout)
    return d["variants"][0]["jobs"][0]["mem_peak_gib"]["server"]


def table(rows, limit):
    lines = [f"| num_workers | stallsim worker MiB | real worker MiB | error | "
             f"stallsim server memory MiB | cgroup peak MiB | error | "
             f"under {limit / MIB:.0f} MiB: stallsim | real |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        wk = (f"{r['wpred'] / MIB:.1f} | {r['wreal'] / MIB:.1f} | {100 * r['werr']:+.1f} %"
              if "werr" in r else "- | - | -")
        lines.append(f"| {r['workers']} | {wk} | {r['pred'] / MIB:.0f} | {r['peak'] / MIB:.0f} | "
                     f"{100 * r['err']:+.1f} % | {'refused (OOM)' if r['says'] else 'fits'} | "
                     f"{'OOM-killed' if r['killed'] else 'ran'} |")
    return "\n".join(lines) + "\n"


class Mem(Harness):
    name = "mem"
    title = "Server memory: the OOM killer before the run (server.mem_gb) against real DataLoaders"
    needs = ("torch",)
    targets = [Target("worst worker error", "wworst", 0.15),
               Target("worst server peak error", "worst", 0.15),
               Target("verdicts that differ", "disagree", 0, fmt="{}")]

    def add_arguments(self, ap):
        ap.add_argument("--n", type=int, default=0, help="samples (default 100,000; 200,000 full)")
        ap.add_argument("--batch", type=int, default=512)
        ap.add_argument("--side", type=int, default=16)

    def configure(self, a):
        a.n = a.n or (100000 if a.quick else 200000)

    def requires(self, a):
        if os.geteuid() != 0:
            return "not root (a memory cgroup needs root)"
        self.cg = Cgroup()
        if self.cg.why_not():
            return self.cg.why_not()
        if not os.access(a.bin, os.X_OK):
            sys.exit(f"validate_mem: {a.bin}: no stallsim binary (build first)")
        return None

    def run_row(self, a, r):
        return inner(a, r["workers"], r.get("measure_worker", False))

    def run_in(self, a, workers, limit=None, measure_worker=False):
        """inner() in a fresh cgroup: (killed, peak bytes, figures)."""
        cg = self.cg.make(f"stallsim-validate-mem-{os.getpid()}-{workers}")
        try:
            if limit:
                with open(os.path.join(cg, self.cg.limit), "w") as f:
                    f.write(str(int(limit)))
            try:
                fig = self.isolated(a, dict(workers=workers, measure_worker=measure_worker),
                                    wrap=lambda cmd: ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && '
                                                      'exec "$@"', cg] + cmd, timeout=600)
                killed = False
            except RowFailed as e:
                fig = None
                killed = self.cg.kills(cg) > 0 or "Killed" in e.stderr or e.returncode == -9
                if not killed:
                    sys.exit(f"validate_mem: the run with {workers} workers failed (exit "
                             f"{e.returncode}): {e.stderr[-800:]}")
            with open(os.path.join(cg, self.cg.peak)) as f:
                peak = int(f.read())
            return killed, peak, fig
        finally:
            remove_cgroup(cg)

    def user_figures(self, a):
        """The user's measurements: the training process as the probe
        measures it, and one worker."""
        pm = process_memory(f"{a.n}x{a.side}", "validation.mem:samples", a.batch, 0, 2, a.n)
        _, _, f1 = self.run_in(a, 1, measure_worker=True)
        host, growth = pm["peak"]["RssAnon"], (f1["fixed"], f1["per_item"])
        print(f"measured: training process {host / MIB:.0f} MiB anonymous (VmRSS "
              f"{pm['peak']['VmRSS'] / MIB:.0f} MiB), a worker "
              f"{growth[0] / MIB:.1f} MiB + {growth[1] * 1e3 / MIB:.4f} MiB per 1000 items read (" +
              ", ".join(f"{k} items: {b / MIB:.1f} MiB" for k, b in f1["points"]) + ")",
              file=sys.stderr)
        return host, growth

    def run(self, a):
        t0 = time.time()
        host, growth = self.user_figures(a)
        rows = []
        for w in ([0, 1, 2, 4] if a.quick else [0, 1, 2, 4, 8]):
            _, peak, fig = self.run_in(a, w)
            pred = predict(a, w, host, growth) * GIB
            r = {"workers": w, "peak": peak, "pred": pred, "err": pred / peak - 1}
            if w:
                # stallsim's figure for one worker: fixed + per item x its share.
                r["wreal"] = fig["worker"]
                r["wpred"] = growth[0] + growth[1] * a.n / w
                r["werr"] = r["wpred"] / r["wreal"] - 1
            rows.append(r)
        # A limit halfway between the middle configurations' predictions: some
        # fit it and some do not, by stallsim's figures.
        mid = len(rows) // 2
        limit = (rows[mid - 1]["pred"] + rows[mid]["pred"]) / 2
        for r in rows:
            r["killed"] = self.run_in(a, r["workers"], limit)[0]
            r["says"] = predict(a, r["workers"], host, growth, limit / GIB)
        print(f"validate_mem: {time.time() - t0:.0f} s, load average {os.getloadavg()[0]:.1f} "
              "at the end", file=sys.stderr)
        return table(rows, limit), dict(
            worst=max(abs(r["err"]) for r in rows),
            wworst=max([abs(r["werr"]) for r in rows if "werr" in r] or [0]),
            disagree=sum(r["says"] != r["killed"] for r in rows))


if __name__ == "__main__":
    Mem.main()
