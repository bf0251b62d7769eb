"""stallsim.storageprobe: the user's storage as several readers see it at
once, the probe's "cold reads" step (issue 55).

A DataLoader's workers read at the same time, and a device's aggregate
limit (a throttled volume, a cloud disk's MB/s cap, a share) is not what
one reader sees: one file at a time, the probe once fitted 1.45 ms + size /
88 MB/s on a device whose aggregate limit is 40 MB/s, and 4 workers were
then predicted 21 % too fast. So the files the probe times are read cold
(evicted with POSIX_FADV_DONTNEED after a sync) by 1, 2, 4, 8 and 16
threads at once (READERS: open, read to EOF, close, each thread taking the
next file, as the workers do; a read releases the GIL), REPS passes each,
every pass after a fresh eviction; and once by one sequential stream (the
largest files read in order in 1 MiB pieces, what a streaming reader over
shards does).

The keys are the fixed kind's (sim/kinds/storage_fixed.c; the default kind,
and PyTorch's workers are synchronous readers there): read_mb_s the
aggregate rate where the curve levels off (calibrate's plateau rule:
the depths around the best whose medians reach its slowest pass, their
mean), latency_ms what one reader's mean time per file leaves beyond its
transfer at that rate. Its model, items/s = min(bw / size, N / (latency +
size / bw)) for N readers, is then the measurement at one reader and on the
plateau; the readers between are its interpolation, and the whole curve is
in the profile (measured.storage) to hold it against. Not the ssd kind's
curve: its points are at 1, 4, 16 and 32 requests in flight, and a
scenario must name the kind to use them; calibrate writes those.

The profile also says which storage it measured: the path, its mount and
file system, the block device and its read_ahead_kb (written as
server.storage.read_ahead_kb, the streaming reader's window, when the path
is on a block device)."""

import os
import statistics
import threading
import time

READERS = (1, 2, 4, 8, 16)
REPS = 3
SEQ_BYTES = 64 << 20  # the sequential stream reads up to this much
SEQ_CHUNK = 1 << 20
# The worst fraction of the files' pages still resident after an eviction
# over the passes (mincore), and whether some pass could not tell.
EVICTION = {"worst": 0.0, "unknown": False}


def evict(paths):
    """Drops the files' pages (POSIX_FADV_DONTNEED); dirty pages stay, so
    sync first (stallsim.pipeline.evict, the same rule)."""
    from stallsim.pipeline import evict as drop

    drop(paths)


def resident(path):
    """(pages resident in the page cache, pages) of one file (mmap +
    mincore through libc, as calibrate's storage_bench.c checks its
    eviction), or None where libc cannot tell."""
    import ctypes
    import ctypes.util

    size, page = os.path.getsize(path), os.sysconf("SC_PAGE_SIZE")
    if size == 0:
        return 0, 0
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long)
    libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)
    libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
    npages = (size + page - 1) // page
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
        if addr in (None, ctypes.c_void_p(-1).value):
            return None
        vec = ctypes.create_string_buffer(npages)
        ok = libc.mincore(addr, size, vec) == 0
        libc.munmap(addr, size)
    finally:
        os.close(fd)
    return (sum(b & 1 for b in vec.raw), npages) if ok else None


def resident_fraction(paths):
    """The fraction of the files' pages in the page cache, or None."""
    got = [resident(p) for p in paths]
    if any(g is None for g in got):
        return None
    total = sum(n for _, n in got)
    return sum(r for r, _ in got) / total if total else 0.0


def read_whole(path):
    with open(path, "rb", buffering=0) as f:
        n = 0
        while True:
            b = f.read(1 << 20)
            if not b:
                return n
            n += len(b)


