"""Validates the per-job pipelines (jobs.N.prep.pipeline: image_train,
image_eval, audio) of `loader.kind: pytorch` against real torchvision and
torchaudio DataLoaders on this host (issue 17;
docs/validation/pipelines.md).

  python3 -m validation.pipelines [--bin build/sim/stallsim]
      [--data DIR] [--audio WAVDIR] [--items 1200] [--clips 400]
      [--epochs 2] [--quick] [--out FILE.md] [--page FILE.md]

1. JPEGs in DIR (`stallsim measure --generate`, as validation/torch.py; default
   /var/tmp/stallsim-torch/data, shared with it) and WAV clips in WAVDIR
   (16-bit PCM mono 44.1 kHz chirps under noise, 1-5 s, seeded; default
   /var/tmp/stallsim-torch/wav), each kept when already there.
2. The profile: the probe (stallsim-probe) --data DIR --pipelines --audio
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

import os
import statistics
import sys
import time

from stallsim import pipeline
from validation import predict as pr
from validation.base import Harness, Target, load1
from validation.fixtures import data as fx
from validation.fixtures.probe import run_probe

BATCH = 32
PIPELINES = ["image_train", "image_eval", "audio"]
HEAD = ["measured s/epoch | predicted | error | measured stall | predicted stall |",
        "|---|---:|---:|---:|---:|---:|---:|---:|"]


def pipeline_rows(quick):
    workers, computes = ([0, 2], [0.01]) if quick else ([0, 1, 2], [0.01, 0.05, 0.2])
    return [dict(pipeline=p, workers=w, compute=c) for p in PIPELINES for w in workers
            for c in computes]


def loader_row(a, r):
    """One loader, in this (fresh) process."""
    import torch
    from torch.utils.data import DataLoader

    torch.manual_seed(a.seed)
    root = a.audio if r["pipeline"] == "audio" else a.data
    ds = pipeline.pipeline_dataset(root, r["pipeline"])
    pipeline.warm(pipeline.item_paths(ds))
    kw = dict(batch_size=BATCH, shuffle=True, num_workers=r["workers"])
    if r["workers"] > 0:
        kw.update(prefetch_factor=2)
    dl = DataLoader(ds, **kw)
    if r.get("start_at"):  # the two-job rows: start together
        time.sleep(max(0.0, r["start_at"] - time.time()))
    epochs, batches = pipeline.timed_epochs(lambda e: dl, a.epochs, r["compute"])
    return dict(epochs=epochs, batches=batches)


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


def write_scenario(a, profile):
    n, kb, cv = set_stats(fx.jpegs(a.data))
    scen = os.path.join(os.path.dirname(profile), "pipelines-validation.yaml")
    with open(scen, "w") as f:
        f.write(f"""# written by validation.pipelines: the harness's jobs
