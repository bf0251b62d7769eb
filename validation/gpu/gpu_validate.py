#!/usr/bin/python3
"""stallsim on a GPU machine (issue 38): calibrate's GPU figures, GPU
decode, the models' own GPU rates and real training jobs, each beside
stallsim's prediction. validation/gpu/gpu_validate.sh builds (with CUDA) and runs
the CUDA tests, then this; docs/validation/gpu_validate.md.

  validation/gpu/gpu_validate.py [--bin build/sim/stallsim] [--out-dir DIR]
      [--steps calibrate,decode,rate,probe,train] [--fresh] [--redo STEPS]
      [--time-budget S] [--update docs/validation/gpu_validate.md] [--cpu-smoke] [--probe-args "..."]
  validation/gpu/gpu_validate.py --report-only --out-dir DIR [--update docs/validation/gpu_validate.md]

Steps (each result kept in DIR/results.json; a rerun goes on from there,
so a run cut short by a time limit loses only the row it was in):
  data       `stallsim measure --generate` writes --items ImageNet-like
             JPEGs in DIR/data (an ImageFolder tree), once.
  calibrate  `stallsim calibrate --data DIR/data`: its GPU figures (the
             augment kernel, H2D, SGEMM) and nvJPEG's
             prep.gpu_decode_ms_per_mp and prep.huffman_ms_per_mb.
  decode     torchvision.io.decode_jpeg(device="cuda") on --decode-items of
             the JPEGs in batches of --decode-batch (items/s), beside
             `stallsim run` on the same images and batch with prep.decode
             gpu and calibrate's nvJPEG rates (one host thread: server.cpus 1).
  rate       `stallsim-probe --gpu-rate` (python/stallsim/gpurate.py): each
             model's items/s at --batch (amp), and at the batch and
             precision of the published row (scenarios/gpus/rates.yaml) for
             this GPU and model where there is one, beside it.
  probe      the PyTorch probe (docs/pytorch.md) over DIR/data at --batch.
  train      each model x num_workers x pin_memory in a fresh process: a
             real DataLoader (ImageFolder, the standard transforms, batch
             --batch, shuffle) feeding real forward+backward passes and SGD
             steps under torch.autocast + GradScaler, each epoch timed from
             iter() to its last step's end on the GPU; `stallsim run` on the
             probe's profile predicts it (validate_torch.predict) with the
             model's GPU time per batch from the rate step, and
             validation.predict.compare_row compares (stall as DS-Analyzer splits it).
Then the summary (stderr) and the Markdown tables (stdout, DIR/gpu_validate.md,
--out, and with --update between docs/validation/gpu_validate.md's gpu_validate markers).

--cpu-smoke runs every step on the CPU at tiny sizes (64 images, resnet18
at batch 4 for 3 timed steps, num_workers 0 and 2, fp32): it tests the
harness, and every figure it prints is labelled a CPU smoke figure, never a
GPU result (--update is refused with it). Without a CUDA device and without
--cpu-smoke it measures nothing and exits 77. Exit 0 when every step ran,
1 when one failed, 3 when --time-budget stopped it (rerun to go on)."""

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, ROOT)  # the validation package (it puts python/ first: stallsim.*)
from validation import base, predict  # noqa: E402
from validation import torch as validate_torch  # noqa: E402
from validation.fixtures import data as fx  # noqa: E402
from stallsim import pipeline  # noqa: E402

TOOL = "gpu_validate"
PROBE = os.path.join(ROOT, "python", "probe.py")
RATES = os.path.join(ROOT, "scenarios", "gpus", "rates.yaml")
STEPS = ("calibrate", "decode", "rate", "probe", "train")
SMOKE = "CPU smoke"
# The published rows' precision, as --precision names it.
PRECISION_OF = {"mixed": "amp", "amp": "amp", "fp16": "amp", "bf16": "bf16", "fp32": "fp32",
                "tf32": "fp32"}


# --- The pure parts (tests/gpu_validate_check.py runs them without PyTorch) ---

def unquote(v):
    v = v.strip()
    if v.startswith('"') and v.endswith('"') and len(v) >= 2:
        return json.loads(v)
    if " #" in v:
        v = v.split(" #", 1)[0].rstrip()
    return v


def flat_yaml(text):
    """The scalars of a block-style YAML document (calibrate's and the
    probe's profiles) as {"a.b.c": "value"}, strings unquoted; a flow
    mapping {k: v, ...} one level deep gives "a.b.k"; list items and what
    is under them are left out."""
    out, stack, skip = {}, [], None
    for raw in text.splitlines():
        body = raw.strip()
        if not body or body.startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        if skip is not None and (indent > skip or (indent == skip and body.startswith("- "))):
            continue
        skip = None
        if body.startswith("- "):
            skip = indent
            continue
        key, _, val = body.partition(":")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = ".".join([k for _, k in stack] + [key.strip()])
        val = val.strip()
        if not val:
            stack.append((indent, key.strip()))
        elif val.startswith("{") and val.endswith("}"):
            for part in val[1:-1].split(","):
                k, _, v = part.partition(":")
                if k.strip():
                    out[f"{path}.{k.strip()}"] = unquote(v)
        else:
            out[path] = unquote(val)
    return out


