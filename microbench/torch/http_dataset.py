"""An ImageFolder read over HTTP: each item is one GET of its JPEG from a
server that serves the tree (an object store, nginx), then the same decode
and transforms as stallsim.pipeline.make_dataset's ImageFolder. What a user's Dataset
over S3 or MinIO does, without a cloud SDK: http.client from the standard
library, one kept-alive connection per process, made afresh in each
DataLoader worker (a connection is not shared across fork).

    ds = HttpImageFolder("/data/train", "http://127.0.0.1:8080/")
    # ds[i] GETs http://127.0.0.1:8080/<class>/<file>.jpg

As a --dataset for microbench/torch/probe.py (this folder is on its
sys.path; for stallsim-probe, put it on PYTHONPATH): "http_dataset:from_env"
with STALLSIM_DATA_URL set to the base URL (the tree under --data lists the
items; STALLSIM_DATA_KEEPALIVE=0 opens a new connection for every GET).
Debian's python3 with python3-torch, python3-torchvision, python3-pil."""

import http.client
import io
import os
import urllib.parse

from torch.utils.data import Dataset

from stallsim.pipeline import standard_transform


class HttpImageFolder(Dataset):
    def __init__(self, root, base_url, transform=None, keep_alive=True):
        from torchvision import datasets

        url = urllib.parse.urlsplit(base_url)
        if url.scheme != "http" or not url.hostname:
            raise ValueError(f"HttpImageFolder: expected an http:// base URL, got {base_url!r}")
        self.host, self.port = url.hostname, url.port or 80
        self.prefix = url.path if url.path.endswith("/") else url.path + "/"
        # The local tree lists the items; samples keep its paths (the probe
        # and the harnesses warm or evict them), GETs use the path under root.
        self.root = root
        self.samples = datasets.ImageFolder(root).samples
        self.transform = transform or standard_transform()
        self._conn, self._pid = None, None
        self.keep_alive = keep_alive  # False: a new connection for every GET

    def __len__(self):
        return len(self.samples)

    def _get(self, rel):
        if self._pid != os.getpid():  # a forked worker: its own connection
            self._conn, self._pid = None, os.getpid()
        path = self.prefix + urllib.parse.quote(rel)
        for attempt in (0, 1):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
            try:
                self._conn.request("GET", path)
                r = self._conn.getresponse()
                body = r.read()
            except (http.client.HTTPException, ConnectionError):
                # The server closed a kept-alive connection: once more on a new one.
                self._conn.close()
                self._conn = None
                if attempt:
                    raise
                continue
            if not self.keep_alive:
                self._conn.close()
                self._conn = None
            if r.status != 200:
                raise OSError(f"GET {path}: HTTP {r.status}")
            return body
        raise OSError(f"GET {path}: no answer")

    def __getitem__(self, i):
        from PIL import Image

        path, y = self.samples[i]
        img = Image.open(io.BytesIO(self._get(os.path.relpath(path, self.root)))).convert("RGB")
        return self.transform(img), y


def from_env(root):
    """factory(root) for probe.py --dataset: the base URL from STALLSIM_DATA_URL."""
    url = os.environ.get("STALLSIM_DATA_URL")
    if not url:
        raise SystemExit("http_dataset: set STALLSIM_DATA_URL to the server's base URL")
    return HttpImageFolder(root, url, keep_alive=os.environ.get("STALLSIM_DATA_KEEPALIVE") != "0")
