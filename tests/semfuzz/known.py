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
        "invariant": "mono:cores",
        "why": "several jobs sharing a hard disk (SPTF positioning depends on the requests "
               "queued), an object store with a first-byte tail (the draws go to GETs in "
               "their order, which the knob changes), a prefix's GET/s cap (whose window "
               "serves the jobs' GETs in the order they come: seed 1 after the dali merge, "
               "two jobs of DALI readers at 10 GET/s, +7.0 %, 484 GETs taking 48 s of a "
               "66 s run) or a tier: turning a resource up lengthens the last job's end by "
               "3-7 %; plausibly those mechanisms, not yet shown to be",
        "files": "sim/kinds/storage_hdd.c, storage_object.c, sim/engine/sim.c (tier)",
        "case": """\
dataset.items: 132
dataset.item_kb: 50.9
server.count: 4
server.storage.shared: true
server.storage.kind: hdd
prep.decode_ms_per_mb: 20.1
prep.decode_ms_per_item: 2.34
prep.augment_ms: 3.42
jobs:
- {gpus: 1, batch_per_gpu: 4, gpu_items_per_s: 173.0, cpus: 3}
- {gpus: 8, batch_per_gpu: 1, count: 1, gpu_items_per_s: 469.0, prefetch_batches: 8, prep.out_kb: 685.0,
  cpus: 3}
""",
        "knob": "cores",
        "figures": "cores up: the last job ends at 2.7353 s, was 2.68143 s (+2.0 %), seed 5; "
                   "the earlier case (two jobs on a disk under a tiny cache) is now excused as "
                   "shared-cache-timing, its last job's hits having fallen",
        "match": lambda s, f: f["where"].startswith("makespan") and (
            _t(s, "server.storage.kind") == "hdd"
            or (_t(s, "server.storage.first_byte_p99_ms") or 0) > 0
            or (_t(s, "server.storage.prefix_get_s") or 0) > 0
            or (_t(s, "server.tier.cache_gb") or 0) > 0),
    },
    "static-pool-slowdown": {
        "invariants": ["mono:cores"],
        "invariant": "mono:cores",
        "why": "the pool's slowdown under the memory-bandwidth bound (server.mem_gbps with "
               "prep.mem_mb_per_item) is fixed at init from the cores its window can keep "
               "busy; a shuffle buffer makes that window every core, so a storage-bound run "
               "whose items trickle in still prepares each at the bound's share of all the "
               "cores, and doubling them lengthens each item and the epoch's tail (+4.4 %). "
               "A slowdown that follows the cores busy at each moment would fix it: the pool "
               "and the model both",
        "files": "sim/kinds/loader_pool.c (pool_init's slowdown), model/model.c (inst_cores)",
        "case": """\
dataset.items: 2996
dataset.item_kb: 289.0
dataset.item_kb_cv: 0.78
server.count: 2
server.network.gbit_s: 1
server.mem_gbps: 52.7
prep.mem_mb_per_item: 10.6
server.storage.kind: object
server.storage.first_byte_ms: 1.61
server.storage.conn_mb_s: 13.8
server.storage.max_mb_s: 190.0
loader.shuffle_buffer: 1000
jobs:
- {gpus: 2, batch_per_gpu: 8, gpu_items_per_s: 218.0}
""",
        "knob": "cores",
        "figures": "cores up: epoch 10.0825 s -> 10.5311 s (+4.4 %), storage-bandwidth bound both",
        "match": lambda s, f: (_t(s, "server.mem_gbps") or 0) > 0
        and (_t(s, "prep.mem_mb_per_item") or 0) > 0,
    },
}


def match(scen, f):
    for k, e in KNOWN.items():
        if f["invariant"] in e["invariants"] and e["match"](scen, f):
            return k
    return None
