"""Tar shards read over HTTP, as WebDataset reads them: an IterableDataset
whose DataLoader workers split the shards (worker w of W takes shards w,
w + W, ... of an order shuffled each epoch), GET each shard whole with one
request and stream its members through tarfile as the bytes come, then
decode and transform each JPEG as stallsim.pipeline.make_dataset's ImageFolder does.
Standard library (http.client, tarfile) and Debian's python3-torch,
python3-torchvision, python3-pil.

    ds = HttpTarShards("http://127.0.0.1:8080/", ["s0000.tar", ...], seed=1)
    for epoch in range(2):
        ds.set_epoch(epoch)       # before the epoch's iterator is made
        for batch in DataLoader(ds, batch_size=32, num_workers=4): ...

write_shards(paths, S, folder) packs files into tar shards of S members in
the given order (what `dataset.shard_items: S` means to stallsim). With
buffer=B each worker shuffles its samples as WebDataset's shuffle(B) does
(stallsim's loader.shuffle_buffer with loader.kind: pytorch); the label of
each item is its index, so a batch's shards can be counted."""

import http.client
import io
import os
import random
import tarfile
import urllib.parse

from torch.utils.data import IterableDataset, get_worker_info

from stallsim.pipeline import standard_transform


def write_shards(paths, S, folder):
    """Packs paths, in order, into folder/s00000.tar, ... of S members each
    (the last may hold fewer); returns the shard names."""
    os.makedirs(folder, exist_ok=True)
    names = []
    for h in range(0, len(paths), S):
        name = f"s{h // S:05d}.tar"
        with tarfile.open(os.path.join(folder, name), "w", format=tarfile.USTAR_FORMAT) as t:
            for i, p in enumerate(paths[h:h + S]):
                t.add(p, arcname=f"{h + i:07d}.jpg")
        names.append(name)
    return names


class HttpTarShards(IterableDataset):
    def __init__(self, base_url, shards, seed=1, transform=None, buffer=0):
        url = urllib.parse.urlsplit(base_url)
        if url.scheme != "http" or not url.hostname:
            raise ValueError(f"HttpTarShards: expected an http:// base URL, got {base_url!r}")
        self.host, self.port = url.hostname, url.port or 80
        self.prefix = url.path if url.path.endswith("/") else url.path + "/"
        self.shards, self.seed, self.epoch = list(shards), seed, 0
        self.transform = transform or standard_transform()
        self.buffer = buffer

    def set_epoch(self, epoch):
        self.epoch = epoch

    def _mine(self):
        # Every worker draws the same order (same seed and epoch) and takes its share.
        order = list(self.shards)
        random.Random(self.seed * 1000003 + self.epoch).shuffle(order)
        info = get_worker_info()
        if info is None:
            return order
        return order[info.id::info.num_workers]

    def _members(self):
        """(index, JPEG bytes) of this worker's shards in stream order; the
        index is the member's name, its position in write_shards' order."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            for name in self._mine():
                conn.request("GET", self.prefix + urllib.parse.quote(name))
                r = conn.getresponse()
                if r.status != 200:
                    r.read()
                    raise OSError(f"GET {name}: HTTP {r.status}")
                # "r|": members in stream order as the response arrives.
                with tarfile.open(fileobj=r, mode="r|") as t:
                    for m in t:
                        if not m.isfile():
                            continue
                        yield int(m.name.split(".")[0]), t.extractfile(m).read()
                r.read()  # the tar's end padding: the connection is reused
        finally:
            conn.close()

    def _shuffled(self, samples):
        """WebDataset's shuffle(bufsize, initial=100), in the worker, before
        decoding: each sample joins the buffer, with a second while it holds
        fewer than bufsize; once it holds `initial` a uniform draw leaves."""
        info = get_worker_info()
        rng = random.Random((self.seed * 1000003 + self.epoch) * 4099 + (info.id if info else 0))
        buf, initial = [], min(100, self.buffer)
        for x in samples:
            buf.append(x)
            if len(buf) < self.buffer:
                try:
                    buf.append(next(samples))
                except StopIteration:
                    pass
            if len(buf) >= initial:
                k = rng.randrange(len(buf))
                buf[k], buf[-1] = buf[-1], buf[k]
                yield buf.pop()
        while buf:
            k = rng.randrange(len(buf))
            buf[k], buf[-1] = buf[-1], buf[k]
            yield buf.pop()

    def __iter__(self):
        """(image tensor, the item's index) in the worker's order."""
        from PIL import Image

        samples = self._members()
        if self.buffer > 0:
            samples = self._shuffled(samples)
        for index, data in samples:
            img = Image.open(io.BytesIO(data)).convert("RGB")
            yield self.transform(img), index
