#!/usr/bin/python3
"""Validates the per-job pipelines (jobs.N.prep.pipeline: image_train,
image_eval, audio) of `loader.kind: pytorch` against real torchvision and
torchaudio DataLoaders on this host (issue 17; VALIDATION.md, "Per-job
pipelines against torchvision and torchaudio").

  /usr/bin/python3 scripts/validate_pipelines.py [--bin build/sim/stallsim]
      [--data DIR] [--audio WAVDIR] [--items 1200] [--clips 400]
      [--epochs 2] [--quick] [--out FILE.md] [--update VALIDATION.md]

1. JPEGs in DIR (`stallsim measure --generate`, as validation/torch.py; default
   /var/tmp/stallsim-torch/data, shared with it) and WAV clips in WAVDIR
   (16-bit PCM mono 44.1 kHz chirps under noise, 1-5 s, seeded; default
   /var/tmp/stallsim-torch/wav), each kept when already there.
2. The profile: microbench/torch/probe.py --data DIR --pipelines --audio
   WAVDIR --out DIR/../host-pipelines.yaml.
3. Each row runs a real torch.utils.data.DataLoader in a fresh process over
   the pipeline's dataset (python/stallsim/pipeline.py: ImageFolder with
   torchvision's training or evaluation transforms, or torchaudio's load,
   Resample, MelSpectrogram, log), batch 32, shuffle, the row's num_workers,
   the page cache warm, the GPU emulated by sleeping the row's compute per
   batch, 2 epochs; the two-job rows run two such processes at once (a
   training and an evaluation loader on the same JPEGs).
4. `stallsim run` predicts each from the profile with --set only what the
   row changes: num_workers, the compute, jobs.0.prep.pipeline, and for
   audio the dataset (the clips' count, mean size and spread) and the item's
   out_kb. image_train is the control: the same pipeline as
   validation/torch.py, costed as decode + augment_ms instead of one fit.
The probe and every row run with ONEDNN_PRIMITIVE_CACHE_CAPACITY=64
(--primitive-cache): a full-size audio set has more clip lengths than
oneDNN's 1024-entry cache of Resample's per-length primitives, so every
clip pays the build each time it is met; the 400 clips here would fit.
Exit 0 when the median |error| in epoch time is <= 10 % and every row is
within 25 % (no target for the two-job rows, reported apart), 1 when not,
77 without torch, torchvision or torchaudio."""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))  # stallsim.pipeline
sys.path.insert(0, HERE)
import harness  # noqa: E402
from stallsim import pipeline  # noqa: E402

BATCH = 32
PIPELINES = ["image_train", "image_eval", "audio"]


def matrix(quick):
    workers, computes = ([0, 2], [0.01]) if quick else ([0, 1, 2], [0.01, 0.05, 0.2])
    return [dict(pipeline=p, workers=w, compute=c) for p in PIPELINES for w in workers
            for c in computes]


def run_one(a):
    """One loader, in this (fresh) process: prints a JSON line."""
    import torch
    from torch.utils.data import DataLoader

    torch.manual_seed(a.seed)
    ds = pipeline.pipeline_dataset(a.root, a.pipeline)
    pipeline.warm(pipeline.item_paths(ds))
    kw = dict(batch_size=BATCH, shuffle=True, num_workers=a.workers)
    if a.workers > 0:
        kw.update(prefetch_factor=2)
    dl = DataLoader(ds, **kw)
    if a.start_at:  # the two-job rows: start together
        import time

        time.sleep(max(0.0, a.start_at - time.time()))
    epochs, batches = pipeline.timed_epochs(lambda e: dl, a.epochs, a.compute)
    print(json.dumps(dict(epochs=epochs, batches=batches)))


def one_cmd(a, root, pipe, workers, compute, start_at=0.0):
    return [sys.executable, os.path.abspath(__file__), "--one", "--root", root, "--pipeline", pipe,
            "--workers", str(workers), "--compute", str(compute), "--epochs", str(a.epochs),
            "--seed", str(a.seed), "--start-at", repr(start_at)]


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


def measure(a, r):
    root = a.audio if r["pipeline"] == "audio" else a.data
    out = subprocess.run(one_cmd(a, root, r["pipeline"], r["workers"], r["compute"]), check=True,
                         capture_output=True, text=True).stdout
    return last_json(out)


def measure_pair(a, pipes, workers, compute):
    """Both loaders at once, each in its own process, started together once
    both have built their datasets."""
    import time

    t = time.time() + 4.0
    procs = [subprocess.Popen(one_cmd(a, a.data, p, workers, compute, t), stdout=subprocess.PIPE,
                              text=True) for p in pipes]
    outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit("validate_pipelines: a two-job row failed")
    return [last_json(o) for o in outs]


