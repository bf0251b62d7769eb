"""stallsim.videoprobe: the user's videos decoded as a Python Dataset
decodes them (PyAV), for the video pipeline's keys (prep.pipeline: video;
docs/video.md); the probe's --videos step, or alone:

  python3 -m stallsim.videoprobe --videos DIR [--size 224x224] [--frames 8]
      [--files 8] [--reps 3] [--seeks 32] [--threads 1] [--out FILE]

`stallsim calibrate --videos` times libavcodec from C: the floor. A Dataset
pays its binding's own costs beside it: on this VM a 640 x 360 frame's
to_ndarray(width=224, height=224, format="rgb24") took 0.41-0.52 ms where
calibrate's libswscale resize took 0.32, and predicted with calibrate's
figures a PyAV DataLoader's epochs came out 17-19 % fast (median,
docs/validation/video.md). So this times PyAV itself, on one thread as a
worker (thread_count, --threads):
- each video decoded whole, --reps passes after a warm one, each packet's
  demux and decode timed on this thread's clock and summed apart for
  keyframes and the other frames (an H.264 keyframe here cost 5.7-5.9 ms,
  another frame 0.22-0.25: a clip that crosses a keyframe pays it);
- each frame's to_ndarray at --size right after its decode (the resize and
  the array a Dataset returns);
- --seeks clips of --frames frames from seeded random frames, read as a
  Dataset reads one (container.seek to the keyframe before, backward, then
  decoding packet by packet, each of its frames through to_ndarray,
  stacked): the seek is what is left of a clip's time past its packets'
  decode and its frames' to_ndarray at the figures above (the seek itself,
  the decoder's restart and what a clip costs once), and the packets the
  decoder had taken in past the frames it had given out when the clip's
  first came are its reorder delay (H.264 with B-frames 2 here, MPEG-4 0).
Keys (per megapixel of the decoded frames, through 0 as calibrate does for
one size): prep.video_decode_ms_per_mpx (the other frames),
prep.video_keyframe_ms_per_mpx (a keyframe's cost past another's),
prep.video_transform_ms_per_mpx (to_ndarray at --size), prep.video_seek_ms
(the median seek), prep.video_decode_delay (the median delay, whole
packets), prep.video_decode_ms_per_frame 0."""

import os
import random
import statistics
import time

VIDEO_EXT = (".mp4", ".mkv", ".webm", ".avi", ".mov")


def video_files(root, most):
    """Up to `most` video files under root (by extension), sorted."""
    found = []
    for d, dirs, names in os.walk(root):
        dirs.sort()
        found += [os.path.join(d, n) for n in sorted(names) if n.lower().endswith(VIDEO_EXT)]
    return found[:most]


def open_video(path, threads):
    import av

    c = av.open(path)
    s = c.streams.video[0]
    s.codec_context.thread_count = threads  # before the decoder opens
    return c, s


def one_pass(c, s, size, convert):
    """One decode of the whole video from its start: each packet's demux
    and decode (this thread's CPU) by keyframe or not, and each frame's
    to_ndarray when convert. ([key s], [other s], [convert s], [pts])."""
    c.seek(s.start_time or 0, stream=s, backward=True, any_frame=False)
    key, other, conv, pts = [], [], [], []
    it = c.demux(s)
    while True:
        t0 = time.thread_time()
        try:
            pkt = next(it)
        except StopIteration:
            break
        frames = s.codec_context.decode(pkt)
        dt = time.thread_time() - t0
        if pkt.size:
            (key if pkt.is_keyframe else other).append(dt)
            if pkt.pts is not None:
                pts.append(pkt.pts)
        for f in frames:
            if convert:
                t1 = time.thread_time()
                f.to_ndarray(width=size[0], height=size[1], format="rgb24")
                conv.append(time.thread_time() - t1)
    return key, other, conv, sorted(pts)


