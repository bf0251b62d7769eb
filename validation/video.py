"""Validates the video pipeline (jobs.N.prep.pipeline: video, issue 60)
against a real PyTorch DataLoader that decodes clips with PyAV on this host
(docs/validation/video.md).

  python3 -m validation.video [--bin build/sim/stallsim] [--data DIR]
      [--videos DIR] [--codecs h264,mpeg4] [--gops 12,60] [--per-set 8]
      [--video-frames 150] [--size 640x360] [--frames 8] [--items 256]
      [--epochs 2] [--workers 0,1,2,4] [--compute 0.02] [--open-per-clip]
      [--keep-profiles] [--measure-only] [--quick] [--page FILE.md]

1. Videos made on this host with the `ffmpeg` command from the photographs
   the other harnesses use (fixtures/data.py; `stallsim measure --generate`
   writes them where missing): for each codec (H.264 with libx264, MPEG-4
   part 2) and keyframe interval (--gops, a keyframe every G frames and no
   other), --per-set videos of --video-frames frames at --size, 25 fps, each
   a window panning across one photograph; kept when already there.
2. Per set, `stallsim calibrate --quick --videos SET` on those videos
   (libavcodec from C: prep.video_decode_ms_per_frame, _per_mpx,
   prep.video_seek_ms, prep.video_transform_ms_per_mpx) and `python3 -m
   stallsim.videoprobe --videos SET` (the probe's --videos step: the same
   decode through PyAV, the Dataset's own binding, keyframes apart from the
   other frames, to_ndarray at 224 x 224), each given to the scenario as
   --set (prep.video_* of its profile's scenario block). The loader's own
   figures are the PyTorch probe's (stallsim-probe over the photographs'
   ImageFolder at the harness's batch, as docs/pytorch.md tells a user; one
   profile for every set): its per-item figures measured on a 602 KB
   float32 crop, its hand-over by the bytes (loader.copy_ms_per_mb,
   receive_ms_per_mb) carrying them to a clip's 1.2 MB of uint8 frames.
3. Each row, in a fresh process: a torch.utils.data.DataLoader, batch 8,
   shuffle, the row's num_workers (0 to 8), over
   fixtures/datasets/video_clips.py's VideoClips (--items clips of --frames
   frames, each at a random position: seek to the keyframe before, decode
   forward single-threaded, resize to 224 x 224, a uint8 tensor), the GPU
   emulated by sleeping --compute a batch, --epochs epochs timed.
4. `stallsim run` on a scenario with the probe's profile as its host, the
   video figures and the video keys (video_keys(): the pipeline, frames,
   keyframe interval, size, random access); the epoch times compared.
Target: median |error| <= 10 % in epoch time with PyAV's figures (--quick:
20 %); calibrate's (libavcodec from C: the floor a binding adds to) are
predicted beside, for the table. A stallsim
built without the video pipeline kind refuses a key: the harness says which
and skips (77) before measuring; --measure-only runs 1-3 alone and prints
the measured table (no prediction, no target, no page). Exit 0 met, 1 not,
77 without PyTorch, PyAV or ffmpeg, or without the video kind."""

import os
import shutil
import statistics
import subprocess
import sys

from stallsim.pipeline import timed_epochs
from validation import predict as pr
from validation.base import Harness, Skip, Target, load1
from validation.fixtures import data as fx
from validation.fixtures.probe import probe_env, run_probe

BATCH = 8
ENCODERS = {"h264": ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23"],
            "mpeg4": ["-c:v", "mpeg4", "-q:v", "4"]}
# Reads come from the warm page cache: the videos' bytes cost no storage time.
WARM = ["loader.cache=none", "server.storage.latency_ms=0", "server.storage.read_mb_s=1e9"]


def video_keys(s, a):
    """The video pipeline's keys for a set: the names of the
    video kind's schema (sim/kinds/pipeline_video.c, issue 60 item 1)."""
    return ["jobs.0.prep.pipeline=video", f"prep.video_frames={a.frames}",
            f"prep.video_gop={s['gop']}", f"prep.video_width={a.w}",
            f"prep.video_height={a.h}", "prep.video_access=random",
            # the item as the Dataset hands it over: F x 224 x 224 x 3 uint8
            "prep.video_out_width=224", "prep.video_out_height=224", "loader.batch_dtype=uint8"]


def set_name(codec, gop):
    return f"{codec}_g{gop}"


