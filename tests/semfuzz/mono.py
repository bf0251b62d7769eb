"""mono: more of a resource never lengthens an epoch, except by a named mechanism.

For a valid scenario one knob is turned up (cores, DRAM cache, tier cache,
storage bandwidth, NIC, tier bandwidth, a faster GPU) and every job's epochs
in both predictors are compared with the base run's. An epoch longer by more
than MONO_TOL is a finding `mono:KNOB`, unless `excuse` names the mechanism
by which more of that resource can legitimately cost time here: those are
listed in EXCUSES, each with why, and counted apart (never silently).

    knob = pick(scen, rng)
    up = perturb(scen, knob)
    findings, excused = compare(scen, knob, base_doc, up_doc)
"""
import gen

MONO_TOL = 0.02

KNOBS = ("cores", "cache", "tier-cache", "storage-bw", "nic", "tier-bw", "gpu")

# mechanism name -> why more of the knob's resource may lengthen an epoch
EXCUSES = {
    "fifo-anomaly": "FIFO is not a stack algorithm: a larger FIFO cache can hit less "
                    "(Belady's anomaly)",
    "linux-two-list": "the Linux page cache's two lists are not a stack algorithm: promotion "
                      "depends on the list sizes, so a larger cache can hit less",
    "two-level": "a larger DRAM cache changes which items reach the tier (levels not "
                 "inclusive): the tier's own hits can fall by more than DRAM's rise",
    "epoch-phase": "jobs sharing a server's cores, cache, storage or NICs drift in phase: "
                   "one that gets ahead spends its later epochs beside the others' slower "
                   "early ones, so a single epoch may lengthen while the job's total (its end "
                   "time) does not; with several jobs the fuzzer holds each job's total to the "
                   "rule, and counts longer single epochs here",
    "neighbour-demand": "with several jobs sharing cores, a cache, a storage device or a NIC, "
                        "turning a resource up for all lets a neighbour demand more of what "
                        "they share: one job's total may lengthen; the fuzzer then holds the "
                        "last job's end (the makespan) to the rule instead",
    "throttle-backoff": "a store refusing requests over a prefix's rate (503 SlowDown): the "
                        "refused clients sleep a random back-off drawn in request order, so a "
                        "faster resource reorders the requests, which are refused and how long "
                        "their clients sleep; windows of the rate left unused while they sleep "
                        "are lost (retry storms: real clients show it too)",
    "gil-handoff": "a thread loader whose training loop takes its GIL back from the pool "
                   "(loader.gil_reacquires_per_batch > 0) waits a switch interval times the "
                   "share of time the pool holds the GIL; more cores, a faster store or cache "
                   "let the pool work faster and hold it more, so each step waits longer "
                   "(CPython's forced switch: Python/ceval_gil.c; semfuzz seed 11, 2 -> 4 "
                   "cores +11 % in both predictors, none with the key at 0)",
    "tail-draws": "an object store with a first-byte tail (first_byte_p99_ms above the "
                  "median): the simulator draws each GET's first byte from the seed in the "
                  "order the GETs come, so a knob that changes which items miss or when "
                  "hands the draws to other GETs; a small epoch then moves by the draws "
                  "alone (semfuzz seed 11: 353 items, p99 147 ms, the same scenario at six "
                  "seeds 1.26-1.69 s, and a doubled cache +4.3 % at one of them). The "
                  "model's mean latency has no draws: it is held to the rule",
    "remote-slower": "partitioned caching (loader.dist_cache: partitioned) over a NIC slower "
                     "than the local storage: a larger cache turns local reads into other "
                     "servers' hits, which come over the slower link (CoorDL's partitioned "
                     "cache pays off only where the network outruns the storage; semfuzz seed "
                     "53: 1 Gbit/s against 525 MB/s, the remote share 24 -> 48 %, the network "
                     "binding, +3.1 %)",
    "shared-cache-timing": "streams sharing one cache (partitioned jobs on a server, PyTorch "
                           "workers reading concurrently, coordinated jobs advancing together) "
                           "interleave by timing: a faster resource reorders the accesses, and "
                           "the hits of an LRU/MinIO cache smaller than the data move with the order",
}


def _top(scen, key, default):
    return scen["top"].get(key, default)


def applicable(scen):
    t = scen["top"]
    k = ["cores", "cache", "gpu", "nic"]
    if t.get("server.tier.cache_gb", 0) > 0:
        k += ["tier-cache", "tier-bw"]
    k.append("storage-bw")
    return k


def pick(scen, rng):
    return rng.choice(applicable(scen))