def parse_rates(text):
    """scenarios/gpus/rates.yaml's rows: dicts of its fields, items_per_s a
    float and batch an int."""
    rows, cur, inside = [], None, False
    for raw in text.splitlines():
        body = raw.strip()
        if not body or body.startswith("#"):
            continue
        if not raw.startswith(" "):
            inside = body == "rates:"
            continue
        if not inside:
            continue
        if body.startswith("- "):
            cur = {}
            rows.append(cur)
            body = body[2:]
        if cur is None:
            continue
        k, _, v = body.partition(":")
        cur[k.strip()] = unquote(v)
    for r in rows:
        r["items_per_s"] = float(r["items_per_s"])
        r["batch"] = int(r["batch"])
    return rows


def norm(name):
    """Names match ignoring case, '-', '_' and spaces (as stallsim's do)."""
    return re.sub(r"[-_ ]", "", name.lower())


def gpu_candidates(device_name):
    """rates.yaml's gpu names for a CUDA device name, the most specific
    first: "NVIDIA H100 80GB HBM3" (the SXM5 part) is h100-sxm, then h100
    (rows whose source did not say the form)."""
    n = device_name.lower()
    mem = re.search(r"(\d+)\s*gb", n)
    gb = f"-{mem.group(1)}gb" if mem else ""
    if "h200" in n:
        return ["h200-nvl"] if "nvl" in n else ["h200"]
    if "h100" in n:
        form = "pcie" if "pcie" in n else "nvl" if "nvl" in n else "sxm"
        return [f"h100-{form}", "h100"]
    for g in ("a100", "v100"):
        if g in n:
            return ([f"{g}{gb}"] if gb else []) + [g]
    words = [w for w in re.split(r"[\s]+", n) if w not in ("nvidia", "tesla", "geforce")]
    return words[:1]


def lookup_published(rows, device_name, model):
    """The published row for this device and model: (row, its gpu name), or
    (None, the names looked for)."""
    want = gpu_candidates(device_name)
    for g in want:
        for r in rows:
            if norm(r["gpu"]) == norm(g) and norm(r["model"]) == norm(model):
                return r, g
    return None, want


def rate_ratio(measured, published):
    """measured / published - 1 (+0.1: 10 % faster than published)."""
    return measured / published - 1


def summarize(rows):
    """The training table's summary: rows, median and worst |error| in
    epoch time, median |stall difference| in percentage points."""
    if not rows:
        return dict(n=0)
    errs = [abs(r["err"]) for r in rows]
    pp = [abs(r["pred_stall"] - r["meas_stall"]) * 100 for r in rows]
    return dict(n=len(rows), median=statistics.median(errs), worst=max(errs),
                median_pp=statistics.median(pp))


def dev_label(device, smoke):
    return f"{device} ({SMOKE})" if smoke else device


def banner(smoke, device_name, host, when):
    if smoke:
        return [f"**{SMOKE} run** (`--cpu-smoke`, {host}, {when}): every figure below was measured "
                f"on {device_name} at tiny sizes to test the harness. None is a GPU result.", ""]
    return [f"Run on {host} ({device_name}), {when}, by `validation/gpu/gpu_validate.sh`.", ""]


def md_head(caption, cols):
    """A caption and a Markdown table's head; cols: the names, '~' for a
    space, each ending in '>' right-aligned."""
    names = [c.rstrip(">").replace("~", " ") for c in cols.split()]
    align = ["---:" if c.endswith(">") else "---" for c in cols.split()]
    return [caption, "", f"| {' | '.join(names)} |", f"|{'|'.join(align)}|"]


def fmt_calib(cal, ctest, smoke):
    """calibrate's GPU figures (and the CUDA tests' outcome) as a list."""
    tag = f" ({SMOKE})" if smoke else ""
    out = [f"calibrate{tag}:", ""]
    g = cal.get("gpu", {})
    if g.get("available") == "true":
        out.append(f"- GPU: {g.get('device')}: augment kernel {float(g['augment_ms_per_item']):.4g} "
                   f"ms/item, H2D {float(g['h2d_pinned_gb_s']):.3g} GB/s pinned, "
                   f"{float(g['h2d_pageable_gb_s']):.3g} GB/s pageable, SGEMM "
                   f"{float(g['sgemm_tflops']):.3g} TFLOP/s")
    else:
        out.append(f"- GPU: not measured ({g.get('reason') or 'calibrate found no GPU'})")
    nj = cal.get("nvjpeg", {})
    if nj.get("measured") == "true":
        out.append(f"- nvJPEG: prep.gpu_decode_ms_per_mp {float(nj['gpu_ms_per_megapixel']):.4g}, "
                   f"prep.huffman_ms_per_mb {float(nj['host_ms_per_mb']):.4g}")
    else:
        out.append(f"- nvJPEG: not measured ({nj.get('reason') or 'no reason given'})")
    out.append(f"- CPU decode: prep.decode_ms_per_mb {float(cal['decode_ms_per_mb']):.4g}, "
               f"decode_ms_per_item {float(cal['decode_ms_per_item']):.4g}")
    if ctest:
        out.append(f"- `ctest -R calib_gpu`: {ctest}")
    return out + [""]