def encode(photo, out, codec, gop, a):
    """One video: a window of --size panning across the photograph scaled
    to 5/4 of it, a keyframe every gop frames exactly."""
    w, h, n = a.w, a.h, a.video_frames
    vf = (f"scale={w * 5 // 4}:{h * 5 // 4},crop={w}:{h}:x='(iw-{w})*n/{n}':"
          f"y='(ih-{h})*n/{n}',format=yuv420p")
    cmd = ["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-loop", "1", "-framerate", "25",
           "-i", photo, "-vf", vf, "-frames:v", str(n), *ENCODERS[codec], "-g", str(gop),
           "-keyint_min", str(gop), "-sc_threshold", "0", out + ".tmp.mp4"]
    subprocess.run(cmd, check=True)
    os.replace(out + ".tmp.mp4", out)


def make_sets(a):
    """Every codec x keyframe interval's videos (kept when there): the sets."""
    photos = fx.jpegs(a.data)
    sets = []
    for codec in a.codecs.split(","):
        for gop in (int(g) for g in a.gops.split(",")):
            d = os.path.join(a.videos, f"{a.w}x{a.h}_{a.video_frames}", set_name(codec, gop))
            os.makedirs(d, exist_ok=True)
            paths = []
            for k in range(a.per_set):
                p = os.path.join(d, f"v{k:03d}.mp4")
                if not os.path.isfile(p):
                    encode(photos[k % len(photos)], p, codec, gop, a)
                paths.append(p)
            sets.append(dict(name=set_name(codec, gop), codec=codec, gop=gop, dir=d, paths=paths))
            print(f"validate_video: {len(paths)} videos in {d}", file=sys.stderr, flush=True)
    return sets


def calibrate(a, s):
    """`stallsim calibrate --videos` on the set's videos: libavcodec's
    figures from C (kept with --keep-profiles); the profile's path."""
    profile = os.path.join(s["dir"], "host-video.yaml")
    if a.keep_profiles and os.path.isfile(profile):
        return profile
    cmd = [a.bin, "calibrate", "--quick", "--data", a.data, "--files", "50", "--videos",
           s["dir"], "--out", profile]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"validate_video: {' '.join(cmd)}: exit {r.returncode}: {r.stderr[-800:]}")
    return profile


def pyav_probe(a, s):
    """stallsim.videoprobe on the set's videos: PyAV's figures (kept with --keep-profiles)."""
    profile = os.path.join(s["dir"], "host-video-pyav.yaml")
    if not (a.keep_profiles and os.path.isfile(profile)):
        subprocess.run([sys.executable, "-m", "stallsim.videoprobe", "--videos", s["dir"],
                        "--out", profile, "--size", "224x224", "--frames", str(a.frames)],
                       check=True, env=probe_env())
    return profile


def calibrated_keys(profile):
    """calibrate's video figures as --set lines: the prep.video_* keys of
    its profile's scenario block."""
    out, inside = [], None
    with open(profile) as f:
        for line in f:
            if not line.startswith(" "):
                inside = line.startswith("scenario:")
            elif inside and line.startswith("  ") and not line.startswith("   "):
                inside = "prep" if line.strip() == "prep:" else True
            elif inside == "prep" and line.strip().startswith("video_"):
                k, _, v = line.strip().partition(":")
                out.append(f"prep.{k}={v.strip()}")
    return out


def probed(a):
    """The PyTorch probe's profile over the photographs at the harness's
    batch (kept with --keep-profiles): the loader's figures on this host."""
    profile = os.path.join(a.videos, f"host-torch-b{BATCH}.yaml")
    if not (a.keep_profiles and os.path.isfile(profile)):
        print(f"validate_video: the PyTorch probe over {a.data} (batch {BATCH})", file=sys.stderr,
              flush=True)
        run_probe("--data", a.data, "--out", profile, "--batch", str(BATCH), "--items",
                  "320" if a.quick else "640")
    return profile


def write_scenario(a, s, host, name="video-validation.yaml"):
    """The set's training job (host: the probe's profile; None: none)."""
    scen = os.path.join(s["dir"], name)
    sizes = [os.path.getsize(p) for p in s["paths"]]
    # The bytes a clip reads: its frames' share of a video (the cache is warm).
    kb = statistics.mean(sizes) / a.video_frames * a.frames / 1e3
    with open(scen, "w") as f:
        f.write(f"""# written by validation.video: the harness's training job
name: video-validation-{s['name']}
{f"host: {host}" if host else ""}
epochs: {a.epochs}
dataset: {{items: {a.items}, item_kb: {kb:.6g}}}
server: {{gpus: 1, cache_gb: 1000}}
loader: {{kind: pytorch}}
jobs:
  - {{name: train, gpus: 1, batch_per_gpu: {BATCH}, compute_s_per_batch: {a.compute:g}}}
""")
    return scen


