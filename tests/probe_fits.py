#!/usr/bin/env python3
"""probe_fits: the PyTorch probe's fits (stallsim.probe,
python/stallsim/probe.py), which need no PyTorch: the cost line never goes
negative, a fit that fails falls back to the plain mean and says so (the
cold reads' fit is tests/probe_storage.py's since issue 55); the threads
kind's GIL shares (stallsim.gilshare) from the stages' wall ratios on 1
and p threads; the repeats to a spread
bound (stallsim.stable) on scripted figures and a fake clock, and the
busy-host rule and wording being calibrate's own (sim/calibrate/stability.*).
usage: probe_fits.py SOURCE_DIR"""
import importlib.util
import os
import re
import sys
import unittest

SRC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, os.path.join(SRC, "python"))
from stallsim import gilshare, probe, stable, videoprobe  # noqa: E402


class VideoFit(unittest.TestCase):
    """stallsim.videoprobe's keys from its per-video medians (no PyAV)."""

    def test_per_megapixel_and_keyframe_excess(self):
        v = [dict(mpx=0.2304, other_ms=0.2304, key_ms=1.3824, convert_ms=0.4608, seek_ms=0.5,
                  delay=2),
             dict(mpx=0.9216, other_ms=1.8432, key_ms=1.0, convert_ms=0.9216, seek_ms=-0.2,
                  delay=0),
             dict(mpx=0.2304, other_ms=0.2304, key_ms=1.3824, convert_ms=0.4608, seek_ms=0.1,
                  delay=2.5)]
        k = {key: float(x) for key, x in videoprobe.fit(v).items()}
        self.assertEqual(k["prep.video_decode_ms_per_frame"], 0)
        self.assertAlmostEqual(k["prep.video_decode_ms_per_mpx"], (1 + 2 + 1) / 3, places=5)
        # a keyframe cheaper than another frame (the second) counts 0, not less
        self.assertAlmostEqual(k["prep.video_keyframe_ms_per_mpx"], (5 + 0 + 5) / 3, places=5)
        self.assertAlmostEqual(k["prep.video_transform_ms_per_mpx"], (2 + 1 + 2) / 3, places=5)
        self.assertAlmostEqual(k["prep.video_seek_ms"], 0.1, places=6)  # the median
        self.assertEqual(k["prep.video_decode_delay"], 2)  # the median, whole packets
        v[0]["seek_ms"] = v[2]["seek_ms"] = -0.3  # a median below 0 is noise: 0
        self.assertEqual(float(videoprobe.fit(v)["prep.video_seek_ms"]), 0)

    def test_profile_names_the_keys(self):
        text = videoprobe.profile_text({"prep.video_seek_ms": "0.5"}, ["    x: 1"])
        self.assertIn("scenario:\n  prep:\n    video_seek_ms: 0.5\nmeasured:", text)
        self.assertEqual(videoprobe.parse_size("224x160"), (224, 160))
        self.assertRaises(ValueError, videoprobe.parse_size, "0x10")


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


class WorkerCpu(unittest.TestCase):
    """worker_cpu_s: a process's CPU to the nanosecond from its live
    threads, /proc/PID/stat's ticks where an exited thread's CPU is missing
    from them."""

    @staticmethod
    def burn(s):
        import time

        t0 = time.thread_time()
        while time.thread_time() - t0 < s:
            pass

    def test_live_threads_to_the_nanosecond(self):
        import subprocess
        import time

        child = subprocess.Popen([sys.executable, "-c", "import time\nt=time.thread_time()\n"
                                  "while time.thread_time()-t<0.035: pass\nprint(1, flush=True)\n"
                                  "time.sleep(30)"], stdout=subprocess.PIPE, text=True)
        try:
            child.stdout.readline()
            time.sleep(0.05)
            fine, got = stable.tasks_cpu_s(child.pid), probe.worker_cpu_s(child.pid)
            self.assertEqual(got, fine)
            self.assertNotEqual(got * os.sysconf("SC_CLK_TCK") % 1, 0)  # not whole ticks
            self.assertLess(abs(got - probe.proc_cpu_s(child.pid)), 2 / os.sysconf("SC_CLK_TCK"))
        finally:
            child.kill()
            child.wait()

    def test_an_exited_threads_cpu_kept(self):
        import threading

        import time

        pid = os.getpid()
        before = len(os.listdir(f"/proc/{pid}/task"))
        t = threading.Thread(target=self.burn, args=(0.06,))
        t.start()
        t.join()
        # join() returns before the kernel has reaped the thread on a busy host
        for _ in range(200):
            if len(os.listdir(f"/proc/{pid}/task")) <= before:
                break
            time.sleep(0.01)
        coarse = probe.proc_cpu_s(pid)
        self.assertLess(stable.tasks_cpu_s(pid), coarse - 0.04)
        self.assertEqual(probe.worker_cpu_s(pid), probe.proc_cpu_s(pid))


