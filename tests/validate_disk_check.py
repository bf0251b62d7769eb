#!/usr/bin/env python3
"""validate_disk_check: validation/disk.py's own logic, without root or
a disk: a block-request count of 0 (the disk's reads accounted elsewhere, as
on device-mapper) skips with the reason before anything is measured; it
divided by zero (issue 31). usage: validate_disk_check.py SOURCE_DIR"""
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


if __name__ == "__main__":
    unittest.main(verbosity=1)