def perturb(scen, knob):
    s = gen.clone(scen)
    t = s["top"]
    if knob == "cores":
        t["server.cpus"] = 2 * t.get("server.cpus", 24)
        for j in s["jobs"]:
            if j.get("cpus"):
                j["cpus"] *= 2
    elif knob == "cache":
        ds_gb = t["dataset.items"] * t["dataset.item_kb"] / 1e6
        c = t.get("server.cache_gb", 0)
        t["server.cache_gb"] = gen._r(2 * c if c > 0 else 0.3 * ds_gb)
    elif knob == "tier-cache":
        t["server.tier.cache_gb"] = gen._r(2 * t.get("server.tier.cache_gb", 0))
    elif knob == "tier-bw":
        t["server.tier.read_mb_s"] = gen._r(2 * t.get("server.tier.read_mb_s", 3000))
    elif knob == "nic":
        t["server.network.gbit_s"] = 2 * t.get("server.network.gbit_s", 40)
    elif knob == "gpu":
        for j in s["jobs"]:
            if j.get("gpu_items_per_s"):
                j["gpu_items_per_s"] = gen._r(2 * j["gpu_items_per_s"])
            else:
                j["compute_s_per_batch"] = gen._r(j["compute_s_per_batch"] / 2)
    elif knob == "storage-bw":
        kind = t.get("server.storage.kind", "fixed")
        key = {"fixed": ("server.storage.read_mb_s", 525), "ssd": ("server.storage.peak_mb_s", 525),
               "hdd": ("server.storage.seq_mb_s", 200),
               "object": ("server.storage.conn_mb_s", 80)}[kind]
        t[key[0]] = gen._r(2 * t.get(key[0], key[1]))
        if kind == "object" and t.get("server.storage.max_mb_s", 0) > 0:
            t["server.storage.max_mb_s"] = gen._r(2 * t["server.storage.max_mb_s"])
    return s


def _shared_streams(scen):
    """Does a cache see accesses whose interleaving depends on timing?"""
    t = scen["top"]
    inst = sum(j.get("count", 1) for j in scen["jobs"])
    if t.get("loader.kind") == "pytorch":
        return True
    if inst > 1:
        return True
    return False


def excuse(scen, knob, base_m, up_m, src=None):
    """The named mechanism allowing this knob to lengthen an epoch here, or None."""
    t = scen["top"]
    cache = t.get("loader.cache", "lru")
    tier = t.get("server.tier.cache_gb", 0) > 0
    tier_cache = t.get("server.tier.cache", "lru")
    if knob in ("cache", "tier-cache"):
        if cache == "fifo" or (tier and tier_cache == "fifo"):
            return "fifo-anomaly"
        if cache == "linux" or (tier and tier_cache == "linux"):
            return "linux-two-list"
        if knob == "cache" and tier:
            return "two-level"
        if knob == "cache" and t.get("loader.dist_cache") == "partitioned" and \
                t.get("server.network.gbit_s", 40) * 125 < _storage_mb_s(t):
            return "remote-slower"
    if base_m.get("storage_retries", 0) > 0 or up_m.get("storage_retries", 0) > 0:
        return "throttle-backoff"
    if t.get("loader.kind") == "threads" and t.get("loader.gil_reacquires_per_batch", 0) > 0:
        return "gil-handoff"
    if _shared_streams(scen) and cache != "none" and \
            abs(up_m.get("hit_rate", 0) - base_m.get("hit_rate", 0)) + \
            abs(up_m.get("tier_hit_rate", 0) - base_m.get("tier_hit_rate", 0)) > 1e-9 and \
            up_m.get("hit_rate", 0) + up_m.get("tier_hit_rate", 0) < \
            base_m.get("hit_rate", 0) + base_m.get("tier_hit_rate", 0):
        return "shared-cache-timing"
    if src == "sim" and t.get("server.storage.kind") == "object" and \
            t.get("server.storage.first_byte_p99_ms", 0) > t.get("server.storage.first_byte_ms", 15):
        return "tail-draws"
    return None


def _storage_mb_s(t):
    """A server's local storage read rate in MB/s, by its kind's bandwidth key
    (the keys' defaults as the storage-bw knob reads them)."""
    kind = t.get("server.storage.kind", "fixed")
    key, default = {"fixed": ("server.storage.read_mb_s", 525),
                    "ssd": ("server.storage.peak_mb_s", 525),
                    "hdd": ("server.storage.seq_mb_s", 200),
                    "object": ("server.storage.max_mb_s", 0)}[kind]
    v = t.get(key, default)
    return v if v > 0 else float("inf")


def _total(job, src):
    rows = [e.get(src) for e in job["epochs"]]
    if not all(rows):
        return None
    m = dict(rows[-1])
    m["epoch_s"] = sum(r["epoch_s"] for r in rows)
    m["hit_rate"] = sum(r.get("hit_rate", 0) for r in rows) / len(rows)
    m["tier_hit_rate"] = sum(r.get("tier_hit_rate", 0) for r in rows) / len(rows)
    return m


