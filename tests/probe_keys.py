#!/usr/bin/env python3
"""probe_keys: the keys the PyTorch probe writes (stallsim.probe's step
registry, LOADER_STEPS) are the schema's: every key a step may write is a
row of `stallsim help keys` (the key table sim/scenario's schema prints) and
has its place in the profile's layout (PROFILE_ORDER), every key of that
layout is some step's, and every dotted scenario key the probe's modules
name as a string (the spreads they record for measured.stability) is a row
too. The writer refuses a key its step did not declare, and lays the
scenario block out nested as the C profile writer does. Needs no PyTorch.
usage: probe_keys.py SOURCE_DIR STALLSIM"""
import ast
import os
import re
import subprocess
import sys
import types
import unittest

SRC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
BIN = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(SRC, "build", "sim", "stallsim")
sys.path.insert(0, os.path.join(SRC, "python"))
from stallsim import probe  # noqa: E402

KEY = re.compile(r"^(server|prep|loader|dataset|jobs|sim|prices)\.[a-z0-9_.]+$")
# The modules of the probe that name scenario keys.
MODULES = ("probe.py", "memprobe.py", "gilshare.py", "poolwarm.py", "stable.py", "gpurate.py")


def schema_keys():
    out = subprocess.run([BIN, "help", "keys"], capture_output=True, text=True, check=True).stdout
    keys = {line.split()[0] for line in out.splitlines() if line[:1].isalpha() and " " in line}
    assert "loader.oversub" in keys and "server.cpus" in keys, out[:400]
    return keys


class Keys(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.schema = schema_keys()

    def test_every_step_key_is_a_schema_row(self):
        for loader, steps in probe.LOADER_STEPS.items():
            for s in steps:
                stray = [k for k in s.keys if k not in self.schema]
                self.assertEqual(stray, [], f"--loader {loader}, step {s.name}: not schema keys")
                unplaced = [k for k in s.keys if k not in probe.PROFILE_ORDER]
                self.assertEqual(unplaced, [], f"step {s.name}: not in PROFILE_ORDER")

    def test_the_layout_is_the_steps_keys(self):
        written = {k for steps in probe.LOADER_STEPS.values() for s in steps for k in s.keys}
        self.assertEqual(sorted(set(probe.PROFILE_ORDER) - written), [])
        self.assertEqual(len(set(probe.PROFILE_ORDER)), len(probe.PROFILE_ORDER))
        self.assertEqual([k for k in probe.PROFILE_ORDER if k not in self.schema], [])

    def test_every_key_the_modules_name_is_a_schema_row(self):
        named = set()
        for m in MODULES:
            path = os.path.join(SRC, "python", "stallsim", m)
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                        and KEY.match(node.value):
                    named.add((m, node.value))
        self.assertGreater(len(named), 20)
        self.assertEqual(sorted(f"{m}: {k}" for m, k in named if k not in self.schema), [])


class Writer(unittest.TestCase):
    def test_a_step_writes_only_its_keys(self):
        p = types.SimpleNamespace(a=types.SimpleNamespace())
        rogue = probe.Step("rogue", ("server.cpus",), lambda p: {"loader.step_ms": "1"})
        with self.assertRaises(AssertionError):
            probe.run_steps(p, (rogue,))
        later = probe.Step("later", ("prep.augment_ms",), lambda p: {"prep.augment_ms": "2"})
        first = probe.Step("first", ("prep.augment_ms",), lambda p: {"prep.augment_ms": "1"})
        off = probe.Step("off", ("server.cpus",), lambda p: {"server.cpus": "9"}, lambda a: False)
        self.assertEqual(probe.run_steps(p, (first, off, later)), {"prep.augment_ms": "2"})

    def test_the_scenario_block_nests_as_yaml(self):
        values = {"loader.kind": "pytorch", "server.storage.read_mb_s": "300", "server.cpus": "4",
                  "prep.decode_ms_per_item": "1.5", "server.storage.latency_ms": "0.2"}
        self.assertEqual(probe.scenario_lines(values), [
            "scenario:", "  server:", "    cpus: 4", "    storage:", "      latency_ms: 0.2",
            "      read_mb_s: 300", "  prep:", "    decode_ms_per_item: 1.5", "  loader:",
            "    kind: pytorch"])
        with self.assertRaises(AssertionError):
            probe.scenario_lines({"loader.nosuch": "1"})


if __name__ == "__main__":
    if not os.access(BIN, os.X_OK):
        print(f"probe_keys: skipped: no stallsim at {BIN} (build first)")
        sys.exit(77)
    unittest.main()