HAVE_TORCH = importlib.util.find_spec("torch") is not None


@unittest.skipUnless(HAVE_TORCH, "PyTorch is missing: FdWait times PyTorch's descriptor fetches")
class FdWaitTimesFetches(unittest.TestCase):
    def test_fetches_counted_and_restored(self):
        import torch
        from torch.multiprocessing import reductions
        from torch.utils.data import DataLoader

        orig = reductions.rebuild_storage_fd
        old = torch.multiprocessing.get_sharing_strategy()
        try:
            for strategy, fetched in (("file_descriptor", True), ("file_system", False)):
                torch.multiprocessing.set_sharing_strategy(strategy)
                with probe.FdWait() as fw:
                    n = sum(1 for _ in DataLoader(list(range(64)), batch_size=8, num_workers=1))
                self.assertEqual(n, 8)
                self.assertEqual(fw.fetches >= 8, fetched, (strategy, fw.fetches))
                self.assertGreaterEqual(fw.wait, 0.0)
                self.assertIs(reductions.rebuild_storage_fd, orig)
        finally:
            torch.multiprocessing.set_sharing_strategy(old)


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


class FakeClock:
    """A clock that moves `step` seconds each time it is read."""

    def __init__(self, step):
        self.t, self.step = 0.0, step

    def __call__(self):
        self.t += self.step
        return self.t


def scripted(values):
    """run_once for repeat(): the k-th run measures values[k]."""
    return lambda k: values[k]


class Repeats(unittest.TestCase):
    def policy(self, **kw):
        return stable.Policy(clock=kw.pop("clock", FakeClock(1.0)), **kw)

    def test_repeats_until_three_agree(self):
        # 10, 14, 10.5: 40 % apart; the 4th run (10.2) makes 10, 10.2, 10.5
        # agree within 5 %: it stops there, the slow run left out.
        r = stable.repeat(scripted([10, 14, 10.5, 10.2, 99, 99]), {"x": lambda v: v},
                          self.policy(bound=0.10), "x")
        self.assertEqual(r.n, 4)
        self.assertTrue(r.stable)
        self.assertEqual(r.values["x"], 10.2)
        self.assertAlmostEqual(r.spreads["x"], 0.5 / 10.2)
        self.assertEqual(r.ranges["x"], (10, 10.5))
        self.assertEqual(r.result, 10.2)
        self.assertEqual(r.warnings, [])

    def test_idle_host_costs_three_runs(self):
        r = stable.repeat(scripted([5.0, 5.1, 4.95, 1, 1]), {"x": lambda v: v},
                          self.policy(), "x")
        self.assertEqual(r.n, 3)

    def test_stops_at_max_repeats_and_warns_with_the_spread(self):
        vals = [1, 2, 4, 8, 16, 32, 64, 128]
        r = stable.repeat(scripted(vals), {"x": lambda v: v}, self.policy(max_repeats=5), "item")
        self.assertEqual(r.n, 5)
        self.assertFalse(r.stable)
        self.assertEqual(len(r.warnings), 1)
        # calibrate's wording: "<what> varied by N% over n repetitions (lo..hi): unstable"
        self.assertIn("item: x varied by 150% over 5 repetitions (1..4): unstable", r.warnings[0])

    def test_stops_at_the_time_limit(self):
        # Each read of the clock is 50 s after the last: the first at the
        # start, then one after each run from the third; 100 s is reached
        # after the 4th run, long before max_repeats (10).
        vals = [1, 2, 4, 8, 16, 32]
        r = stable.repeat(scripted(vals), {"x": lambda v: v},
                          self.policy(max_s=100, clock=FakeClock(50)), "x")
        self.assertEqual(r.n, 4)
        self.assertFalse(r.stable)

    def test_a_tighter_bound_takes_more_runs(self):
        vals = [10, 10.8, 10.4, 10.1, 10.15, 10.12]
        loose = stable.repeat(scripted(vals), {"x": lambda v: v}, self.policy(bound=0.10), "x")
        tight = stable.repeat(scripted(vals), {"x": lambda v: v}, self.policy(bound=0.01), "x")
        self.assertEqual(loose.n, 3)
        self.assertEqual(tight.n, 6)
        self.assertLessEqual(tight.spreads["x"], 0.01)

    def test_only_judged_figures_decide(self):
        runs = [(1.0, 1), (1.01, 50), (1.02, 3)]
        r = stable.repeat(scripted(runs), {"a": lambda v: v[0], "b": lambda v: v[1]},
                          self.policy(), "x", judged=["a"])
        self.assertEqual(r.n, 3)
        self.assertTrue(r.stable)
        self.assertGreater(r.spreads["b"], 1)

    def test_zero_median(self):
        self.assertEqual(stable.tightest([0, 0, 0], 3)[0], 0.0)
        self.assertEqual(stable.tightest([0, 0, 1], 3)[0], float("inf"))


