"""Holds the start-up phase (startup.*, docs/startup.md) to a real PyTorch
DataLoader whose workers each resolve their dataset over HTTP before their
first item, against nginx answering 503 above a request rate (issue 56;
docs/validation/startup.md).

  python3 -m validation.startup [--bin build/sim/stallsim] [--items 300] [--quick]

Each row starts nginx in a network namespace of its own
(validation/fixtures/objstore.py) serving --items small files behind a
first-byte latency (the echo module's echo_sleep) and, where the row says,
nginx's limit_req at R requests a second (a burst of a tenth of a second,
nodelay: its leaky bucket standing for a prefix's windows) answering 503.
Inside the namespace a DataLoader of W workers iterates an IterableDataset
whose every worker, when first iterated, sends a HEAD for each file with T
threads (each its own keep-alive connection), retrying a 503 after
botocore's back-off U(0, 1) x min(cap, base x 2^attempt), then yields its
first item. Measured: launch (the iterator's creation) to the last worker's
last answer (start-up), launch to the first item (first step), HEADs and
503s counted by the client.

`stallsim run` predicts the same: startup.resolve every-worker, head_each,
no LIST, threads T; the object store's first byte is what this host's
store answered (a probe of sequential HEADs before the rows), prefix_get_s
R, the client's back-off; PyTorch's workers W. Compared: start-up time
and the first step (simulator), requests exactly, 503s reported.
The second table: a real IterableDataset over fewer shards than workers,
split as WebDataset splits them, the items each worker yields against
stallsim's idle-readers warning.

Targets: start-up median |error| <= 15 % (--quick: 25 %), requests exact.
Exit 0 met, 1 not, 77 when this machine cannot (not root, no nginx or its
echo module, no torch)."""

import http.client
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from validation.base import Harness, Skip, Target, median_abs, worst_abs
from validation.fixtures import objstore

LATENCY_MS = 5
BASE_MS, CAP_MS = 50, 1000
# (workers, requests/s the store admits or 0, threads a resolver)
ROWS = [(1, 0, 1), (4, 0, 1), (4, 0, 4), (4, 300, 1), (8, 400, 2), (8, 200, 1)]
QUICK_ROWS = [(4, 0, 1), (8, 400, 2)]
# (shards, workers)
SPLIT_ROWS = [(3, 8), (8, 8), (16, 4)]


