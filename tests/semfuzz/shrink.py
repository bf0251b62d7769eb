"""shrink: reduce a failing scenario to a minimal one failing the same invariant.

Greedy: try each reduction (a key back to its default, a job dropped, counts
halved, fewer epochs, servers, GPUs, copies; figures rounded), keep it when
the scenario is still valid and still fails the same invariant, until no
reduction applies or the budget of runs is spent.

    small, findings = shrink(scen, "lower:storage-bw", fails, budget=200)

`fails(scen)` runs the scenario (and for mono:KNOB its perturbed twin) and
returns the findings of that invariant, or None when stallsim refuses it.
"""
import math

import gen

REQUIRED = {"dataset.items", "dataset.item_kb"}
# Keys whose removal breaks a rule with another key: removed together.
TOGETHER = [
    ("prep.decode", "prep.huffman_ms_per_mb", "prep.huffman_ms_per_item",
     "prep.gpu_decode_ms_per_mp", "dataset.megapixels", "prep.hw_decode_mp_s",
     "prep.hw_decoder_load"),
    ("server.mem_gbps", "prep.mem_mb_per_item"),
    tuple(f"server.storage.latency_qd{q}_ms" for q in (1, 4, 16, 32)),
    ("server.tier.cache_gb", "server.tier.cache", "server.tier.read_mb_s",
     "server.tier.latency_ms", "server.tier.read_iops", "server.tier.queue_depth"),
    ("server.storage.kind",) + tuple(
        k for k in ("server.storage.first_byte_ms", "server.storage.first_byte_p99_ms",
                    "server.storage.conn_mb_s", "server.storage.max_mb_s",
                    "server.storage.max_get_s", "server.storage.reader_threads",
                    "server.storage.connections_per_process", "server.storage.range_mb",
                    "server.storage.connections_per_server", "server.storage.prefixes",
                    "server.storage.prefix_get_s", "server.storage.retry_base_ms",
                    "server.storage.retry_cap_ms", "server.storage.head",
                    "server.storage.list_each_epoch", "server.storage.rpm",
                    "server.storage.seek_full_ms", "server.storage.seek_track_ms",
                    "server.storage.capacity_gb", "server.storage.seq_mb_s",
                    "server.storage.ncq", "server.storage.peak_mb_s",
                    "server.storage.latency_qd1_ms", "server.storage.latency_qd4_ms",
                    "server.storage.latency_qd16_ms", "server.storage.latency_qd32_ms")),
    ("dataset.shard_items", "loader.open_shards"),
    ("dataset.shard_mb", "loader.open_shards"),
    ("server.gpu_mem_gb",),
]


def _candidates(s):
    """Reductions of s, most drastic first."""
    t = s["top"]
    out = []

    def with_(fn):
        c = gen.clone(s)
        if fn(c) is not False:
            out.append(c)

    if len(s["jobs"]) > 1:
        for i in range(len(s["jobs"])):
            with_(lambda c, i=i: c["jobs"].pop(i))
    if t.get("epochs", 3) > 1:
        with_(lambda c: c["top"].__setitem__("epochs", 1))
        with_(lambda c: c["top"].__setitem__("epochs", c["top"].get("epochs", 3) - 1))
    # keys back to their defaults: in halves, quarters, ... then one by one
    # (the related ones together first: a rule may need both)
    keys = [k for k in t if k not in REQUIRED]
    size = len(keys) // 2
    while size > 1:
        for i in range(0, len(keys), size):
            with_(lambda c, ks=keys[i:i + size]: [c["top"].pop(k) for k in ks])
        size //= 2
    for group in TOGETHER:
        if any(k in t for k in group):
            with_(lambda c, g=group: [c["top"].pop(k, None) for k in g])
    for k in keys:
        with_(lambda c, k=k: c["top"].pop(k))
    for i, j in enumerate(s["jobs"]):
        for k in list(j):
            if k not in ("gpus", "gpu_items_per_s", "compute_s_per_batch"):
                with_(lambda c, i=i, k=k: c["jobs"][i].pop(k))
        if j.get("count", 1) > 1:
            with_(lambda c, i=i: c["jobs"][i].__setitem__("count", 1))
        if j["gpus"] > 1:
            with_(lambda c, i=i: c["jobs"][i].__setitem__("gpus", c["jobs"][i]["gpus"] // 2))
        if "compute_s_per_batch" in j:
            with_(lambda c, i=i: _to_rate(c["jobs"][i]))
    if t["dataset.items"] > 16:
        with_(lambda c: c["top"].__setitem__("dataset.items", c["top"]["dataset.items"] // 2))
    for k in ("server.count", "server.gpus", "server.cpus"):
        if t.get(k, 1) > 1:
            with_(lambda c, k=k: c["top"].__setitem__(k, c["top"][k] // 2))
            with_(lambda c, k=k: c["top"].__setitem__(k, 1))
    for k, x in list(t.items()):
        if isinstance(x, float) and x != _round1(x):
            with_(lambda c, k=k: c["top"].__setitem__(k, _round1(c["top"][k])))
    for i, j in enumerate(s["jobs"]):
        for k, x in list(j.items()):
            if isinstance(x, float) and x != _round1(x):
                with_(lambda c, i=i, k=k: c["jobs"][i].__setitem__(k, _round1(x)))
    return out


def _to_rate(j):
    j["gpu_items_per_s"] = gen._r(j.get("batch_per_gpu", 256) / j.pop("compute_s_per_batch"))


def _round1(x):
    """One significant digit (two when it is 1.x): the figure a person writes."""
    if x == 0:
        return 0.0
    e = math.floor(math.log10(abs(x)))
    sig = 2 if abs(x) / 10 ** e < 2 else 1
    return float(f"{x:.{sig}g}")


def shrink(scen, fails, budget=200):
    cur = gen.clone(scen)
    found = fails(cur)
    runs = 1
    if not found:
        return cur, None, runs
    progress = True
    while progress and runs < budget:
        progress = False
        for c in _candidates(cur):
            if runs >= budget:
                break
            runs += 1
            f = fails(c)
            if f:
                cur, found, progress = c, f, True
                break
    return cur, found, runs
