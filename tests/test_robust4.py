#!/usr/bin/env python3
"""Robustness round 4 (issue 58), the Python side: each test failed on
dba7216 (docs/robustness-classes.md says what was tried). Standard library only, no
PyTorch; nothing timed but bounds far from the expected figures.

    python3 tests/test_robust4.py SRCDIR
"""
import gc
import os
import stat
import subprocess
import sys
import tempfile
import tracemalloc
import unittest
import warnings

SRC = os.path.abspath(sys.argv[1])
del sys.argv[1:2]
sys.path.insert(0, os.path.join(SRC, "python"))

from stallsim import atomic, probe  # noqa: E402
from stallsim import watch as W  # noqa: E402


class Tmp(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stallsim-r4-")
        self.old = os.getcwd()
        os.chdir(self.tmp)
        W.reset()

    def tearDown(self):
        W.reset()
        os.chdir(self.old)
        subprocess.run(["rm", "-rf", self.tmp], check=False)


class ND1Links(Tmp):
    """ND1: a link at the output is written through, never replaced."""

    def _link(self):
        with open("real.yaml", "w") as f:
            f.write("keep me\n")
        os.chmod("real.yaml", 0o640)
        os.symlink("real.yaml", "link.yaml")

    def test_watch_writes_through_a_link(self):
        self._link()
        for _ in W.watch(range(50), out="link.yaml"):
            pass
        self.assertTrue(os.path.islink("link.yaml"))
        with open("real.yaml") as f:
            self.assertIn("measured_version: 1", f.read())
        self.assertEqual(stat.S_IMODE(os.stat("real.yaml").st_mode), 0o640)

    def test_probe_writes_through_a_link(self):
        self._link()
        probe.write_profile("link.yaml", "x: 1\n")
        self.assertTrue(os.path.islink("link.yaml"))
        with open("real.yaml") as f:
            self.assertEqual(f.read(), "x: 1\n")

    def test_new_file_mode_follows_umask(self):
        old = os.umask(0o022)
        try:
            probe.write_profile("new.yaml", "x: 1\n")
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(os.stat("new.yaml").st_mode), 0o644)

    def test_link_to_stdout_is_stdout(self):
        os.symlink("/proc/self/fd/1", "so")
        code = ("import sys; sys.path.insert(0, sys.argv[1]); from stallsim.watch import watch\n"
                "for b in watch(range(10), out='so'): pass")
        with open("f.txt", "w") as f:
            subprocess.run([sys.executable, "-c", code, os.path.join(SRC, "python")],
                           stdout=f, check=True)
        self.assertTrue(os.path.islink("so"))
        with open("f.txt") as f:
            self.assertIn("measured_version: 1", f.read())

    def test_device_and_dangling_links_refused_before_work(self):
        os.symlink("/dev/zero", "dn")
        os.symlink("nowhere/x.yaml", "dangling")
        for out in ("dn", "dangling"):
            with self.assertRaises(ValueError):
                W.watch(range(10), out=out)  # the call itself, before any batch
            self.assertTrue(os.path.islink(out))
        with self.assertRaises(atomic.OutputError):
            probe.write_profile("dn", "x: 1\n")


class NB3Early(Tmp):
    """NB3: a bad out fails when watch() or the probe starts; an empty loader is said."""

    def test_watch_refuses_a_folder_or_missing_folder_at_the_call(self):
        os.mkdir("somedir")
        for out in ("somedir", "nodir/m.yaml"):
            with self.assertRaises(ValueError):
                W.watch(range(3), out=out)

    def test_probe_refuses_a_bad_out_before_torch(self):
        os.mkdir("somedir")
        r = subprocess.run([sys.executable, "-m", "stallsim.probe", "--data", ".", "--out", "somedir"],
                           env=dict(os.environ, PYTHONPATH=os.path.join(SRC, "python")),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--out somedir", r.stderr)

    def test_empty_loader_warns(self):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            for _ in W.watch([], out="e.yaml"):
                pass
        self.assertTrue(any("no batch" in str(w.message) for w in got))


class NC3Memory(Tmp):
    """NC3: watch keeps no per-iteration sample once an epoch is closed."""

    def test_memory_does_not_grow_with_epochs(self):
        tracemalloc.start()
        try:
            for _ in range(3):
                for _ in W.watch(range(200_000), out=None):
                    pass
            gc.collect()
            held = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        # dba7216 held 40 B an iteration: 24 MB here.
        self.assertLess(held, 2_000_000)


class NS4OneShot(Tmp):
    """NS4: differential on a one-shot iterator is refused, not recorded short."""

    def test_generator_refused(self):
        def g():
            for i in range(100):
                yield [i] * 8

        with self.assertRaises(ValueError):
            W.watch(g(), out="dg.yaml", differential=10)
        self.assertFalse(os.path.exists("dg.yaml"))

    def test_reiterable_still_runs(self):
        n = sum(1 for _ in W.watch([[i] * 8 for i in range(40)], out="ok.yaml", differential=5))
        self.assertEqual(n, 55)
        with open("ok.yaml") as f:
            self.assertIn("iterations: 40,", f.read())


if __name__ == "__main__":
    unittest.main(verbosity=1)