def refused(a, s, scen, names_only=False):
    """None, or stallsim's own line saying which key it refuses; names_only
    (before calibrate: no costs yet) gives the decode a stand-in cost, so
    only the keys' names and values are checked."""
    stand_in = ["prep.video_decode_ms_per_mpx=1"] if names_only else s.get("video_sets", [])
    cmd = [a.bin, "check", scen, *pr.sets_args(WARM + video_keys(s, a) + stand_in)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode == 0:
        return None
    return next((x for x in r.stderr.splitlines() if "error" in x), r.stderr.strip()[-400:])


def loader_row(a, r):
    """One row's epochs, in this (fresh) process."""
    import torch
    from torch.utils.data import DataLoader

    from validation.fixtures.datasets.video_clips import VideoClips

    torch.manual_seed(a.seed)
    s = r["set"]
    paths = sorted(os.path.join(s["dir"], f) for f in os.listdir(s["dir"]) if f.endswith(".mp4"))
    ds = VideoClips(paths, a.frames, a.items, seed=a.seed, open_per_clip=a.open_per_clip)
    kw = dict(batch_size=BATCH, shuffle=True, num_workers=r["workers"])
    if r["workers"] > 0:
        kw["prefetch_factor"] = 2
    dl = DataLoader(ds, **kw)
    decoded = []
    epochs, batches = timed_epochs(lambda e: dl, a.epochs, r["compute"],
                                   on_batch=lambda e, b: decoded.append(float(b[1].sum())))
    return dict(epochs=epochs, batches=batches,
                decoded_per_clip=sum(decoded) / (a.items * a.epochs))


class Video(Harness):
    name = "video"
    title = "The video pipeline (prep.pipeline: video) against a DataLoader decoding clips with PyAV"
    items = 256
    needs = ("torch", "av", "numpy")
    targets = [Target("median epoch time", "med", 0.10, quick=0.20)]

    def add_arguments(self, ap):
        ap.add_argument("--videos", default="/var/tmp/stallsim-video",
                        help="where the generated videos are kept")
        ap.add_argument("--codecs", default="h264,mpeg4", help=f"of {', '.join(ENCODERS)}")
        ap.add_argument("--gops", default="12,60", help="keyframe intervals, frames")
        ap.add_argument("--per-set", type=int, default=8, help="videos per codec and interval")
        ap.add_argument("--video-frames", type=int, default=150, help="each video's frames")
        ap.add_argument("--size", default="640x360", help="the videos' width x height")
        ap.add_argument("--frames", type=int, default=8, help="frames per clip (sample)")
        ap.add_argument("--workers", default="0,1,2,4", help="num_workers of the rows (0-8)")
        ap.add_argument("--compute", type=float, default=0.02, help="GPU seconds a batch")
        ap.add_argument("--open-per-clip", action="store_true",
                        help="open each video for every clip (not once per worker)")
        ap.add_argument("--keep-profiles", action="store_true",
                        help="reuse each set's calibrate profile where one is there")
        ap.add_argument("--measure-only", action="store_true",
                        help="videos, calibrate and the DataLoader rows only: no prediction")

    def configure(self, a):
        if a.quick:
            a.items, a.workers, a.per_set = min(a.items, 64), "0,2", min(a.per_set, 4)
        if a.measure_only and not a.page:
            a.page = "none"
        a.w, a.h = (int(x) for x in a.size.lower().split("x"))
        bad = [w for w in a.workers.split(",") if not 0 <= int(w) <= 8]
        if bad or a.w % 2 or a.h % 2 or a.frames < 1 or a.frames > a.video_frames:
            raise SystemExit("validate_video: --workers 0-8, an even --size, "
                             "1 <= --frames <= --video-frames")

    def requires(self, a):
        if not shutil.which("ffmpeg"):
            return "no ffmpeg command (Debian: ffmpeg)"
        bad = [c for c in a.codecs.split(",") if c not in ENCODERS]
        return f"unknown codec {bad[0]} (of {', '.join(ENCODERS)})" if bad else None

    def setup(self, a):
        self.load0 = load1()
        fx.generate(a.bin, a.data, max(a.per_set, 50))
        self.sets = make_sets(a)
        # Before calibrate's minutes: a build without the video kind, said.
        self.preflight(a, write_scenario(a, self.sets[0], None, "video-preflight.yaml"), True)
        host = None if a.measure_only else probed(a)
        for s in self.sets:
            s["scen"] = write_scenario(a, s, host)
        self.calibrated(a, self.sets[0])
        self.preflight(a, self.sets[0]["scen"])

    def calibrated(self, a, s):
        """The set's figures from calibrate and the PyAV probe, taken just
        before its rows: this VM's speed drifts by a fifth over minutes (the
        same clip 6.9 then 8.5 ms a minute apart), and figures taken for
        every set before any row were up to 5 minutes older than the rows."""
        if "video_sets" not in s:
            s["calib_sets"] = calibrated_keys(calibrate(a, s))
            s["video_sets"] = calibrated_keys(pyav_probe(a, s))
            for who, keys in (("calibrate", s["calib_sets"]), ("PyAV", s["video_sets"])):
                print(f"validate_video: {s['name']}: {who}: {' '.join(keys)}", file=sys.stderr,
                      flush=True)

    def measure(self, a, r):
        self.calibrated(a, r["set"])
        return self.isolated(a, r)

    def preflight(self, a, scen, names_only=False):
        why = None if a.measure_only else refused(a, self.sets[0], scen, names_only)
        if why:
            raise Skip(f"{a.bin} refuses the video keys ({why}): it has no video pipeline kind "
                       "(issue 60 item 1) or names its keys otherwise than video_keys() "
                       "(validation/video.py); --measure-only times the DataLoader alone")

    def rows(self, a):
        return [dict(set=s, workers=int(w), compute=a.compute)
                for s in self.sets for w in a.workers.split(",")]

    def run_row(self, a, r):
        return loader_row(a, r)

    def predict(self, a, r, m):
        meas = statistics.mean(m["epochs"])
        c = dict(meas_t=meas, pred_t=None, err=None, decoded=m["decoded_per_clip"],
                 meas_stall=1 - m["batches"] * r["compute"] / meas)
        if not a.measure_only:
            row = video_keys(r["set"], a) + [f"loader.num_workers={r['workers']}",
                                             f"jobs.0.compute_s_per_batch={r['compute']:g}"]
            sim = pr.predict_epochs(a.bin, r["set"]["scen"], WARM + r["set"]["video_sets"] + row)
            c.update(pr.compare_row(m["epochs"], m["batches"], r["compute"], sim))
            floor = pr.predict_epochs(a.bin, r["set"]["scen"], WARM + r["set"]["calib_sets"] + row)
            c["calib_t"] = statistics.mean(e for e, _ in floor)
            c["calib_err"] = c["calib_t"] / meas - 1
        return c

    def row_line(self, r, c):
        pred = (f", predicted {c['pred_t']:.2f} s ({c['err']:+.1%})" if c["err"] is not None
                else "")
        return (f"{r['set']['name']} workers={r['workers']}: measured {c['meas_t']:.2f} s/epoch "
                f"({c['meas_stall']:.1%} stall, {c['decoded']:.1f} frames decoded a clip){pred}")

    def report(self, a, results):
        lines = [f"{a.per_set} videos a set of {a.video_frames} frames at {a.w} x {a.h}, 25 fps; "
                 f"{a.items} clips of {a.frames} frames an epoch at random positions, batch "
                 f"{BATCH}, GPU {a.compute * 1e3:g} ms a batch; {a.epochs} epochs. Predicted "
                 "with PyAV's figures (stallsim.videoprobe: the target) and, beside, with "
                 "calibrate's (libavcodec from C).", "",
                 "| set | workers | PyAV other / key ms | to_ndarray ms | frames decoded / clip | "
                 "measured s/epoch | predicted | error | calibrate's | error | measured stall | "
                 "predicted stall |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        lines += [self.table_row(a, r, c) for r, c in results]
        errs = [abs(c["err"]) for _, c in results if c["err"] is not None]
        floor = [abs(c["calib_err"]) for _, c in results if c.get("calib_err") is not None]
        med = statistics.median(errs) if errs else None
        lines += ["", (f"{len(errs)} rows: median |error| {med:.1%} in epoch time (worst "
                       f"{max(errs):.1%}); with calibrate's figures {statistics.median(floor):.1%} "
                       f"(worst {max(floor):.1%})." if errs else "Measured only: no prediction."),
                  f"Load average (1 min) {self.load0:.1f} at the start, {load1():.1f} at the end."]
        return "\n".join(lines) + "\n", dict(med=med)

    def table_row(self, a, r, c):
        v = dict(k.split("=", 1) for k in r["set"].get("video_sets", []))
        mpx = a.w * a.h / 1e6
        other = float(v.get("prep.video_decode_ms_per_mpx", 0)) * mpx
        key = other + float(v.get("prep.video_keyframe_ms_per_mpx", 0)) * mpx
        conv = float(v.get("prep.video_transform_ms_per_mpx", 0)) * mpx
        pred = (f"{c['pred_t']:.2f} | {c['err']:+.1%} | {c['calib_t']:.2f} | {c['calib_err']:+.1%} | "
                f"{c['meas_stall']:.1%} | {c['pred_stall']:.1%}" if c["err"] is not None
                else f"- | - | - | - | {c['meas_stall']:.1%} | -")
        return (f"| {r['set']['name']} | {r['workers']} | {other:.3f} / {key:.3f} | {conv:.3f} | "
                f"{c['decoded']:.1f} | {c['meas_t']:.2f} | {pred} |")


if __name__ == "__main__":
    Video.main()
