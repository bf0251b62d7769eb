"""The model's own GPU rate (`stallsim-probe --gpu-rate`): real forward and
backward passes of a torchvision model (resnet18, resnet50, ... or a
"module:factory" of your own) at a batch and precision on this host's
device, timed on synthetic input already on the device, as the published
per-GPU rates (scenarios/gpus/rates.yaml) are measured: the items/s a job's
`jobs.N.gpu_items_per_s` takes. validation/gpu/gpu_validate.py trains with the
same Trainer over a real DataLoader.

Precision: "amp" is torch.autocast to float16 with a GradScaler (CUDA),
"bf16" autocast to bfloat16 (no scaler), "fp32" neither; "auto" is amp on
CUDA and fp32 elsewhere. Nothing here imports torch until it is called."""

import json
import os
import sys
import time

PRECISIONS = ("auto", "amp", "bf16", "fp32")


def resolve_precision(precision, device_type):
    """The precision to run: "auto" is amp on CUDA and fp32 elsewhere; amp
    (float16 with a GradScaler) needs CUDA."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    if precision == "auto":
        return "amp" if device_type == "cuda" else "fp32"
    if precision == "amp" and device_type != "cuda":
        raise ValueError("precision amp (float16 autocast with a GradScaler) needs a CUDA device: "
                         "use fp32 or bf16 on the CPU")
    return precision


def items_per_s(batch, iters, seconds):
    """Items a second over `iters` steps of `batch` items in `seconds`."""
    if batch < 1 or iters < 1:
        raise ValueError(f"batch {batch} and iters {iters} must be >= 1")
    if not seconds > 0:
        raise ValueError(f"{iters} steps took {seconds} s: no rate")
    return batch * iters / seconds


def build_model(spec, num_classes=1000):
    """torchvision.models' `spec` (untrained weights), or factory() of a
    "module:factory" spec (imported as --dataset's are)."""
    if ":" in spec:
        from stallsim import pipeline

        return pipeline.load_factory(spec, "--model")()
    import torchvision

    fn = getattr(torchvision.models, spec, None)
    if not callable(fn):
        raise ValueError(f"--model {spec}: not a torchvision model (resnet18, resnet50, ...) "
                         "nor module:factory")
    try:
        return fn(weights=None, num_classes=num_classes)
    except TypeError:  # torchvision before 0.13
        return fn(pretrained=False, num_classes=num_classes)


def grad_scaler(torch, enabled):
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):  # torch 2.3 on
        return amp.GradScaler("cuda", enabled=enabled)
    return torch.cuda.amp.GradScaler(enabled=enabled)