def head_all(port, names, threads, seed):
    """HEADs of names with `threads` connections, each 503 retried after a
    back-off: (answered, refused)."""
    lock, left = threading.Lock(), list(names)
    counts = {"ok": 0, "refused": 0}
    rng = random.Random(seed)

    def one():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while True:
            with lock:
                if not left:
                    break
                name = left.pop()
            attempt = 0
            while True:
                c.request("HEAD", "/" + name)
                r = c.getresponse()
                r.read()
                if r.status != 503:
                    break
                with lock:
                    counts["refused"] += 1
                    u = rng.random()
                time.sleep(u * min(CAP_MS, BASE_MS * 2 ** attempt) / 1e3)
                attempt += 1
            if r.status != 200:
                raise RuntimeError(f"HEAD /{name}: {r.status}")
            with lock:
                counts["ok"] += 1
        c.close()

    ts = [threading.Thread(target=one) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return counts["ok"], counts["refused"]


def resolving_dataset(port, names, threads):
    """An IterableDataset whose every worker resolves the data set first."""
    import torch.utils.data as tud

    class Resolving(tud.IterableDataset):
        def __iter__(self):
            info = tud.get_worker_info()
            wid = info.id if info else 0
            ok, refused = head_all(port, names, threads, seed=wid)
            yield {"worker": wid, "done": time.time(), "heads": ok, "refused": refused}

    return Resolving()


def storm_row(a, r):
    """Inside the store's namespace: one launch, measured."""
    import torch.utils.data as tud
    workers, _, threads = r["row"]
    names = sorted(os.listdir(a.data))[:a.items]
    ds = resolving_dataset(r["port"], names, threads)
    loader = tud.DataLoader(ds, batch_size=None, num_workers=workers)
    t0 = time.time()
    it = iter(loader)
    first = next(it)
    t_first = time.time() - t0
    got = [first] + list(it)
    return {"startup_s": max(g["done"] for g in got) - t0, "first_step_s": t_first,
            "heads": sum(g["heads"] for g in got), "refused": sum(g["refused"] for g in got)}


def probe_row(a, r):
    """Sequential HEADs on one connection: the store's answer time."""
    names = sorted(os.listdir(a.data))[:50]
    c = http.client.HTTPConnection("127.0.0.1", r["port"], timeout=30)
    ts = []
    for n in names:
        t = time.perf_counter()
        c.request("HEAD", "/" + n)
        c.getresponse().read()
        ts.append(time.perf_counter() - t)
    return {"first_byte_ms": statistics.median(ts) * 1e3,
            "p99_ms": sorted(ts)[int(0.99 * (len(ts) - 1))] * 1e3}


def split_row(a, r):
    """A real DataLoader over `shards` shards of 10 items split over its
    workers as WebDataset's split_by_worker does: items per worker."""
    import torch.utils.data as tud
    shards, workers = r["row"]

    class Sharded(tud.IterableDataset):
        def __iter__(self):
            info = tud.get_worker_info()
            for s in range(shards)[info.id::info.num_workers]:
                for k in range(10):
                    yield info.id, s * 10 + k

    per = [0] * workers
    for wid, _ in tud.DataLoader(Sharded(), batch_size=None, num_workers=workers):
        per[int(wid)] += 1
    return {"per_worker": per}


class Startup(Harness):
    name = "startup"
    title = "Start-up storms and idle readers: stallsim against a real DataLoader and nginx"
    data = "/var/tmp/stallsim-startup/data"
    items = 300
    needs = ("torch",)
    targets = [Target("start-up median |error|", "median", 0.15, quick=0.25),
               Target("requests counted wrong", "requests_off", 0, fmt="{:d}")]

    def configure(self, a):
        self.quick = a.quick

    def requires(self, a):
        if os.geteuid() != 0:
            return "not root: the store needs a network namespace"
        try:
            objstore.check(latency=True, rate=False, client=False)
        except objstore.Cannot as e:
            return str(e)
        return None

    def setup(self, a):
        os.makedirs(a.data, exist_ok=True)
        for k in range(a.items):
            p = os.path.join(a.data, f"f{k:05d}.bin")
            if not os.path.exists(p):
                with open(p, "wb") as f:
                    f.write(os.urandom(1000))

    def run_row(self, a, r):
        kind = r["kind"]
        return {"probe": probe_row, "storm": storm_row, "split": split_row}[kind](a, r)

    def in_store(self, a, r, rate):
        with objstore.ObjectStore(a.data, latency_ms=LATENCY_MS, limit_rps=rate) as st:
            r = dict(r, port=st.port)
            return self.isolated(a, r, wrap=lambda cmd: st.exec_prefix + cmd, timeout=600)

    def rows(self, a):
        return QUICK_ROWS if a.quick else ROWS

    def predict(self, a, row, m):
        workers, rate, threads = row
        fd = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
        fd.write(scenario(a.items, self.first_byte_ms, rate, workers, threads))
        fd.close()
        try:
            out = subprocess.run([a.bin, "run", fd.name, "--format", "json", "--epochs", "1"],
                                 check=True, capture_output=True, text=True).stdout
        finally:
            os.unlink(fd.name)
        first = json.loads(out)["variants"][0]["jobs"][0]["epochs"][0]
        return {"m": m, "sim": first["sim"], "model": first["model"]}

    def run(self, a):
        self.setup(a)
        self.first_byte_ms = self.in_store(a, {"kind": "probe"}, None)["first_byte_ms"]
        results = []
        for row in self.rows(a):
            m = self.in_store(a, {"kind": "storm", "row": row}, row[1] or None)
            res = self.predict(a, row, m)
            results.append((row, res))
            print(f"{self.tool}: {row}: start-up {m['startup_s']:.3f} s measured, "
                  f"{res['sim']['startup_s']:.3f} s predicted", file=sys.stderr, flush=True)
        splits = [(row, self.isolated(a, {"kind": "split", "row": row}))
                  for row in SPLIT_ROWS]
        return self.report(a, (results, splits))

    def report(self, a, both):
        results, splits = both
        return report_text(a, self.first_byte_ms, results, splits)


def scenario(items, first_byte_ms, rate, workers, threads):
    store = (f"{{kind: object, first_byte_ms: {first_byte_ms:.4f}, conn_mb_s: 1000, "
             f"prefixes: 1, prefix_get_s: {rate}, retry_base_ms: {BASE_MS}, "
             f"retry_cap_ms: {CAP_MS}}}")
    return (f"epochs: 1\ndataset: {{items: {items}, item_kb: 1}}\n"
            f"server: {{cpus: 2, gpus: 1, cache_gb: 0, storage: {store}}}\n"
            "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
            f"loader: {{kind: pytorch, num_workers: {workers}, cache: none}}\n"
            f"startup: {{resolve: every-worker, list: false, head_each: true, "
            f"threads: {threads}}}\n"
            "jobs: [{gpus: 1, batch_per_gpu: 1, compute_s_per_batch: 0.001}]\n")


def idle_predicted(a, shards, workers):
    """The idle workers stallsim's warning names (0 when it warns not)."""
    y = (f"epochs: 1\ndataset: {{items: {shards * 10}, item_kb: 1, shard_items: 10}}\n"
         f"loader: {{kind: pytorch, num_workers: {workers}}}\n"
         "jobs: [{gpus: 1, batch_per_gpu: 1, compute_s_per_batch: 0.001}]\n")
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
        f.write(y)
        f.flush()
        err = subprocess.run([a.bin, "check", f.name], capture_output=True, text=True).stderr
    m = re.search(r"(\d+) workers idle", err)
    return int(m.group(1)) if m else 0


def report_text(a, first_byte_ms, results, splits):
    lines = [f"The store answered a HEAD in {first_byte_ms:.2f} ms (median of 50 on one "
             f"connection; nginx's echo_sleep {LATENCY_MS} ms); {a.items} files; back-off "
             f"U(0, 1) x min({CAP_MS}, {BASE_MS} x 2^attempt) ms.", "",
             "| workers | GET/s cap | threads | start-up measured | sim | model | error (sim) "
             "| first step measured | sim | HEADs measured / predicted | 503s measured / sim |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    errs, off = [], 0
    for (w, rate, th), res in results:
        m, s, mo = res["m"], res["sim"], res["model"]
        e = s["startup_s"] / m["startup_s"] - 1
        errs.append(e)
        off += int(m["heads"] != s["startup_requests"])
        lines.append(f"| {w} | {rate or '-'} | {th} | {m['startup_s']:.3f} s | "
                     f"{s['startup_s']:.3f} s | {mo['startup_s']:.3f} s | {e:+.1%} | "
                     f"{m['first_step_s']:.3f} s | {s['first_step_s']:.3f} s | "
                     f"{m['heads']} / {s['startup_requests']:.0f} | "
                     f"{m['refused']} / {s['startup_throttled']:.0f} |")
    lines += ["", f"Start-up: median |error| {median_abs(errs):.1%}, worst {worst_abs(errs):.1%}.",
              "", "Readers left idle: a real DataLoader over fewer shards than workers "
              "(shard i to worker i mod workers, as WebDataset's split_by_worker).", "",
              "| shards | workers | items per worker (measured) | idle measured | idle stallsim |",
              "|---|---|---|---|---|"]
    for (shards, workers), m in splits:
        per = m["per_worker"]
        idle = sum(1 for x in per if x == 0)
        pred = idle_predicted(a, shards, workers)
        off += int(idle != pred)
        lines.append(f"| {shards} | {workers} | {per} | {idle} | {pred} |")
    return "\n".join(lines) + "\n", {"median": median_abs(errs), "requests_off": off}


if __name__ == "__main__":
    Startup.main()
