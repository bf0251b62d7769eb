#!/usr/bin/env python3
"""probe_fits: the PyTorch probe's fits (stallsim.probe,
python/stallsim/probe.py), which need no PyTorch: the cost line never goes
negative, a fit that fails falls back to the plain mean and says so, and
cold reads whose time did not grow with size give the plain mean rate, not
1 TB/s (issue 33, S7); the threads kind's GIL shares (stallsim.gilshare)
from the stages' wall ratios on 1 and p threads.
usage: probe_fits.py SOURCE_DIR"""
import os
import sys
import unittest

SRC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, os.path.join(SRC, "python"))
from stallsim import gilshare, probe  # noqa: E402


class GilShares(unittest.TestCase):
    def test_resolved_ratio_is_the_share(self):
        # p = 4: a ratio of 0.8 is the GIL's (above 1.15 / 4), 0.25 the cores'.
        share, resolved = gilshare.reconcile({"decode": 2.0, "transform": 1.0},
                                             {"decode": 0.25, "transform": 0.8}, 1.0, 4)
        self.assertEqual(resolved, ["transform"])
        self.assertAlmostEqual(share["transform"], 0.8)
        # The item held 1.0 s: 0.2 s is left for the decode's 2 s of CPU.
        self.assertAlmostEqual(share["decode"], 0.1)

    def test_unresolved_stages_never_pass_one_over_p(self):
        share, resolved = gilshare.reconcile({"read": 0.1, "decode": 2.0, "transform": 2.0},
                                             {"read": 0.5, "decode": 0.52, "transform": 0.5},
                                             3.0, 2)
        self.assertEqual(resolved, [])
        for k in share:
            self.assertLessEqual(share[k], 0.5)
        # Their held seconds never exceed what the whole item holds.
        self.assertLessEqual(0.1 * share["read"] + 2 * share["decode"] + 2 * share["transform"],
                             3.0 + 1e-12)

    def test_a_serial_stage_holds_it_all(self):
        share, _ = gilshare.reconcile({"transform": 1.0}, {"transform": 1.3}, 1.0, 2)
        self.assertEqual(share["transform"], 1.0)


class FitCost(unittest.TestCase):
    def test_physical_line_kept(self):
        xs = [0.05, 0.1, 0.2, 0.3]
        a, b, how = probe.fit_cost(xs, [0.25 + 3.5 * x for x in xs])
        self.assertAlmostEqual(a, 0.25, places=12)
        self.assertAlmostEqual(b, 3.5, places=12)
        self.assertEqual(how, "fit")

    def test_downward_slope_gives_the_mean(self):
        xs = [0.02, 0.04, 0.06, 0.08, 0.10, 0.12]
        ys = [1.30, 1.22, 1.21, 1.10, 1.05, 0.98]
        a, b, how = probe.fit_cost(xs, ys)
        self.assertEqual(b, 0.0)
        self.assertAlmostEqual(a, sum(ys) / len(ys), places=12)
        self.assertTrue(how.startswith("plain mean"), how)

    def test_negative_intercept_goes_through_0(self):
        xs = [0.02, 0.04, 0.06, 0.08, 0.10, 0.12]
        a, b, how = probe.fit_cost(xs, [10 * x - 0.05 for x in xs])
        self.assertEqual(a, 0.0)
        self.assertTrue(9 < b < 10, b)
        self.assertTrue(how.startswith("line through 0"), how)

    def test_one_size_is_the_mean(self):
        a, b, how = probe.fit_cost([5, 5, 5], [1.0, 2.0, 3.0])
        self.assertEqual((a, b), (2.0, 0.0))
        self.assertIn("no line", how)
        self.assertRaises(ValueError, probe.fit_cost, [], [])

    def test_never_negative(self):
        # every sign of slope and intercept, and noise about them
        import random
        rng = random.Random(3)
        for _ in range(500):
            xs = [rng.uniform(0.01, 1) for _ in range(rng.randint(1, 12))]
            sa, sb = rng.uniform(-1, 1), rng.uniform(-5, 5)
            ys = [max(0.0, sa + sb * x + rng.gauss(0, 0.2)) for x in xs]
            a, b, _ = probe.fit_cost(xs, ys)
            self.assertTrue(a >= 0 and b >= 0, (xs, ys, a, b))


class StorageFit(unittest.TestCase):
    def test_line(self):
        sizes = [1e5, 2e5, 4e5, 8e5]
        lat, bw, how = probe.storage_fit(sizes, [0.0002 + s / 500e6 for s in sizes])
        self.assertAlmostEqual(lat, 0.0002, places=9)
        self.assertAlmostEqual(bw / 500e6, 1, places=6)
        self.assertEqual(how, "fit")

    def test_flat_reads_give_the_mean_rate_not_1_tb_s(self):
        # reads that take the same time whatever their size (noise on a fast
        # device): the probe wrote read_mb_s 1e6 (1 TB/s) here
        sizes = [1e5, 2e5, 3e5, 4e5]
        secs = [0.0021, 0.0020, 0.0019, 0.0018]
        lat, bw, how = probe.storage_fit(sizes, secs)
        self.assertEqual(lat, 0.0)
        self.assertAlmostEqual(bw, sum(sizes) / sum(secs), places=6)
        self.assertLess(bw, 1e9)
        self.assertIn("plain mean rate", how)

    def test_one_size(self):
        lat, bw, how = probe.storage_fit([1e5, 1e5], [0.001, 0.003])
        self.assertEqual(lat, 0.0)
        self.assertAlmostEqual(bw, 2e5 / 0.004, places=3)
        self.assertIn("no line", how)


if __name__ == "__main__":
    unittest.main(verbosity=1)
