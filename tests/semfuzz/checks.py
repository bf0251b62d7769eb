"""checks: the invariants one `stallsim run --format json` must satisfy.

Each check takes the parsed JSON (one variant: the fuzzer writes none) and
the scenario's effective values, and returns findings, each a dict:

    {"invariant": "lower:storage-bw", "where": "job 0 epoch 2 sim",
     "detail": "...", "figures": {...}}

Invariant names are "family:what"; the shrinker keeps a case only while it
fails the same name. Families: bounds, lower, conserve, model-sim, startup,
goodput (checkpoints and failures; goodput:mtbf from mono.py) (and echo,
json, crash from the driver; mono from monotonicity.py).

Lower bounds are computed from the scenario alone (the key values), never
from the simulator's internals; the bytes, requests and hit rates a row
reports are used as the demand it claims, so a row cannot be faster than
its own demand allows on any single resource.
"""
import math

# Relative slack for a lower bound: rounding in the JSON (6 significant
# digits) and the fluid model's continuous batches.
LB_TOL = 0.01
# Model against simulator: the brief's 5 %.
MODEL_TOL = 0.05
PAGE = 4096  # the kernel's page: what the page cache reads and holds

UNIT = ("gpu_util", "cpu_util", "storage_util", "slot_util", "network_util", "hit_rate",
        "remote_hit_rate", "tier_hit_rate")
SOURCES = ("model", "sim", "sample")


def finding(inv, where, detail, **figures):
    return {"invariant": inv, "where": where, "detail": detail,
            "figures": {k: (round(v, 6) if isinstance(v, float) else v)
                        for k, v in figures.items()}}