# GPUs with a hardware JPEG decoder (the NVJPG engines of NVIDIA's A100 and
# H100 architecture whitepapers). torchvision's batched CUDA decode asks nvJPEG
# for NVJPEG_BACKEND_HARDWARE first (decode_jpegs_cuda.cpp), so on these its
# rate is the engine's, which calibrate's hybrid nvJPEG figures do not describe.
HW_JPEG = ("a100", "a30", "a800", "h100", "h800", "h200", "gh200")


def hw_jpeg(device_name):
    n = (device_name or "").lower()
    return any(re.search(rf"\b{g}\b", n) for g in HW_JPEG)


def fmt_decode(d, smoke, device_name=""):
    tag = f" ({SMOKE})" if smoke else ""
    out = md_head(f"Decode{tag}:", "device API images> mean~KB> mean~MP> batch> measured~items/s> "
                  "predicted~items/s> error> predicted~with")
    pred = d.get("pred_items_s")
    err = f"{pred / d['items_s'] - 1:+.1%}" if pred else "–"
    out.append(f"| {dev_label(d['device'], smoke)} | {d['api']} | {d['n']} | {d['kb']:.1f} | "
               f"{d['mp']:.3f} | {d['batch']} | {d['items_s']:.1f} | "
               f"{f'{pred:.1f}' if pred else '–'} | {err} | {d['how']} |")
    if not smoke and d["api"].startswith("decode_jpeg(list") and hw_jpeg(device_name):
        out += ["", f"{device_name} has a hardware JPEG decoder, which torchvision's batched "
                "decode asks for before nvJPEG's hybrid path: the measured rate is that path's "
                "(the engine, with torchvision's parsing and copies), "
                f"{d['items_s'] * d['mp']:.0f} megapixels a second on these images (a figure "
                "for `prep.hw_decode_mp_s`), and a prediction from calibrate's hybrid figures "
                "(Huffman on a core) is of the path these batches did not take."]
    return out + [""]


def fmt_rates(rates, smoke):
    """Each model's measured rate, and the published row beside it."""
    tag = f" ({SMOKE})" if smoke else ""
    out = md_head(f"The models' own rate{tag} (synthetic input on the device, `stallsim-probe "
                  "--gpu-rate`):", "model device batch> precision measured~items/s> published~row "
                  "published~items/s> measured~/~published>")
    for model, r in rates.items():
        p = r.get("published")
        pub = (f"{p['gpu']} batch {p['batch']} {p['precision']}" if p
               else f"none for {', '.join(r.get('looked_for', [])) or 'this device'}")
        for m in (r.get("at_batch"), r.get("at_published")):
            if not m:
                continue
            got = f"{m['items_per_s']:.1f}" if "items_per_s" in m else f"not measured: {m['error']}"
            ratio = "–"
            if p and m.get("batch") == p["batch"] and "items_per_s" in m:
                ratio = f"{rate_ratio(m['items_per_s'], p['items_per_s']):+.1%}"
            dev = dev_label(m.get("device_name", m.get("device", "?")), smoke)
            out.append(f"| {model} | {dev} | {m['batch']} | {m['precision']} | {got} | {pub} | "
                       f"{format(p['items_per_s'], '.6g') if p else '–'} | {ratio} |")
    return out + [""]


def fmt_train(rows, smoke):
    tag = f" ({SMOKE} figures, not GPU results)" if smoke else ""
    out = md_head(f"Training{tag}:", "model device num_workers> pin_memory model~items/s~(rate~step)> "
                  "measured~s/epoch> predicted> error> measured~stall> predicted~stall>")
    for r in rows:
        out.append(f"| {r['model']} | {dev_label(r['device'], smoke)} | {r['workers']} | "
                   f"{'on' if r['pin'] else 'off'} | {r['rate']:.1f} | {r['meas_t']:.3f} | "
                   f"{r['pred_t']:.3f} | {r['err']:+.1%} | {r['meas_stall']:.1%} | "
                   f"{r['pred_stall']:.1%} |")
    s = summarize(rows)
    out.append("")
    if s["n"]:
        out.append(f"{s['n']} rows{tag}: median |error| {s['median']:.1%} in epoch time (worst "
                   f"{s['worst']:.1%}), median {s['median_pp']:.1f} pp in stall fraction.")
    else:
        out.append("No training row ran.")
    return out + [""]