class Trainer:
    """One training step of a model: inputs to the device, forward and loss
    under the precision's autocast, backward, SGD (momentum 0.9) through
    the GradScaler (a no-op unless amp)."""

    def __init__(self, spec, device, precision, lr=0.1):
        import torch

        self.torch = torch
        self.device = torch.device(device)
        self.precision = resolve_precision(precision, self.device.type)
        self.dtype = {"amp": torch.float16, "bf16": torch.bfloat16}.get(self.precision)
        if self.device.type == "cuda":
            torch.backends.cudnn.benchmark = True
        self.model = build_model(spec).to(self.device)
        self.model.train()
        self.opt = torch.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
        self.loss = torch.nn.CrossEntropyLoss()
        self.scaler = grad_scaler(torch, self.precision == "amp")

    def step(self, x, y):
        torch = self.torch
        x = x.to(self.device, non_blocking=True)
        y = y.to(self.device, non_blocking=True)
        self.opt.zero_grad(set_to_none=True)
        with self.autocast():
            loss = self.loss(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()

    def autocast(self):
        if self.dtype is None:  # fp32: no autocast (CPU autocast warns at float32)
            import contextlib

            return contextlib.nullcontext()
        return self.torch.autocast(device_type=self.device.type, dtype=self.dtype)

    def sync(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)

    def synthetic(self, batch, size=224):
        """A batch of random images and labels already on the device."""
        torch = self.torch
        return (torch.randn(batch, 3, size, size, device=self.device),
                torch.randint(0, 1000, (batch,), device=self.device))

    def warm_up(self, batch, steps):
        """`steps` steps on a synthetic batch (cuDNN's autotuning, the
        allocator's first blocks), then wait for the device."""
        x, y = self.synthetic(batch)
        for _ in range(steps):
            self.step(x, y)
        self.sync()


def device_name(device):
    import torch

    d = torch.device(device)
    if d.type == "cuda":
        return torch.cuda.get_device_name(d)
    import platform

    return f"cpu ({platform.processor() or platform.machine()}, {len(os.sched_getaffinity(0))} cores)"


def measure(spec, device, precision, batch, iters, warmup):
    """The model's items/s over `iters` timed steps after `warmup`, on
    synthetic input already on the device: a dict for the JSON line."""
    t = Trainer(spec, device, precision)
    t.warm_up(batch, warmup)
    x, y = t.synthetic(batch)
    t0 = time.perf_counter()
    for _ in range(iters):
        t.step(x, y)
    t.sync()
    secs = time.perf_counter() - t0
    rate = items_per_s(batch, iters, secs)
    out = dict(model=spec, batch=batch, precision=t.precision, device=t.device.type,
               device_name=device_name(device), iters=iters, warmup=warmup, seconds=secs,
               items_per_s=rate, set=f"jobs.0.gpu_items_per_s={rate:.6g}")
    if t.device.type == "cuda":
        out["max_memory_gb"] = t.torch.cuda.max_memory_allocated(t.device) / 1e9
    return out


def rate_yaml(results, when, host):
    """The --out file: each model's rate, ready for jobs.N.gpu_items_per_s."""
    lines = [f"# stallsim GPU rates: written by stallsim-probe --gpu-rate on {host} at {when}",
             "# synthetic input on the device; jobs.N.gpu_items_per_s is items_per_s",
             "gpu_rates:"]
    for r in results:
        lines.append(f"  - model: \"{r['model']}\"")
        if "error" in r:
            lines.append(f"    error: {json.dumps(r['error'])}")
            continue
        for k in ("items_per_s", "batch", "precision", "device", "device_name", "iters", "seconds"):
            v = r[k]
            lines.append(f"    {k}: {json.dumps(v) if isinstance(v, str) else format(v, '.6g')}")
    return "\n".join(lines) + "\n"


def main_rate(a, log, write_profile):
    """stallsim-probe --gpu-rate: one JSON line a model on stdout; --out
    the same as YAML. Exit 2 when the device cannot be used, 1 when no
    model could be measured (each failure said on stderr)."""
    import datetime
    import platform

    import torch

    device = a.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        print(f"probe: --device {device}: no CUDA device (torch {torch.__version__}, "
              f"built with CUDA {torch.version.cuda})", file=sys.stderr)
        sys.exit(2)
    try:
        resolve_precision(a.precision, torch.device(device).type)
    except ValueError as e:
        print(f"probe: --precision: {e}", file=sys.stderr)
        sys.exit(2)
    torch.manual_seed(a.seed)
    results = []
    for spec in [m for m in a.model.split(",") if m]:
        log(f"--gpu-rate: {spec}, batch {a.batch}, {a.precision}, on {device}: {a.warmup} warm-up "
            f"and {a.iters} timed steps")
        try:
            r = measure(spec, device, a.precision, a.batch, a.iters, a.warmup)
            log(f"{spec}: {r['items_per_s']:.1f} items/s ({r['device_name']}, batch {a.batch}, "
                f"{r['precision']}): --set {r['set']}")
        except (RuntimeError, ValueError, ImportError) as e:  # out of memory, a bad model
            msg = str(e).strip().splitlines()[0][:300] if str(e).strip() else type(e).__name__
            log(f"{spec}: not measured: {msg}")
            r = dict(model=spec, batch=a.batch, precision=a.precision, device=device, error=msg)
            if device.startswith("cuda"):
                torch.cuda.empty_cache()
        results.append(r)
        print(json.dumps(r), flush=True)
    if a.out:
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        write_profile(a.out, rate_yaml(results, now, platform.node()))
        log(f"wrote {a.out}")
    return 0 if any("error" not in r for r in results) else 1