def cold_pass(paths, readers):
    """One pass over paths with `readers` threads at once, each taking the
    next file: (elapsed seconds from the first reader's start to the last
    one's end, each read's seconds, bytes read)."""
    evict(paths)
    left = resident_fraction(paths)
    if left is not None:
        EVICTION["worst"] = max(EVICTION["worst"], left)
    else:
        EVICTION["unknown"] = True
    lock, nxt = threading.Lock(), [0]
    secs, spans, total = [0.0] * len(paths), [], [0]
    barrier = threading.Barrier(readers)

    def reader():
        barrier.wait()
        t_start, got = time.perf_counter(), 0
        while True:
            with lock:
                i = nxt[0]
                nxt[0] += 1
            if i >= len(paths):
                break
            t0 = time.perf_counter()
            got += read_whole(paths[i])
            secs[i] = time.perf_counter() - t0
        with lock:
            spans.append((t_start, time.perf_counter()))
            total[0] += got

    threads = [threading.Thread(target=reader) for _ in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return max(e for _, e in spans) - min(s for s, _ in spans), secs, total[0]


def curve(paths, readers=READERS, reps=REPS, log=None):
    """The cold curve: per reader count, each pass's MB/s and items/s and
    the reads' latency percentiles over its passes."""
    points = []
    for n in readers:
        mb_s, items_s, lat = [], [], []
        for _ in range(reps):
            el, secs, got = cold_pass(paths, n)
            mb_s.append(got / el / 1e6)
            items_s.append(len(paths) / el)
            lat += secs
        pt = dict(readers=n, mb_s=mb_s, items_s=items_s, secs=lat)
        lat = sorted(lat)
        pt.update(p50_ms=lat[len(lat) // 2] * 1e3, p90_ms=lat[int(len(lat) * 0.9)] * 1e3)
        points.append(pt)
        if log:
            log(f"cold reads, {n} reader{'s' if n > 1 else ''} at once: "
                f"{statistics.median(mb_s):.1f} MB/s ({statistics.median(items_s):.0f} files/s), "
                f"a read p50 {pt['p50_ms']:.3f} ms, p90 {pt['p90_ms']:.3f} ms")
    return points


def plateau(points):
    """The aggregate rate, bytes/s: calibrate's rule (storage_bench.c's
    ssd_curve) on MB/s, the mean median of the run of reader counts around
    the best whose medians reach the best's slowest pass, so that one lucky
    pass does not set it. Returns (bytes/s, the reader counts on it)."""
    med = [statistics.median(p["mb_s"]) for p in points]
    b = max(range(len(points)), key=lambda i: med[i])
    floor = min(points[b]["mb_s"])
    first, last = b, b
    while first > 0 and med[first - 1] >= floor:
        first -= 1
    while last + 1 < len(points) and med[last + 1] >= floor:
        last += 1
    rate = statistics.mean(med[first:last + 1])
    return rate * 1e6, [p["readers"] for p in points[first:last + 1]]


def fit(points, mean_bytes):
    """The fixed kind's keys from the curve (see the module's header): the
    plateau's bandwidth and one reader's time per file less its transfer
    there. Returns dict(read_mb_s, latency_ms, plateau, one_reader_ms)."""
    if not points or points[0]["readers"] != 1:
        raise ValueError("storageprobe.fit: the curve must start at one reader")
    bw, on = plateau(points)
    one = 1.0 / statistics.median(points[0]["items_s"])  # seconds per file, one reader
    lat = max(0.0, one - mean_bytes / bw)
    return dict(read_mb_s=bw / 1e6, latency_ms=lat * 1e3, plateau=on, one_reader_ms=one * 1e3)


def one_reader_line(points, sizes):
    """What the probe fitted before (issue 55), kept to hold the curve
    against: one reader's files' seconds as latency + size / bandwidth
    (stallsim.probe.fit_cost, held >= 0); where the time did not grow with
    size, the plain mean rate with latency 0, as it was. (latency s,
    bytes/s, how)."""
    from stallsim.probe import fit_cost

    secs = points[0]["secs"]
    xs = sizes * (len(secs) // len(sizes))
    a, b, how = fit_cost(xs, secs)
    if b > 0:
        return a, 1 / b, how
    return 0.0, sum(xs) / sum(secs), f"plain mean rate, latency 0 ({how})"


def sequential(paths):
    """One reader streaming the largest files cold, each in order in 1 MiB
    pieces (up to SEQ_BYTES in all): (MB/s, files, bytes)."""
    by_size = sorted(paths, key=os.path.getsize, reverse=True)
    chosen, total = [], 0
    for p in by_size:
        if total >= SEQ_BYTES:
            break
        chosen.append(p)
        total += os.path.getsize(p)
    evict(chosen)
    t0, got = time.perf_counter(), 0
    for p in chosen:
        with open(p, "rb", buffering=0) as f:
            while True:
                b = f.read(SEQ_CHUNK)
                if not b:
                    break
                got += len(b)
    return got / (time.perf_counter() - t0) / 1e6, len(chosen), got


def mount_of(path):
    """(mount point, file system type, source) of the mount holding path,
    from /proc/self/mounts (the longest mount point that contains it)."""
    path = os.path.realpath(path)
    best = ("/", "?", "?")
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                src, mnt, fstype = line.split()[:3]
                mnt = mnt.replace("\\040", " ")
                inside = path == mnt or path.startswith(mnt.rstrip("/") + "/")
                if inside and len(mnt) >= len(best[0]):
                    best = (mnt, fstype, src)
    except OSError:
        pass
    return best


def block_device(path):
    """(major:minor, the whole disk's name, its read_ahead_kb) of the block
    device holding path, or None when it is on none (NFS, tmpfs, overlay:
    an anonymous device with no queue)."""
    st = os.stat(path)
    mm = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    sysdev = f"/sys/dev/block/{mm}"
    if not os.path.exists(sysdev):
        return None
    real = os.path.realpath(sysdev)
    disk = os.path.dirname(real) if os.path.exists(os.path.join(real, "partition")) else real
    try:
        with open(os.path.join(disk, "queue", "read_ahead_kb")) as f:
            ra = int(f.read())
    except (OSError, ValueError):
        return None
    return mm, os.path.basename(disk), ra


def where_lines(root, dev):
    mnt, fstype, src = mount_of(root)
    lines = [f"      path: \"{os.path.abspath(root)}\"",
             f"      mount: \"{mnt}\"", f"      fs: \"{fstype}\"", f"      source: \"{src}\""]
    if dev:
        lines += [f"      device: \"{dev[0]} ({dev[1]})\"", f"      read_ahead_kb: {dev[2]}"]
    else:
        lines.append("      device: \"none: not a block device (no read_ahead_kb to read)\"")
    return lines


def curve_lines(points, fitted, seq, line):
    worst = "unknown" if EVICTION["unknown"] else f"{EVICTION['worst']:.4g}"
    lines = ["      cold_method: \"sync, POSIX_FADV_DONTNEED before every pass\"",
             f"      worst_resident_fraction_after_eviction: {worst}",
             f"      passes_per_point: {len(points[0]['mb_s'])}",
             "      readers:"]
    for p in points:
        lines += [f"        - readers: {p['readers']}",
                  "          mb_s: [" + ", ".join(f"{x:.6g}" for x in p["mb_s"]) + "]",
                  "          items_s: [" + ", ".join(f"{x:.6g}" for x in p["items_s"]) + "]",
                  f"          read_ms: {{p50: {p['p50_ms']:.6g}, p90: {p['p90_ms']:.6g}}}"]
    lines += ["      fit: \"read_mb_s: the plateau's mean MB/s (readers " +
              ", ".join(str(n) for n in fitted["plateau"]) + "); latency_ms: one reader's "
              f"{fitted['one_reader_ms']:.6g} ms a file less its transfer at read_mb_s\"",
              f"      one_reader_fit: {{latency_ms: {line[0] * 1e3:.6g}, "
              f"mb_s: {line[1] / 1e6:.6g}, how: \"{line[2]}\"}}",
              "      sequential:",
              f"        mb_s: {seq[0]:.6g}", f"        files: {seq[1]}",
              f"        mb: {seq[2] / 1e6:.6g}",
              f"        piece_kb: {SEQ_CHUNK >> 10}"]
    return lines


def measure(root, paths, log, readers=READERS, reps=REPS):
    """The probe's cold-reads step: the curve, the sequential stream and
    where they were read. Returns (the scenario keys, the lines of
    measured.method.storage)."""
    points = curve(paths, readers, reps, log)
    sizes = [os.path.getsize(p) for p in paths]
    fitted = fit(points, statistics.mean(sizes))
    line = one_reader_line(points, sizes)
    seq = sequential(paths)
    from stallsim.pipeline import warm

    warm(paths)  # the later steps time the items warm, as they were
    dev = block_device(root)
    log(f"cold reads: read_mb_s {fitted['read_mb_s']:.1f} (the plateau, readers "
        f"{', '.join(str(n) for n in fitted['plateau'])}), latency_ms {fitted['latency_ms']:.3f} "
        f"(one reader {fitted['one_reader_ms']:.3f} ms a file); one sequential stream "
        f"{seq[0]:.1f} MB/s over {seq[1]} files")
    if EVICTION["unknown"] or EVICTION["worst"] > 0.01:
        log("warning: the files' pages were not all evicted before a pass (" +
            ("mincore could not tell" if EVICTION["unknown"] else
             f"{EVICTION['worst']:.1%} still resident") + "): the cold reads may be served "
            "partly from memory, and read_mb_s is then too high")
    keys = {"server.storage.latency_ms": f"{fitted['latency_ms']:.6g}",
            "server.storage.read_mb_s": f"{fitted['read_mb_s']:.6g}"}
    if dev:
        keys["server.storage.read_ahead_kb"] = f"{dev[2]}"
    return keys, ["    storage:"] + where_lines(root, dev) + curve_lines(points, fitted, seq, line)


def files_under(root, most):
    """Up to `most` regular files under root, spread evenly over its sorted
    listing (the probe's rule for the items it times)."""
    paths = []
    for d, dirs, names in os.walk(root):
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            if os.path.isfile(p) and not os.path.islink(p):
                paths.append(p)
    step = max(1, len(paths) // most)
    return paths[::step][:most]


def profile_text(root, keys, lines):
    """A host profile of the storage alone: its keys under scenario.server.storage."""
    head = ["# stallsim host profile: the storage alone, written by stallsim.storageprobe",
            "profile_version: 1", "scenario:", "  server:", "    storage:"]
    body = [f"      {k.rsplit('.', 1)[1]}: {v}" for k, v in keys.items()]
    return "\n".join(head + body + ["measured:", "  method:"] + lines) + "\n"


def main(argv=None):
    """python3 -m stallsim.storageprobe --data DIR [--items N] [--out FILE]:
    the probe's cold-reads step alone, on any files (no PyTorch), as a host
    profile of the storage keys (stdout without --out)."""
    import argparse
    import sys

    from stallsim import atomic

    ap = argparse.ArgumentParser(description=main.__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="the folder whose files are read")
    ap.add_argument("--items", type=int, default=640, help="files to read (default 640)")
    ap.add_argument("--out", default="-", help="the profile to write (default stdout)")
    ap.add_argument("--readers", default=",".join(str(n) for n in READERS),
                    help="the reader counts, from 1 (default 1,2,4,8,16)")
    ap.add_argument("--reps", type=int, default=REPS, help=f"passes a count (default {REPS})")
    a = ap.parse_args(argv)
    try:
        readers = tuple(int(x) for x in a.readers.split(","))
    except ValueError:
        ap.error(f"--readers {a.readers}: not a list of whole numbers")
    if readers[0] != 1 or list(readers) != sorted(set(readers)) or a.reps < 1:
        ap.error("--readers must rise from 1 (1,2,4,...) and --reps be >= 1")
    if not os.path.isdir(a.data):
        ap.error(f"--data {a.data}: not a directory")
    if a.items < 1:
        ap.error("--items must be >= 1")
    try:
        atomic.target(a.out)
    except atomic.OutputError as e:
        ap.error(f"--out {e}")
    paths = files_under(a.data, a.items)
    if not paths:
        ap.error(f"--data {a.data}: no regular files")

    def log(msg):
        print(f"storageprobe: {msg}", file=sys.stderr, flush=True)

    keys, lines = measure(a.data, paths, log, readers, a.reps)
    atomic.write(a.out, profile_text(a.data, keys, lines))


if __name__ == "__main__":
    main()
