"""The PyTorch input pipeline the probe times and the validation harness runs.

By default, torchvision's ImageFolder with the standard ImageNet training
transforms (RandomResizedCrop 224, horizontal flip, ToTensor, Normalize), as
the torchvision reference scripts and most users' training scripts have it.
A user's own Dataset comes in as "module:factory": factory(root) returns a
map-style Dataset whose items are (tensor, label); the module is imported
from the working directory or PYTHONPATH.

stallsim's per-job pipelines (jobs.N.prep.pipeline) as PyTorch runs them,
for `stallsim-probe --pipelines --audio` and validation/pipelines.py:
pipeline_dataset(root, "image_train" | "image_eval" | "decode" | "audio").

Debian's python3 with python3-torch, python3-torchvision and
python3-torchaudio (scripts/setup.sh --torch)."""

import importlib
import os
import sys

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def standard_transform():
    from torchvision import transforms

    return transforms.Compose(
        [
            transforms.RandomResizedCrop(224),
            transforms.RandomHorizontalFlip(),
            transforms.ToTensor(),
            transforms.Normalize(MEAN, STD),
        ]
    )


def eval_transform():
    """torchvision's evaluation transform (the reference scripts' validation
    loader): what `prep.pipeline: image_eval` stands for."""
    from torchvision import transforms

    return transforms.Compose(
        [
            transforms.Resize(256),
            transforms.CenterCrop(224),
            transforms.ToTensor(),
            transforms.Normalize(MEAN, STD),
        ]
    )


class DecodedSize:
    """The transform of a decode-only item: ImageFolder's loader has decoded
    the image (PIL open + convert("RGB")); keep only its size, so the item
    costs its decode and collate has next to nothing to copy."""

    def __call__(self, img):
        import torch

        return torch.tensor(img.size)


# The audio pipeline calibrate's C version runs (sim/benchlib/audio_prep.h):
# 16-bit PCM at 44.1 kHz, resampled to 16 kHz, 80 log-mel bins over 400-point
# frames every 160 samples (25 ms / 10 ms).
AUDIO_RATE_IN, AUDIO_RATE, AUDIO_FFT, AUDIO_HOP, AUDIO_MELS = 44100, 16000, 400, 160, 80