def clip_cost(c, s, target, figures, size, frames):
    """One clip as a Dataset reads it: a seek to the keyframe before
    `target`, the decode packet by packet up to `frames` frames from it,
    each through to_ndarray at size, stacked. (Its CPU past its packets'
    decode and its frames' to_ndarray at figures = (key, other, convert)
    ms: the seek and what a clip costs once, ms; the packets the decoder
    had taken in past the frames it had given out when the target's came:
    its reorder delay.)"""
    import numpy as np

    key_ms, other_ms, convert_ms = figures
    t0 = time.thread_time()
    c.seek(target, stream=s, backward=True, any_frame=False)
    keys = sent = out = 0
    held, kept = None, []
    for pkt in c.demux(s):
        if pkt.size:
            sent += 1
            keys += 1 if pkt.is_keyframe else 0
        for f in s.codec_context.decode(pkt):
            out += 1
            if f.pts is None or f.pts < target or len(kept) == frames:
                continue
            held = sent - out if held is None else held
            kept.append(f.to_ndarray(width=size[0], height=size[1], format="rgb24"))
        if len(kept) == frames or not pkt.size:
            break
    np.stack(kept)
    total = (time.thread_time() - t0) * 1e3
    return (total - keys * key_ms - (sent - keys) * other_ms - len(kept) * convert_ms,
            held or 0)


def time_video(path, size, reps, seeks, threads, rng, frames=8):
    """One video's figures (ms): a dict of its size and medians; its seeks
    are clips of `frames` frames."""
    c, s = open_video(path, threads)
    try:
        one_pass(c, s, size, False)  # warm: the pages, the decoder, the caches
        key, other, conv, pts = [], [], [], []
        for r in range(reps):
            k, o, v, pts = one_pass(c, s, size, r == reps - 1)
            key.append(statistics.mean(k) * 1e3 if k else 0.0)
            other.append(statistics.mean(o) * 1e3 if o else 0.0)
            conv += v
        if not pts or not conv:
            raise ValueError(f"{path}: no frames decoded")
        km, om = statistics.median(key), statistics.median(other)
        cm = statistics.median(conv) * 1e3
        starts = pts[:max(1, len(pts) - frames)]
        left, held = zip(*(clip_cost(c, s, rng.choice(starts), (km, om, cm), size, frames)
                           for _ in range(seeks)))
        w, h = s.codec_context.width, s.codec_context.height
        return dict(name=os.path.basename(path), codec=s.codec_context.name, w=w, h=h,
                    mpx=w * h / 1e6, frames=len(pts), key_ms=km, other_ms=om,
                    convert_ms=cm,
                    seek_ms=statistics.median(left), delay=statistics.median(held))
    finally:
        c.close()


def fit(videos):
    """The keys over the videos: per megapixel, through 0."""
    def per_mpx(f):
        return statistics.mean(f(v) / v["mpx"] for v in videos)

    return {"prep.video_decode_ms_per_frame": "0",
            "prep.video_decode_ms_per_mpx": f"{per_mpx(lambda v: v['other_ms']):.6g}",
            "prep.video_keyframe_ms_per_mpx":
                f"{per_mpx(lambda v: max(0.0, v['key_ms'] - v['other_ms'])):.6g}",
            "prep.video_seek_ms": f"{max(0.0, statistics.median(v['seek_ms'] for v in videos)):.6g}",
            "prep.video_decode_delay": f"{max(0, round(statistics.median(v['delay'] for v in videos)))}",
            "prep.video_transform_ms_per_mpx": f"{per_mpx(lambda v: v['convert_ms']):.6g}"}


