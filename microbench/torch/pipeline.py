"""The PyTorch input pipeline the probe times and the validation harness runs.

By default, torchvision's ImageFolder with the standard ImageNet training
transforms (RandomResizedCrop 224, horizontal flip, ToTensor, Normalize), as
the torchvision reference scripts and most users' training scripts have it.
A user's own Dataset comes in as "module:factory": factory(root) returns a
map-style Dataset whose items are (tensor, label); the module is imported
from the working directory or PYTHONPATH.

Debian's python3 with python3-torch and python3-torchvision
(scripts/setup.sh --torch)."""

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


def make_dataset(root, spec="imagefolder"):
    """The dataset the user trains on: ImageFolder(root) with the standard
    transforms, or factory(root) for spec "module:factory"."""
    if spec == "imagefolder":
        from torchvision import datasets

        return datasets.ImageFolder(root, transform=standard_transform())
    if ":" not in spec:
        print(f"--dataset {spec}: expected imagefolder or module:factory", file=sys.stderr)
        sys.exit(2)
    mod, fn = spec.split(":", 1)
    sys.path.insert(0, os.getcwd())
    try:
        factory = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        print(f"--dataset {spec}: cannot load {fn} from {mod}: {e}", file=sys.stderr)
        sys.exit(2)
    return factory(root)


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


def timed_epochs(loader_for, epochs, compute_s, on_batch=None):
    """The harnesses' training loop: for each epoch the DataLoader
    loader_for(epoch) gives, every batch taken and the GPU emulated by
    sleeping compute_s; returns each epoch's wall time (from making its
    iterator to the end of its last step) and the last epoch's batches;
    on_batch(epoch, batch), when given, sees each batch first."""
    import time

    eps, nb = [], 0
    for e in range(epochs):
        dl = loader_for(e)
        t0 = time.perf_counter()
        nb = 0
        for batch in dl:
            if on_batch:
                on_batch(e, batch)
            time.sleep(compute_s)
            nb += 1
        eps.append(time.perf_counter() - t0)
    return eps, nb