def decode_scenario(host, n, kb, cv, mp, batch, place):
    """`stallsim run`'s view of the decode step: n images of the set's
    size and megapixels in batches of `batch`, one host thread, reads and
    the training step costing nothing; decoded where `place` says with the
    host profile's rates."""
    return f"""# written by validation/gpu/gpu_validate.py: decode_jpeg's batches as stallsim sees them
name: gpu-validation-decode
host: {host}
epochs: 1
dataset: {{items: {n}, item_kb: {kb:.6g}, item_kb_cv: {cv:.4g}, megapixels: {mp:.6g}}}
server: {{gpus: 1, cpus: 1, cache_gb: 1000, storage: {{read_mb_s: 1000000, latency_ms: 0}}}}
prep: {{decode: {place}, augment_ms: 0}}
loader: {{cache: none}}
jobs:
  - {{name: decode, gpus: 1, batch_per_gpu: {batch}, gpu_items_per_s: 10000000}}
"""


def train_rows(st, models, workers, pins):
    """The training rows done, in the matrix's order."""
    done = st.get("train", {})
    return [done[k] for k in (row_key(m, w, p) for m in models for w in workers for p in pins)
            if k in done]


def row_key(model, workers, pin):
    return f"{model}/w{workers}/pin{int(pin)}"


def report(st, a, ctest):
    """The Markdown of every step in st."""
    smoke = st["mode"] == "cpu-smoke"
    lines = banner(smoke, st.get("device_name", "?"), st.get("host", "?"), st.get("when", "?"))
    if "calibrate" in st:
        lines += fmt_calib(st["calibrate"], ctest, smoke)
    if "decode" in st:
        lines += fmt_decode(st["decode"], smoke, st.get("device_name", ""))
    if "rate" in st:
        lines += fmt_rates(st["rate"], smoke)
    lines += fmt_train(train_rows(st, a.models, a.workers, a.pins), smoke)
    return "\n".join(lines)


# --- The steps (PyTorch, the program, the device) ---

def log(msg, smoke=False):
    print(f"{TOOL}: {'[' + SMOKE + '] ' if smoke else ''}{msg}", file=sys.stderr, flush=True)


class State:
    """DIR/results.json: what each step found, saved after each."""

    def __init__(self, path, mode, fresh):
        self.path = path
        self.d = {}
        if not fresh and os.path.exists(path):
            with open(path) as f:
                self.d = json.load(f)
            if self.d.get("mode") != mode:
                log(f"{path} holds a {self.d.get('mode')} run, not {mode}: starting afresh")
                self.d = {}
        self.d["mode"] = mode

    def save(self):
        with open(self.path + ".tmp", "w") as f:
            json.dump(self.d, f, indent=1)
        os.replace(self.path + ".tmp", self.path)