def set_stats(paths):
    sizes = [os.path.getsize(p) for p in paths]
    mean = statistics.mean(sizes)
    return len(sizes), mean / 1e3, statistics.pstdev(sizes) / mean


def profile_measured(profile, key):
    with open(profile) as f:
        for line in f:
            k, _, v = line.strip().partition(":")
            if k == key:
                return float(v)
    raise SystemExit(f"validate_pipelines: {profile} lacks measured {key}")


# Reads are served from the warm page cache, whose copy the probe's item
# times hold (as validation/torch.py's warm rows).
WARM = ["loader.cache=none", "server.storage.latency_ms=0", "server.storage.read_mb_s=1e9"]


def sets_for(r, audio_set, audio_out_kb):
    sets = WARM + ["loader.num_workers=%d" % r["workers"],
                   "jobs.0.compute_s_per_batch=%g" % r["compute"],
                   "jobs.0.prep.pipeline=%s" % r["pipeline"]]
    if r["pipeline"] == "audio":
        n, kb, cv = audio_set
        sets += ["dataset.items=%d" % n, "dataset.item_kb=%.6g" % kb,
                 "dataset.item_kb_cv=%.4g" % cv, "jobs.0.prep.out_kb=%.6g" % audio_out_kb]
    return sets


def fmt_row(label, workers, compute, c):
    return (f"| {label} | {workers} | {compute * 1e3:.0f} | {c['meas_t']:.3f} | {c['pred_t']:.3f} | "
            f"{c['err']:+.1%} | {c['meas_stall']:.1%} | {c['pred_stall']:.1%} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sim", "stallsim"))
    ap.add_argument("--data", default="/var/tmp/stallsim-torch/data", help="the JPEGs")
    ap.add_argument("--audio", default="/var/tmp/stallsim-torch/wav", help="the WAV clips")
    ap.add_argument("--items", type=int, default=1200, help="JPEGs to generate")
    ap.add_argument("--clips", type=int, default=400, help="WAV clips to generate")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="6 rows and no two-job rows")
    ap.add_argument("--primitive-cache", default="64", metavar="N|default",
                    help="ONEDNN_PRIMITIVE_CACHE_CAPACITY for the probe and every row (default "
                         "64: fewer than the set's clip lengths, as a full-size audio set has "
                         "more than oneDNN's 1024; 'default' leaves oneDNN's own)")
    ap.add_argument("--out", help="write the Markdown table here")
    ap.add_argument("--update", metavar="VALIDATION.md",
                    help="put the table between the file's validate_pipelines:begin/end markers")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--root", help=argparse.SUPPRESS)
    ap.add_argument("--pipeline", default="image_train", help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--compute", type=float, default=0.0, help=argparse.SUPPRESS)
    ap.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        return run_one(a)
    try:
        import torch  # noqa: F401
        import torchaudio  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError as e:
        harness.skip("validate_pipelines", f"{e.name} is missing (scripts/setup.sh --torch installs "
                     "Debian's python3-torch, python3-torchvision and python3-torchaudio)")
    # torchaudio's Resample is a conv1d that oneDNN builds a primitive for per
    # input length and keeps in a per-process LRU cache of 1024: a full-size
    # audio set has far more clip lengths than that, so each clip pays the
    # build every time it is met (stallsim's cost, and the probe's); the
    # 400 clips here would fit, making a process's later passes cheaper
    # than at full size. A cache smaller than the set's lengths gives the
    # full-size behaviour (images do not go through oneDNN).
    if a.primitive_cache != "default":
        os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] = a.primitive_cache
    load0 = os.getloadavg()[0]
    cores = len(os.sched_getaffinity(0))
    if load0 > cores / 2:
        # The probe and the rows time this host's CPU at different moments:
        # other work between them moves every row.
        print(f"validate_pipelines: warning: host busy (load average {load0:.1f} on {cores} "
              "cores): the figures will be off; rerun on an idle host", file=sys.stderr)
    harness.generate(a.bin, a.data, a.items)
    harness.write_wavs(a.audio, a.clips, a.seed)
    profile = os.path.join(os.path.dirname(os.path.abspath(a.data)), "host-pipelines.yaml")
    subprocess.run([sys.executable, os.path.join(ROOT, "microbench", "torch", "probe.py"),
                    "--data", a.data, "--pipelines", "--audio", a.audio, "--out", profile],
                   check=True)
    n, kb, cv = set_stats(harness.jpegs(a.data))
    wavs = sorted(os.path.join(d, f) for d, _, fs in os.walk(a.audio) for f in fs
                  if f.endswith(".wav"))
    audio_set = set_stats(wavs)
    audio_out_kb = profile_measured(profile, "audio_out_kb")
    scen = os.path.join(os.path.dirname(profile), "pipelines-validation.yaml")
    with open(scen, "w") as f:
        f.write(f"""# written by scripts/validate_pipelines.py: the harness's jobs
name: pipelines-validation
host: {profile}
epochs: {a.epochs}
dataset: {{items: {n}, item_kb: {kb:.6g}, item_kb_cv: {cv:.4g}}}
server: {{gpus: 1, cache_gb: 1000}}
loader: {{kind: pytorch}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: 0.01}}
""")
    lines = ["| pipeline | workers | compute ms/batch | measured s/epoch | predicted | error | "
             "measured stall | predicted stall |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    errs, stall_pp, by_pipe = [], [], {p: [] for p in PIPELINES}
    for r in matrix(a.quick):
        m = measure(a, r)
        c = harness.compare_row(m["epochs"], m["batches"], r["compute"],
                                harness.predict_epochs(a.bin, scen,
                                                       sets_for(r, audio_set, audio_out_kb)))
        errs.append(abs(c["err"]))
        by_pipe[r["pipeline"]].append(abs(c["err"]))
        stall_pp.append(abs(c["pred_stall"] - c["meas_stall"]) * 100)
        lines.append(fmt_row(r["pipeline"], r["workers"], r["compute"], c))
        print(f"{r['pipeline']} workers={r['workers']} compute={r['compute'] * 1e3:.0f}ms: "
              f"measured {c['meas_t']:.3f} s ({c['meas_stall']:.1%} stall), predicted "
              f"{c['pred_t']:.3f} s ({c['pred_stall']:.1%}): {c['err']:+.1%}", file=sys.stderr,
              flush=True)
    med, worst = statistics.median(errs), max(errs)
    lines.append("")
    lines.append(f"{len(errs)} rows: median |error| {med:.1%} in epoch time (worst {worst:.1%}), "
                 f"median {statistics.median(stall_pp):.1f} pp in stall fraction; by pipeline, "
                 "median (worst): " + ", ".join(
                     f"{p} {statistics.median(v):.1%} ({max(v):.1%})"
                     for p, v in by_pipe.items() if v) + ".")
    if not a.quick:
        # Two jobs on one server, each its own DataLoader with one worker: a
        # training and an evaluation loader over the same JPEGs.
        lines += ["", "Two jobs at once (image_train and image_eval, one worker each, the same "
                  "JPEGs; each its own process):", "",
                  "| job | workers | compute ms/batch | measured s/epoch | predicted | error | "
                  "measured stall | predicted stall |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        with open(scen, "a") as f:
            f.write(f"  - {{name: eval, gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: 0.01, "
                    "prep: {pipeline: image_eval}}\n")
        for compute in [0.01, 0.05]:
            ms = measure_pair(a, ["image_train", "image_eval"], 1, compute)
            sets = WARM + ["server.gpus=2", "loader.num_workers=1", "jobs.0.compute_s_per_batch=%g" % compute,
                           "jobs.1.compute_s_per_batch=%g" % compute]
            for j, (pipe, m) in enumerate(zip(["image_train", "image_eval"], ms)):
                c = harness.compare_row(m["epochs"], m["batches"], compute,
                                        harness.predict_epochs(a.bin, scen, sets, job=j))
                lines.append(fmt_row(pipe, 1, compute, c))
                print(f"two jobs: {pipe} compute={compute * 1e3:.0f}ms: measured "
                      f"{c['meas_t']:.3f} s, predicted {c['pred_t']:.3f} s: {c['err']:+.1%}",
                      file=sys.stderr, flush=True)
    # The rows time this host's CPU: what else ran is part of the figures.
    lines += ["", f"Load average (1 min) {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the "
              f"end, on {cores} cores; oneDNN's primitive cache: "
              + (f"{a.primitive_cache} entries (ONEDNN_PRIMITIVE_CACHE_CAPACITY)"
                 if a.primitive_cache != "default" else "its default (1024 entries)") + "."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.update and harness.update_markers(a.update, "validate_pipelines", text,
                                           "validate_pipelines"):
        return 2
    ok = med <= 0.10 and worst <= 0.25
    print(f"validate_pipelines: targets (median <= 10%, every row <= 25%) "
          f"{'met' if ok else 'NOT met'}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
