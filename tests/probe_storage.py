#!/usr/bin/env python3
"""probe_storage: the probe's storage fit (stallsim.storageprobe) held
against stallsim itself on a synthetic device, no disk and no PyTorch
(issue 55). The device is the issue's: one reader sees 1.45 ms + size / 88
MB/s a file, and all readers together are held to 40 MB/s (a throttled
volume). Its passes at 1, 2, 4, 8 and 16 readers, with a few percent of
spread between passes, go through the probe's fit; the keys it writes,
given to `stallsim run` with 1, 2, 4 and 8 PyTorch workers whose epoch is
all storage, must give the device's epoch within 5 %. The one-reader fit
the probe wrote before (latency + size / bandwidth over one reader's
files) is held to the same device: 4 workers more than 20 % fast.
usage: probe_storage.py SOURCE_DIR STALLSIM"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SRC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
BIN = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(SRC, "build", "sim", "stallsim")
sys.path.insert(0, os.path.join(SRC, "python"))
from stallsim import storageprobe  # noqa: E402

LAT_S, ONE_BW, AGG_BW = 1.45e-3, 88e6, 40e6  # the device
SIZE = 60e3  # bytes a file: one reader (28 MB/s) lies below the limit, two reach it
ITEMS = 4000
SPREAD = (0.98, 1.0, 1.03)  # the passes' spread, the best one lucky


def device_items_s(readers):
    """Files/s of the synthetic device with `readers` reading at once."""
    return min(readers / (LAT_S + SIZE / ONE_BW), AGG_BW / SIZE)


def synthetic_curve(readers=storageprobe.READERS):
    """What storageprobe.curve would measure on the device."""
    points = []
    for n in readers:
        items_s = [device_items_s(n) * f for f in SPREAD]
        points.append(dict(readers=n, items_s=items_s, mb_s=[x * SIZE / 1e6 for x in items_s],
                           p50_ms=n / device_items_s(n) * 1e3, p90_ms=n / device_items_s(n) * 1e3))
    return points


SCENARIO = f"""epochs: 2
dataset: {{items: {ITEMS}, item_kb: {SIZE / 1e3:g}}}
server: {{gpus: 1, cpus: 32}}
prep: {{decode_ms_per_item: 0, decode_ms_per_mb: 0, augment_ms: 0, out_kb: 1}}
loader: {{kind: pytorch, cache: none, persistent_workers: true, collate_ms_per_item: 0,
          share_ms_per_item: 0, transfer_ms_per_item: 0, step_ms: 0, worker_start_ms: 0}}
jobs: [{{name: train, gpus: 1, batch_per_gpu: 16, gpu_items_per_s: 1e9}}]
"""


def predicted_epoch_s(scen, workers, read_mb_s, latency_ms):
    out = subprocess.run([BIN, "run", scen, "--format", "json",
                          "--set", f"loader.num_workers={workers}",
                          "--set", f"server.storage.read_mb_s={read_mb_s:.6g}",
                          "--set", f"server.storage.latency_ms={latency_ms:.6g}"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["variants"][0]["jobs"][0]["epochs"][-1]["sim"]["epoch_s"]


class ConcurrentReaders(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.scen = os.path.join(cls.tmp.name, "storage.yaml")
        with open(cls.scen, "w") as f:
            f.write(SCENARIO)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_fit_is_the_plateau_and_one_readers_time(self):
        got = storageprobe.fit(synthetic_curve(), SIZE)
        self.assertAlmostEqual(got["read_mb_s"], AGG_BW / 1e6, delta=0.5)
        self.assertEqual(got["plateau"], [2, 4, 8, 16])
        one = (LAT_S + SIZE / ONE_BW) * 1e3
        self.assertAlmostEqual(got["latency_ms"], one - SIZE / AGG_BW * 1e3, delta=0.02)

    def test_the_written_keys_predict_every_reader_count(self):
        got = storageprobe.fit(synthetic_curve(), SIZE)
        for workers in (1, 2, 4, 8):
            true_s = ITEMS / device_items_s(workers)
            pred = predicted_epoch_s(self.scen, workers, got["read_mb_s"], got["latency_ms"])
            self.assertLess(abs(pred / true_s - 1), 0.05, (workers, pred, true_s))

    def test_one_readers_fit_is_the_gap(self):
        # What the probe wrote before: the line over one reader's files.
        pred = predicted_epoch_s(self.scen, 4, ONE_BW / 1e6, LAT_S * 1e3)
        self.assertLess(pred / (ITEMS / device_items_s(4)), 0.8)

    def test_a_lucky_pass_does_not_set_the_rate(self):
        pts = synthetic_curve()
        pts[2]["mb_s"][2] *= 1.5  # one pass at 4 readers 50 % fast
        got = storageprobe.fit(pts, SIZE)
        self.assertLess(got["read_mb_s"], AGG_BW / 1e6 * 1.05)

    def test_the_curve_starts_at_one_reader(self):
        with self.assertRaises(ValueError):
            storageprobe.fit(synthetic_curve((2, 4)), SIZE)


class OneReaderLine(unittest.TestCase):
    """The old fit, kept beside the curve: its line where the time grows
    with size, else the plain mean rate (never a bandwidth of 0)."""

    def test_line(self):
        sizes = [1e5, 2e5, 4e5]
        pts = [dict(readers=1, secs=[0.0002 + x / 500e6 for x in sizes] * 2)]
        lat, bw, how = storageprobe.one_reader_line(pts, sizes)
        self.assertAlmostEqual(lat, 0.0002, places=9)
        self.assertAlmostEqual(bw / 500e6, 1, places=6)

    def test_flat_reads_give_the_mean_rate(self):
        sizes = [1e5, 2e5, 3e5]
        pts = [dict(readers=1, secs=[0.0021, 0.0020, 0.0019])]
        lat, bw, how = storageprobe.one_reader_line(pts, sizes)
        self.assertEqual(lat, 0.0)
        self.assertAlmostEqual(bw, 6e5 / 0.006, places=3)
        self.assertIn("plain mean rate", how)


class RealFiles(unittest.TestCase):
    """storageprobe.curve and sequential on a few real files: they read
    every byte, once a pass, whatever the readers."""

    def test_every_byte_once(self):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i in range(24):
                p = os.path.join(d, f"f{i}")
                with open(p, "wb") as f:
                    f.write(os.urandom(1000 + 997 * i))
                paths.append(p)
            total = sum(os.path.getsize(p) for p in paths)
            for n in (1, 4):
                el, secs, got = storageprobe.cold_pass(paths, n)
                self.assertEqual(got, total)
                self.assertGreater(el, 0)
                self.assertTrue(all(s > 0 for s in secs))
            mb_s, files, got = storageprobe.sequential(paths)
            self.assertEqual((files, got), (24, total))


if __name__ == "__main__":
    if not os.access(BIN, os.X_OK):
        print(f"probe_storage: skipped: no stallsim at {BIN}")
        sys.exit(77)
    unittest.main()
