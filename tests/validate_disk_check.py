#!/usr/bin/env python3
"""validate_disk_check: validation/disk.py's own logic, without root or
a disk: a block-request count of 0 (the disk's reads accounted elsewhere, as
on device-mapper) skips with the reason before anything is measured; it
divided by zero (issue 31); the probe rows read back the profile that
stallsim.storageprobe writes (issue 55). usage: validate_disk_check.py
SOURCE_DIR"""
import contextlib
import io
import os
import sys
import tempfile
import unittest
from unittest import mock

SRC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, SRC)
from validation import disk as vd  # noqa: E402


class NoBlockRequests(unittest.TestCase):
    def run_main(self, per_file, files):
        def no_measuring(*args, **kwargs):
            raise AssertionError("measured although the count of block requests was 0")

        err = io.StringIO()
        with tempfile.TemporaryDirectory() as tmp, \
                mock.patch.object(sys, "argv", ["validation/disk.py", "--data", tmp, "--quick"]), \
                mock.patch.object(vd.os, "geteuid", return_value=0), \
                mock.patch.object(vd, "controller", return_value=("v2", tmp)), \
                mock.patch.object(vd, "disk_of", return_value="254:0"), \
                mock.patch.object(vd.fx, "generate"), \
                mock.patch.object(vd.fx, "jpegs", return_value=files), \
                mock.patch.object(vd.os.path, "getsize", return_value=115000), \
                mock.patch.object(vd.subprocess, "run"), \
                mock.patch.object(vd, "bios_per_file", return_value=per_file), \
                mock.patch.object(vd, "measured_run", side_effect=no_measuring), \
                mock.patch.object(vd, "throttled", side_effect=no_measuring), \
                contextlib.redirect_stderr(err):
            with self.assertRaises(SystemExit) as cm:
                vd.Disk.main()
        return cm.exception.code, err.getvalue()

    def test_zero_requests_skip_with_the_reason(self):
        code, err = self.run_main(0.0, ["/x/a.jpg", "/x/b.jpg"])
        self.assertEqual(code, 77, err)
        self.assertIn("validate_disk: skipped: a cold read of 2 files made no read requests", err)
        self.assertIn("254:0", err)

    def test_no_files_is_an_error_not_a_division(self):
        code, err = self.run_main(1.0, [])
        self.assertIsInstance(code, str)
        self.assertIn("no JPEGs under", code)


class ProbeProfile(unittest.TestCase):
    """The probe rows read the profile stallsim.storageprobe writes: its
    keys, its curve's medians and one reader's fit, from the writer's own
    text (storageprobe.profile_text), so the two cannot drift apart."""

    def test_profile_round_trip(self):
        from stallsim import storageprobe as sp

        points = [dict(readers=n, mb_s=[38.0, 40.0, 41.0], items_s=[330.0, 347.0, 356.0],
                       p50_ms=2.9 * n, p90_ms=3.1 * n) for n in sp.READERS]
        fitted = sp.fit(points, 115e3)
        lines = ["    storage:"] + sp.where_lines("/", None) + sp.curve_lines(
            points, fitted, (39.5, 3, 12e6), (1.45e-3, 88e6, "fit"))
        keys = {"server.storage.latency_ms": f"{fitted['latency_ms']:.6g}",
                "server.storage.read_mb_s": f"{fitted['read_mb_s']:.6g}"}
        with tempfile.TemporaryDirectory() as tmp:
            prof = os.path.join(tmp, "p.yaml")
            with open(prof, "w") as f:
                f.write(sp.profile_text("/", keys, lines))
            got = vd.storage_keys(prof)
            self.assertEqual(set(got), {"latency_ms", "read_mb_s"})
            self.assertAlmostEqual(got["read_mb_s"], 40.0)
            self.assertEqual(vd.probe_curve(prof), [(n, 40.0) for n in sp.READERS])
            self.assertEqual(vd.one_reader_fit(prof), (1.45, 88.0))

    def test_table_says_both_medians(self):
        text, med = vd.probe_text([("40 MB/s", {"read_mb_s": 40.0, "latency_ms": 0.1},
                                    [(1, 39.0), (2, 40.0)])],
                                  [("40 MB/s", 1, 1.0, 1.02, 0.02, 0.99, -0.01),
                                   ("40 MB/s", 4, 1.0, 1.04, 0.04, 0.6, -0.4)])
        self.assertAlmostEqual(med, 0.03)
        self.assertIn("Median |error| 3.0%; one reader's fit", text)
        self.assertIn("20.5%", text)
        self.assertIn("| 40 MB/s | 39.0 / 40.0 | 40 | 0.1 | nan |", text)


if __name__ == "__main__":
    unittest.main(verbosity=1)