class WavClips:
    """A speech loader's dataset: each *.wav under root (sorted) loaded with
    torchaudio.load (16-bit PCM; channels mixed to mono), resampled to
    16 kHz, turned into a log-mel spectrogram, and padded or cut to `frames`
    frames (a batch needs one shape; 0: the longest clip's). Items are
    (tensor, 0); samples lists (path, 0) as ImageFolder's does."""

    def __init__(self, root, frames=0):
        import torchaudio

        self.samples = [(os.path.join(d, f), 0) for d, _, fs in sorted(os.walk(root))
                        for f in sorted(fs) if f.endswith(".wav")]
        if not self.samples:
            raise ValueError(f"{root}: no .wav files")
        # Made once, as a training script makes them: Resample keeps its
        # filter kernel, MelSpectrogram its window and filter bank.
        self.resample = torchaudio.transforms.Resample(AUDIO_RATE_IN, AUDIO_RATE)
        self.mel = torchaudio.transforms.MelSpectrogram(
            sample_rate=AUDIO_RATE, n_fft=AUDIO_FFT, hop_length=AUDIO_HOP, n_mels=AUDIO_MELS)
        if frames <= 0:
            longest = max(os.path.getsize(p) for p, _ in self.samples)
            frames = (longest // 2 * AUDIO_RATE // AUDIO_RATE_IN) // AUDIO_HOP + 1
        self.frames = frames

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        import torch
        import torchaudio

        x, rate = torchaudio.load(self.samples[i][0])
        if rate != AUDIO_RATE_IN:
            raise ValueError(f"{self.samples[i][0]}: {rate} Hz; expected {AUDIO_RATE_IN}")
        m = torch.log(self.mel(self.resample(x.mean(0))) + 1e-6)
        n = m.shape[1]
        if n >= self.frames:
            return m[:, : self.frames].contiguous(), 0
        return torch.nn.functional.pad(m, (0, self.frames - n)), 0


def pipeline_dataset(root, name):
    """The dataset of one of stallsim's pipelines over root: image_train and
    image_eval (ImageFolder with the training or evaluation transforms),
    decode (ImageFolder's decode alone), audio (WavClips)."""
    if name == "audio":
        return WavClips(root)
    from torchvision import datasets

    tf = {"image_train": standard_transform, "image_eval": eval_transform,
          "decode": DecodedSize}[name]()
    return datasets.ImageFolder(root, transform=tf)


def make_dataset(root, spec="imagefolder"):
    """The dataset the user trains on: ImageFolder(root) with the standard
    transforms, or factory(root) for spec "module:factory"."""
    if spec == "imagefolder":
        from torchvision import datasets

        return datasets.ImageFolder(root, transform=standard_transform())
    if ":" not in spec:
        print(f"--dataset {spec}: expected imagefolder or module:factory", file=sys.stderr)
        sys.exit(2)
    return load_factory(spec, "--dataset")(root)


def load_factory(spec, flag):
    """The callable a "module:factory" spec names, the module imported from
    the working directory or PYTHONPATH; exit 2 saying why when it cannot."""
    mod, fn = spec.split(":", 1)
    sys.path.insert(0, os.getcwd())
    try:
        return getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        print(f"{flag} {spec}: cannot load {fn} from {mod}: {e}", file=sys.stderr)
        sys.exit(2)


def item_paths(ds):
    """The file behind each item where the dataset says (ImageFolder's
    samples), else None."""
    samples = getattr(ds, "samples", None)
    if samples and isinstance(samples[0], (tuple, list)):
        return [p for p, _ in samples]
    return None


class ReadyItems:
    """A dataset of one prepared item repeated: what remains of a loader's
    cost when the items cost nothing (collate, transfer, the loop)."""

    def __init__(self, item, n):
        self.item, self.n = item, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        x, y = self.item
        return x.clone(), y


def evict(paths):
    """Drops the files' pages from the page cache (POSIX_FADV_DONTNEED on
    each), as `stallsim calibrate` and `measure --cache page-cold` do.
    DONTNEED keeps dirty pages, so freshly written files are synced first."""
    os.sync()
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def warm(paths):
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass


def timed_epochs(loader_for, epochs, compute_s, on_batch=None, on_epoch_end=None, firsts=None,
                 share=None):
    """The harnesses' training loop: for each epoch the DataLoader
    loader_for(epoch) gives, every batch taken and the GPU emulated by
    sleeping compute_s; returns each epoch's wall time (from making its
    iterator to the end of its last step) and the last epoch's batches;
    on_batch(epoch, batch), when given, sees each batch first (a real
    training step, with compute_s 0), and on_epoch_end(), when given, runs
    inside the epoch's time after its last batch (waiting for the GPU);
    firsts, when given, gets each epoch's seconds from making its iterator
    to its first batch in hand (how soon the workers deliver); share, when
    given, is share(batch): the part of a full batch the GPU steps for (a
    partial last batch sleeps in proportion, as the scenario's GPU steps
    it), and the batches returned are then full batches' worth."""
    import time

    eps, nb = [], 0
    for e in range(epochs):
        dl = loader_for(e)
        t0 = time.perf_counter()
        nb = 0
        for batch in dl:
            if firsts is not None and nb == 0:
                firsts.append(time.perf_counter() - t0)
            if on_batch:
                on_batch(e, batch)
            part = share(batch) if share else 1
            time.sleep(compute_s * part)
            nb += part
        if on_epoch_end:
            on_epoch_end()
        eps.append(time.perf_counter() - t0)
    return eps, nb