class View:
    """The scenario's effective values: its config echo (every key with its
    default filled in, shard_items derived from shard_mb) and job instances
    expanded from `count`."""

    def __init__(self, cfg):
        self.c = cfg
        self.jobs = []
        for j in cfg["jobs"]:
            for _ in range(int(j.get("count", 1))):
                self.jobs.append(j)

    def __getitem__(self, k):
        return self.c[k]

    def get(self, k, d=0):
        v = self.c.get(k, d)
        return d if v is None else v

    @property
    def item_b(self):
        return self["dataset.item_kb"] * 1e3

    @property
    def paged(self):
        """The page cache (loader.cache linux) reads whole pages."""
        return self.get("loader.cache") == "linux"

    def dev_b(self, b):
        """What reading b bytes whole reads from the device: whole pages
        under the page cache."""
        return math.ceil(round(b) / PAGE) * PAGE if self.paged else b

    @property
    def shards(self):
        s = self.get("dataset.shard_items", 0)
        return s if s > 1 else 0

    def items_epoch(self, job):
        n = self["dataset.items"]
        if self.get("loader.kind") == "pytorch" and self.get("loader.drop_last"):
            m = job["gpus"] * job["batch_per_gpu"]
            n = (n // m) * m
        return n

    # -- the video pipeline (prep.pipeline: video) -------------------------
    def video_lead_in(self, job):
        """Least mean frames a clip decodes before its first over the epoch's
        items: item x's are x mod gop under random access, and an epoch
        under drop_last may leave out the items with the most."""
        if self.get("prep.video_access", "random") != "random":
            return 0.0
        n, g = self["dataset.items"], self.get("prep.video_gop", 250)
        q, r = n // g, n % g
        total = q * g * (g - 1) / 2 + r * (r - 1) / 2 - (n - self.items_epoch(job)) * (g - 1)
        return max(0.0, total) / self.items_epoch(job)

    def video_keyframes(self, job):
        """Least mean keyframes a clip decodes over the epoch's items: item
        x's 1 + floor((x mod gop + tail - 1) / gop) under random access (the
        items drop_last leaves out counted at the most), span / gop read in
        order."""
        g, span = self.get("prep.video_gop", 250), self.video_tail()
        if self.get("prep.video_access", "random") != "random":
            return self.video_span() / g
        n, e = self["dataset.items"], self.items_epoch(job)
        least, most = 1 + (span - 1) // g, 1 + (g - 1 + span - 1) // g
        if e <= 0:
            return least
        total = sum(1 + (x + span - 1) // g for x in range(g)) * (n // g) if n >= g else 0
        total += sum(1 + (x + span - 1) // g for x in range(n % g))
        return max(least, (total - (n - e) * most) / e)

    def video_span(self):
        return (self.get("prep.video_frames", 8) - 1) * self.get("prep.video_stride", 1) + 1

    def video_tail(self):
        """Frames a clip decodes from its first: its span and, under random
        access, the decoder's delay (the packets it holds past the last)."""
        random_ = self.get("prep.video_access", "random") == "random"
        return self.video_span() + (self.get("prep.video_decode_delay", 0) if random_ else 0)

    def video_mpx(self):
        return self.get("prep.video_width", 640) * self.get("prep.video_height", 480) / 1e6

    def video_cpu_ms(self, job):
        """Least CPU ms a mean clip takes: its seek, its frames decoded from
        the keyframe (or demuxed for the GPU's decoder), the keyframes'
        excess among them, its kept frames' transform (the copies' CPU left
        out: a lower bound)."""
        random_ = self.get("prep.video_access", "random") == "random"
        frames = self.video_lead_in(job) + self.video_tail()
        seek = self.get("prep.video_seek_ms") if random_ else 0
        if self.get("prep.video_decode", "cpu") == "gpu":
            return seek + frames * self.get("prep.video_demux_ms_per_frame")
        frame = self.get("prep.video_decode_ms_per_frame") \
            + self.get("prep.video_decode_ms_per_mpx") * self.video_mpx()
        keep = self.get("prep.video_frames", 8) * self.video_mpx()
        keys = self.video_keyframes(job) * self.get("prep.video_keyframe_ms_per_mpx") \
            * self.video_mpx()
        return seek + frames * frame + keys + keep * self.get("prep.video_transform_ms_per_mpx")

    NVDEC = {"v100": 1, "a100-80gb": 5, "h100-sxm": 7, "h200": 7}

    def video_engine_s(self, job):
        """Seconds of one GPU's decoder engines per item, all of them
        together (0: the clips decode on the CPU)."""
        if job.get("prep.pipeline") != "video" or self.get("prep.video_decode", "cpu") != "gpu":
            return 0.0
        e = self.get("prep.nvdec_engines") or self.NVDEC.get(job.get("gpu", ""), 0)
        one = self.get("prep.nvdec_session_ms") / 1e3 + (self.video_lead_in(job) + self.video_tail()) \
            * self.video_mpx() / self["prep.nvdec_fps"]
        return one / e if e else 0.0

    def cpu_ms_item(self, job):
        """Least CPU ms a mean item's prep takes on one core."""
        mb = self["dataset.item_kb"] / 1e3
        pipe = job.get("prep.pipeline", "image_train")
        if pipe == "video":
            return self.video_cpu_ms(job)
        if pipe == "audio":
            return self.get("prep.audio_ms_per_mb") * mb + self.get("prep.audio_ms_per_item")
        if self.get("prep.decode") == "gpu":  # the hybrid path's Huffman stage
            dec = (1 - self.hw_share()) * (self.get("prep.huffman_ms_per_mb") * mb
                                           + self.get("prep.huffman_ms_per_item"))
        else:
            dec = self.get("prep.decode_ms_per_mb") * mb + self.get("prep.decode_ms_per_item")
        if pipe == "image_eval":
            return dec + self.get("prep.eval_ms")
        return dec + (0 if self.get("prep.on_gpu") else self.get("prep.augment_ms"))

    def hw_share(self):
        """The share of images the GPU's hardware JPEG decoder takes."""
        if self.get("prep.decode") == "gpu" and self.get("prep.hw_decode_mp_s") > 0:
            return self.get("prep.hw_decoder_load", 0.65)
        return 0.0

    def gpu_s_item(self, job):
        """SM seconds per item beyond the training compute."""
        pipe = job.get("prep.pipeline", "image_train")
        x = 0.0
        if pipe == "video":
            return x
        if self.get("prep.on_gpu") and pipe == "image_train":
            x += self.get("prep.gpu_augment_ms") / 1e3
        if self.get("prep.decode") == "gpu" and pipe != "audio":
            x += (1 - self.hw_share()) * self.get("prep.gpu_decode_ms_per_mp") \
                * self.get("dataset.megapixels") / 1e3
        return x

    def engine_s_item(self, job):
        """Seconds of the GPU's hardware decoder per item (beside the SMs)."""
        if job.get("prep.pipeline", "image_train") == "video":
            return self.video_engine_s(job)
        if job.get("prep.pipeline", "image_train") == "audio" or not self.hw_share():
            return 0.0
        return self.hw_share() * self.get("dataset.megapixels") / self.get("prep.hw_decode_mp_s")

    def storage_bw(self):
        """Bytes/s one storage device moves at most, or None when no cap is a
        plain key (object store without max_mb_s and with ranged GETs)."""
        k = self["server.storage.kind"]
        if k == "fixed":
            return self["server.storage.read_mb_s"] * 1e6
        if k == "ssd":
            return self["server.storage.peak_mb_s"] * 1e6
        if k == "hdd":
            return self["server.storage.seq_mb_s"] * 1e6
        if self.get("server.storage.max_mb_s") > 0:
            return self["server.storage.max_mb_s"] * 1e6
        return None

    def object_conns(self):
        """GETs in flight on one server at most, as the keys' help says
        (pool: its reader threads; pytorch: one per worker of each GPU; threads:
        one per thread of each GPU; dali: its reader threads of each GPU), or
        None with ranged GETs (parts take connections of their own)."""
        if self.get("server.storage.range_mb") > 0:
            return None
        return self.readers_conns()

    def readers_conns(self, parts=1):
        """object_conns' GETs in flight on one server, a synchronous
        reader's object taking `parts` connections at once."""
        if self.get("loader.kind") == "pytorch":
            per = max(1, self.get("loader.num_workers")) * self["server.gpus"]
        elif self.get("loader.kind") == "threads":
            per = self.get("loader.threads", 8) * self["server.gpus"]
        elif self.get("loader.kind") == "dali":
            per = self.get("loader.reader_threads", 1) * self["server.gpus"]
        else:
            per = self.get("server.storage.reader_threads", 16)
            cpp = self.get("server.storage.connections_per_process")
            per = min(per, cpp) if cpp > 0 else per
            parts = 1
        cps = self.get("server.storage.connections_per_server")
        per *= parts
        return min(per, cps) if cps > 0 else per

    def min_latency_s(self):
        """Least time a storage request holds its slot before its bytes move,
        and the slots one device has; None where that is not a plain key."""
        k = self["server.storage.kind"]
        if k == "fixed":
            return self["server.storage.latency_ms"] / 1e3, self["server.storage.queue_depth"]
        if k == "ssd":
            lat = min(self[f"server.storage.latency_qd{q}_ms"] for q in (1, 4, 16, 32))
            return lat / 1e3, self["server.storage.queue_depth"]
        if k == "object" and self.get("server.storage.first_byte_p99_ms") == 0:
            conns = self.object_conns()
            if conns:
                return self["server.storage.first_byte_ms"] / 1e3, conns
        return None

    def prefix_window_requests(self):
        """Requests one window of a prefix admits (storage_object.c's
        prefix_window_s, mirrored; the synchronous loaders' reach taken at
        its largest), or 0 where no prefix cap is set. A window admits its
        count at any moment of it, so over T seconds a prefix admits up to
        rate x T + 2 windows: an epoch of a few windows' requests can run
        faster than the mean rate (the documented windows of whole
        requests), which a gate's bound does not allow."""
        rate = self.get("server.storage.prefix_get_s")
        if not rate or rate <= 0:
            return 0
        med = self.get("server.storage.first_byte_ms", 15)
        p99 = self.get("server.storage.first_byte_p99_ms")
        xfer = self.item_b * (self.shards or 1) / (
            self.get("server.storage.conn_mb_s", 80) * 1e6)
        reach = 2 * ((med + max(p99, med) + self.get("server.storage.retry_cap_ms", 20000)) / 1e3
                     + xfer)
        if self.get("loader.kind") in ("pytorch", "threads"):
            batch = max(j["batch_per_gpu"] for j in self.jobs)
            # storage_object.c's object_client_slots: a synchronous reader's
            # object is its ranged parts at once, up to connections_per_process
            # (as many as an object four times the mean takes)
            rng, parts = self.get("server.storage.range_mb"), 1
            if rng > 0:
                parts = math.ceil(4 * self.item_b * (self.shards or 1) / (rng * 1e6))
                cpp = self.get("server.storage.connections_per_process")
                parts = min(parts, cpp) if cpp > 0 else parts
            slots = self.readers_conns(parts) * max(1, self.get("server.count", 1))
            reach = max(reach, 20.0, 2 * slots * batch / rate)
        return max(math.ceil(reach / 256 * rate), math.ceil(0.1 * rate))

    def iops_cap(self):
        k = self["server.storage.kind"]
        if k in ("fixed", "ssd") and self.get("server.storage.read_iops") > 0:
            return self["server.storage.read_iops"]
        if k == "object":
            # max_get_s, or every prefix at prefix_get_s, the lesser
            caps = [c for c in (self.get("server.storage.max_get_s"),
                                self.get("server.storage.prefixes", 1)
                                * self.get("server.storage.prefix_get_s")) if c > 0]
            return min(caps) if caps else None
        return None


def _finite(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_bounds(v, doc):
    out = []
    for var in doc["variants"]:
        for ji, job in enumerate(var["jobs"]):
            for e in job["epochs"]:
                for src in SOURCES:
                    m = e.get(src)
                    if not m:
                        continue
                    where = f"job {ji} epoch {e['epoch']} {src}"
                    out += _bounds_row(m, where)
    return out


def _bounds_row(m, where):
    out = []
    for k, x in m.items():
        if isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isfinite(x):
            out.append(finding("bounds:finite", where, f"{k} = {x}", **{k: str(x)}))
    for k in UNIT:
        x = m.get(k)
        if _finite(x) and not (-1e-6 <= x <= 1 + 1e-6):
            out.append(finding(f"bounds:{k}", where, f"{k} = {x} outside [0, 1]", **{k: x}))
    t = m.get("epoch_s", 0)
    if not (_finite(t) and t > 0):
        out.append(finding("bounds:epoch_s", where, f"epoch_s = {t}", epoch_s=t))
        return out
    for k in ("prep_stall_s", "fetch_stall_s"):
        x = m.get(k, 0)
        if _finite(x) and not (-1e-9 * t - 1e-9 <= x <= t * (1 + 1e-6)):
            out.append(finding("bounds:stall_share", where, f"{k} = {x} of epoch {t}",
                               **{k: x, "epoch_s": t}))
    s = m.get("prep_stall_s", 0) + m.get("fetch_stall_s", 0)
    if s > t * (1 + 1e-6):
        out.append(finding("bounds:stall_share", where, "prep + fetch stall > epoch",
                           stalls=s, epoch_s=t))
    h, th, rh = m.get("hit_rate", 0), m.get("tier_hit_rate", 0), m.get("remote_hit_rate", 0)
    if h + th > 1 + 1e-5:
        out.append(finding("bounds:hit_rate", where, "hit + tier hit > 1", hit_rate=h,
                           tier_hit_rate=th))
    if rh > h + 1e-5:
        out.append(finding("bounds:hit_rate", where, "remote hits > hits", hit_rate=h,
                           remote_hit_rate=rh))
    for k in ("storage_read_bytes", "network_bytes", "storage_requests", "staged_bytes"):
        x = m.get(k, 0)
        if _finite(x) and x < 0:
            out.append(finding("bounds:negative", where, f"{k} = {x}", **{k: x}))
    return out


def check_lower(v, doc):
    out = []
    var = doc["variants"][0]
    for ji, job in enumerate(var["jobs"]):
        sj = v.jobs[ji]
        nserv = max(1, int(job.get("servers", 1)))
        for e in job["epochs"]:
            for src in SOURCES:
                m = e.get(src)
                if m and _finite(m.get("epoch_s")) and m["epoch_s"] > 0:
                    out += _lower_row(v, sj, nserv, m, f"job {ji} epoch {e['epoch']} {src}")
    return out


def _lower_row(v, sj, nserv, m, where):
    t = m["epoch_s"]
    n = v.items_epoch(sj)
    g, b = sj["gpus"], sj["batch_per_gpu"]
    per_gpu = n // g
    bounds = {}
    if sj.get("gpu_items_per_s", 0) > 0:
        bounds["gpu"] = per_gpu / sj["gpu_items_per_s"]
    else:
        bounds["gpu"] = (n // (g * b)) * sj["compute_s_per_batch"]
    bounds["gpu"] += per_gpu * v.gpu_s_item(sj)
    # the hardware decoder runs beside the SMs: the GPU is the slower of the two
    bounds["gpu"] = max(bounds["gpu"], per_gpu * v.engine_s_item(sj))
    cv = v.get("dataset.item_kb_cv")
    # sizes are drawn: the dataset's mean lies within a few cv / sqrt(N)
    size_slack = 1 - 4 * cv / math.sqrt(v["dataset.items"])
    cores = v["server.cpus"] * nserv
    bounds["cpu"] = n * v.cpu_ms_item(sj) / 1e3 / cores * max(0.0, size_slack)
    # each storage read costs its reader server.storage.cpu_us_per_read and
    # _per_mb on the same cores (hits and tier reads may add more)
    bounds["cpu"] += (v.get("server.storage.cpu_us_per_read") * m.get("storage_reads", 0)
                      + v.get("server.storage.cpu_us_per_mb") * m.get("storage_read_bytes", 0)
                      / 1e6) / 1e6 / cores
    shared = v.get("server.storage.shared")
    # servers whose reads this job's bytes may be: its own, or any (a shared
    # store; partitioned caching, where an item's owner reads it)
    sreaders = v["server.count"] if shared or v.get("loader.dist_cache") == "partitioned" \
        else nserv
    # devices: one shared, else one a server
    sdev = 1 if shared else sreaders
    bw = v.storage_bw()
    if bw:
        bounds["storage-bw"] = m.get("storage_read_bytes", 0) / (bw * sdev)
    conns = v.object_conns() if v["server.storage.kind"] == "object" else None
    if conns:
        # each server's own connections, whether or not the store is shared
        bounds["storage-conn-bw"] = m.get("storage_read_bytes", 0) / (
            conns * v["server.storage.conn_mb_s"] * 1e6 * sreaders)
    req = m.get("storage_requests", 0)
    cap = v.iops_cap()
    if cap:
        # a HEAD is a request against the store's rate like a GET; a gate
        # admits one a 1 / cap, so a device's k requests span k - 1 gaps (its
        # first goes at the epoch's start when the gate is free then)
        slack = sdev
        pre = v.get("server.storage.prefixes", 1) * v.get("server.storage.prefix_get_s")
        if pre > 0 and pre <= cap:  # the prefixes' windows bind, not a gate
            slack = 2 * v.prefix_window_requests() * v.get("server.storage.prefixes", 1) * sdev
        bounds["storage-iops"] = max(0.0, req + m.get("storage_heads", 0) - slack) / (cap * sdev)
    lat = v.min_latency_s()
    if lat:
        slots = lat[1] * (sreaders if v["server.storage.kind"] == "object" else sdev)
        bounds["storage-latency"] = req * lat[0] / slots
    nic = v["server.network.gbit_s"] * 1.25e8
    bounds["nic"] = m.get("network_bytes", 0) / (nic * nserv)
    th = m.get("tier_hit_rate", 0)
    if th > 0 and v.get("server.tier.cache_gb") > 0:
        reads = th * n
        if not v.shards:
            bounds["tier-bw"] = reads * v.item_b / (v["server.tier.read_mb_s"] * 1e6 * nserv) \
                * max(0.0, size_slack)
            bounds["tier-latency"] = reads * v["server.tier.latency_ms"] / 1e3 / (
                v["server.tier.queue_depth"] * nserv)
            if v.get("server.tier.read_iops") > 0:
                bounds["tier-iops"] = reads / (v["server.tier.read_iops"] * nserv)
    out = []
    for res, lb in bounds.items():
        if lb > 0 and t < lb * (1 - LB_TOL) - 1e-9:
            out.append(finding(f"lower:{res}", where,
                               f"epoch {t:.6g} s < {res} alone allows {lb:.6g} s",
                               epoch_s=t, bound_s=lb, ratio=t / lb))
    return out


def check_conservation(v, doc):
    out = []
    var = doc["variants"][0]
    loose = not v.shards
    ranged = v.get("server.storage.range_mb") > 0 and v["server.storage.kind"] == "object"
    cv0 = v.get("dataset.item_kb_cv") == 0
    ib = v.item_b
    if v.get("sim.sample_above_items", 1e8) < v["dataset.items"]:
        # a sampled replay (SHARDS): its counts are the sample's, scaled
        return []
    for ji, job in enumerate(var["jobs"]):
        sj = v.jobs[ji]
        n = v.items_epoch(sj)
        for e in job["epochs"]:
            m = e.get("sim")
            if not m:
                continue
            where = f"job {ji} epoch {e['epoch']} sim"
            req, by = m.get("storage_requests", 0), m.get("storage_read_bytes", 0)
            miss = 1 - m.get("hit_rate", 0) - m.get("tier_hit_rate", 0)
            if loose and not ranged and abs(req - miss * n) > 0.6 + 2e-6 * n:
                out.append(finding("conserve:requests", where,
                                   "storage requests != misses (items x (1 - hit - tier hit))",
                                   requests=req, misses=miss * n))
            heads = m.get("storage_heads", 0)
            if v["server.storage.kind"] == "object" and v.get("server.storage.head") and \
                    not ranged and abs(heads - req) > 0.5:
                out.append(finding("conserve:heads", where,
                                   "HEADs != GETs (a loader that stats sends one an object)",
                                   heads=heads, requests=req))
            if heads and not v.get("server.storage.head"):
                out.append(finding("conserve:heads", where, "HEADs without server.storage.head",
                                   heads=heads))
            if v["server.storage.kind"] == "object":
                first = e["epoch"] == 1 or v.get("server.storage.list_each_epoch")
                keys = math.ceil(v["dataset.items"] / (v.shards or 1))
                want = math.ceil(keys / 1000) if first else 0
                if abs(m.get("storage_lists", 0) - want) > 0.5:
                    out.append(finding("conserve:lists", where,
                                       "LISTs != pages of 1000 keys at the listing epochs",
                                       lists=m.get("storage_lists", 0), expected=want))
            if m.get("storage_retries", 0) and not v.get("server.storage.prefix_get_s"):
                out.append(finding("conserve:retries", where,
                                   "503s retried with no prefix limit",
                                   retries=m.get("storage_retries", 0)))
            if cv0 and loose and not ranged and not v.paged and \
                    abs(by - req * ib) > 1e-6 * max(by, 1) + 1:
                out.append(finding("conserve:bytes", where,
                                   "bytes read != requests x item size", bytes=by,
                                   expected=req * ib))
            # the page cache: a miss reads the item's pages not resident,
            # at least one and at most all of them
            if cv0 and loose and not ranged and v.paged and \
                    not req * PAGE - 1 <= by <= req * v.dev_b(ib) + 1e-6 * by + 1:
                out.append(finding("conserve:bytes", where,
                                   "page cache: bytes read outside requests x [a page, the "
                                   "item's pages]", bytes=by, requests=req,
                                   item_pages=v.dev_b(ib)))
            if cv0 and ranged and by > 0 and req * v["server.storage.range_mb"] * 1e6 < by - 1:
                out.append(finding("conserve:bytes", where, "ranged GETs move more than their range",
                                   bytes=by, requests=req))
            stream = v.shards and v.get("loader.reader") == "stream"
            if cv0 and stream and len(v.jobs) == 1 and \
                    by > v["dataset.items"] * _stream_item_max(v, ib) * \
                    max(1, int(job.get("servers", 1))) * 1.000001 + 1:
                out.append(finding("conserve:bytes", where,
                                   "streamed shards read more than their bytes (each byte once "
                                   "a stream and a server; under the page cache, each chunk an "
                                   "item enters once with two windows ahead)", bytes=by,
                                   dataset=v["dataset.items"] * ib))
            if v.shards and not stream and not ranged and len(v.jobs) == 1 and \
                    req > math.ceil(v["dataset.items"] / v.shards) * max(1, int(job.get("servers", 1))) + 0.5:
                out.append(finding("conserve:requests", where,
                                   "more shard reads than shards (each is read whole, once a "
                                   "stream and a server)", requests=req,
                                   shards=math.ceil(v["dataset.items"] / v.shards)))
            if cv0 and v.shards and not stream and not ranged and req > 0:
                whole = by / v.dev_b(v.shards * ib)
                # (a page cache reads only a shard's pages not resident)
                if not ((v.paged or req - 1 - 1e-6 <= whole) and whole <= req + 1e-6):
                    out.append(finding("conserve:bytes", where,
                                       "shard bytes != shards read x shard size",
                                       bytes=by, requests=req, shard_bytes=v.shards * ib))
    out += _conserve_servers(v, var, loose, cv0, ib)
    return out


def _conserve_servers(v, var, loose, cv0, ib):
    out = []
    srv = var.get("servers") or []
    nep = max((len(s["epochs"]) for s in srv), default=0)
    for ep in range(nep):
        tin = tout = 0.0
        for s in srv:
            if ep >= len(s["epochs"]) or not s["epochs"][ep].get("sim"):
                continue
            m = s["epochs"][ep]["sim"]
            where = f"server {s['server']} epoch {ep + 1} sim"
            tin += m.get("net_in_bytes", 0)
            tout += m.get("net_out_bytes", 0)
            parts = (m.get("local_hits", 0) + m.get("remote_hits", 0) + m.get("tier_hits", 0)
                     + m.get("storage_reads", 0))
            if loose and abs(parts - m.get("accesses", 0)) > 0.5:
                out.append(finding("conserve:accesses", where,
                                   "local + remote + tier hits + storage reads != accesses",
                                   accesses=m.get("accesses", 0), sum=parts))
            if loose and cv0 and abs(m.get("net_in_bytes", 0) - m.get("remote_hits", 0) * ib) > \
                    1e-6 * ib * max(1, m.get("remote_hits", 0)) + 1:
                out.append(finding("conserve:network", where, "bytes in != remote hits x size",
                                   net_in=m.get("net_in_bytes", 0),
                                   expected=m.get("remote_hits", 0) * ib))
        if abs(tin - tout) > 1e-6 * max(tin, tout) + 1:
            out.append(finding("conserve:network", f"epoch {ep + 1} sim",
                               "bytes into all NICs != bytes out of them", net_in=tin,
                               net_out=tout))
    return out


def _stream_item_max(v, ib):
    """The most a streamed item reads from the device: its bytes; under the
    page cache, whose readahead windows reclaim may take before use, each
    chunk it enters (of the window, within [32, 128] KiB) with at most two
    windows read ahead (the kernel's first and the next merged with it)."""
    if not v.paged:
        return ib
    ra = math.floor(v.get("server.storage.read_ahead_kb", 128) * 1024 / PAGE) * PAGE
    g = 128 * 1024 if not ra or ra > 128 * 1024 else max(ra, 32 * 1024)
    return (2 + ib / g) * (g + 2 * max(ra, g))


def _model_bytes(v, mo, si, where):
    """An epoch with no hits in either (a cold one): both read every item
    from the device, the model its mean bytes (whole pages under the page
    cache, a shard's pages a shard), the simulator its drawn sizes': within
    their sampling spread, however approximate the model's hit rates are."""
    if v.get("sim.sample_above_items", 1e8) < v["dataset.items"] or any(
            x.get(k, 0) for x in (mo, si) for k in ("hit_rate", "tier_hit_rate",
                                                     "remote_hit_rate")):
        return []
    bs, bm = si.get("storage_read_bytes", 0), mo.get("storage_read_bytes", 0)
    tol = 4 * v.get("dataset.item_kb_cv") / math.sqrt(v["dataset.items"]) + 0.01
    # (streamed shards under the page cache re-read the windows reclaim took
    # before use: the model's closed form for them (model.c, stream_reread)
    # is a fluid one of the simulator's lanes, within a quarter)
    if v.shards and v.paged and v.get("loader.reader") == "stream":
        tol += 0.25
    # (drop_last trains on none of the last partial batch, whose shards the
    # simulator reads all the same: up to a shard a reader more)
    readers = sum(j.get("gpus", 1) * (j.get("batch_per_gpu", 256)
                                      + v.shards * max(1, v.get("loader.num_workers", 1)))
                  for j in v.jobs)
    tail = readers * v.item_b if v.get("loader.drop_last") and v.shards else 0
    if abs(bs - bm) <= tol * max(bs, bm) + PAGE + tail:
        return []
    return [finding("model-sim:bytes", where, f"no hits: sim read {bs:.6g} B, model {bm:.6g} B",
                    sim_bytes=bs, model_bytes=bm)]


def check_model(v, doc):
    """Model within 5 % of the simulator, or the output marks the figure:
    the model row's `approximate` (the text's `~`), or the sim row's
    `model_differs` where the program writes that field. A cold epoch's
    bytes read agree whether marked or not (_model_bytes)."""
    out = []
    var = doc["variants"][0]
    for ji, job in enumerate(var["jobs"]):
        for e in job["epochs"]:
            mo, si = e.get("model"), e.get("sim")
            if not mo or not si or not mo.get("epoch_s"):
                continue
            out += _model_bytes(v, mo, si, f"job {ji} epoch {e['epoch']}")
            d = si["epoch_s"] / mo["epoch_s"] - 1
            if abs(d) <= MODEL_TOL:
                continue
            marked = bool(mo.get("approximate")) or bool(si.get("model_differs"))
            if not marked:
                out.append(finding("model-sim", f"job {ji} epoch {e['epoch']}",
                                   f"sim {si['epoch_s']:.6g} s vs model {mo['epoch_s']:.6g} s "
                                   f"({d:+.1%}), not marked",
                                   sim_s=si["epoch_s"], model_s=mo["epoch_s"], vs_model=d,
                                   bottleneck_sim=si.get("bottleneck"),
                                   bottleneck_model=mo.get("bottleneck"),
                                   model_differs_field="model_differs" in si))
    return out


def check_startup(v, doc):
    """The start-up phase (issue 56): the same requests counted by both;
    refusals only under a prefix's cap; the launch's end (the last job's
    start-up: jobs sharing a device interleave, so one may end before the
    device's whole work) never under the closed form's bound where first
    bytes have no tail, and within MODEL_TOL of it unless the model marks
    it (startup_approximate), past a millisecond."""
    out = []
    var = doc["variants"][0]
    tail = v.get("server.storage.first_byte_p99_ms", 0) > v.get("server.storage.first_byte_ms", 0)
    firsts = [(j["epochs"][0].get("model"), j["epochs"][0].get("sim"))
              for j in var["jobs"] if j["epochs"]]
    firsts = [(mo, si) for mo, si in firsts if mo and si]
    if not firsts:
        return out
    for ji, (mo, si) in enumerate(firsts):
        where = f"job {ji} start-up"
        if abs(si["startup_requests"] - mo["startup_requests"]) > 0.5:
            out.append(finding("startup:requests", where, "sim and model count other requests",
                               sim=si["startup_requests"], model=mo["startup_requests"]))
        if si["startup_throttled"] and not v.get("server.storage.prefix_get_s"):
            out.append(finding("startup:throttled", where, "refusals without a prefix cap",
                               throttled=si["startup_throttled"]))
    m_s = max(mo["startup_s"] for mo, _ in firsts)
    s_s = max(si["startup_s"] for _, si in firsts)
    marked = any(mo.get("startup_approximate") for mo, _ in firsts)
    if not tail and not marked and s_s < m_s * (1 - 1e-3) - 1e-6:
        out.append(finding("startup:lower", "the launch", f"sim {s_s:.6g} s under the closed "
                           f"form's bound {m_s:.6g} s", sim_s=s_s, model_s=m_s))
    # (a millisecond's slack: lockstep resolvers' transfers queue on a
    # channel for a fraction of one transfer, which the bound leaves out)
    if m_s > 0 and not tail and not marked and abs(s_s - m_s) > max(MODEL_TOL * m_s, 1e-3):
        out.append(finding("startup:model", "the launch", f"sim {s_s:.6g} s vs model {m_s:.6g} s",
                           sim_s=s_s, model_s=m_s))
    return out


# The goodput object's figures and what each must be (docs/goodput.md).
GOODPUT_NONNEG = ("restarts", "lost_s", "restart_s", "checkpoint_s", "best_every_steps")


def check_goodput(v, doc):
    """Checkpoints and failures (issue 57): goodput a finite share in
    [0, 1] and its other figures finite and >= 0 (the work lost within the
    horizon, a useful epoch no shorter than the training it keeps); no
    checkpoint wait in any row where the job does not checkpoint; the
    model's and the simulator's waits within MODEL_TOL of each other: one
    synchronous checkpoint's (goodput's checkpoint_s: its write), each
    epoch's unless the model marks the epoch approximate (an async drain's
    overlap; the run's first async checkpoint, which has no drain before
    it). An async checkpoint's goodput figure is its staging plus the drain
    past the steps between checkpoints, a difference of two times that
    magnifies the steps' own difference (which check_model holds): where
    the drain outlasts the steps, goodput itself does not depend on them
    (the segment is the staging and the write), so only the epochs' rows
    are compared (semfuzz seed 2, index 37: 33 steps of a cold epoch, the
    simulator's twice the model's and marked model_differs, one checkpoint
    0.177 s against 0.331 s, goodput equal)."""
    out = []
    var = doc["variants"][0]
    H = v.get("failures.horizon_h", 168) * 3600
    for ji, job in enumerate(var["jobs"]):
        sj = v.jobs[ji]
        on = sj.get("checkpoint.gb", 0) > 0 and sj.get("checkpoint.every_steps", 0) > 0
        g = job.get("goodput")
        asked = on or any(x.get("checkpoint.gb", 0) > 0 and x.get("checkpoint.every_steps", 0) > 0
                          for x in v.jobs) or v.get("failures.mtbf_gpu_h", 0) > 0
        if asked != (g is not None):
            out.append(finding("goodput:asked", f"job {ji}", f"goodput object {g is not None}, "
                               f"checkpoints or failures {asked}"))
        for src, gs in (g or {}).items():
            if src == "horizon_h":
                continue
            out += _goodput_bounds(gs, H, f"job {ji} goodput {src}")
            if not on and gs.get("checkpoint_s", 0) != 0:
                out.append(finding("goodput:off", f"job {ji} goodput {src}",
                                   "a checkpoint's wait where the job does not checkpoint",
                                   checkpoint_s=gs["checkpoint_s"]))
        if g and "model" in g and "sim" in g and sj.get("checkpoint.mode", "sync") == "sync":
            a, b = g["model"]["checkpoint_s"], g["sim"]["checkpoint_s"]
            if abs(a - b) > MODEL_TOL * max(a, b) + 1e-6:
                out.append(finding("goodput:checkpoint", f"job {ji}",
                                   f"one checkpoint: sim {b:.6g} s vs model {a:.6g} s",
                                   sim_s=b, model_s=a, mode=sj.get("checkpoint.mode", "sync")))
        for e in job["epochs"]:
            out += _checkpoint_rows(sj, on, e, f"job {ji} epoch {e['epoch']}")
    return out


def _goodput_bounds(gs, H, where):
    out = []
    x = gs.get("goodput")
    if not _finite(x) or not 0 <= x <= 1:
        out.append(finding("goodput:bounds", where, f"goodput {x}", goodput=x))
    for k in GOODPUT_NONNEG:
        if not _finite(gs.get(k)) or gs[k] < 0:
            out.append(finding("goodput:bounds", where, f"{k} {gs.get(k)}", **{k: gs.get(k)}))
    if _finite(gs.get("lost_s")) and gs["lost_s"] > H * (1 + 1e-9):
        out.append(finding("goodput:bounds", where, f"lost {gs['lost_s']:.6g} s of a "
                           f"{H:.6g} s horizon", lost_s=gs["lost_s"], horizon_s=H))
    u = gs.get("useful_epoch_s")
    if u is not None and (not _finite(u) or u <= 0):
        out.append(finding("goodput:bounds", where, f"useful_epoch_s {u}", useful_epoch_s=u))
    return out


def _checkpoint_rows(sj, on, e, where):
    out = []
    mo, si = e.get("model"), e.get("sim")
    for src, m in (("model", mo), ("sim", si)):
        if m and not on and m.get("checkpoint_s", 0) != 0:
            out.append(finding("goodput:off", f"{where} {src}", "checkpoint_s where the job "
                               "does not checkpoint", checkpoint_s=m["checkpoint_s"]))
    if not (on and mo and si) or mo.get("approximate"):
        return out
    a, b = mo.get("checkpoint_s", 0), si.get("checkpoint_s", 0)
    if abs(a - b) > MODEL_TOL * max(a, b) + 1e-6:
        out.append(finding("goodput:epoch-checkpoint", where,
                           f"the epoch's checkpoint waits: sim {b:.6g} s vs model {a:.6g} s",
                           sim_s=b, model_s=a, mode=sj.get("checkpoint.mode", "sync"),
                           epoch_s=si.get("epoch_s")))
    return out


def check_echo(scen, cfg):
    """The config echo holds the values the scenario gave."""
    out = []
    for k, want in scen["top"].items():
        got = cfg.get(k)
        if k == "dataset.shard_mb" or got is None:
            continue
        if isinstance(want, float) or isinstance(got, float):
            if not (isinstance(got, (int, float)) and abs(got - want) <= 1e-9 * abs(want)):
                out.append(finding("echo", k, f"config says {got}, scenario {want}"))
        elif got != want:
            out.append(finding("echo", k, f"config says {got}, scenario {want}"))
    return out


def check_all(scen, doc):
    var = doc["variants"][0]
    v = View(var["config"])
    out = check_echo(scen, var["config"])
    out += check_bounds(v, doc)
    out += check_lower(v, doc)
    out += check_conservation(v, doc)
    out += check_model(v, doc)
    out += check_startup(v, doc)
    out += check_goodput(v, doc)
    return out