name: pipelines-validation
host: {profile}
epochs: {a.epochs}
dataset: {{items: {n}, item_kb: {kb:.6g}, item_kb_cv: {cv:.4g}}}
server: {{gpus: 1, cache_gb: 1000}}
loader: {{kind: pytorch}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: 0.01}}
""")
    return scen


class Pipelines(Harness):
    name = "pipelines"
    title = "Per-job pipelines (jobs.N.prep.pipeline) against torchvision and torchaudio"
    needs = ("torch", "torchaudio", "torchvision")
    targets = [Target("median", "med", 0.10), Target("every row", "worst", 0.25)]

    def add_arguments(self, ap):
        ap.add_argument("--audio", default="/var/tmp/stallsim-torch/wav", help="the WAV clips")
        ap.add_argument("--clips", type=int, default=400, help="WAV clips to generate")
        ap.add_argument("--primitive-cache", default="64", metavar="N|default",
                        help="ONEDNN_PRIMITIVE_CACHE_CAPACITY for the probe and every row (default "
                             "64: fewer than the set's clip lengths, as a full-size audio set has "
                             "more than oneDNN's 1024; 'default' leaves oneDNN's own)")

    def setup(self, a):
        # torchaudio's Resample is a conv1d that oneDNN builds a primitive for per
        # input length and keeps in a per-process LRU cache of 1024: a full-size
        # audio set has far more clip lengths than that, so each clip pays the
        # build every time it is met (stallsim's cost, and the probe's); the
        # 400 clips here would fit, making a process's later passes cheaper
        # than at full size. A cache smaller than the set's lengths gives the
        # full-size behaviour (images do not go through oneDNN).
        if a.primitive_cache != "default":
            os.environ["ONEDNN_PRIMITIVE_CACHE_CAPACITY"] = a.primitive_cache
        self.load0, self.cores = load1(), len(os.sched_getaffinity(0))
        if self.load0 > self.cores / 2:
            # The probe and the rows time this host's CPU at different moments:
            # other work between them moves every row.
            print(f"validate_pipelines: warning: host busy (load average {self.load0:.1f} on "
                  f"{self.cores} cores): the figures will be off; rerun on an idle host",
                  file=sys.stderr)
        fx.generate(a.bin, a.data, a.items)
        fx.write_wavs(a.audio, a.clips, a.seed)
        profile = os.path.join(os.path.dirname(os.path.abspath(a.data)), "host-pipelines.yaml")
        run_probe("--data", a.data, "--pipelines", "--audio", a.audio, "--out", profile)
        wavs = sorted(os.path.join(d, f) for d, _, fs in os.walk(a.audio) for f in fs
                      if f.endswith(".wav"))
        self.audio_set = set_stats(wavs)
        self.audio_out_kb = profile_measured(profile, "audio_out_kb")
        self.scen = write_scenario(a, profile)

    def rows(self, a):
        return pipeline_rows(a.quick)

    def run_row(self, a, r):
        return loader_row(a, r)

    def predict(self, a, r, m):
        sim = pr.predict_epochs(a.bin, self.scen, sets_for(r, self.audio_set, self.audio_out_kb))
        return pr.compare_row(m["epochs"], m["batches"], r["compute"], sim)

    def row_line(self, r, c):
        return (f"{r['pipeline']} workers={r['workers']} compute={r['compute'] * 1e3:.0f}ms: "
                f"measured {c['meas_t']:.3f} s ({c['meas_stall']:.1%} stall), predicted "
                f"{c['pred_t']:.3f} s ({c['pred_stall']:.1%}): {c['err']:+.1%}")

    def two_jobs(self, a):
        """Two jobs on one server, each its own DataLoader with one worker: a
        training and an evaluation loader over the same JPEGs, each in its
        own process, started together once both have built their datasets."""
        lines = ["", "Two jobs at once (image_train and image_eval, one worker each, the same "
                 "JPEGs; each its own process):", "",
                 "| job | workers | compute ms/batch | " + HEAD[0], HEAD[1]]
        with open(self.scen, "a") as f:
            f.write(f"  - {{name: eval, gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: 0.01, "
                    "prep: {pipeline: image_eval}}\n")
        for compute in [0.01, 0.05]:
            t = time.time() + 4.0
            ms = self.isolated_many(a, [dict(pipeline=p, workers=1, compute=compute, start_at=t)
                                        for p in ("image_train", "image_eval")])
            sets = WARM + ["server.gpus=2", "loader.num_workers=1",
                           "jobs.0.compute_s_per_batch=%g" % compute,
                           "jobs.1.compute_s_per_batch=%g" % compute]
            for j, (pipe, m) in enumerate(zip(["image_train", "image_eval"], ms)):
                c = pr.compare_row(m["epochs"], m["batches"], compute,
                                   pr.predict_epochs(a.bin, self.scen, sets, job=j))
                lines.append(fmt_row(pipe, 1, compute, c))
                print(f"two jobs: {pipe} compute={compute * 1e3:.0f}ms: measured "
                      f"{c['meas_t']:.3f} s, predicted {c['pred_t']:.3f} s: {c['err']:+.1%}",
                      file=sys.stderr, flush=True)
        return lines

    def report(self, a, results):
        lines = ["| pipeline | workers | compute ms/batch | " + HEAD[0], HEAD[1]]
        lines += [fmt_row(r["pipeline"], r["workers"], r["compute"], c) for r, c in results]
        errs = [abs(c["err"]) for _, c in results]
        stall_pp = [abs(c["pred_stall"] - c["meas_stall"]) * 100 for _, c in results]
        by_pipe = {p: [abs(c["err"]) for r, c in results if r["pipeline"] == p] for p in PIPELINES}
        med, worst = statistics.median(errs), max(errs)
        lines += ["", f"{len(errs)} rows: median |error| {med:.1%} in epoch time (worst "
                  f"{worst:.1%}), median {statistics.median(stall_pp):.1f} pp in stall fraction; "
                  "by pipeline, median (worst): " + ", ".join(
                      f"{p} {statistics.median(v):.1%} ({max(v):.1%})"
                      for p, v in by_pipe.items() if v) + "."]
        if not a.quick:
            lines += self.two_jobs(a)
        # The rows time this host's CPU: what else ran is part of the figures.
        lines += ["", f"Load average (1 min) {self.load0:.1f} at the start, {load1():.1f} at the "
                  f"end, on {self.cores} cores; oneDNN's primitive cache: "
                  + (f"{a.primitive_cache} entries (ONEDNN_PRIMITIVE_CACHE_CAPACITY)"
                     if a.primitive_cache != "default" else "its default (1024 entries)") + "."]
        return "\n".join(lines) + "\n", dict(med=med, worst=worst)


if __name__ == "__main__":
    Pipelines.main()
