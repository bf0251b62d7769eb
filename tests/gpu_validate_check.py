#!/usr/bin/env python3
"""gpu_validate_check: the pure parts of validation/gpu/gpu_validate.py and of the
probe's --gpu-rate (python/stallsim/gpurate.py), from fixed inputs, without
PyTorch or a GPU: the profile and rates.yaml readers, the published-rate
lookup for CUDA device names, the comparison arithmetic and the tables
(CPU smoke figures labelled as such on every table).
usage: gpu_validate_check.py SOURCE_DIR"""
import os
import sys
import unittest

SRC = sys.argv.pop(1) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
sys.path.insert(0, os.path.join(SRC, "validation", "gpu"))
sys.path.insert(0, os.path.join(SRC, "python"))
import gpu_validate as gv  # noqa: E402
from stallsim import gpurate  # noqa: E402

RATES = """# comment: gpu: not a row
rates:
  - gpu: h100-sxm
    model: resnet50
    items_per_s: 2616
    batch: 1280
    precision: mixed
    source: "Lambda, deeplearning-benchmark (PyTorch): a: b"
  - gpu: h100
    model: vit_b16
    items_per_s: 1458.69
    batch: 512
    precision: bf16
    source: "NVIDIA"
  - gpu: A100-80GB
    model: ResNet-50
    items_per_s: 2470
    batch: 256
    precision: mixed
    source: "DLE"
  - gpu: h200
    model: resnet50
    items_per_s: 3079
    batch: 2560
    precision: mixed
    source: "Lambda"
"""

PROFILE = """# stallsim host profile
profile_version: 1
scenario:
  server:
    cpus: 16
  prep:
    decode_ms_per_mb: 12.6254
    huffman_ms_per_mb: 4.5
    gpu_decode_ms_per_mp: 0.125
    scaling: "1:1, 2:1.73"
measured:
  storage:
    warm:
      - queue_depth: 1
        mb_s: {median: 7403.41, min: 4865.88, max: 7826.95, n: 7}
      - queue_depth: 4
        mb_s: {median: 1, min: 1, max: 1, n: 7}
    fit_method: "qd_curve"
  gpu:
    available: true
    device: "NVIDIA H100 80GB HBM3 (compute 9.0, 85.0 GB)"
    augment_ms_per_item: {median: 0.00052225, min: 0.00052, max: 0.00060925, n: 7}
    h2d_pinned_gb_s: {median: 55.2013, min: 55.0697, max: 55.2988, n: 7}
    h2d_pageable_gb_s: {median: 8.75204, min: 7.81064, max: 9.13574, n: 7}
    sgemm_tflops: {median: 51.4864, min: 51.4374, max: 51.6158, n: 7}
  nvjpeg:
    measured: false
    reason: "built without nvJPEG: a \\"quoted\\" reason"
"""


class Readers(unittest.TestCase):
    def test_no_torch(self):
        # The pure parts load without PyTorch (this test runs where it is missing).
        self.assertNotIn("torch", sys.modules)

    def test_profile(self):
        y = gv.flat_yaml(PROFILE)
        self.assertEqual(y["scenario.server.cpus"], "16")
        self.assertEqual(y["scenario.prep.gpu_decode_ms_per_mp"], "0.125")
        self.assertEqual(y["scenario.prep.scaling"], "1:1, 2:1.73")
        self.assertEqual(y["measured.gpu.device"], "NVIDIA H100 80GB HBM3 (compute 9.0, 85.0 GB)")
        self.assertEqual(y["measured.gpu.sgemm_tflops.median"], "51.4864")
        self.assertEqual(y["measured.nvjpeg.reason"], 'built without nvJPEG: a "quoted" reason')
        # list items are left out; the key after the list is kept
        self.assertNotIn("measured.storage.warm.mb_s.median", y)
        self.assertEqual(y["measured.storage.fit_method"], "qd_curve")

    def test_rates(self):
        rows = gv.parse_rates(RATES)
        self.assertEqual(len(rows), 4)
        self.assertEqual(rows[0], dict(gpu="h100-sxm", model="resnet50", items_per_s=2616.0,
                                       batch=1280, precision="mixed",
                                       source="Lambda, deeplearning-benchmark (PyTorch): a: b"))

    def test_shipped_rates_file(self):
        # The real file parses, and every row has what the tables print.
        with open(os.path.join(SRC, "scenarios", "gpus", "rates.yaml")) as f:
            rows = gv.parse_rates(f.read())
        self.assertGreater(len(rows), 10)
        for r in rows:
            self.assertTrue(r["items_per_s"] > 0 and r["batch"] > 0, r)
            for k in ("gpu", "model", "precision", "source", "url"):
                self.assertTrue(r.get(k), (k, r))


