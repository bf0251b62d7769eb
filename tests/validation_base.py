#!/usr/bin/env python3
"""validation_base: the validation package's protocol (validation/base.py)
on a toy harness (tests/validation_toy.py) that needs no PyTorch, root or
idle host: rows in their own processes, the targets and exit status, skips
(77) with their reasons, the result page, the busy-host rule; and
`python3 -m validation --suite`'s usage errors and budget (nothing run).
usage: validation_base.py SOURCE_DIR"""
import os
import subprocess
import sys
import tempfile
import unittest

SRC = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
TESTS = os.path.join(SRC, "tests")
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, TESTS]))


def read(path):
    with open(path) as f:
        return f.read()


def toy(*args):
    return subprocess.run([sys.executable, "-m", "validation_toy", *args], capture_output=True,
                          text=True, env=ENV, cwd=TESTS)


def suite(*args, env=None):
    return subprocess.run([sys.executable, "-m", "validation", "--suite", *args],
                          capture_output=True, text=True, env=dict(ENV, **(env or {})), cwd=SRC)


class Harness(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.page = os.path.join(self.tmp, "toy.md")

    def test_rows_isolated_targets_page(self):
        p = toy("--page", self.page, "--out", os.path.join(self.tmp, "t.md"))
        # errors 0, -50 %, -66.7 %: median 50 % <= 0.5, worst 66.7 % <= 2.
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("| 2 | -50.0% |", p.stdout)
        pids = {line.split("|")[3].strip() for line in p.stdout.splitlines() if line.startswith("| 1 ")
                or line.startswith("| 2 ") or line.startswith("| 3 ")}
        self.assertEqual(len(pids), 3, "each row in its own process")
        self.assertNotIn(str(os.getpid()), pids)
        page = read(self.page)
        for want in ("# A toy harness", "- Command: `python3 -m validation.toy --page",
                     "- Targets: median <= 50% (met); worst <= 200% (met)", "- Date: ",
                     "- Host: ", "- Commit: ", "| 3 | -66.7% |"):
            self.assertIn(want, page)
        self.assertEqual(read(os.path.join(self.tmp, "t.md")), p.stdout.rstrip("\n") + "\n")
        self.assertIn("validate_toy: targets (median <= 50%, worst <= 200%) met", p.stderr)

    def test_quick_writes_no_page_unless_asked(self):
        p = toy("--quick")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("median <= 90%", p.stderr)
        self.assertFalse(os.path.exists(os.path.join(SRC, "docs", "validation", "toy.md")))

    def test_target_missed(self):
        p = toy("--page", "none", "--seed", "1", "--data", self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = subprocess.run([sys.executable, "-c", "import validation_toy as t; "
                            "t.Toy.targets = [t.Target('median', 'med', 0.1)]; t.Toy.main()",
                            "--page", "none"], capture_output=True, text=True, env=ENV, cwd=TESTS)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("NOT met", p.stderr)

    def test_skips_say_why(self):
        p = toy("--needs", "no_such_module_here", "--page", self.page)
        self.assertEqual(p.returncode, 77)
        self.assertIn("validate_toy: skipped: no_such_module_here is missing", p.stderr)
        p = toy("--why-not", "needs root")
        self.assertEqual(p.returncode, 77)
        self.assertIn("validate_toy: skipped: needs root", p.stderr)
        self.assertFalse(os.path.exists(self.page), "a skip writes no page")

    def test_busy_rule(self):
        sys.path.insert(0, SRC)
        from validation import base

        f = os.path.join(self.tmp, "loadavg")
        with open(f, "w") as fh:
            fh.write(f"{(os.cpu_count() or 1) + 0.5} 1.0 1.0 1/100 1\n")
        os.environ["VALIDATION_LOADAVG"] = f
        try:
            self.assertTrue(base.busy())
            self.assertFalse(base.busy(0.1))
        finally:
            del os.environ["VALIDATION_LOADAVG"]


class Suite(unittest.TestCase):
    def fake_build(self):
        b = tempfile.mkdtemp()
        os.makedirs(os.path.join(b, "sim"))
        open(os.path.join(b, "CTestTestfile.cmake"), "w").close()
        exe = os.path.join(b, "sim", "stallsim")
        with open(exe, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(exe, 0o755)
        return b

    def test_usage(self):
        self.assertEqual(suite("--build", "/nonexistent").returncode, 2)
        self.assertEqual(suite("--build", self.fake_build(), "--wait", "x").returncode, 2)
        self.assertEqual(suite("--frobnicate").returncode, 2)
        p = suite("--help")
        self.assertEqual(p.returncode, 0)
        self.assertIn("--budget", p.stdout)

    def test_past_the_budget_is_nothing_measured(self):
        p = suite("--build", self.fake_build(), "--budget", "0")
        self.assertEqual(p.returncode, 77, p.stdout + p.stderr)
        self.assertIn("torch_quick              not run: past the budget", p.stdout)
        self.assertIn("NOTHING MEASURED", p.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=1)
