"""gen: random scenarios across every kind and composition stallsim's schema allows.

A scenario is a dict {"top": {dotted key: value}, "jobs": [{key: value}]}; the
one random generator is seeded from (seed, index), so a scenario depends on
those two numbers and the key table alone. Values are realistic and small: a
few thousand items, a few epochs, so a run takes well under 0.5 s.

The generator aims at valid scenarios (it follows the cross-key rules it
knows of) but does not guarantee them: `stallsim run` refusing one (exit 2)
is counted apart. Keys the program lists that this file has no rule for are
drawn generically from their range and default (`generic_keys`), so a key
added to stallsim is fuzzed, and named, without an edit here.

    scen = generate(table, seed=1, index=7)
    text = to_yaml(scen)
"""
import copy
import math
import random

import yaml

# Keys with their own rule below; the rest of the table is drawn generically.
# Keys never drawn: file references, naming, prices (cost only), sampling (on
# at 1e8 items, which these scenarios never reach; drawn below at small sizes).
SKIP = {"name", "host", "prices", "seed"} | {
    "prices.get_per_1000", "prices.list_per_1000", "prices.egress_per_gb", "prices.gpu_hour",
    "prices.core_hour", "prices.dram_gb_hour", "prices.tier_gb_hour"}
JOB_SKIP = {"name", "model"}


MIN_ITERS = 20


def _lu(r, lo, hi):
    """Log-uniform in [lo, hi]."""
    return math.exp(r.uniform(math.log(lo), math.log(hi)))


def _r(x, sig=3):
    """Round to `sig` significant digits: readable YAML, exact round trip."""
    if x == 0:
        return 0
    return float(f"{x:.{sig}g}")