class Lookup(unittest.TestCase):
    rows = gv.parse_rates(RATES)

    def test_candidates(self):
        self.assertEqual(gv.gpu_candidates("NVIDIA H100 80GB HBM3"), ["h100-sxm", "h100"])
        self.assertEqual(gv.gpu_candidates("NVIDIA H100 PCIe"), ["h100-pcie", "h100"])
        self.assertEqual(gv.gpu_candidates("NVIDIA H100 NVL"), ["h100-nvl", "h100"])
        self.assertEqual(gv.gpu_candidates("NVIDIA H200"), ["h200"])
        self.assertEqual(gv.gpu_candidates("NVIDIA A100-SXM4-80GB"), ["a100-80gb", "a100"])
        self.assertEqual(gv.gpu_candidates("Tesla V100-SXM2-16GB"), ["v100-16gb", "v100"])
        self.assertEqual(gv.gpu_candidates("NVIDIA L4"), ["l4"])

    def test_found(self):
        r, g = gv.lookup_published(self.rows, "NVIDIA H100 80GB HBM3", "resnet50")
        self.assertEqual((g, r["items_per_s"], r["batch"]), ("h100-sxm", 2616.0, 1280))
        r, g = gv.lookup_published(self.rows, "NVIDIA H200", "ResNet-50")
        self.assertEqual((g, r["items_per_s"]), ("h200", 3079.0))
        # names match ignoring case, '-', '_' and spaces, as stallsim's do
        r, g = gv.lookup_published(self.rows, "NVIDIA A100-SXM4-80GB", "resnet_50")
        self.assertEqual((g, r["items_per_s"]), ("a100-80gb", 2470.0))
        # a form the source did not name falls back to the plain name
        r, g = gv.lookup_published(self.rows, "NVIDIA H100 PCIe", "vit_b16")
        self.assertEqual((g, r["batch"]), ("h100", 512))

    def test_not_found(self):
        self.assertEqual(gv.lookup_published(self.rows, "NVIDIA H100 80GB HBM3", "resnet18"),
                         (None, ["h100-sxm", "h100"]))
        self.assertEqual(gv.lookup_published(self.rows, "cpu (x86_64, 2 cores)", "resnet18"),
                         (None, ["cpu"]))


