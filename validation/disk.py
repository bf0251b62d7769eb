"""Validates the storage model against a real disk throttled by a block-I/O
cgroup (issue 16; docs/validation/disk.md).

  python3 -m validation.disk [--bin build/sim/stallsim] [--data DIR]
      [--items 600] [--quick] [--page FILE.md]

For each row a blkio cgroup (v1 blkio.throttle.read_bps_device or
read_iops_device here; v2 io.max elsewhere) is created on the disk that
holds DIR, `stallsim measure --cache page-cold-epoch` runs inside it (every
read goes to the throttled device; --io-threads reads in flight), and the
cgroup is removed. `stallsim run` predicts the same scenario with the
throttle as the device's limit: server.storage.read_mb_s for a bandwidth
cap, server.storage.read_iops for a request cap, converted from the block
layer's requests to file reads by the bios per file read (a
read of a 113 KB file is one or two bios; counted over one cold pass in an
unthrottled cgroup: `measure` reads more than its epochs, for its
in-memory pass). Prep costs come from
`stallsim calibrate --quick --data DIR`.

A second table predicts with server.storage.kind: ssd from the curve that
`stallsim calibrate --quick --data DIR` measured inside the same throttled
cgroup (its profile as the scenario's host; the cold throughput at queue
depths 1, 4, 16 and 32 as latency against the reads in flight), at 1, 4 and
16 reads in flight, beside the fixed kind from that profile's one fitted
point. A third (issue 55) runs the PyTorch probe's storage step
(`python3 -m stallsim.storageprobe`: the files cold with 1, 2, 4, 8 and 16
readers at once) inside a 40 MB/s throttle and predicts 1, 2, 4 and 8
reads in flight from the fixed kind's keys it writes (the plateau's rate,
one reader's latency), where one reader's fit had 4 readers 21 % fast.
Target: median |error| <= 10 % in epoch time, each table. Exit 0
met, 1 not met, 77 when this machine cannot (not root, no blkio
controller)."""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from stallsim import storageprobe
from stallsim.pipeline import evict
from validation.base import Harness, Skip, Target
from validation.fixtures import cgroup
from validation.fixtures import data as fx
from validation.fixtures.cgroup import remove_cgroup
from validation.predict import epoch_metrics


def disk_of(path):
    """major:minor of the whole disk holding path (throttles apply to disks)."""
    st = os.stat(path)
    mm = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    sysdev = f"/sys/dev/block/{mm}"
    if not os.path.exists(sysdev):
        return None
    if os.path.exists(os.path.join(sysdev, "partition")):
        with open(os.path.join(os.path.realpath(sysdev), "..", "dev")) as f:
            mm = f.read().strip()
    return mm


def controller():
    """A block I/O controller whose reads can be throttled."""
    return cgroup.io_cgroup("blkio.throttle.read_bps_device", "cgroup.controllers")


def bios_per_file(ver, root, dev, files):
    """Block requests one whole-file read makes on this disk (readahead and
    the device's request size decide it), counted in an unthrottled cgroup
    over one cold pass."""
    cg = os.path.join(root, f"stallsim-disk-count-{os.getpid()}")
    os.mkdir(cg)
    try:
        evict(files)
        pid = os.fork()
        if pid == 0:
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
            for p in files:
                with open(p, "rb") as f:
                    f.read()
            os._exit(0)
        os.waitpid(pid, 0)
        return cgroup.device_reads(cg, ver, dev) / len(files)
    finally:
        remove_cgroup(cg)