class _Gen:
    def __init__(self, table, r, rv):
        self.t, self.r, self.rv, self.top, self.jobs = table, r, rv, {}, []
        self.known = set()

    def set(self, key, value):
        self.known.add(key)
        self.top[key] = value

    def maybe(self, p, key, value_fn):
        self.known.add(key)
        if self.r.random() < p:
            self.top[key] = value_fn()

    # -- sections ---------------------------------------------------------
    def dataset(self):
        r = self.r
        self.items = int(_lu(r, 120, 4000))
        self.item_kb = _r(_lu(r, 5, 1500))
        self.set("dataset.items", self.items)
        self.set("dataset.item_kb", self.item_kb)
        self.maybe(0.4, "dataset.item_kb_cv", lambda: _r(r.uniform(0.05, 1.2), 2))
        self.shards = 0
        self.known |= {"dataset.shard_items", "dataset.shard_mb", "dataset.megapixels"}
        u = r.random()
        if u < 0.25:
            hi = max(2, min(self.items // 4, int(1.5e6 / self.item_kb), 256))
            self.shards = r.randint(2, max(2, hi))
            self.set("dataset.shard_items", self.shards)
        elif u < 0.32:
            self.set("dataset.shard_mb", _r(self.item_kb / 1e3 * r.uniform(2, 40), 2))
            self.shards = 2  # about; only "are there shards" matters here
        self.set("epochs", r.randint(1, 3))

    def server(self):
        r = self.r
        self.count = r.choice([1, 1, 1, 2, 2, 3, 4])
        self.gpus = r.choice([1, 2, 4, 8])
        self.set("server.count", self.count)
        self.set("server.gpus", self.gpus)
        self.set("server.cpus", r.choice([1, 2, 4, 6, 8, 12, 16, 24, 32, 48, 64]))
        ds_gb = self.items * self.item_kb / 1e6
        self.maybe(0.7, "server.cache_gb", lambda: _r(ds_gb * r.choice(
            [0.05, 0.2, 0.4, 0.5, 0.7, 0.9, 1.2, 2.0]) / (1 if r.random() < 0.6 else self.count)))
        self.maybe(0.3, "server.network.gbit_s", lambda: r.choice([1, 10, 25, 40, 100, 200]))
        self.maybe(0.2, "server.network.latency_us", lambda: _r(r.uniform(0, 200)))
        if r.random() < 0.15:
            self.set("server.mem_gbps", _r(r.uniform(10, 200)))
            self.set("prep.mem_mb_per_item", _r(r.uniform(0.5, 20)))
        self.known |= {"server.mem_gbps", "prep.mem_mb_per_item", "server.gpu_mem_gb"}
        if self.count > 1 and r.random() < 0.3:
            self.set("server.storage.shared", True)
        self.known.add("server.storage.shared")

    def storage(self):
        r = self.r
        kind = r.choice(["fixed", "fixed", "ssd", "hdd", "object", "object"])
        self.storage_kind = kind
        self.set("server.storage.kind", kind)
        if kind in ("fixed", "ssd"):
            self.maybe(0.15, "server.storage.read_iops", lambda: _r(_lu(r, 200, 200000)))
            self.maybe(0.4, "server.storage.queue_depth", lambda: r.choice([1, 4, 16, 32, 64, 128]))
        if kind == "fixed":
            self.maybe(0.8, "server.storage.read_mb_s", lambda: _r(_lu(r, 50, 7000)))
            self.maybe(0.6, "server.storage.latency_ms", lambda: _r(_lu(r, 0.02, 10)))
        elif kind == "ssd":
            self.known |= {f"server.storage.latency_qd{q}_ms" for q in (1, 4, 16, 32)}
            if r.random() < 0.7:
                base = _lu(r, 0.05, 1.0)
                lat = base
                for q in (1, 4, 16, 32):
                    self.set(f"server.storage.latency_qd{q}_ms", _r(lat))
                    lat *= r.uniform(0.9, 3.0)
            self.maybe(0.8, "server.storage.peak_mb_s", lambda: _r(_lu(r, 300, 7000)))
        elif kind == "hdd":
            self.maybe(0.5, "server.storage.rpm", lambda: r.choice([5400, 7200, 10000, 15000]))
            full = _r(r.uniform(5, 20))
            self.known.add("server.storage.seek_full_ms")
            if r.random() < 0.5:
                self.set("server.storage.seek_full_ms", full)
            else:
                full = 15
            self.maybe(0.5, "server.storage.seek_track_ms", lambda: _r(r.uniform(0.1, 2)))
            ds_gb = self.items * self.item_kb / 1e6 * 1.5
            self.maybe(0.4, "server.storage.capacity_gb", lambda: _r(max(ds_gb, _lu(r, 1, 16000))))
            self.maybe(0.5, "server.storage.seq_mb_s", lambda: _r(r.uniform(80, 300)))
            self.maybe(0.5, "server.storage.ncq", lambda: r.choice([1, 4, 8, 32]))
        else:
            self.maybe(0.8, "server.storage.first_byte_ms", lambda: _r(_lu(r, 1, 60)))
            self.maybe(0.3, "server.storage.first_byte_p99_ms", lambda: _r(
                self.top.get("server.storage.first_byte_ms", 15) * r.uniform(1, 6)))
            self.maybe(0.6, "server.storage.conn_mb_s", lambda: _r(_lu(r, 10, 300)))
            self.maybe(0.3, "server.storage.max_mb_s", lambda: _r(_lu(r, 100, 10000)))
            self.maybe(0.3, "server.storage.max_get_s", lambda: _r(_lu(r, 100, 20000)))
            self.maybe(0.2, "server.storage.connections_per_process", lambda: r.randint(1, 64))
            self.maybe(0.2, "server.storage.connections_per_server", lambda: r.randint(1, 256))
            self.maybe(0.15, "server.storage.range_mb", lambda: _r(self.item_kb / 1e3
                                                                 * r.uniform(0.2, 2)))
            # the store's limit a prefix (issue 37): 503s retried after a
            # back-off; HEADs and LISTs where the loader issues them
            if r.random() < 0.3:
                self.set("server.storage.prefix_get_s", _r(_lu(r, 50, 5500)))
                self.maybe(0.6, "server.storage.prefixes", lambda: r.choice([1, 2, 4, 32, 256]))
                self.maybe(0.3, "server.storage.retry_base_ms", lambda: _r(_lu(r, 1, 1000)))
                self.maybe(0.3, "server.storage.retry_cap_ms", lambda: _r(_lu(r, 10, 20000)))
            self.maybe(0.15, "server.storage.head", lambda: True)
            self.maybe(0.1, "server.storage.list_each_epoch", lambda: True)
        # the pool loader's reader pool; drawn once the loader is known
        self.known.add("server.storage.reader_threads")
        # the reader's CPU per read (syscall and copy, or TCP and HTTP)
        self.maybe(0.2, "server.storage.cpu_us_per_read", lambda: _r(_lu(r, 1, 300)))
        self.maybe(0.2, "server.storage.cpu_us_per_mb", lambda: _r(_lu(r, 10, 3000)))
        self.maybe(0.2, "server.cache_cpu_us_per_read", lambda: _r(_lu(r, 1, 50)))
        self.maybe(0.2, "server.cache_cpu_us_per_mb", lambda: _r(_lu(r, 10, 500)))

    def tier(self):
        r = self.r
        self.known |= {"server.tier.cache_gb", "server.tier.cache", "server.tier.read_mb_s",
                       "server.tier.latency_ms", "server.tier.read_iops", "server.tier.queue_depth",
                       "server.tier.cpu_us_per_read", "server.tier.cpu_us_per_mb"}
        if r.random() < 0.25:
            ds_gb = self.items * self.item_kb / 1e6
            self.set("server.tier.cache_gb", _r(ds_gb * r.choice([0.1, 0.3, 0.5, 0.8, 1.0, 1.5])))
            self.maybe(0.5, "server.tier.cache", lambda: r.choice(["lru", "minio", "fifo",
                                                                    "linux", "none"]))
            self.maybe(0.4, "server.tier.read_mb_s", lambda: _r(_lu(r, 500, 7000)))
            self.maybe(0.3, "server.tier.latency_ms", lambda: _r(_lu(r, 0.02, 0.5)))
            self.maybe(0.15, "server.tier.read_iops", lambda: _r(_lu(r, 5000, 500000)))
            self.maybe(0.2, "server.tier.queue_depth", lambda: r.choice([4, 16, 64, 256]))
            self.maybe(0.2, "server.tier.cpu_us_per_read", lambda: _r(_lu(r, 1, 100)))
            self.maybe(0.2, "server.tier.cpu_us_per_mb", lambda: _r(_lu(r, 10, 1000)))

    def prep(self):
        r = self.r
        self.maybe(0.7, "prep.decode_ms_per_mb", lambda: _r(r.uniform(2, 40)))
        self.maybe(0.3, "prep.decode_ms_per_item", lambda: _r(r.uniform(0, 3)))
        self.maybe(0.6, "prep.augment_ms", lambda: _r(r.uniform(0.05, 4)))
        self.maybe(0.15, "prep.on_gpu", lambda: True)
        self.maybe(0.1, "prep.gpu_augment_ms", lambda: _r(r.uniform(0.005, 0.2)))
        self.maybe(0.2, "prep.out_kb", lambda: _r(r.uniform(50, 1200)))
        self.known |= {"prep.decode", "prep.huffman_ms_per_mb", "prep.huffman_ms_per_item",
                       "prep.gpu_decode_ms_per_mp", "prep.hw_decode_mp_s", "prep.hw_decoder_load",
                       "prep.eval_ms", "prep.audio_ms_per_mb",
                       "prep.audio_ms_per_item", "prep.scaling"}
        if r.random() < 0.3:
            self.set("prep.eval_ms", _r(r.uniform(0.2, 4)))
        if r.random() < 0.3:
            self.set("prep.audio_ms_per_mb", _r(r.uniform(5, 80)))
            self.maybe(0.5, "prep.audio_ms_per_item", lambda: _r(r.uniform(0, 3)))
        self.video()
        if r.random() < 0.15:
            # a sub-linear curve: speed-up t^a, a < 1, so effective cores <= cores
            a = r.uniform(0.6, 0.98)
            pts = [1, 2, 4, 8] + ([16] if r.random() < 0.5 else [])
            self.set("prep.scaling", ", ".join(f"{t}:{_r(t ** a)}" if t > 1 else "1:1"
                                                for t in pts))

    VIDEO_KEYS = {"prep.video_frames", "prep.video_stride", "prep.video_width",
                  "prep.video_height", "prep.video_gop", "prep.video_access",
                  "prep.video_decode_ms_per_frame", "prep.video_decode_ms_per_mpx",
                  "prep.video_seek_ms", "prep.video_transform_ms_per_mpx", "prep.video_decode",
                  "prep.video_demux_ms_per_frame", "prep.nvdec_fps", "prep.nvdec_session_ms",
                  "prep.nvdec_engines", "loader.batch_dtype", "loader.copy_ms_per_mb",
                  "prep.video_keyframe_ms_per_mpx", "prep.video_decode_delay"}

    def video(self):
        """The video pipeline's keys (prep.pipeline: video), drawn from a
        generator of their own (self.rv), so the compositions drawn before
        the video pipeline was added stay as they were."""
        rv = self.rv
        self.known |= self.VIDEO_KEYS
        self.video_gpu = None
        if rv.random() >= 0.3:
            return
        self.set("prep.video_frames", rv.choice([1, 2, 4, 8, 16]))
        if rv.random() < 0.4:
            self.set("prep.video_stride", rv.choice([1, 2, 3, 5]))
        self.set("prep.video_width", rv.choice([64, 160, 320, 640, 1280]))
        self.set("prep.video_height", rv.choice([48, 120, 240, 480, 720]))
        self.set("prep.video_gop", rv.choice([1, 2, 10, 30, 250]))
        self.set("prep.video_access", rv.choice(["random", "random", "sequential"]))
        self.set("prep.video_decode_ms_per_mpx", _r(_lu(rv, 0.5, 20)))
        for key, lo, hi in (("prep.video_decode_ms_per_frame", 0.02, 1),
                            ("prep.video_seek_ms", 0.1, 5),
                            ("prep.video_transform_ms_per_mpx", 0.2, 5),
                            ("loader.copy_ms_per_mb", 0.02, 0.5)):
            if rv.random() < 0.5:
                self.set(key, _r(_lu(rv, lo, hi)))
        if rv.random() < 0.5:
            self.set("loader.batch_dtype", rv.choice(["float32", "uint8"]))
        if rv.random() < 0.35:
            self.set("prep.video_decode", "gpu")
            self.set("prep.nvdec_fps", _r(_lu(rv, 100, 4000)))
            for key, lo, hi in (("prep.nvdec_session_ms", 0.1, 10),
                                ("prep.video_demux_ms_per_frame", 0.005, 0.1)):
                if rv.random() < 0.5:
                    self.set(key, _r(_lu(rv, lo, hi)))
            # the engines: given, or the GPU table's for the jobs' GPU
            if rv.random() < 0.5:
                self.set("prep.nvdec_engines", rv.choice([1, 2, 5, 7]))
            else:
                self.video_gpu = rv.choice(["v100", "a100-80gb", "h100-sxm", "h200"])
        # a keyframe's excess: from a generator of its own, drawn from rv's
        # state without a draw of rv's (which the jobs go on drawing), so the
        # compositions drawn before it stay as they were
        kv = random.Random(repr(rv.getstate()[1][:8]) + ":keyframe")
        if kv.random() < 0.5:
            self.set("prep.video_keyframe_ms_per_mpx", _r(_lu(kv, 1, 40)))
        if kv.random() < 0.4:  # drawn after it: the draws before stay as they were
            self.set("prep.video_decode_delay", kv.choice([1, 2, 3, 16]))

    def loader(self):
        r = self.r
        # the threads and dali kinds read loose items only (record shards refused)
        kind = r.choice(["pool", "pool", "pytorch"] + ([] if self.shards else ["threads", "dali"]))
        self.loader_kind = kind
        self.set("loader.kind", kind)
        self.maybe(0.85, "loader.cache", lambda: r.choice(["none", "lru", "lru", "minio", "minio",
                                                           "fifo", "belady", "linux"]))
        # the page cache's readahead window: none, a page, Linux's, a RAID's
        self.known.add("server.storage.read_ahead_kb")
        if self.top.get("loader.cache") == "linux":
            self.maybe(0.6, "server.storage.read_ahead_kb", lambda: r.choice([0, 4, 16, 128,
                                                                               512, 4096]))
        if kind == "pool":
            self.maybe(0.4, "loader.prep", lambda: r.choice(["partitioned", "coordinated"]))
            if self.count > 1 and self.top.get("loader.cache") == "minio" \
                    and "server.tier.cache_gb" not in self.top and not self.shards:
                self.maybe(0.5, "loader.dist_cache", lambda: "partitioned")
            if r.random() < 0.5 and "server.tier.cache_gb" not in self.top and self.gpus > 1 \
                    and self.top.get("loader.prep") != "coordinated":
                self.decode_gpu()
            if self.shards:
                self.maybe(0.5, "loader.open_shards", lambda: r.choice([1, 2, 4, 8, 16]))
            if self.storage_kind == "object":
                self.maybe(0.5, "server.storage.reader_threads", lambda: r.choice(
                    [1, 4, 16, 64, 256]))
        elif kind == "threads":
            self.maybe(0.8, "loader.threads", lambda: r.choice([1, 2, 4, 8, 16, 32]))
            self.maybe(0.4, "loader.gil_read_ms", lambda: _r(r.uniform(0, 0.2)))
            self.maybe(0.5, "loader.gil_decode_share", lambda: _r(r.uniform(0, 1), 2))
            self.maybe(0.5, "loader.gil_transform_share", lambda: _r(r.uniform(0, 1), 2))
            self.maybe(0.3, "loader.threads_collate_ms_per_item", lambda: _r(r.uniform(0, 0.3)))
            self.maybe(0.4, "loader.gil_reacquires_per_batch", lambda: _r(r.uniform(0, 8), 2))
            self.maybe(0.3, "loader.gil_switch_ms", lambda: r.choice([1, 5, 20]))
            self.maybe(0.2, "loader.threads_warmup_ms", lambda: _r(r.uniform(0, 300)))
            self.maybe(0.15, "loader.threads_oversub",
                       lambda: r.choice(["1:1, 2:0.85, 4:0.6, 8:0.45", "1:1, 4:0.5"]))
        elif kind == "dali":
            self.maybe(0.8, "loader.num_threads", lambda: r.choice([1, 2, 3, 4, 8, 16]))
            if r.random() < 0.3:
                self.set("loader.cpu_queue_depth", r.choice([1, 2, 4]))
                self.set("loader.gpu_queue_depth", r.choice([1, 2, 4]))
            else:
                self.maybe(0.4, "loader.prefetch_queue_depth", lambda: r.choice([1, 2, 4, 8]))
            self.maybe(0.4, "loader.reader_threads", lambda: r.choice([1, 2, 4]))
            self.maybe(0.3, "loader.reader_queue_depth", lambda: r.choice([1, 2, 4]))
            # DALI's mixed decoder: the hybrid nvJPEG backend on the training GPU
            if r.random() < 0.4 and "server.tier.cache_gb" not in self.top and self.gpus > 1:
                self.decode_gpu()
        else:
            self.maybe(0.8, "loader.num_workers", lambda: r.choice([0, 1, 2, 4, 8]))
            self.maybe(0.3, "loader.prefetch_factor", lambda: r.choice([1, 2, 4]))
            self.maybe(0.3, "loader.persistent_workers", lambda: r.random() < 0.5)
            self.maybe(0.3, "loader.pin_memory", lambda: r.random() < 0.5)
            self.maybe(0.2, "loader.drop_last", lambda: True)
            self.maybe(0.2, "loader.collate_ms_per_item", lambda: _r(r.uniform(0, 0.3)))
            self.maybe(0.2, "loader.share_ms_per_item", lambda: _r(r.uniform(0, 0.5)))
            self.maybe(0.2, "loader.transfer_ms_per_item", lambda: _r(r.uniform(0, 0.1)))
            self.maybe(0.2, "loader.pin_ms_per_item", lambda: _r(r.uniform(0, 0.2)))
            self.maybe(0.2, "loader.step_ms", lambda: _r(r.uniform(0, 5)))
            self.maybe(0.2, "loader.receive_wait_ms", lambda: _r(r.uniform(0, 5)))
            self.maybe(0.3, "loader.core_efficiency", lambda: _r(r.uniform(0.3, 1), 2))
            self.maybe(0.2, "loader.worker_start_ms", lambda: _r(r.uniform(0, 50)))
            self.maybe(0.2, "loader.worker_init_ms", lambda: _r(r.uniform(0, 100)))
            self.maybe(0.2, "loader.worker_warmup_ms", lambda: _r(r.uniform(0, 200)))
            self.maybe(0.2, "loader.worker_exit_ms", lambda: _r(r.uniform(0, 50)))
            self.maybe(0.15, "loader.oversub",
                       lambda: r.choice(["1:1, 2:0.9, 4:0.7, 8:0.5, 16:0.4", "1:1, 4:0.5"]))
            self.handover(random.Random(repr(r.getstate()[1][:8]) + ":handover"))
        if kind != "threads":  # the threads kind samples by index: no shuffle buffer
            self.maybe(0.15, "loader.shuffle_buffer", lambda: r.choice([16, 64, 256, 1000]))
        # streamed record shards (issue 55): the reader reads as its items ask,
        # a readahead window ahead; a tier serves shards whole (refused). Its
        # draws are a generator of their own, seeded from this one's state
        # without consuming it: every scenario's other keys stay as they were.
        self.known |= {"server.storage.read_ahead_kb"}
        sub = random.Random(repr(r.getstate()[1][:8]))
        if self.shards and "server.tier.cache_gb" not in self.top and sub.random() < 0.4:
            self.set("loader.reader", "stream")
            if sub.random() < 0.6:
                self.set("server.storage.read_ahead_kb", sub.choice([0, 16, 128, 512, 4096]))
        self.known |= {"loader.dist_cache", "loader.staging_mb", "loader.open_shards"}
        self.known |= {k for k in self.t.keys if k.startswith("loader.")}

    def handover(self, hv):
        """The pytorch loader's hand-over by the items' bytes, from a
        generator of its own (hv): every other draw stays as it was."""
        if hv.random() < 0.3:
            self.set("loader.copy_ms_per_mb", _r(_lu(hv, 0.05, 2)))
        if hv.random() < 0.3:
            self.set("loader.receive_ms_per_mb", _r(_lu(hv, 0.02, 0.5)))

    def decode_gpu(self):
        r = self.r
        self.set("prep.decode", "gpu")
        self.set("prep.huffman_ms_per_mb", _r(r.uniform(1, 8)))
        self.maybe(0.4, "prep.huffman_ms_per_item", lambda: _r(r.uniform(0, 0.5)))
        self.set("prep.gpu_decode_ms_per_mp", _r(r.uniform(0.05, 0.6)))
        self.set("dataset.megapixels", _r(r.uniform(0.1, 1.5)))
        # an A100/H100-class GPU's hardware JPEG decoder, beside the SMs
        if r.random() < 0.4:
            self.set("prep.hw_decode_mp_s", _r(r.uniform(200, 8000)))
            self.maybe(0.6, "prep.hw_decoder_load", lambda: r.choice([0, 0.3, 0.65, 0.9, 1]))

    def jobs_(self):
        r = self.r
        cluster = self.count * self.gpus
        coordinated = self.top.get("loader.prep") == "coordinated"
        njobs = r.choice([1, 1, 1, 2, 2, 3])
        used = 0
        first = None
        pipes = ["image_train"] + (["image_eval"] if "prep.eval_ms" in self.top else []) \
            + (["audio"] if "prep.audio_ms_per_mb" in self.top else [])
        if self.top.get("prep.on_gpu"):
            pipes = ["image_train"]
        for j in range(njobs):
            left = cluster - used
            if left < 1:
                break
            job = {}
            if coordinated and first is not None:
                gpus = first["gpus"]
                if gpus > left:
                    break
                job["gpus"] = gpus
                job["batch_per_gpu"] = first["batch_per_gpu"]
            else:
                opts = [g for g in (1, 2, 4, 8, 16, 32) if g <= left
                        and (g <= self.gpus or g % self.gpus == 0)]
                job["gpus"] = r.choice(opts)
                # at least MIN_ITERS iterations an epoch, as training has: the
                # model is a fluid pipeline, and an epoch of two batches is
                # mostly its fill and drain
                most = max(1, self.items // (MIN_ITERS * job["gpus"]))
                fits = [b for b in (4, 8, 16, 32, 64, 128) if b <= most]
                job["batch_per_gpu"] = r.choice(fits) if fits else most
            copies = 1
            if r.random() < 0.25:
                copies = r.randint(1, max(1, min(3, left // job["gpus"])))
                job["count"] = copies
            used += job["gpus"] * copies
            if r.random() < 0.8:
                job["gpu_items_per_s"] = _r(_lu(r, 30, 6000))
            else:
                job["compute_s_per_batch"] = _r(job["batch_per_gpu"] / _lu(r, 30, 6000))
            if self.loader_kind in ("pool", "threads", "dali"):
                # dali's depth is its own key (loader.prefetch_queue_depth)
                if r.random() < 0.3 and self.loader_kind != "dali":
                    job["prefetch_batches"] = r.choice([1, 2, 4, 8])
                # the training process's CPU an iteration, from a tenth of the
                # GPU's compute to past it (a Python-bound loop); the pytorch
                # kind takes it from loader.torch.step_ms instead
                if r.random() < 0.3:
                    rate = job.get("gpu_items_per_s") or \
                        job["batch_per_gpu"] / job["compute_s_per_batch"]
                    compute_ms = 1e3 * job["batch_per_gpu"] / rate
                    job["train_cpu_ms"] = _r(compute_ms * _lu(r, 0.1, 1.5))
            if coordinated and first is not None:
                for k in ("prep.pipeline", "prep.out_kb"):
                    if k in first:
                        job[k] = first[k]
            else:
                if r.random() < 0.4:
                    job["prep.pipeline"] = r.choice(pipes)
                if r.random() < 0.1:
                    job["prep.out_kb"] = _r(r.uniform(20, 1200))
                # the video pipeline where its keys are drawn (its own generator)
                if "prep.video_frames" in self.top and not self.top.get("prep.on_gpu") \
                        and self.rv.random() < 0.6:
                    job["prep.pipeline"] = "video"
                    job.pop("prep.out_kb", None)  # a clip hands over its frames
            if self.video_gpu and job.get("prep.pipeline") == "video":
                job["gpu"] = self.video_gpu
            self.jobs.append(job)
            if first is None:
                first = job
        # pinned prep cores under partitioned prep, within the cluster's
        if not coordinated and r.random() < 0.15:
            cpus = self.top["server.cpus"]
            inst = sum(j.get("count", 1) for j in self.jobs)
            each = max(1, cpus // (2 * inst))
            for j in self.jobs:
                j["cpus"] = r.randint(1, each)
        if coordinated and r.random() < 0.3:
            j0 = self.jobs[0]
            out_kb = j0.get("prep.out_kb") or self.top.get("prep.out_kb", 602.112)
            batch_mb = j0["gpus"] * j0["batch_per_gpu"] * out_kb / 1e3
            self.set("loader.staging_mb", _r(batch_mb * r.uniform(1.0, 6)))
        # CoorDL's hand-off of each batch to every job: a copy at 2 to 50 GB/s
        # a reader, slowed by the others copying at once (calibrate's fit)
        if coordinated and r.random() < 0.4:
            self.set("loader.handoff_ms_per_mb", _r(_lu(r, 0.02, 0.5)))
            self.maybe(0.5, "loader.handoff_ms_per_mb_per_reader", lambda: _r(r.uniform(0, 0.05)))
        if r.random() < 0.1:
            self.set("server.gpu_mem_gb", r.choice([16, 40, 80]))
            for j in self.jobs:
                j["gpu_mem_gb"] = _r(r.uniform(1, 12))

    def memory(self):
        """The server's memory (memory.c): the training processes' own,
        PyTorch's workers' (fixed and by the items each reads), a limit
        mostly above their need, now and then under it (refused, counted
        apart) or tight enough that the page cache (linux) gets less, and a
        /dev/shm limit."""
        r = self.r
        self.known |= {"server.mem_gb", "server.shm_mb", "loader.worker_mem_mb",
                       "loader.worker_mem_mb_per_kitem", "loader.process_mem_mb"}
        self.known_jobs = {"host_mem_gb"}
        if r.random() >= 0.3:
            return
        host = 0
        for j in self.jobs:
            if r.random() < 0.8:
                j["host_mem_gb"] = _r(r.uniform(0.2, 4), 2)
                host = max(host, j["host_mem_gb"])
        workers = 0
        if self.loader_kind == "pytorch":
            W = self.top.get("loader.num_workers", 0)
            mb = _r(r.uniform(5, 800), 2)
            per = _r(r.choice([0, 0.05, 0.5, 5]) * r.random(), 2)
            self.maybe(0.8, "loader.worker_mem_mb", lambda: mb)
            self.maybe(0.5, "loader.worker_mem_mb_per_kitem", lambda: per)
            items = self.items / max(1, min(j["gpus"] for j in self.jobs))
            workers = W * (self.top.get("loader.worker_mem_mb", 0) +
                           self.top.get("loader.worker_mem_mb_per_kitem", 0) * items / 1e3) / 1024
            # the training process as the probe measures it, for jobs without host_mem_gb
            self.maybe(0.3, "loader.process_mem_mb", lambda: _r(r.uniform(200, 3000), 1))
            if not host:
                host = self.top.get("loader.process_mem_mb", 0) / 1024
            if self.top.get("loader.pin_memory"):
                # pinned batches: p x W + 1 (2 without workers) power-of-two blocks
                out = self.top.get("prep.out_kb", 602.112) * 1e3
                b = max(j["batch_per_gpu"] for j in self.jobs)
                alive = self.top.get("loader.prefetch_factor", 2) * W + 1 if W else 2
                workers += (alive + 1) * 2 ** math.ceil(math.log2(b * out)) / 2**30
        need = self.gpus * (host + workers) + 0.5
        self.maybe(0.8, "server.mem_gb", lambda: _r(need * r.choice([0.7, 1.05, 1.5, 3, 10]), 3))
        self.maybe(0.2, "server.shm_mb", lambda: r.choice([64, 256, 1024, 16384]))

    def sampling(self):
        """The sampled simulation (SHARDS), lowered into reach now and then."""
        r = self.r
        self.known |= {k for k in self.t.keys if k.startswith("sim.")}
        if r.random() < 0.05:
            self.set("sim.sample_above_items", 100)
            self.set("sim.sample_rate", _r(r.uniform(0.2, 1), 2))
            self.maybe(0.3, "sim.sample_items_max", lambda: 1000)


# Checkpoints and failures (issue 57): drawn by checkpoints() below, after the
# generic draws (which would draw them too: their draws are made and then
# replaced, so that every scenario's other keys stay as they were).
GOODPUT_TOP = ("failures.", "server.storage.write_mb_s", "server.storage.prefix_put_s",
               "server.storage.part_mb", "server.storage.write_apart",
               "server.storage.write_request_kb")
GOODPUT_JOB = "checkpoint."


def checkpoints(g, r):
    """Checkpoints of some jobs (sync or async: a few MB to a few GB, every
    few steps to past an epoch, 1-16 writes in flight), the device's write
    path, and failures (an MTBF from an hour of one GPU to Meta's 50,000, a
    restart's own time, a horizon of an hour to a week). r is a generator
    of their own (checkpoints' draws leave the others' as they were)."""
    for k in [k for k in g.top if k.startswith(GOODPUT_TOP)]:
        del g.top[k]
    for j in g.jobs:
        for k in [k for k in j if k.startswith(GOODPUT_JOB)]:
            del j[k]
    if r.random() < 0.45:
        for i, j in enumerate(g.jobs):
            if i and r.random() < 0.5:
                continue
            steps = max(1, g.items // (j["gpus"] * j["batch_per_gpu"]))
            j["checkpoint.gb"] = _r(_lu(r, 0.005, 4))
            j["checkpoint.every_steps"] = r.randint(1, 2 * steps + 1)
            if r.random() < 0.6:
                j["checkpoint.writers"] = r.choice([1, 2, 4, 8, 16])
            if r.random() < 0.4:
                j["checkpoint.mode"] = "async"
                if r.random() < 0.3:
                    j["checkpoint.stage_gb_s"] = _r(_lu(r, 0.5, 50))
        if g.storage_kind in ("fixed", "ssd", "hdd") and r.random() < 0.3:
            g.top["server.storage.write_mb_s"] = _r(_lu(r, 20, 5000))
        if g.storage_kind == "object" and r.random() < 0.3:
            g.top["server.storage.part_mb"] = r.choice([5, 8, 16, 64])
        if g.storage_kind == "object" and r.random() < 0.2:
            g.top["server.storage.prefix_put_s"] = _r(_lu(r, 20, 3500))
    if r.random() < 0.35:
        g.top["failures.mtbf_gpu_h"] = _r(_lu(r, 1, 50000))
        if r.random() < 0.6:
            g.top["failures.restart_s"] = _r(r.uniform(0, 600))
        if r.random() < 0.6:
            g.top["failures.horizon_h"] = r.choice([1, 24, 168])
    # (drawn last: the draws above stay as they were) where the writes go and
    # how a disk takes them: the tier's device, limits apart, request size
    ckpt = [j for j in g.jobs if "checkpoint.gb" in j]
    if ckpt and (g.top.get("server.tier.cache_gb") or 0) > 0 and r.random() < 0.4:
        r.choice(ckpt)["checkpoint.to"] = "tier"
    if ckpt and g.storage_kind in ("fixed", "ssd") and r.random() < 0.3:
        g.top["server.storage.write_apart"] = True
    if ckpt and g.storage_kind in ("fixed", "ssd") and r.random() < 0.2:
        g.top["server.storage.write_request_kb"] = r.choice([128, 512, 1280, 4096])


def _generic(table, r, name, row):
    """A value for a key this file has no rule for: its default scaled, a
    choice, a bool; None when nothing sensible can be drawn."""
    t = row["type"]
    if t == "bool":
        return r.random() < 0.5
    if t == "choice":
        return r.choice(row["choices"])
    if t in ("integer", "number"):
        try:
            d = float(row["default"])
        except ValueError:
            return None
        lo, hi = row.get("lo", -math.inf), row.get("hi", math.inf)
        v = d * r.choice([0.5, 2, 4]) if d > 0 else r.choice([1, 2, 10])
        v = min(max(v, lo if math.isfinite(lo) else v), hi if math.isfinite(hi) else v)
        return int(round(v)) if t == "integer" else _r(v)
    return None


def generate(table, seed, index):
    r = random.Random(f"semfuzz:{seed}:{index}")
    g = _Gen(table, r, random.Random(f"semfuzz-video:{seed}:{index}"))
    g.dataset()
    g.server()
    g.storage()
    g.tier()
    g.prep()
    g.loader()
    g.jobs_()
    # the dtype of a clip's frames is refused where no job hands frames over
    if not any(j.get("prep.pipeline") == "video" for j in g.jobs):
        g.top.pop("loader.batch_dtype", None)
    # the hand-over's CPU by the bytes is the pytorch loader's (video() draws it first)
    if g.loader_kind != "pytorch":
        g.top.pop("loader.copy_ms_per_mb", None)
    g.memory()
    if g.video_gpu:
        g.known_jobs.add("gpu")
    g.sampling()
    g.set("seed", r.randint(1, 1000))
    generic = []
    chosen = {"server.storage.kind": g.storage_kind, "loader.kind": g.loader_kind,
              "loader.cache": g.top.get("loader.cache", "lru")}
    for name, row in sorted(table.keys.items()):
        if name in g.known or name in SKIP:
            continue
        own = table.owners.get(name)
        if own and not any(chosen.get(fam) == kind for fam, kind in own):
            continue
        generic.append(name)
        if r.random() < 0.15:
            v = _generic(table, r, name, row)
            if v is not None:
                g.top[name] = v
    for name, row in sorted(table.job_keys.items()):
        known_job = {"count", "gpus", "batch_per_gpu", "gpu_items_per_s", "compute_s_per_batch",
                     "prefetch_batches", "cpus", "gpu_mem_gb", "prep.pipeline", "prep.out_kb",
                     "train_cpu_ms"} | g.known_jobs
        if name in known_job or name in JOB_SKIP:
            continue
        generic.append("jobs[]." + name)
        for j in g.jobs:
            if r.random() < 0.15:
                v = _generic(table, r, name, row)
                if v is not None:
                    j[name] = v
    checkpoints(g, random.Random(repr(r.getstate()[1][:8]) + ":checkpoints"))
    generic = [k for k in generic if not k.startswith(GOODPUT_TOP)
               and not k.startswith("jobs[]." + GOODPUT_JOB)]
    return {"top": g.top, "jobs": g.jobs, "generic": generic}


def to_yaml(scen):
    doc = dict(scen["top"])
    doc["jobs"] = [dict(j) for j in scen["jobs"]]
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)


def clone(scen):
    return copy.deepcopy(scen)
