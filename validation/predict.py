"""stallsim's side of a row: `run` and `compare` on the harness's scenario."""

import json
import subprocess


def sets_args(sets):
    out = []
    for s in sets:
        out += ["--set", s]
    return out


def run_json(stallsim, scen, sets, extra=()):
    """`stallsim run scen --format json --set ... [extra]`, parsed."""
    cmd = [stallsim, "run", scen, "--format", "json", *extra, *sets_args(sets)]
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


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
    eps = run_json(stallsim, scen, sets, extra)["variants"][0]["jobs"][job]["epochs"]
    return [(e["sim"]["epoch_s"], e["sim"]["t_gpu_s"]) for e in eps]


def compare_measured(stallsim, scen, sets, epochs, batches, compute_s, batch, path):
    """The row through `stallsim compare` (one comparison path): its epochs
    written as a measured profile at path (stallsim.watch's writer; each
    epoch's steps are its batches' sleeps, the rest its waits), compared
    with scen under sets; the same dict as compare_row, and the predicted
    epoch times."""
    from stallsim.watch import Recorder

    rec = Recorder(path)
    rec.rank, rec.world, rec.path, rec.batch = 0, 1, path, batch
    for e in epochs:
        step = batches * compute_s
        rec.add_epoch(batches, max(e - step, 0.0), step)
    rec.write()
    cmd = [stallsim, "compare", path, scen, "--format", "json", *sets_args(sets)]
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
