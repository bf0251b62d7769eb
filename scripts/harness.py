"""What the validation harnesses share (scripts/validate_torch.py,
validate_pipelines.py, validate_pagecache.py, validate_disk.py, pagecache_measure.py): the JPEGs
they run on, cold files, cgroups they make and remove, and the tables they
write into VALIDATION.md between markers. Standard library only, but for
write_wavs (numpy)."""

import os
import subprocess
import sys
import tempfile
import time


def skip(tool, why):
    """Exit 77 (ctest's skip) with the reason."""
    print(f"{tool}: skipped: {why}", file=sys.stderr)
    sys.exit(77)


def has_jpegs(data):
    return any(f.endswith(".jpg") for _, _, fs in os.walk(data) for f in fs)


def jpegs(data):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(data) for f in fs if f.endswith(".jpg"))


def generate(stallsim, data, n):
    """Unless data holds JPEGs already, writes n photograph-like ones there
    (`stallsim measure --generate`, the set `calibrate` generates)."""
    os.makedirs(data, exist_ok=True)
    if has_jpegs(data):
        return
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write("dataset: {items: 1, item_kb: 100}\n"
                "jobs: [{gpus: 1, batch_per_gpu: 1, compute_s_per_batch: 0.001}]\n")
    try:
        subprocess.run([stallsim, "measure", f.name, "--data", data, "--generate", str(n),
                        "--epochs", "1"], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    finally:
        os.unlink(f.name)


def has_wavs(data):
    return any(f.endswith(".wav") for _, _, fs in os.walk(data) for f in fs)


def write_wavs(data, n, seed=1, min_s=1.0, max_s=5.0, rate=44100):
    """Unless data holds WAVs already, writes n clips there: 16-bit PCM mono
    at `rate`, each a linear chirp between two random pitches under noise,
    its length uniform in [min_s, max_s] seconds (so the sizes vary), from
    `seed`: the same files every time."""
    import wave

    import numpy as np

    os.makedirs(data, exist_ok=True)
    if has_wavs(data):
        return
    rng = np.random.default_rng(seed)
    for i in range(n):
        t = np.arange(int(rng.uniform(min_s, max_s) * rate)) / rate
        f0, f1 = rng.uniform(80, 4000, 2)
        phase = 2 * np.pi * (f0 * t + (f1 - f0) * t * t / (2 * t[-1]))
        x = 0.5 * np.sin(phase) + 0.05 * rng.standard_normal(t.size)
        pcm = np.clip(x * 32767, -32768, 32767).astype("<i2")
        with wave.open(os.path.join(data, f"clip{i:05d}.wav"), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(pcm.tobytes())


def evict(paths):
    """Drops the files' pages from the page cache. Freshly written files are
    dirty, and POSIX_FADV_DONTNEED keeps dirty pages: sync first."""
    os.sync()
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def remove_cgroup(path):
    """rmdir a cgroup whose processes have exited (the kernel may take a
    moment to let go of it)."""
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)


def update_markers(path, name, text, tool):
    """Puts text between `<!-- NAME:begin ... -->` and `<!-- NAME:end -->` in
    path, atomically. 0, or 2 when the markers are missing."""
    begin = f"<!-- {name}:begin (written by scripts/{tool}.py; do not edit by hand) -->"
    end = f"<!-- {name}:end -->"
    with open(path) as f:
        doc = f.read()
    if begin not in doc or end not in doc:
        print(f"{tool}: {path} lacks the markers {begin} ... {end}", file=sys.stderr)
        return 2
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(path + ".tmp", "w") as f:
        f.write(head + begin + "\n" + text + end + tail)
    os.replace(path + ".tmp", path)
    return 0


def epoch_metrics(out, source):
    """The per-epoch metrics (dicts) of `source` ("sim", "model", "measured")
    for the first variant's first job of a `run --format json` output, or of
    the variant itself in `measure`'s (which runs one job)."""
    v = out["variants"][0]
    eps = v["jobs"][0]["epochs"] if "jobs" in v else v["epochs"]
    return [e[source] for e in eps]


def predict_epochs(stallsim, scen, sets, job=0, extra=()):
    """`stallsim run scen --set ... [extra]` in JSON: the simulator's
    (epoch_s, t_gpu_s) for each epoch of job `job`."""
    import json

    cmd = [stallsim, "run", scen, "--format", "json", *extra]
    for s in sets:
        cmd += ["--set", s]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    eps = out["variants"][0]["jobs"][job]["epochs"]
    return [(e["sim"]["epoch_s"], e["sim"]["t_gpu_s"]) for e in eps]


def compare_measured(stallsim, scen, sets, epochs, batches, compute_s, batch, path):
    """The row through `stallsim compare` (one comparison path): its epochs
    written as a measured profile at path (stallsim.watch's writer; each
    epoch's steps are its batches' sleeps, the rest its waits), compared
    with scen under sets; the same dict as compare_row, and the predicted
    epoch times."""
    import json

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                    "python"))
    from stallsim.watch import Recorder

    rec = Recorder(path)
    rec.rank, rec.world, rec.path, rec.batch = 0, 1, path, batch
    for e in epochs:
        step = batches * compute_s
        rec.add_epoch(batches, max(e - step, 0.0), step)
    rec.write()
    cmd = [stallsim, "compare", path, scen, "--format", "json"]
    for s in sets:
        cmd += ["--set", s]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    n = len(out["epochs"])
    meas_t, pred_t = out["total"]["measured_s"] / n, out["total"]["predicted_s"] / n
    meas_stall = sum(e["measured"]["stall_s"] for e in out["epochs"]) / out["total"]["measured_s"]
    pred_stall = sum(e["predicted"]["stall_s"] for e in out["epochs"]) / out["total"]["predicted_s"]
    return dict(meas_t=meas_t, pred_t=pred_t, err=out["total"]["error"], meas_stall=meas_stall,
                pred_stall=pred_stall, pred_epochs=[e["predicted"]["epoch_s"] for e in out["epochs"]])


def compare_row(epochs, batches, compute_s, sim):
    """A measured row (each epoch's seconds, the batches of one, the sleep
    per batch) against predict_epochs' figures: means over the epochs of the
    epoch time and stall fraction, measured and predicted, and the error."""
    meas_t = sum(epochs) / len(epochs)
    pred_t = sum(e for e, _ in sim) / len(sim)
    return dict(meas_t=meas_t, pred_t=pred_t, err=(pred_t - meas_t) / meas_t,
                meas_stall=1 - batches * compute_s / meas_t,
                pred_stall=1 - sum(g for _, g in sim) / len(sim) / pred_t)