class BusyHost(unittest.TestCase):
    """The probe's busy host is calibrate's: its thresholds and messages."""

    def c_source(self, name):
        with open(os.path.join(SRC, "sim", "calibrate", name)) as f:
            return f.read()

    def test_thresholds_are_calibrates(self):
        h = self.c_source("stability.h")
        for name in ("STABILITY_MAX_LOAD", "STABILITY_MAX_OTHER", "STABILITY_MAX_STEAL"):
            m = re.search(r"#define\s+%s\s+([0-9.]+)" % name, h)
            self.assertIsNotNone(m, name)
            self.assertEqual(float(m.group(1)), getattr(stable, name), name)

    def test_wording_is_calibrates(self):
        c = self.c_source("stability.c")
        for fmt in (stable.HOST_LOAD, stable.HOST_OTHER, stable.HOST_STEAL, stable.FIGURE):
            self.assertIn('"%s"' % fmt, c.replace('"\n             "', "").replace('"\n        "', ""))

    def test_rule(self):
        self.assertEqual(stable.judge_host(1.9, 2, 0.1, 0.0), [])
        w = stable.judge_host(5.64, 2, 0.6, 0.1)
        self.assertEqual(w, ["host busy: load average 5.64 on 2 cores; rerun on an idle host",
                             "host busy: other processes took 60% of the CPU time; figures may be slow",
                             "the hypervisor stole 10% of the CPU time; figures may be slow"])


class WorkerWarmup(unittest.TestCase):
    def test_median_less_the_start(self):
        # A fresh worker's first batch 0.25, 0.3, 0.2 s beyond a warm one:
        # the median, 0.25 s, less the 0.05 s start before its first item.
        self.assertAlmostEqual(probe.worker_warmup([0.25, 0.3, 0.2], 0.05), 0.2)

    def test_never_negative(self):
        self.assertEqual(probe.worker_warmup([0.01, 0.02, 0.0], 0.05), 0.0)


class WorkerExit(unittest.TestCase):
    def test_exit_back_to_one_a_core(self):
        # 10 ms a worker at 1 x, 12.5 ms at 8 x where each CPU second is worth
        # 0.8 (10 ms at 1 x), 40 ms at 16 x worth 0.5 (20 ms): the median, 10 ms.
        x = probe.worker_exit("1:1, 8:0.8, 16:0.5", {1: 0.01, 8: 0.0125, 16: 0.04})
        self.assertAlmostEqual(x, 0.01)

    def test_never_negative(self):
        self.assertEqual(probe.worker_exit("1:1, 2:1", {1: -0.001, 2: 0.0}), 0.0)


if __name__ == "__main__":
    unittest.main(verbosity=1)
