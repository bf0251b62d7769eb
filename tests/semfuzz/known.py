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
    "makespan-shared-device": {
        "invariants": ["mono:gpu", "mono:cache", "mono:tier-cache", "mono:storage-bw",
                       "mono:cores", "mono:nic", "mono:tier-bw"],
        "invariant": "mono:gpu",
        "why": "several jobs sharing a hard disk (SPTF positioning depends on the requests "
               "queued), an object store with a first-byte tail (the draws go to GETs in "
               "their order, which the knob changes), a prefix's GET/s cap (whose window "
               "serves the jobs' GETs in the order they come: seed 1 after the dali merge, "
               "two jobs of DALI readers at 10 GET/s, +7.0 %, 484 GETs taking 48 s of a "
               "66 s run) or a tier: turning a resource up lengthens the last job's end by "
               "3-7 %; plausibly those mechanisms, not yet shown to be",
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
            or (_t(s, "server.storage.prefix_get_s") or 0) > 0
            or (_t(s, "server.tier.cache_gb") or 0) > 0),
    },
}


def match(scen, f):
    for k, e in KNOWN.items():
        if f["invariant"] in e["invariants"] and e["match"](scen, f):
            return k
    return None