class Arithmetic(unittest.TestCase):
    def test_rate(self):
        self.assertAlmostEqual(gpurate.items_per_s(128, 50, 2.5), 2560.0)
        self.assertRaises(ValueError, gpurate.items_per_s, 128, 50, 0)
        self.assertRaises(ValueError, gpurate.items_per_s, 0, 50, 1)
        self.assertAlmostEqual(gv.rate_ratio(2354.4, 2616), -0.1, places=12)

    def test_precision(self):
        self.assertEqual(gpurate.resolve_precision("auto", "cuda"), "amp")
        self.assertEqual(gpurate.resolve_precision("auto", "cpu"), "fp32")
        self.assertEqual(gpurate.resolve_precision("bf16", "cpu"), "bf16")
        self.assertRaises(ValueError, gpurate.resolve_precision, "amp", "cpu")
        self.assertRaises(ValueError, gpurate.resolve_precision, "fp8", "cuda")
        self.assertEqual(gv.PRECISION_OF["mixed"], "amp")

    def test_compare_and_summary(self):
        # harness.compare_row from fixed figures: 2 epochs of 10 s and 12 s,
        # 40 batches of 0.2 s on the GPU; predicted 10 s and 11 s with 8 s of GPU.
        c = gv.predict.compare_row([10.0, 12.0], 40, 0.2, [(10.0, 8.0), (11.0, 8.0)])
        self.assertAlmostEqual(c["meas_t"], 11.0)
        self.assertAlmostEqual(c["pred_t"], 10.5)
        self.assertAlmostEqual(c["err"], -0.5 / 11)
        self.assertAlmostEqual(c["meas_stall"], 1 - 8 / 11)
        self.assertAlmostEqual(c["pred_stall"], 1 - 8 / 10.5)
        rows = [dict(err=e, meas_stall=0.5, pred_stall=0.5 + pp / 100) for e, pp in
                ((0.1, 2), (-0.3, -4), (0.05, 1))]
        s = gv.summarize(rows)
        self.assertEqual(s["n"], 3)
        self.assertAlmostEqual(s["median"], 0.1)
        self.assertAlmostEqual(s["worst"], 0.3)
        self.assertAlmostEqual(s["median_pp"], 2.0)
        self.assertEqual(gv.summarize([]), dict(n=0))


def row(model, w, pin, err):
    return dict(model=model, device="NVIDIA H100 80GB HBM3", workers=w, pin=pin, rate=2500.0,
                meas_t=2.0, pred_t=2.0 * (1 + err), err=err, meas_stall=0.25, pred_stall=0.3)


