"""known: findings the lead knows of and has not fixed yet.

Each entry names its invariants, a minimal case (YAML, as the shrinker
printed it, with the figures it gave), why it is open and where, and
`match(scen, finding)`: which generated scenarios' findings it covers. The
CI run reports every match as KNOWN (never silent) and passes; a finding no
entry matches fails it. Remove an entry once its fix lands:
`semfuzz.py --check-known` runs each minimal case and says which no longer
fail.
"""


def _t(scen, k, d=None):
    return scen["top"].get(k, d)


KNOWN = {
    "pytorch-contention": {
        "invariants": ["bounds:cpu_util", "lower:cpu", "mono:cache", "mono:storage-bw",
                       "mono:cores", "mono:gpu", "mono:nic", "mono:tier-cache", "mono:tier-bw"],
        "invariant": "lower:cpu",
        "why": "loader_pytorch.c's slowdown() fixes one CPU contention factor per run from the "
               "DRAM cache fraction and the store's service time (issue 29, item 1): workers "
               "are costed as waiting on I/O that does not happen, so a PyTorch epoch can be "
               "shorter than its CPU-seconds over the cores, the model's cpu_util passes 1, and "
               "a larger cache or faster storage can lengthen an epoch (even epoch 1, where "
               "nothing hits). The lead's CPU-as-a-resource work replaces the factor.",
        "files": "sim/kinds/loader_pytorch.c, model/model.c",
        "case": """\
dataset.items: 1012
dataset.item_kb: 761.0
server.cpus: 1
loader.kind: pytorch
loader.num_workers: 2
epochs: 1
jobs:
- {gpus: 2, batch_per_gpu: 8, gpu_items_per_s: 117.0}
""",
        "figures": "model epoch 15.74 s < 16.31 s of CPU on 1 core (ratio 0.965); "
                   "mono:cache on `gpus: 1, batch_per_gpu: 8, cpus: 1, num_workers: 8`, 493 "
                   "items of 181 KB: cache 0 -> 0.027 GB lengthens epoch 1 (no hits) "
                   "2.390 -> 2.449 s in the model",
        "match": lambda s, f: _t(s, "loader.kind") == "pytorch",
    },
    "uniform-core-slowdown": {
        "invariants": ["mono:cores"],
        "invariant": "mono:cores",
        "why": "with prep.scaling or the memory-bandwidth bound (server.mem_gbps, "
               "prep.mem_mb_per_item), the pool's c cores all run at effective(c) / c of a "
               "core, whether or not they are busy: when the prefetch window holds fewer "
               "items than cores, more cores only slow the busy ones (16 -> 32 cores: each "
               "at 19.5/32 of a core, 12 of them busy). The slowdown should follow the cores "
               "in use.",
        "files": "sim/engine/sim.c (prep pool), model/model.c (prep rate)",
        "case": """\
dataset.items: 137
dataset.item_kb: 5.49
server.cpus: 16
server.mem_gbps: 152.0
prep.mem_mb_per_item: 7.89
server.storage.kind: object
epochs: 1
jobs:
- {gpus: 2, batch_per_gpu: 3, gpu_items_per_s: 1350.0}
""",
        "knob": "cores",
        "figures": "sim epoch 0.1952 s at 16 cores, 0.2030 s at 32 (+4.0%), prep-bound",
        "match": lambda s, f: bool(_t(s, "prep.scaling") or _t(s, "server.mem_gbps")),
    },
    "model-sim-unmarked": {
        "invariants": ["model-sim"],
        "invariant": "model-sim",
        "why": "this stallsim's JSON has no model_differs field yet (the 'impossible' helper "
               "adds it for |vs_model| > 5 %), and these rows are not `approximate`. Once the "
               "field is in the JSON this entry no longer matches and every unmarked "
               "difference fails. The classes found (VALIDATION.md, 'Semantic fuzzer'): the "
               "prefetch window narrower than the prep cores (small batch_per_gpu or "
               "prefetch_batches 1; the model runs every core), lock-step iterations waiting "
               "for the slowest GPU's batch under small batches and item_kb_cv (the model "
               "takes the mean), PyTorch with record shards, and an object store with item "
               "size spread under max_mb_s.",
        "files": "model/model.c",
        "case": """\
dataset.items: 726
dataset.item_kb: 61.2
server.storage.read_mb_s: 110.0
server.storage.latency_ms: 0.0279
prep.decode_ms_per_mb: 30.6
prep.eval_ms: 2.7
epochs: 1
jobs:
- {gpus: 1, batch_per_gpu: 32, gpu_items_per_s: 2950.0, prefetch_batches: 1, prep.pipeline: image_eval}
""",
        "figures": "sim 0.517 s vs model 0.411 s (+25.7 %), both storage-bandwidth; "
                   "prefetch_batches 2: +1.1 %",
        "match": lambda s, f: not f["figures"].get("model_differs_field", True),
    },
    "text-negative-zero": {
        "invariants": ["bounds:text"],
        "invariant": "bounds:text",
        "why": "the text table prints a stall or vs_model that rounds to zero from below as "
               "-0.0 (a fetch stall of -1e-12 s from the differential split, a simulator a "
               "hair faster than the model); issue 29 item 4 says no output contains -0.0. "
               "The 'impossible' helper's report-layer check removes it.",
        "files": "sim/report/report.c",
        "case": """\
dataset.items: 2000
dataset.item_kb: 100
server.cache_gb: 1
loader.cache: minio
epochs: 2
jobs:
- {gpus: 1, batch_per_gpu: 32, gpu_items_per_s: 500}
""",
        "figures": "epoch 2: `fetch_stall_s -0.0 (-0.0%)` or `vs_model -0.0%`",
        "match": lambda s, f: f["figures"].get("token") in ("-0.0", "-0", "-0.00"),
    },
    "model-storage-over-capacity": {
        "invariants": ["bounds:storage_util", "lower:storage-bw"],
        "invariant": "bounds:storage_util",
        "why": "the model's storage time for an epoch comes out a little under the bytes "
               "over the device's bandwidth (storage_util up to 1.005, epoch 1-2 % under "
               "bytes / bandwidth), seen with PyTorch workers and an object store's max_mb_s "
               "over record shards, and PyTorch over a fixed device with drop_last; not yet "
               "analysed further",
        "files": "model/model.c",
        "case": """\
dataset.items: 525
dataset.item_kb: 1020.0
server.storage.kind: fixed
server.storage.latency_ms: 0.0357
prep.decode_ms_per_mb: 13.3
prep.decode_ms_per_item: 0.458
loader.kind: pytorch
loader.cache: minio
loader.num_workers: 8
loader.drop_last: true
loader.transfer_ms_per_item: 0.0143
seed: 375
epochs: 1
jobs:
- {gpus: 2, batch_per_gpu: 8, gpu_items_per_s: 4290.0}
""",
        "figures": "model epoch 1.0069 s < 1.020 s of bytes at 525 MB/s (ratio 0.987); "
                   "storage_util 1.0045 on an object store at max_mb_s 140",
        "match": lambda s, f: f["where"].endswith("model"),
    },
    "makespan-shared-device": {
        "invariants": ["mono:gpu", "mono:cache", "mono:tier-cache", "mono:storage-bw",
                       "mono:cores", "mono:nic", "mono:tier-bw"],
        "invariant": "mono:gpu",
        "why": "several jobs sharing a hard disk (SPTF positioning depends on the requests "
               "queued), an object store with a first-byte tail (the draws go to GETs in "
               "their order, which the knob changes) or a tier: turning a resource up "
               "lengthens the last job's end by 3-5 %; plausibly those mechanisms, not yet "
               "shown to be",
        "files": "sim/kinds/storage_hdd.c, storage_object.c, sim/engine/sim.c (tier)",
        "case": """\
dataset.items: 2539
dataset.item_kb: 11.1
server.cpus: 64
server.cache_gb: 0.0141
server.storage.kind: hdd
prep.audio_ms_per_mb: 63.7
prep.audio_ms_per_item: 2.5
epochs: 1
jobs:
- {gpus: 2, batch_per_gpu: 16, gpu_items_per_s: 144.0}
- {gpus: 1, batch_per_gpu: 8, count: 2, gpu_items_per_s: 1150.0, prefetch_batches: 1, prep.pipeline: audio}
""",
        "knob": "gpu",
        "figures": "GPUs 2x faster: the last job ends at 9.636 s, was 9.153 s (+5.3 %)",
        "match": lambda s, f: f["where"].startswith("makespan") and (
            _t(s, "server.storage.kind") == "hdd"
            or (_t(s, "server.storage.first_byte_p99_ms") or 0) > 0
            or (_t(s, "server.tier.cache_gb") or 0) > 0),
    },
}


def match(scen, f):
    for k, e in KNOWN.items():
        if f["invariant"] in e["invariants"] and e["match"](scen, f):
            return k
    return None