def compare(scen, knob, base, up):
    findings, excused = [], []
    bj, uj = base["variants"][0]["jobs"], up["variants"][0]["jobs"]
    several = len(bj) > 1
    if several:
        for src in ("model", "sim", "sample"):
            ta = [_total(j, src) for j in bj]
            tb = [_total(j, src) for j in uj]
            if None in ta or None in tb:
                continue
            a, b = max(x["epoch_s"] for x in ta), max(x["epoch_s"] for x in tb)
            if b > a * (1 + MONO_TOL) + 1e-9:
                f = {"invariant": f"mono:{knob}", "where": f"makespan {src}",
                     "detail": f"{knob} up: the last job ends at {b:.6g} s, "
                               f"was {a:.6g} s ({b / a - 1:+.1%})",
                     "figures": {"base_s": a, "up_s": b, "change": round(b / a - 1, 4)}}
                # the mechanisms that lengthen a job's epochs lengthen the
                # last job's end too (the last job's totals, both runs)
                last = max(range(len(tb)), key=lambda i: tb[i]["epoch_s"])
                why = excuse(scen, knob, ta[last], tb[last], src)
                if why:
                    f["excuse"] = why
                    excused.append(f)
                else:
                    findings.append(f)
    for ji, (a, b) in enumerate(zip(bj, uj)):
        rows = list(zip(a["epochs"], b["epochs"]))
        if several:
            rows.append(({"epoch": "all", **{s: _total(a, s) for s in ("model", "sim", "sample")}},
                         {"epoch": "all", **{s: _total(b, s) for s in ("model", "sim", "sample")}}))
        for ea, eb in rows:
            for src in ("model", "sim", "sample"):
                ma, mb = ea.get(src), eb.get(src)
                if not ma or not mb:
                    continue
                ta, tb = ma["epoch_s"], mb["epoch_s"]
                if tb <= ta * (1 + MONO_TOL) + 1e-9:
                    continue
                f = {"invariant": f"mono:{knob}",
                     "where": f"job {ji} epoch {ea['epoch']} {src}",
                     "detail": f"{knob} up: epoch {ta:.6g} s -> {tb:.6g} s ({tb / ta - 1:+.1%})",
                     "figures": {"base_s": ta, "up_s": tb, "change": round(tb / ta - 1, 4),
                                 "hit_base": ma.get("hit_rate"), "hit_up": mb.get("hit_rate"),
                                 "bottleneck_base": ma.get("bottleneck"),
                                 "bottleneck_up": mb.get("bottleneck")}}
                why = excuse(scen, knob, ma, mb, src)
                if not why and several:
                    why = "epoch-phase" if ea["epoch"] != "all" else "neighbour-demand"
                if why:
                    f["excuse"] = why
                    excused.append(f)
                else:
                    findings.append(f)
    return findings, excused


# ---- goodput against the failure rate ----

MTBF_DOWN = 4  # the twin's failures come this many times as often


def mtbf_twin(scen):
    """scen with failures MTBF_DOWN times as often, or None without failures."""
    m = scen["top"].get("failures.mtbf_gpu_h", 0)
    if not m:
        return None
    s = gen.clone(scen)
    s["top"]["failures.mtbf_gpu_h"] = gen._r(m / MTBF_DOWN)
    return s


# The simulator's failures in the base run over which its goodput must fall.
SIM_MIN_RESTARTS = 20


def mtbf_compare(base, up):
    """goodput:mtbf: no job's goodput rises when its failures come more
    often. The model's closed form falls strictly. The simulator's draws
    come from the same seed with every gap between failures shorter, but a
    failure's lost work is where it falls in its segment, which the shorter
    gaps move: one path's goodput can rise (semfuzz seed 3: one restart
    each, 0.1008 -> 0.1011). Its figure is held to the rule only over many
    failures (SIM_MIN_RESTARTS in the base run), where the mean rules."""
    out = []
    for ji, (a, b) in enumerate(zip(base["variants"][0]["jobs"], up["variants"][0]["jobs"])):
        ga, gb = a.get("goodput") or {}, b.get("goodput") or {}
        for src in ("model", "sim"):
            if src not in ga or src not in gb:
                continue
            x, y = ga[src]["goodput"], gb[src]["goodput"]
            if src == "sim" and (ga[src].get("restarts") or 0) < SIM_MIN_RESTARTS:
                continue
            if y > x + 1e-6:
                out.append({"invariant": "goodput:mtbf", "where": f"job {ji} {src}",
                            "detail": f"failures {MTBF_DOWN}x as often: goodput {x:.6f} -> "
                                      f"{y:.6f}",
                            "figures": {"base": x, "up": y,
                                        "restarts_base": ga[src].get("restarts"),
                                        "restarts_up": gb[src].get("restarts")}})
    return out