class Tables(unittest.TestCase):
    def test_train_table(self):
        rows = [row("resnet18", 1, False, 0.1), row("resnet18", 1, True, -0.2)]
        text = "\n".join(gv.fmt_train(rows, False))
        self.assertIn("| model | device | num_workers | pin_memory | model items/s (rate step) | "
                      "measured s/epoch | predicted | error | measured stall | predicted stall |\n"
                      "|---|---|---:|---|---:|---:|---:|---:|---:|---:|\n", text)
        self.assertIn("| resnet18 | NVIDIA H100 80GB HBM3 | 1 | off | 2500.0 | 2.000 | 2.200 | "
                      "+10.0% | 25.0% | 30.0% |", text)
        self.assertIn("| resnet18 | NVIDIA H100 80GB HBM3 | 1 | on | 2500.0 | 2.000 | 1.600 | "
                      "-20.0% | 25.0% | 30.0% |", text)
        self.assertIn("2 rows: median |error| 15.0% in epoch time (worst 20.0%), median 5.0 pp",
                      text)
        self.assertNotIn("smoke", text.lower())

    def test_row_order_and_keys(self):
        st = {"train": {gv.row_key("resnet50", 2, True): row("resnet50", 2, True, 0),
                        gv.row_key("resnet18", 2, False): row("resnet18", 2, False, 0)}}
        got = gv.train_rows(st, ["resnet18", "resnet50"], [1, 2], [False, True])
        self.assertEqual([(r["model"], r["pin"]) for r in got], [("resnet18", False),
                                                                 ("resnet50", True)])

    def test_rates_table(self):
        rates = {"resnet50": dict(
            at_batch=dict(model="resnet50", batch=128, precision="amp", device="cuda",
                          device_name="NVIDIA H100 80GB HBM3", items_per_s=2000.0),
            at_published=dict(model="resnet50", batch=1280, precision="amp", device="cuda",
                              device_name="NVIDIA H100 80GB HBM3", items_per_s=2354.4),
            published=dict(gpu="h100-sxm", items_per_s=2616.0, batch=1280, precision="mixed")),
            "resnet18": dict(at_batch=dict(batch=128, precision="amp", device="cuda",
                                           error="CUDA out of memory"),
                             looked_for=["h100-sxm", "h100"])}
        lines = gv.fmt_rates(rates, False)
        self.assertIn("| resnet50 | NVIDIA H100 80GB HBM3 | 128 | amp | 2000.0 | h100-sxm batch "
                      "1280 mixed | 2616 | – |", lines)
        self.assertIn("| resnet50 | NVIDIA H100 80GB HBM3 | 1280 | amp | 2354.4 | h100-sxm batch "
                      "1280 mixed | 2616 | -10.0% |", lines)
        self.assertIn("| resnet18 | cuda | 128 | amp | not measured: CUDA out of memory | none for "
                      "h100-sxm, h100 | – | – |", lines)

    def test_decode_and_calib(self):
        d = dict(device="cuda", api="decode_jpeg(list, device=cuda)", n=1024, kb=114.7, mp=0.1407,
                 batch=128, items_s=4000.0, pred_items_s=5000.0, how="prep.decode gpu")
        self.assertIn("| cuda | decode_jpeg(list, device=cuda) | 1024 | 114.7 | 0.141 | 128 | "
                      "4000.0 | 5000.0 | +25.0% | prep.decode gpu |", gv.fmt_decode(d, False))
        d.update(pred_items_s=None, how="not predicted: no nvJPEG")
        self.assertIn("| – | – | not predicted: no nvJPEG |", gv.fmt_decode(d, False)[-2])
        y = gv.flat_yaml(PROFILE)
        cal = dict(gpu={"available": y["measured.gpu.available"], "device": y["measured.gpu.device"],
                        "augment_ms_per_item": "0.00052225", "h2d_pinned_gb_s": "55.2",
                        "h2d_pageable_gb_s": "8.75", "sgemm_tflops": "51.49"},
                   nvjpeg={"measured": "false", "reason": y["measured.nvjpeg.reason"]},
                   decode_ms_per_mb="12.6254", decode_ms_per_item="0.044")
        text = "\n".join(gv.fmt_calib(cal, "100% tests passed, 0 tests failed out of 1", False))
        self.assertIn("H2D 55.2 GB/s pinned, 8.75 GB/s pageable, SGEMM 51.5 TFLOP/s", text)
        self.assertIn('nvJPEG: not measured (built without nvJPEG: a "quoted" reason)', text)
        self.assertIn("`ctest -R calib_gpu`: 100% tests passed", text)

    def test_hardware_decoder_named(self):
        for name, has in (("NVIDIA H200", True), ("NVIDIA H100 80GB HBM3", True),
                          ("NVIDIA A100-SXM4-40GB", True), ("Tesla V100-SXM2-16GB", False),
                          ("NVIDIA GeForce RTX 4090", False), ("NVIDIA L40S", False), ("", False)):
            self.assertEqual(gv.hw_jpeg(name), has, name)
        d = dict(device="cuda", api="decode_jpeg(list, device=cuda)", n=1024, kb=114.5, mp=0.1406,
                 batch=128, items_s=14545.3, pred_items_s=559.6, how="prep.decode gpu")
        text = "\n".join(gv.fmt_decode(d, False, "NVIDIA H200"))
        self.assertIn("2045 megapixels a second", text)
        self.assertIn("prep.hw_decode_mp_s", text)
        self.assertNotIn("hardware", "\n".join(gv.fmt_decode(d, False, "Tesla V100-SXM2-16GB")))
        self.assertNotIn("hardware", "\n".join(gv.fmt_decode(d, True, "NVIDIA H200")))

    def test_ctest_outcome_both_formats(self):
        # ctest 4 (the GPU machine's, 2026-11-28) drops ", 0 tests failed"
        import tempfile
        for line, want in (("100% tests passed, 0 tests failed out of 1", "0 tests failed"),
                           ("100% tests passed out of 1", "100% tests passed out of 1")):
            with tempfile.NamedTemporaryFile("w", suffix=".log") as f:
                f.write(f"3: testing on NVIDIA H200 (compute 9.0)\n{line}\n")
                f.flush()
                got = gv.ctest_outcome(f.name)
            self.assertIn(want, got)
            self.assertNotIn("no result", got)
            self.assertIn("testing on NVIDIA H200", got)

    def test_smoke_is_labelled_everywhere(self):
        # Every table and the banner say CPU smoke; the device column too.
        smoke = [gv.banner(True, "cpu (x86_64, 2 cores)", "vm", "now"),
                 gv.fmt_train([row("resnet18", 0, False, 0.1)], True),
                 gv.fmt_decode(dict(device="cpu", api="a", n=16, kb=100.0, mp=0.1, batch=4,
                                    items_s=100.0, pred_items_s=90.0, how="h"), True),
                 gv.fmt_rates({"resnet18": dict(at_batch=dict(batch=4, precision="fp32",
                                                              device="cpu", items_per_s=10.0),
                                                looked_for=["cpu"])}, True)]
        for lines in smoke:
            self.assertIn(gv.SMOKE, lines[0])
        for lines in smoke[1:]:
            for line in lines:
                if line.startswith("| ") and not line.startswith("| model") \
                        and not line.startswith("| device"):
                    self.assertIn(f"({gv.SMOKE})", line)
        self.assertIn("None is a GPU result", smoke[0][0])

    def test_decode_scenario(self):
        text = gv.decode_scenario("/x/host.yaml", 1024, 114.7, 0.4, 0.14, 128, "gpu")
        self.assertIn("host: /x/host.yaml\n", text)
        self.assertIn("dataset: {items: 1024, item_kb: 114.7, item_kb_cv: 0.4, megapixels: 0.14}",
                      text)
        self.assertIn("prep: {decode: gpu, augment_ms: 0}", text)
        self.assertIn("batch_per_gpu: 128", text)