def measure(paths, size, reps, seeks, threads, log, seed=1, frames=8):
    """(keys, measured lines) over the videos that decode (their seeks
    clips of `frames` frames); ValueError when none does."""
    import av

    rng, videos = random.Random(seed), []
    for p in paths:
        try:
            videos.append(time_video(p, size, reps, seeks, threads, rng, frames))
        except (av.AVError, ValueError, IndexError) as e:
            log(f"skipping {p}: {e}")
            continue
        v = videos[-1]
        log(f"{v['name']}: {v['codec']} {v['w']}x{v['h']}, keyframe {v['key_ms']:.3f} ms, other "
            f"frames {v['other_ms']:.3f} ms, to_ndarray {v['convert_ms']:.3f} ms, seek "
            f"{v['seek_ms']:.3f} ms, {v['delay']:g} packets held")
    if not videos:
        raise ValueError("none of the videos decodes")
    lines = ["    video_pyav:", f"      av: \"{av.__version__}\"", f"      threads: {threads}",
             f"      out_size: \"{size[0]}x{size[1]}\"", f"      reps: {reps}", f"      seeks: {seeks}",
             f"      clip_frames: {frames}",
             "      videos:"]
    lines += [f"        - {{name: \"{v['name']}\", codec: {v['codec']}, width: {v['w']}, height: "
              f"{v['h']}, frames: {v['frames']}, keyframe_ms: {v['key_ms']:.6g}, other_ms: "
              f"{v['other_ms']:.6g}, to_ndarray_ms: {v['convert_ms']:.6g}, seek_ms: "
              f"{v['seek_ms']:.6g}, decode_delay: {v['delay']:g}}}" for v in videos]
    return fit(videos), lines


def profile_text(keys, lines):
    """A host profile of the video keys alone (scenario.prep.video_*)."""
    head = ["# stallsim host profile: the video pipeline's decode through PyAV, written by "
            "stallsim.videoprobe", "profile_version: 1", "scenario:", "  prep:"]
    body = [f"    {k.split('.', 1)[1]}: {v}" for k, v in keys.items()]
    return "\n".join(head + body + ["measured:", "  method:"] + lines) + "\n"


def parse_size(text):
    w, _, h = text.lower().partition("x")
    w, h = int(w), int(h)
    if w < 1 or h < 1:
        raise ValueError(text)
    return w, h


def main(argv=None):
    """python3 -m stallsim.videoprobe --videos DIR: PyAV's decode of the
    videos as a host profile of the video keys (stdout without --out)."""
    import argparse
    import sys

    from stallsim import atomic

    ap = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    ap.add_argument("--videos", required=True, help="the folder whose videos are decoded")
    ap.add_argument("--size", default="224x224", help="to_ndarray's width x height (224x224)")
    ap.add_argument("--files", type=int, default=8, help="videos to time (default 8)")
    ap.add_argument("--reps", type=int, default=3, help="timed passes a video (default 3)")
    ap.add_argument("--seeks", type=int, default=32, help="clips read a video (default 32)")
    ap.add_argument("--frames", type=int, default=8,
                    help="frames of a clip as the Dataset reads one (default 8)")
    ap.add_argument("--threads", type=int, default=1, help="the decoder's threads (default 1)")
    ap.add_argument("--out", default="-", help="the profile to write (default stdout)")
    a = ap.parse_args(argv)
    try:
        size = parse_size(a.size)
    except ValueError:
        ap.error(f"--size {a.size}: not WIDTHxHEIGHT")
    if min(a.files, a.reps, a.seeks, a.threads, a.frames) < 1:
        ap.error("--files, --reps, --seeks, --threads and --frames must be >= 1")
    if not os.path.isdir(a.videos):
        ap.error(f"--videos {a.videos}: not a directory")
    try:
        atomic.target(a.out)
    except atomic.OutputError as e:
        ap.error(f"--out {e}")
    paths = video_files(a.videos, a.files)
    if not paths:
        ap.error(f"--videos {a.videos}: no video files ({', '.join(VIDEO_EXT)})")
    try:
        import av  # noqa: F401
    except ImportError:
        sys.exit("videoprobe: PyAV is missing (Debian: python3-av)")

    def log(msg):
        print(f"videoprobe: {msg}", file=sys.stderr, flush=True)

    try:
        keys, lines = measure(paths, size, a.reps, a.seeks, a.threads, log, frames=a.frames)
    except ValueError as e:
        sys.exit(f"videoprobe: --videos {a.videos}: {e}")
    atomic.write(a.out, profile_text(keys, lines))


if __name__ == "__main__":
    main()