def throttled(dev, ver, root, limit, value, cmd):
    """Runs the shell command cmd in a cgroup of its own whose reads from
    dev are throttled to value bytes/s (bps) or requests/s (iops)."""
    cg = os.path.join(root, f"stallsim-disk-{os.getpid()}")
    os.mkdir(cg)
    try:
        if ver == "v1":
            name = "blkio.throttle.read_bps_device" if limit == "bps" else "blkio.throttle.read_iops_device"
            with open(os.path.join(cg, name), "w") as f:
                f.write(f"{dev} {int(value)}")
        else:
            with open(os.path.join(cg, "io.max"), "w") as f:
                f.write(f"{dev} {'rbps' if limit == 'bps' else 'riops'}={int(value)}")
        p = subprocess.run(["sh", "-c", f"echo $$ > {cg}/cgroup.procs && exec {cmd}"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit(f"validate_disk: {cmd.split()[1]} failed: {p.stderr}")
        return p.stdout
    finally:
        remove_cgroup(cg)


def measured_run(a, scen, dev, ver, root, limit, value, threads):
    return json.loads(throttled(
        dev, ver, root, limit, value,
        f"{a.bin} measure {scen} --data {a.data} --cache page-cold-epoch --format json "
        f"--epochs 2 --io-threads {threads}"))


def storage_keys(profile):
    """The server.storage keys of a host profile (flat, as calibrate writes them)."""
    keys, inside = {}, False
    with open(profile) as f:
        for line in f:
            if line.strip() == "storage:" and line.startswith("    storage:"):
                inside = True
            elif inside and line.startswith("      ") and ":" in line:
                k, v = line.split(":", 1)
                keys[k.strip()] = float(v)
            elif inside:
                break
    return keys


def cold_items_s(profile):
    """The cold items/s medians at queue depths 1, 4, 16, 32 of a host profile."""
    with open(profile) as f:
        cold = f.read().split("\n    cold:\n", 1)[1].split("\n  decode:", 1)[0]
    return [float(line.split("median:")[1].split(",")[0]) for line in cold.splitlines()
            if "items_s:" in line]


def predict(a, scen, sets):
    out = subprocess.run([a.bin, "run", scen, "--format", "json"] +
                         [x for kv in sets for x in ("--set", kv)],
                         check=True, capture_output=True, text=True).stdout
    return statistics.mean(epochs(json.loads(out), "sim"))


def epochs(out, source):
    """Per-epoch seconds (validation.predict.epoch_metrics)."""
    return [e["epoch_s"] for e in epoch_metrics(out, source)]


def write_scenario(scen, host, sizes):
    mean = statistics.mean(sizes)
    cv = statistics.pstdev(sizes) / mean
    with open(scen, "w") as f:
        f.write(f"""# written by validation.disk
host: {host}
epochs: 2
dataset: {{items: {len(sizes)}, item_kb: {mean / 1e3:.6g}, item_kb_cv: {cv:.4g}}}
server: {{gpus: 1, cpus: 2}}
loader: {{cache: none}}
jobs: [{{name: train, gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.001}}]
""")


def fixed_text(table, sizes, dev, ver):
    mean = statistics.mean(sizes)
    lines = [f"{len(sizes)} files of {mean / 1e3:.1f} KB mean, device {dev}, cgroup {ver}; "
             "measure --cache page-cold-epoch, 2 epochs (mean).", "",
             "| throttle | reads in flight | bios per file | measured s/epoch | predicted | error |",
             "|---|---:|---:|---:|---:|---:|"]
    for limit, value, threads, per_file, m, p, err in table:
        what = f"{value / 1e6:g} MB/s" if limit == "bps" else f"{value:g} IOPS"
        lines.append(f"| {what} | {threads} | {per_file:.2f} | {m:.2f} | {p:.2f} | {err:+.1%} |")
    med = statistics.median(abs(t[6]) for t in table)
    lines += ["", f"Median |error| {med:.1%}."]
    return "\n".join(lines) + "\n", med


def ssd_text(curves, ssd):
    med_ssd = statistics.median(abs(t[4]) for t in ssd)
    med_fix = statistics.median(abs(t[6]) for t in ssd)
    lines = ["`stallsim calibrate --quick --data DIR` inside the throttled cgroup: its cold "
             "items/s at 1, 4, 16, 32 reads in flight (200 files a pass), the ssd kind's curve "
             "from them (peak_mb_s the mean of the plateau around the best depth; per depth the "
             "latency with which that device moves the items/s measured there) and the fixed "
             "kind's fitted point.", "",
             "| throttle | cold items/s | latency_qd1_ms | qd4 | qd16 | qd32 | peak_mb_s | "
             "fixed: read_mb_s | latency_ms |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for what, k, rates in curves:
        lines.append(f"| {what} | {' / '.join(f'{r:.0f}' for r in rates)} | " + " | ".join(
            f"{k.get(n, float('nan')):.3g}" for n in
            ("latency_qd1_ms", "latency_qd4_ms", "latency_qd16_ms", "latency_qd32_ms",
             "peak_mb_s", "read_mb_s", "latency_ms")) + " |")
    lines += ["", "Predicted from that profile (`--set host=PROFILE`, queue_depth = the reads in "
              "flight), against measure in the same cgroup:", "",
              "| throttle | reads in flight | measured s/epoch | ssd | error | fixed (fit) | "
              "error |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for what, threads, m, p_ssd, e_ssd, p_fix, e_fix in ssd:
        lines.append(f"| {what} | {threads} | {m:.2f} | {p_ssd:.2f} | {e_ssd:+.1%} | "
                     f"{p_fix:.2f} | {e_fix:+.1%} |")
    lines += ["", f"Median |error| ssd {med_ssd:.1%}; fixed from the same profile {med_fix:.1%}."]
    return "\n".join(lines) + "\n", med_ssd


def probe_curve(profile):
    """(readers, median MB/s) of each point of a storageprobe profile's curve."""
    out, n = [], None
    with open(profile) as f:
        for line in f:
            t = line.strip()
            if t.startswith("- readers:"):
                n = int(t.split(":")[1])
            elif t.startswith("mb_s: [") and n is not None:
                out.append((n, statistics.median(float(x) for x in t[7:-1].split(","))))
                n = None
    return out


def one_reader_fit(profile):
    """(latency_ms, MB/s) of a storageprobe profile's one_reader_fit line."""
    with open(profile) as f:
        line = next(x for x in f if x.strip().startswith("one_reader_fit:"))
    lat = float(line.split("latency_ms:")[1].split(",")[0])
    return lat, float(line.split("mb_s:")[1].split(",")[0])


def probe_text(curves, table):
    med = statistics.median(abs(t[4]) for t in table)
    counts = " / ".join(str(n) for n, _ in curves[0][2])
    lines = ["`python3 -m stallsim.storageprobe --data DIR` (the PyTorch probe's cold-reads "
             f"step) inside the throttled cgroup: the files cold with {counts} readers at once; "
             "read_mb_s the plateau's mean, latency_ms one reader's time per file less its "
             "transfer there.", "",
             f"| throttle | median MB/s at {counts} readers | read_mb_s | latency_ms | "
             "read_ahead_kb |", "|---|---|---:|---:|---:|"]
    for what, k, pts in curves:
        lines.append(f"| {what} | {' / '.join(f'{r:.1f}' for _, r in pts)} | "
                     f"{k.get('read_mb_s', float('nan')):.3g} | "
                     f"{k.get('latency_ms', float('nan')):.3g} | "
                     f"{k.get('read_ahead_kb', float('nan')):g} |")
    lines += ["", "Predicted from those keys (`--set server.storage.read_mb_s=... latency_ms=...`, "
              "queue_depth = the reads in flight), against measure in the same cgroup:", "",
              "| throttle | reads in flight | measured s/epoch | predicted | error | "
              "one reader's fit | error |",
              "|---|---:|---:|---:|---:|---:|---:|"]
    for what, threads, m, p, err, p1, err1 in table:
        lines.append(f"| {what} | {threads} | {m:.2f} | {p:.2f} | {err:+.1%} | {p1:.2f} | "
                     f"{err1:+.1%} |")
    med1 = statistics.median(abs(t[6]) for t in table)
    lines += ["", f"Median |error| {med:.1%}; one reader's fit (latency + size / bandwidth over "
              f"one reader's files, what the probe wrote before issue 55) {med1:.1%}."]
    return "\n".join(lines) + "\n", med


class Disk(Harness):
    name = "disk"
    title = "A throttled disk (server.storage.*) against the real one"
    data = "/var/tmp/stallsim-disk/data"
    items = 600
    targets = [Target("median, fixed kind", "med", 0.10),
               Target("median, ssd kind", "med_ssd", 0.10),
               Target("median, the probe's concurrent readers", "med_probe", 0.10)]

    def requires(self, a):
        if os.geteuid() != 0:
            return "needs root to create a block-I/O cgroup"
        self.ctl = controller()
        return None if self.ctl else "no blkio (v1) or io (v2) cgroup controller"

    def setup(self, a):
        self.ver, self.root = self.ctl
        fx.generate(a.bin, a.data, a.items)
        self.dev = disk_of(a.data)
        if not self.dev:
            raise Skip(f"{a.data} is not on a block device")
        self.tmp = tempfile.mkdtemp(prefix="stallsim-disk-")
        self.scen = os.path.join(self.tmp, "disk.yaml")
        host = os.path.join(self.tmp, "host.yaml")
        subprocess.run([a.bin, "calibrate", "--quick", "--data", a.data, "--out", host], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        files = fx.jpegs(a.data)
        if not files:
            raise SystemExit(f"validate_disk: no JPEGs under {a.data} (generating them failed?)")
        self.sizes = [os.path.getsize(p) for p in files]
        self.per_file = bios_per_file(self.ver, self.root, self.dev, files)
        if self.per_file <= 0:
            # The IOPS rows divide by it; and a throttle on a device that counts
            # none of these reads (device-mapper, a network or virtual disk
            # whose requests the block layer accounts elsewhere) limits nothing.
            raise Skip(f"a cold read of {len(files)} files made no read requests that the cgroup "
                       f"counted on {self.dev}: a throttle there would not slow them")
        print(f"validate_disk: a whole-file read is {self.per_file:.3f} block requests on "
              f"{self.dev}", file=sys.stderr)
        write_scenario(self.scen, host, self.sizes)

    def teardown(self, a):
        if getattr(self, "tmp", None):
            shutil.rmtree(self.tmp, True)

    def fixed_rows(self, a):
        rows = [("bps", 10e6, 1), ("bps", 20e6, 4), ("bps", 40e6, 4), ("iops", 100, 1),
                ("iops", 200, 4), ("iops", 400, 4)]
        if a.quick:
            rows = [("bps", 20e6, 4), ("iops", 200, 4)]
        table = []
        for limit, value, threads in rows:
            out = measured_run(a, self.scen, self.dev, self.ver, self.root, limit, value, threads)
            meas = epochs(out, "measured")
            sets = [f"server.storage.queue_depth={threads}"]
            if limit == "bps":
                sets += [f"server.storage.read_mb_s={value / 1e6:g}"]
            else:
                sets += [f"server.storage.read_iops={value / self.per_file:.6g}"]
            m, p = statistics.mean(meas), predict(a, self.scen, sets)
            err = (p - m) / m
            table.append((limit, value, threads, self.per_file, m, p, err))
            print(f"{limit} {value:g}, {threads} threads ({self.per_file:.2f} bios per file): "
                  f"measured {m:.2f} s, predicted {p:.2f} s ({err:+.1%})", file=sys.stderr,
                  flush=True)
        return table

    def ssd_rows(self, a):
        """The ssd kind from the curve calibrate measures inside the throttle."""
        ssd_rows = [("bps", 20e6, (1, 4, 16)), ("iops", 200, (1, 4, 16))]
        if a.quick:
            ssd_rows = [("iops", 200, (4,))]
        curves, ssd = [], []
        for limit, value, flights in ssd_rows:
            what = f"{value / 1e6:g} MB/s" if limit == "bps" else f"{value:g} IOPS"
            prof = os.path.join(self.tmp, f"host-{limit}.yaml")
            throttled(self.dev, self.ver, self.root, limit, value,
                      f"{a.bin} calibrate --quick --data {a.data} --out {prof}")
            curves.append((what, storage_keys(prof), cold_items_s(prof)))
            for threads in flights:
                m = statistics.mean(epochs(measured_run(a, self.scen, self.dev, self.ver,
                                                        self.root, limit, value, threads),
                                           "measured"))
                sets = [f"host={prof}", f"server.storage.queue_depth={threads}"]
                p_ssd = predict(a, self.scen, sets + ["server.storage.kind=ssd"])
                p_fix = predict(a, self.scen, sets)
                e_ssd, e_fix = (p_ssd - m) / m, (p_fix - m) / m
                ssd.append((what, threads, m, p_ssd, e_ssd, p_fix, e_fix))
                print(f"ssd: {what}, {threads} reads in flight: measured {m:.2f} s, ssd "
                      f"{p_ssd:.2f} s ({e_ssd:+.1%}), fixed {p_fix:.2f} s ({e_fix:+.1%})",
                      file=sys.stderr, flush=True)
        return curves, ssd

    def probe_rows(self, a):
        """The probe's storage step inside the throttle, and measure's
        epochs at 1..8 reads in flight predicted from the keys it wrote."""
        rows, probe_args = [("bps", 40e6, (1, 2, 4, 8))], ""
        if a.quick:  # CI's budget: two reader counts, two passes each
            rows, probe_args = [("bps", 40e6, (1, 4))], " --readers 1,4 --reps 2"
        curves, table = [], []
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(storageprobe.__file__)))
        for limit, value, flights in rows:
            what = f"{value / 1e6:g} MB/s" if limit == "bps" else f"{value:g} IOPS"
            prof = os.path.join(self.tmp, f"probe-{limit}.yaml")
            throttled(self.dev, self.ver, self.root, limit, value,
                      f"env PYTHONPATH={pkg} {sys.executable} -m stallsim.storageprobe "
                      f"--data {a.data} --items {len(self.sizes)} --out {prof}{probe_args}")
            keys = storage_keys(prof)
            curves.append((what, keys, probe_curve(prof)))
            for threads in flights:
                m = statistics.mean(epochs(measured_run(a, self.scen, self.dev, self.ver,
                                                        self.root, limit, value, threads),
                                           "measured"))
                qd = [f"server.storage.queue_depth={threads}"]
                p = predict(a, self.scen, qd + [f"server.storage.{k}={keys[k]:.6g}" for k in
                                                ("read_mb_s", "latency_ms")])
                one = one_reader_fit(prof)
                p1 = predict(a, self.scen, qd + [f"server.storage.read_mb_s={one[1]:.6g}",
                                                 f"server.storage.latency_ms={one[0]:.6g}"])
                table.append((what, threads, m, p, (p - m) / m, p1, (p1 - m) / m))
                print(f"probe: {what}, {threads} reads in flight: measured {m:.2f} s, predicted "
                      f"{p:.2f} s ({(p - m) / m:+.1%}); one reader's fit {p1:.2f} s "
                      f"({(p1 - m) / m:+.1%})", file=sys.stderr, flush=True)
        return curves, table

    def run(self, a):
        self.setup(a)
        text, med = fixed_text(self.fixed_rows(a), self.sizes, self.dev, self.ver)
        text_ssd, med_ssd = ssd_text(*self.ssd_rows(a))
        text_probe, med_probe = probe_text(*self.probe_rows(a))
        return text + "\n### The ssd kind from calibrate's curve, inside the throttle\n\n" + \
            text_ssd + "\n### The probe's concurrent readers, inside the throttle\n\n" + \
            text_probe, dict(med=med, med_ssd=med_ssd, med_probe=med_probe)


if __name__ == "__main__":
    Disk.main()