class CommandLine(unittest.TestCase):
    """Refusals that come before PyTorch is loaded (exit 2, the reason said)."""

    def run_py(self, *args):
        import subprocess

        env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "python"))
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env)

    def test_probe(self):
        p = self.run_py("-m", "stallsim.probe", "--gpu-rate", "--batch", "0")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--gpu-rate: --batch and --iters must be >= 1", p.stderr)
        # the loader's probe still needs --data and --out
        p = self.run_py("-m", "stallsim.probe", "--out", "x.yaml")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("required: --data", p.stderr)

    def test_smoke_never_updates(self):
        p = self.run_py(os.path.join(SRC, "validation", "gpu", "gpu_validate.py"), "--cpu-smoke",
                        "--update", "VALIDATION.md")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("CPU smoke figures never go into a results page", p.stderr)

    def test_report_only(self):
        # The tables of a results.json brought back from a GPU machine, with
        # neither PyTorch nor a device; a smoke run's never goes to a file.
        import json
        import tempfile

        gvpy = os.path.join(SRC, "validation", "gpu", "gpu_validate.py")
        with tempfile.TemporaryDirectory() as d:
            st = dict(mode="gpu", device_name="NVIDIA H200", host="vm", when="then",
                      decode=dict(device="cuda", api="decode_jpeg(list, device=cuda)", n=8,
                                  kb=100.0, mp=0.1, batch=4, items_s=1000.0, pred_items_s=None,
                                  how="not predicted: x"))
            with open(os.path.join(d, "results.json"), "w") as f:
                json.dump(st, f)
            p = self.run_py(gvpy, "--report-only", "--out-dir", d)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("Run on vm (NVIDIA H200), then", p.stdout)
            self.assertIn("100 megapixels a second", p.stdout)
            st["mode"] = "cpu-smoke"
            with open(os.path.join(d, "results.json"), "w") as f:
                json.dump(st, f)
            p = self.run_py(gvpy, "--report-only", "--out-dir", d, "--update", "x.md")
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("GPU runs only", p.stderr)
            p = self.run_py(gvpy, "--report-only", "--out-dir", os.path.join(d, "none"))
            self.assertEqual(p.returncode, 2, p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