def run_logged(cmd, logfile, **kw):
    with open(logfile, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n")
        f.flush()
        return subprocess.run(cmd, stderr=f, text=True, **kw)


def step_calibrate(a, st):
    prof = os.path.join(a.out_dir, "host-calib.yaml")
    cmd = [a.bin, "calibrate", "--data", a.data, "--files", str(min(a.items, 1000)), "--out", prof]
    if a.cpu_smoke:
        cmd.append("--quick")
    log(f"calibrate: {' '.join(cmd[1:])}", a.cpu_smoke)
    if run_logged(cmd, os.path.join(a.out_dir, "calibrate.log")).returncode != 0:
        raise RuntimeError(f"calibrate failed: see {a.out_dir}/calibrate.log")
    with open(prof) as f:
        y = flat_yaml(f.read())
    p = "scenario.prep."
    med = ("augment_ms_per_item", "h2d_pinned_gb_s", "h2d_pageable_gb_s", "sgemm_tflops")
    gpu = {k[len("measured.gpu."):]: v for k, v in y.items() if k.startswith("measured.gpu.")}
    gpu.update({k: y.get(f"measured.gpu.{k}.median") for k in med})
    nj = {k[len("measured.nvjpeg."):]: v for k, v in y.items() if k.startswith("measured.nvjpeg.")}
    return dict(profile=prof, gpu=gpu, nvjpeg=nj,
                decode_ms_per_mb=y.get(p + "decode_ms_per_mb", "0"),
                decode_ms_per_item=y.get(p + "decode_ms_per_item", "0"),
                huffman_ms_per_mb=float(y.get(p + "huffman_ms_per_mb", 0)),
                gpu_decode_ms_per_mp=float(y.get(p + "gpu_decode_ms_per_mp", 0)))


def jpeg_stats(files):
    """(mean KB, size CV, mean megapixels) of the files (PIL reads headers)."""
    from PIL import Image

    sizes = [os.path.getsize(p) for p in files]
    mps = []
    for p in files:
        with Image.open(p) as im:
            mps.append(im.size[0] * im.size[1] / 1e6)
    mean = statistics.mean(sizes)
    return mean / 1e3, statistics.pstdev(sizes) / mean, statistics.mean(mps)


def step_decode(a, st):
    import torch
    import torchvision
    from torchvision import io as tio

    files = fx.jpegs(a.data)[: a.decode_items]
    datas = [tio.read_file(p) for p in files]
    kb, cv, mp = jpeg_stats(files)
    batches = [datas[i:i + a.decode_batch] for i in range(0, len(datas), a.decode_batch)]

    def sync():
        if a.device == "cuda":
            torch.cuda.synchronize()

    try:  # a list at once from torchvision 0.19 (nvjpegDecodeBatched on CUDA)
        tio.decode_jpeg(batches[0], device=a.device)
        api = f"decode_jpeg(list, device={a.device})"

        def dec(b):
            return tio.decode_jpeg(b, device=a.device)
    except (TypeError, RuntimeError, ValueError):
        api = f"decode_jpeg(each, device={a.device})"

        def dec(b):
            return [tio.decode_jpeg(x, device=a.device) for x in b]
    dec(batches[0])
    sync()
    times = []
    for _ in range(a.decode_reps):
        t0 = time.perf_counter()
        for b in batches:
            dec(b)
            sync()  # the batch is decoded before the step that needs it
        times.append(time.perf_counter() - t0)
    items_s = len(files) / statistics.median(times)
    cal = st.get("calibrate")
    place, how, pred = None, "", None
    if a.device == "cuda":
        if cal and cal["gpu_decode_ms_per_mp"] > 0 and cal["huffman_ms_per_mb"] > 0:
            place = "gpu"
            how = (f"prep.decode gpu: {cal['gpu_decode_ms_per_mp']:.4g} ms/MP on the GPU, "
                   f"{cal['huffman_ms_per_mb']:.4g} ms/MB Huffman on 1 core")
        else:
            how = ("not predicted: calibrate measured no GPU decode (" +
                   ((cal or {}).get("nvjpeg", {}).get("reason") or "no calibrate step") + ")")
    elif cal:
        place = "cpu"
        how = (f"prep.decode cpu ({SMOKE}): {float(cal['decode_ms_per_mb']):.4g} ms/MB + "
               f"{float(cal['decode_ms_per_item']):.4g} ms on 1 core")
    if place:
        scen = os.path.join(a.out_dir, "decode.yaml")
        with open(scen, "w") as f:
            f.write(decode_scenario(cal["profile"], len(files), kb, cv, mp, a.decode_batch, place))
        sim = predict.predict_epochs(a.bin, scen, [])
        pred = len(files) / statistics.mean(e for e, _ in sim)
    log(f"decode: {api}: {items_s:.1f} items/s measured, "
        f"{f'{pred:.1f} predicted' if pred else how}", a.cpu_smoke)
    return dict(device=a.device, api=api, torchvision=torchvision.__version__, n=len(files), kb=kb,
                cv=cv, mp=mp, batch=a.decode_batch, items_s=items_s, pred_items_s=pred, how=how)


def gpu_rate(a, models, batch, precision):
    """`stallsim-probe --gpu-rate` in a fresh process: {model: its JSON line}."""
    out = os.path.join(a.out_dir, f"gpu-rate-b{batch}-{precision}.yaml")
    cmd = [sys.executable, PROBE, "--gpu-rate", "--model", ",".join(models), "--batch", str(batch),
           "--precision", precision, "--iters", str(a.rate_iters), "--warmup",
           str(a.rate_warmup), "--device", a.device, "--out", out]
    p = run_logged(cmd, os.path.join(a.out_dir, "gpu-rate.log"), stdout=subprocess.PIPE)
    got = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            got[r["model"]] = r
    if not got:
        raise RuntimeError(f"--gpu-rate measured nothing (exit {p.returncode}): see "
                           f"{a.out_dir}/gpu-rate.log")
    return got


def step_rate(a, st):
    rows = parse_rates(open(RATES).read())
    first = gpu_rate(a, a.models, a.batch, a.precision)
    res = {}
    for m in a.models:
        r = dict(at_batch=first.get(m) or dict(batch=a.batch, precision=a.precision, error="no output"))
        pub, g = lookup_published(rows, st["device_name"], m)
        if pub:
            r["published"] = {k: pub[k] for k in ("gpu", "model", "items_per_s", "batch",
                                                  "precision", "source", "url")}
            prec = PRECISION_OF.get(pub["precision"].lower(), "amp")
            if (pub["batch"], prec) != (a.batch, r["at_batch"].get("precision")):
                log(f"rate: {m} again at the published row's batch {pub['batch']}, {prec}",
                    a.cpu_smoke)
                r["at_published"] = gpu_rate(a, [m], pub["batch"], prec).get(m)
        else:
            r["looked_for"] = g
        res[m] = r
        log(f"rate: {m}: {r['at_batch'].get('items_per_s', 0):.1f} items/s at batch {a.batch}"
            f"{'; published ' + format(pub['items_per_s'], 'g') + ' (' + pub['gpu'] + ')' if pub else ''}",
            a.cpu_smoke)
    return res


def step_probe(a, st):
    prof = os.path.join(a.out_dir, "host-torch.yaml")
    cores = len(os.sched_getaffinity(0))
    maxw = 2 if a.cpu_smoke else cores
    items = min(a.items, max(640, a.batch * (2 * maxw + 4)))  # the probe's own need
    cmd = [sys.executable, PROBE, "--data", a.data, "--out", prof, "--batch", str(a.batch),
           "--items", str(items)]
    if a.cpu_smoke:
        cmd += ["--max-workers", "2", "--oversub-reps", "1"]
    cmd += shlex.split(a.probe_args)
    log(f"probe: {' '.join(cmd[2:])}", a.cpu_smoke)
    if run_logged(cmd, os.path.join(a.out_dir, "probe.log")).returncode != 0:
        raise RuntimeError(f"the probe failed: see {a.out_dir}/probe.log")
    return dict(profile=prof, items=items)


def run_one(a):
    """One training row, in this (fresh) process: prints a JSON line."""
    import torch
    from torch.utils.data import DataLoader

    from stallsim import gpurate

    torch.manual_seed(a.seed)
    tr = gpurate.Trainer(a.one, a.device, a.precision)
    tr.warm_up(a.batch, a.rate_warmup)
    ds = pipeline.make_dataset(a.data)
    pipeline.warm(pipeline.item_paths(ds))
    kw = dict(batch_size=a.batch, shuffle=True, num_workers=a.row_workers, pin_memory=a.row_pin)
    if a.row_workers > 0:
        kw.update(persistent_workers=False, prefetch_factor=2)
    dl = DataLoader(ds, **kw)
    epochs, batches = pipeline.timed_epochs(lambda e: dl, a.epochs, 0,
                                            on_batch=lambda e, b: tr.step(b[0], b[1]),
                                            on_epoch_end=tr.sync)
    print(json.dumps(dict(epochs=epochs, batches=batches)))


def train_row(a, model, workers, pin):
    cmd = [sys.executable, os.path.abspath(__file__), "--one", model, "--data", a.data,
           "--batch", str(a.batch), "--epochs", str(a.epochs), "--device", a.device,
           "--precision", a.precision, "--rate-warmup", str(a.rate_warmup),
           "--row-workers", str(workers), "--seed", str(a.seed)] + (["--row-pin"] if pin else [])
    p = run_logged(cmd, os.path.join(a.out_dir, "train.log"), stdout=subprocess.PIPE, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def step_train(a, st, out_of_time):
    scen = validate_torch.write_scenario(os.path.join(a.out_dir, "train.yaml"),
                                         st.d["probe"]["profile"], a.epochs, a.data, batch=a.batch,
                                         name="gpu-validation", tool=f"validation/gpu/{TOOL}.py")
    done, failed = st.d.setdefault("train", {}), []
    for m in a.models:
        rate = st.d["rate"].get(m, {}).get("at_batch", {}).get("items_per_s")
        if not rate:
            log(f"train: {m}: no GPU rate measured at batch {a.batch}: its rows are left out")
            continue
        compute = a.batch / rate
        for w in a.workers:
            for pin in a.pins:
                key = row_key(m, w, pin)
                if key in done:
                    continue
                if out_of_time():
                    return False
                try:
                    meas = train_row(a, m, w, pin)
                except subprocess.CalledProcessError as e:
                    log(f"train: {key}: FAILED (exit {e.returncode}): see {a.out_dir}/train.log",
                        a.cpu_smoke)
                    failed.append(key)
                    continue
                sim = validate_torch.predict(a, scen, dict(workers=w, compute=compute, cache="warm",
                                                           persistent=False, pin=pin))
                c = predict.compare_row(meas["epochs"], meas["batches"], compute, sim)
                done[key] = dict(model=m, device=st.d["device_name"], workers=w, pin=pin,
                                 rate=rate, compute_s=compute, epochs=meas["epochs"],
                                 pred_epochs=[e for e, _ in sim], **c)
                st.save()
                log(f"train: {m} workers={w} pin={'on' if pin else 'off'}: measured "
                    f"{c['meas_t']:.3f} s ({c['meas_stall']:.1%} stall), predicted {c['pred_t']:.3f} s "
                    f"({c['pred_stall']:.1%}): {c['err']:+.1%}", a.cpu_smoke)
    if failed:
        raise RuntimeError(f"{len(failed)} rows failed ({', '.join(failed)}); a rerun tries them again")
    return True


def ctest_outcome(path):
    """What `ctest -R calib_gpu` (validation/gpu/gpu_validate.sh's log) said."""
    if not path or not os.path.exists(path):
        return None
    text = open(path).read()
    said = re.findall(r"(testing on [^\n]+|no GPU to test on[^\n]*|nvJPEG decode not tested[^\n]*)",
                      text)
    # ctest 3.x: "100% tests passed, 0 tests failed out of 1"; 4.x: "100% tests passed out of 1"
    total = re.search(r"\d+% tests passed(?:, \d+ tests failed)? out of \d+", text)
    return "; ".join(([total.group(0)] if total else ["no result"]) + sorted(set(said)))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "sim", "stallsim"))
    ap.add_argument("--out-dir", help="results, data and logs (default build/gpu-validate, "
                    "build/gpu-validate-smoke with --cpu-smoke)")
    ap.add_argument("--data", help="the JPEGs (default OUT_DIR/data, generated)")
    ap.add_argument("--cpu-smoke", action="store_true",
                    help="every step on the CPU at tiny sizes: tests the harness, measures no GPU")
    ap.add_argument("--steps", default=",".join(STEPS), help="of " + ",".join(STEPS))
    ap.add_argument("--redo", default="", help="steps to run again though results.json has them")
    ap.add_argument("--fresh", action="store_true", help="forget results.json")
    ap.add_argument("--time-budget", type=float, default=0,
                    help="start no step or row past S seconds; exit 3 (rerun to go on)")
    ap.add_argument("--items", type=int, help="JPEGs to generate (default 8192; smoke 64)")
    ap.add_argument("--batch", type=int, help="training batch (default 128; smoke 4)")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--models", help="default resnet18,resnet50 (smoke resnet18)")
    ap.add_argument("--workers", help="num_workers, default 1,2,4,8,12,16 (smoke 0,2)")
    ap.add_argument("--pins", default="off,on", help="pin_memory values (default off,on)")
    ap.add_argument("--precision", help="default amp (smoke fp32)")
    ap.add_argument("--rate-iters", type=int, help="timed steps of --gpu-rate (default 50; smoke 3)")
    ap.add_argument("--rate-warmup", type=int, help="warm-up steps (default 10; smoke 1)")
    ap.add_argument("--decode-items", type=int, help="default 1024 (smoke 16)")
    ap.add_argument("--decode-batch", type=int, help="default 128 (smoke 4)")
    ap.add_argument("--decode-reps", type=int, default=3)
    ap.add_argument("--probe-args", default="",
                    help="more options for the probe step, e.g. \"--repeat-s 60 --oversub-reps 1\" "
                    "where a lease of the GPU is short")
    ap.add_argument("--device", help=argparse.SUPPRESS)
    ap.add_argument("--ctest-log", help="`ctest -R calib_gpu`'s output (gpu_validate.sh's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", help="also write the Markdown here")
    ap.add_argument("--update", metavar="PAGE.md",
                    help="put the tables between the file's gpu_validate markers")
    ap.add_argument("--report-only", action="store_true",
                    help="print (and with --update write) the tables of OUT_DIR/results.json from "
                    "an earlier run, measuring nothing")
    ap.add_argument("--check", action="store_true",
                    help="only say whether this machine can run it (exit 0, or 77)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--row-workers", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--row-pin", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.update and a.cpu_smoke:
        ap.error("--update with --cpu-smoke: CPU smoke figures never go into a results page")
    s = a.cpu_smoke
    defaults = dict(items=(64, 8192), batch=(4, 128), models=("resnet18", "resnet18,resnet50"),
                    workers=("0,2", "1,2,4,8,12,16"), precision=("fp32", "amp"),
                    rate_iters=(3, 50), rate_warmup=(1, 10), decode_items=(16, 1024),
                    decode_batch=(4, 128))
    for k, (smoke, full) in defaults.items():
        if getattr(a, k) is None:
            setattr(a, k, smoke if s else full)
    if a.one:
        return a
    a.models = [m for m in a.models.split(",") if m]
    a.workers = [int(w) for w in a.workers.split(",") if w]
    a.pins = [{"off": False, "on": True}[p] for p in a.pins.split(",") if p]
    a.steps = [x for x in a.steps.split(",") if x]
    a.redo = [x for x in a.redo.split(",") if x]
    for x in a.steps + a.redo:
        if x not in STEPS:
            ap.error(f"--steps/--redo: {x}: not one of {', '.join(STEPS)}")
    a.out_dir = os.path.abspath(a.out_dir or os.path.join(
        ROOT, "build", "gpu-validate-smoke" if s else "gpu-validate"))
    a.data = os.path.abspath(a.data or os.path.join(a.out_dir, "data"))
    return a


def device_or_skip(a):
    """The device to run on: cuda, or cpu with --cpu-smoke; exit 77 saying
    why where there is no CUDA device (nothing is measured then)."""
    try:
        import torch
        import torchvision  # noqa: F401
    except ImportError as e:
        base.skip(TOOL, f"PyTorch is missing ({e}): no CUDA device: nothing measured")
    if a.cpu_smoke:
        return "cpu"
    if not torch.cuda.is_available():
        why = ("PyTorch here is built without CUDA" if not torch.version.cuda
               else "torch.cuda.is_available() is false")
        base.skip(TOOL, f"no CUDA device: nothing measured (torch {torch.__version__} in "
                     f"{sys.executable}: {why}; gpu_validate.sh --python PY names a python3 whose "
                     "PyTorch has CUDA; --cpu-smoke tests the harness on the CPU)")
    return "cuda"


def report_only(a):
    """The tables of OUT_DIR/results.json, from a run on another machine
    (the GPU machine's files brought back), without PyTorch or a device."""
    path = os.path.join(a.out_dir, "results.json")
    try:
        with open(path) as f:
            st = json.load(f)
    except (OSError, ValueError) as e:
        log(f"--report-only: {path}: {e}")
        return 2
    if a.update and st.get("mode") != "gpu":
        log(f"--report-only: {path} holds a {st.get('mode')} run: --update takes GPU runs only")
        return 2
    text = report(st, a, ctest_outcome(a.ctest_log)) + "\n"
    print(text)
    if a.update and base.update_markers(a.update, TOOL, text, f"validation/gpu/{TOOL}.py"):
        return 2
    return 0


def main():
    a = parse_args()
    if a.one:
        return run_one(a)
    if a.report_only:
        return report_only(a)
    a.device = device_or_skip(a)
    if a.check:
        return 0
    import datetime
    import platform

    import torch

    from stallsim import gpurate

    start = time.monotonic()
    os.makedirs(a.out_dir, exist_ok=True)
    st = State(os.path.join(a.out_dir, "results.json"),
               "cpu-smoke" if a.cpu_smoke else "gpu", a.fresh)
    name = gpurate.device_name(a.device)
    if st.d.get("device_name", name) != name:
        log(f"{st.path} holds a run on {st.d['device_name']}, not {name}: starting afresh")
        st.d = dict(mode=st.d["mode"])
    st.d.update(device_name=name, host=platform.node(), torch=torch.__version__)
    # when the run began: a rerun that goes on keeps it
    st.d.setdefault("when", datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))
    if not fx.has_jpegs(a.data):
        log(f"generating {a.items} JPEGs in {a.data}", a.cpu_smoke)
    fx.generate(a.bin, a.data, a.items)

    def out_of_time():
        return a.time_budget > 0 and time.monotonic() - start > a.time_budget

    failed, stopped = [], False
    for step in STEPS:
        if step not in a.steps or (step in st.d and step not in a.redo and step != "train"):
            continue
        if out_of_time():
            stopped = True
            break
        try:
            if step == "train":
                if step in a.redo:
                    st.d["train"] = {}
                if "probe" not in st.d or "rate" not in st.d:
                    raise RuntimeError("train needs the probe and rate steps' results")
                stopped = not step_train(a, st, out_of_time)
            else:
                st.d[step] = globals()[f"step_{step}"](a, st.d)
            st.save()
        except (RuntimeError, OSError, subprocess.CalledProcessError, ValueError) as e:
            log(f"{step}: FAILED: {e}", a.cpu_smoke)
            failed.append(step)
        if stopped:
            break
    text = report(st.d, a, ctest_outcome(a.ctest_log)) + "\n"
    print(text)
    for path in [os.path.join(a.out_dir, "gpu_validate.md")] + ([a.out] if a.out else []):
        with open(path, "w") as f:
            f.write(text)
    if a.update and (failed or stopped):
        log(f"{a.update} left as it is: the run is not whole")
    elif a.update and base.update_markers(a.update, TOOL, text, f"validation/gpu/{TOOL}.py"):
        return 2
    s = summarize(train_rows(st.d, a.models, a.workers, a.pins))
    tag = f"{SMOKE}: " if a.cpu_smoke else ""
    if s["n"]:
        log(f"{tag}{s['n']} training rows: median |error| {s['median']:.1%} (worst "
            f"{s['worst']:.1%}), median {s['median_pp']:.1f} pp in stall")
    if stopped:
        log(f"stopped at the time budget ({a.time_budget:g} s): rerun to go on from {st.path}")
        return 3
    if failed:
        log(f"failed steps: {', '.join(failed)}")
        return 1
    log(f"{tag}done: {a.out_dir}/gpu_validate.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
