/* schema: see schema.h. Adding a key is adding a row here (and the field in
 * scenario.h); parsing, validation, --set, help and echo follow. */
#include "schema.h"

#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "text.h"

const char *prep_mode_name(int i) {
    static const char *const names[] = {"partitioned", "coordinated"};
    return i >= 0 && i < PREP__COUNT ? names[i] : NULL;
}

static const schema_kinds_t *kinds; /* registered before main (kinds.c) */

void schema_register_kinds(const schema_kinds_t *k) {
    kinds = k;
}

double schema_kind_out_bytes(const scenario_t *s, const job_t *j) {
    return kinds && kinds->out_bytes ? kinds->out_bytes(s, j) : -1;
}

static const char *kind_choice(kind_family_t family, int i) {
    return kinds ? kinds->name(family, i) : NULL;
}

static const char *cache_choice(int i) {
    return kind_choice(FAMILY_CACHE, i);
}

static const char *storage_choice(int i) {
    return kind_choice(FAMILY_STORAGE, i);
}

static const char *loader_choice(int i) {
    return kind_choice(FAMILY_LOADER, i);
}

static const char *pipeline_name(int i) {
    return kind_choice(FAMILY_PIPELINE, i);
}

const char *dist_mode_name(int i) {
    static const char *const names[] = {"local", "partitioned"};
    return i >= 0 && i < DIST__COUNT ? names[i] : NULL;
}

const char *resolve_by_name(int i) {
    static const char *const names[] = {"none", "one-rank", "every-rank", "every-worker"};
    return i >= 0 && i < RESOLVE__COUNT ? names[i] : NULL;
}

const char *resume_by_name(int i) {
    static const char *const names[] = {"index", "skip"};
    return i >= 0 && i < RESUME__COUNT ? names[i] : NULL;
}

const char *reader_mode_name(int i) {
    static const char *const names[] = {"whole", "stream"};
    return i >= 0 && i < READER__COUNT ? names[i] : NULL;
}

const char *server_mode_name(int i) {
    static const char *const names[] = {"auto", "sampled", "exact"};
    return i >= 0 && i < SERVERS__COUNT ? names[i] : NULL;
}

#define S(field) SCN_FIELD(field)
#define J(field) offsetof(job_t, field), sizeof(((job_t *)0)->field)
#define BIG      SCHEMA_BIG

/* clang-format off */
static const key_def_t core_keys[] = {
    {"name", KT_STRING, "", "", 0, 0, 0, NULL, S(name), "what the output calls this scenario (default: the file name)"},
    {"seed", KT_INT, "", "1", 0, 9007199254740991.0, 0, NULL, S(seed), "seed of the one random generator (item sizes, epoch orders)"},
    {"epochs", KT_INT, "", "3", 1, 1000, 0, NULL, S(epochs), "training epochs to replay; epoch 1 starts with a cold cache"},
    {"host", KT_STRING, "path", "", 0, 0, 0, NULL, S(host), "host profile from `stallsim calibrate`; its values are defaults the scenario overrides (relative to the scenario's folder, else the working directory)"},
    {"dataset.items", KT_INT, "items", NULL, 1, 4000000000.0, 0, NULL, S(dataset.items), "N: encoded files in the dataset"},
    {"dataset.item_kb", KT_REAL, "KB", NULL, 0, 4e6, 1, NULL, S(dataset.item_kb), "mean encoded item size (1 KB = 1000 bytes)"},
    {"dataset.item_kb_cv", KT_REAL, "", "0", 0, 10, 0, NULL, S(dataset.item_kb_cv), "coefficient of variation of item sizes (lognormal; 0 = all equal)"},
    {"dataset.shard_items", KT_INT, "items", "0", 0, 4000000000.0, 0, NULL, S(dataset.shard_items), "record shards (TFRecord, tar): consecutive items packed S to a shard, read whole with one request, in a random shard order each epoch (0 or 1 = one object per item)"},
    {"dataset.shard_mb", KT_REAL, "MB", "0", 0, 2000, 0, NULL, S(dataset.shard_mb), "record shards given by size, as WebDataset's ShardWriter maxsize and tf.data writers cut them: shard_items = the items of mean size that fit (at least 1; 0 = use shard_items; not both)"},
    {"dataset.megapixels", KT_REAL, "MP", "0", 0, 1e4, 0, NULL, S(dataset.megapixels), "mean decoded size of an image in megapixels (calibrate measures its files' mean width x height): the GPU time and memory of prep.decode gpu (0 = not given)"},
    {"server.count", KT_INT, "servers", "1", 1, SCN_MAX_SERVERS, 0, NULL, S(server.count), "identical servers in the cluster"},
    {"server.cpus", KT_INT, "cores", "24", 1, 65536, 0, NULL, S(server.cpus), "CPU cores per server available for pre-processing"},
    {"server.gpus", KT_INT, "GPUs", "8", 1, 4096, 0, NULL, S(server.gpus), "GPUs per server"},
    {"server.cache_gb", KT_REAL, "GB", "0", 0, 1e9, 0, NULL, S(server.cache_gb), "DRAM per server for caching dataset items (page cache or MinIO)"},
    {"server.cache_cpu_us_per_read", KT_REAL, "us", "0", 0, 1e9, 0, NULL, S(server.cache_cpu_us_per_read), "CPU time of one core that a hit in the page cache costs its reader (a read() served from memory: open, the syscall, the copy, close), beside the item's prep; any loader.cache but minio (whose hits are the loader's own memory) over a storage kind that reads files; calibrate measures it (warm reads; 0 = hits cost no CPU)"},
    {"server.cache_cpu_us_per_mb", KT_REAL, "us/MB", "0", 0, 1e9, 0, NULL, S(server.cache_cpu_us_per_mb), "CPU time of one core per MB a hit in the page cache copies to its reader, charged as server.cache_cpu_us_per_read is (1 MB = 1e6 bytes; 0 = none)"},
    {"server.storage.kind", KT_ENUM, "", "fixed", 0, 0, 0, storage_choice, S(server.storage.kind), "storage kind (each has its own keys below)"},
    {"server.storage.", KT_SPLICE, "", "", 0, 0, 0, NULL, FAMILY_STORAGE, 0, "the storage kinds' own rows go here"},
    {"server.storage.cpu_us_per_read", KT_REAL, "us", "0", 0, 1e9, 0, NULL, S(server.storage.cpu_us_per_read), "CPU time of one core that one read from storage costs its reader (the PyTorch worker, pool or DALI thread that issues it), beside the item's prep: a local file's open, read syscall and close, an object store's GET (TCP and the HTTP client; a HEAD or ranged part each one); a hit in the page cache costs server.cache_cpu_us_* instead, a read from the tier's device server.tier.cpu_us_*; calibrate measures it for local files (cold reads; 0 = reads cost no CPU)"},
    {"server.storage.cpu_us_per_mb", KT_REAL, "us/MB", "0", 0, 1e9, 0, NULL, S(server.storage.cpu_us_per_mb), "CPU time of one core per MB a read from storage moves (the kernel's copy into the reader's buffer, TCP receive), charged as server.storage.cpu_us_per_read is; a record shard's to each of its items for the item's own bytes, as they arrive (1 MB = 1e6 bytes; 0 = none)"},
    {"server.storage.read_ahead_kb", KT_INT, "KiB", "128", 0, 1048576, 0, NULL, S(server.storage.read_ahead_kb), "the kernel's readahead window on the device (cat /sys/block/DEV/queue/read_ahead_kb; Linux's default 128, blockdev --setra counts 512-byte sectors; calibrate and the PyTorch probe write the one of the device their files lie on): a file read in order has its next window read ahead as it enters the one before; a streaming reader (loader.reader: stream) blocks on a read past it, and loader.cache linux counts the pages read ahead in the cache and in the bytes read (0 = none: only the pages asked for, every read waits)"},
    {"server.storage.shared", KT_BOOL, "", "false", 0, 0, 0, NULL, S(server.storage.shared), "true: one storage (NFS, object store) for all servers; false: a full copy on each"},
    {"server.network.gbit_s", KT_REAL, "Gbit/s", "40", 0, BIG, 1, NULL, S(server.network.gbit_s), "NIC bandwidth per server (remote cache hits)"},
    {"server.network.latency_us", KT_REAL, "us", "20", 0, 1e9, 0, NULL, S(server.network.latency_us), "network latency per remote request"},
    {"server.network.cpu_us_per_read", KT_REAL, "us", "0", 0, 1e9, 0, NULL, S(server.network.cpu_us_per_read), "CPU time of one core that a remote hit (loader.dist_cache: partitioned) costs the reader that asked: the request and the TCP receive, charged beside the item's prep (calibrate measures a GET's over 127.0.0.1, measured.read_cpu.get; the owner's send is not charged; 0 = free)"},
    {"server.network.cpu_us_per_mb", KT_REAL, "us/MB", "0", 0, 1e9, 0, NULL, S(server.network.cpu_us_per_mb), "CPU time of one core per MB a remote hit receives, beside server.network.cpu_us_per_read (0 = free)"},
    {"server.shm_mb", KT_REAL, "MiB", "0", 0, 1e9, 0, NULL, S(server.shm_mb), "the servers' /dev/shm (df -m /dev/shm; Docker's default is 64, raised by --shm-size; Kubernetes pods get an emptyDir of medium Memory): a loader whose worker processes would hold more batches in shared memory than this is refused with the bus error it would meet (0 = not checked)"},
    {"server.mem_gb", KT_REAL, "GiB", "0", 0, 1e9, 0, NULL, S(server.mem_gb), "each server's memory limit in GiB, as docker run --memory=64g and a cgroup's memory.max count it (or the host's memory less what else runs there): a server whose training processes (jobs.N.host_mem_gb), their loaders' workers (loader.worker_mem_mb, loader.worker_mem_mb_per_kitem), /dev/shm's batches and a cache held in the loader's own memory would pass it is refused with the OOM kill it would meet, and the page cache (loader.cache: linux) holds only what they leave of it (0 = not checked)"},
    {"server.gpu_mem_gb", KT_REAL, "GB", "0", 0, 1e6, 0, NULL, S(server.gpu_mem_gb), "memory of each GPU: a job whose training memory (jobs.N.gpu_mem_gb) and input batches in flight on a GPU do not fit is refused (0 = not checked)"},
    {"server.mem_gbps", KT_REAL, "GB/s", "0", 0, 1e6, 0, NULL, S(server.mem_gbps), "memory bandwidth per server with every core streaming (calibrate measures it: a STREAM-like triad on all its threads, bytes read + written; 1 GB = 1e9 bytes); with prep.mem_mb_per_item it bounds the effective prep cores (0 = no bound)"},
    {"server.tier.", KT_SPLICE, "", "", 0, 0, 0, NULL, FAMILY_TIER, 0, "the tier's own rows go here"},
    {"prep.decode_ms_per_mb", KT_REAL, "ms/MB", "20", 0, 1e9, 0, NULL, S(prep.decode_ms_per_mb), "CPU decode time per encoded MB (one core)"},
    {"prep.decode_ms_per_item", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, S(prep.decode_ms_per_item), "fixed CPU decode time per item (one core)"},
    {"prep.augment_ms", KT_REAL, "ms", "0.9", 0, 1e9, 0, NULL, S(prep.augment_ms), "CPU augment time per item (crop, flip, normalise; one core)"},
    {"prep.on_gpu", KT_BOOL, "", "false", 0, 0, 0, NULL, S(prep.on_gpu), "augment on the GPU (DALI mixed): costs gpu_augment_ms of GPU time per item instead of augment_ms of CPU"},
    {"prep.gpu_augment_ms", KT_REAL, "ms", "0.02", 0, 1e9, 0, NULL, S(prep.gpu_augment_ms), "GPU time per item when prep.on_gpu"},
    {"prep.out_kb", KT_REAL, "KB", "602.112", 0.001, 1e9, 0, NULL, S(prep.out_kb), "memory of one prepared item in a staged batch (224x224x3 float32 = 602.112 KB)"},
    {"prep.decode", KT_ENUM, "", "cpu", 0, 0, 0, decode_place_name, S(prep.decode), "where images are decoded: cpu (decode_ms_per_mb x size + decode_ms_per_item of a core), or gpu (nvJPEG as DALI's mixed: huffman_ms_per_mb x size + huffman_ms_per_item of a core for the Huffman stage, plus gpu_decode_ms_per_mp x dataset.megapixels of the training GPU's time per item, lengthening its iterations); image pipelines only"},
    {"prep.huffman_ms_per_mb", KT_REAL, "ms/MB", "0", 0, 1e9, 0, NULL, S(prep.huffman_ms_per_mb), "prep.decode gpu: CPU time per encoded MB of the Huffman stage, one core (calibrate: nvJPEG's host phase, where a GPU and nvJPEG are present; 0 = not given: decode gpu is refused)"},
    {"prep.huffman_ms_per_item", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, S(prep.huffman_ms_per_item), "prep.decode gpu: fixed CPU time per item of the Huffman stage"},
    {"prep.gpu_decode_ms_per_mp", KT_REAL, "ms/MP", "0", 0, 1e9, 0, NULL, S(prep.gpu_decode_ms_per_mp), "prep.decode gpu: time of the training GPU per decoded megapixel (nvJPEG's GPU stages; 0 = not given: decode gpu is refused)"},
    {"prep.hw_decode_mp_s", KT_REAL, "MP/s", "0", 0, 1e9, 0, NULL, S(prep.hw_decode_mp_s), "prep.decode gpu: megapixels a second decoded by the GPU's hardware JPEG decoder (the NVJPG engine of A100/H100-class GPUs), which runs beside the SMs: an image it takes costs no core and none of the training GPU's time, only this engine's, and the GPU's iteration waits on it only where it is the slower (0 = no such engine: every image takes the hybrid path; no built-in value: NVIDIA publishes its throughput as speed-ups, not per megapixel; measured on an H200 through torchvision's batched decode_jpeg, which takes the engine: 2,045 MP/s on 0.14-MP images in batches of 128, VALIDATION.md, \"On a GPU machine\")"},
    {"prep.hw_decoder_load", KT_REAL, "", "0.65", 0, 1, 0, NULL, S(prep.hw_decoder_load), "prep.decode gpu with prep.hw_decode_mp_s: the share of each batch's images sent to the hardware decoder, the rest taking the hybrid path (Huffman on a core, the rest on the SMs): DALI's decoders.image hw_decoder_load, default 0.65"},
    {"prep.", KT_SPLICE, "", "", 0, 0, 0, NULL, FAMILY_PIPELINE, 0, "the pipeline kinds' own rows go here"},
    {"prep.mem_mb_per_item", KT_REAL, "MB", "0", 0, 1e6, 0, NULL, S(prep.mem_mb_per_item), "memory traffic of one item's CPU prep (calibrate counts its image_train pipeline's buffers: JPEG read, RGB written, the crop's rows read, float output written; a count of buffer bytes, not a hardware counter): with server.mem_gbps, c cores past prep.scaling's last point (past one core without a curve) prepare as at most the cores whose items fill the bandwidth, server.mem_gbps x 1000 x the one-core prep seconds of a mean-size item / mem_mb_per_item, never below the last measured point (run says when the bound binds); the simulator and the model use the same bound (0 = no bound)"},
    {"prep.scaling", KT_STRING, "", "", 0, 0, 0, NULL, S(prep.scaling), "measured prep scaling on one server as THREADS:SPEEDUP pairs, threads ascending from 1:1 (e.g. \"1:1, 2:1.9, 4:3.4, 8:5.6\"; calibrate writes its augment curve): c cores prepare as the curve's effective cores, linear between points and past the last at its last marginal gain per core, bounded by memory bandwidth when server.mem_gbps and prep.mem_mb_per_item are given (run says when a figure is extrapolated, and when the bound binds); the simulator and the model use the same curve (\"\" = linear)"},
    {"loader.kind", KT_ENUM, "", "pool", 0, 0, 0, loader_choice, S(loader.kind), "data loader (each has its own keys below)"},
    {"loader.cache", KT_ENUM, "", "lru", 0, 0, 0, cache_choice, S(loader.cache), "cache policy"},
    {"loader.prep", KT_ENUM, "", "partitioned", 0, 0, 0, prep_mode_name, S(loader.prep), "concurrent jobs: partitioned (own cores and order each) or coordinated (CoorDL: one shared stream)"},
    {"loader.dist_cache", KT_ENUM, "", "local", 0, 0, 0, dist_mode_name, S(loader.dist_cache), "servers: local (each caches what it reads) or partitioned (CoorDL: disjoint caches served over the network)"},
    {"loader.staging_mb", KT_REAL, "MB", "0", 0, BIG, 0, NULL, S(loader.staging_mb), "coordinated prep: memory for batches prepared ahead (0 = the jobs' largest prefetch_batches); bounds how far the shared loader runs ahead"},
    {"loader.shuffle_buffer", KT_INT, "items", "0", 0, 4000000000.0, 0, NULL, S(loader.shuffle_buffer), "items a shuffle buffer holds (tf.data's and WebDataset's shuffle(B)): each batch item a random draw from it, refilled from the reads, which run B items further ahead; pool: one buffer for the stream, pytorch: one in each worker, dali: one in each GPU's pipeline, its file reader's initial_fill with random_shuffle (0 = none)"},
    {"loader.reader", KT_ENUM, "", "whole", 0, 0, 0, reader_mode_name, S(loader.reader), "how a record shard (dataset.shard_items) is read: whole (one request for the shard when its first item is asked for, its items served as its bytes arrive) or stream (WebDataset, an IterableDataset over tar shards, tf.data's TFRecordDataset: the reader that prepares the items reads the shard in order, each read of server.storage.read_ahead_kb, one read ahead of the item it waits for, the item's own reads past that blocking it); record shards only"},
    {"loader.", KT_SPLICE, "", "", 0, 0, 0, NULL, FAMILY_LOADER, 0, "the loader kinds' own rows go here"},
    {"startup.resolve", KT_ENUM, "", "none", 0, 0, 0, resolve_by_name, S(startup.resolve), "who resolves the dataset before the first step, each job at its launch (huggingface datasets' load_dataset, a Dataset's file listing): none, one-rank (rank 0, then a broadcast), every-rank, or every-worker (each rank's every loader worker: the request storm of a streaming dataset); its requests go to the storage as reads do, against its caps, connections and a prefix's 503s, and `run` prints the time to the first step"},
    {"startup.list", KT_BOOL, "", "true", 0, 0, 0, NULL, S(startup.list), "the resolution lists the dataset's objects (shards, or items when loose): LIST pages of 1000 keys, one after another"},
    {"startup.head_each", KT_BOOL, "", "false", 0, 0, 0, NULL, S(startup.head_each), "the resolution asks each object's size with a HEAD (a stat on a file system) before the first step"},
    {"startup.metadata_mb", KT_REAL, "MB", "0", 0, 1e6, 0, NULL, S(startup.metadata_mb), "an index or metadata file each resolver downloads before the first step (a dataset card, a shard index, a parquet footer) (0 = none)"},
    {"startup.threads", KT_INT, "requests", "1", 1, 4096, 0, NULL, S(startup.threads), "requests one resolver keeps in flight (a resolver's thread pool)"},
    {"startup.resume_at", KT_REAL, "", "0", 0, 1, 0, NULL, S(startup.resume_at), "a restart: the share of the first epoch done before it, where the job resumes (0 = a new run); the time to the first step then holds the resume"},
    {"startup.resume_by", KT_ENUM, "", "index", 0, 0, 0, resume_by_name, S(startup.resume_by), "how a restart reaches its position: index (the loader's saved state, as torchdata's StatefulDataLoader: no cost) or skip (iterating the loader through the items before it, each read and prepared with no training step, as a loader without state does)"},
    {"failures.mtbf_gpu_h", KT_REAL, "h", "0", 0, 1e12, 0, NULL, S(failures.mtbf_gpu_h), "mean hours between failures of one GPU and what it needs to run (its host, NIC, software): a job of G GPUs fails every mtbf_gpu_h / G hours on average, loses the work since its last checkpoint and restarts (0 = no failures)"},
    {"failures.restart_s", KT_REAL, "s", "120", 0, 1e9, 0, NULL, S(failures.restart_s), "a restart's own time before the start-up phase (rescheduling, containers, the processes and their CUDA contexts); the start-up, the first batch and the checkpoint's reload come on top"},
    {"failures.horizon_h", KT_REAL, "h", "168", 0.001, 1e9, 0, NULL, S(failures.horizon_h), "the span over which goodput is reckoned (a week by default): the simulator draws failures over it from the seed"},
    {"prices", KT_STRING, "path", "", 0, 0, 0, NULL, S(prices_file), "price file (prices_version: 1, its source and date, a prices: mapping); its prices are defaults the scenario's prices.* override (relative to the scenario's folder, else the working directory)"},
    {"prices.get_per_1000", KT_REAL, "USD", "0", 0, BIG, 0, NULL, S(prices.get_per_1000), "price of 1000 storage reads (GET requests; 0 = not charged)"},
    {"prices.list_per_1000", KT_REAL, "USD", "0", 0, BIG, 0, NULL, S(prices.list_per_1000), "price of 1000 LIST requests (a job lists the dataset once, 1000 keys a LIST)"},
    {"prices.egress_per_gb", KT_REAL, "USD", "0", 0, BIG, 0, NULL, S(prices.egress_per_gb), "price of one GB read from storage (egress; 0 within a cloud region)"},
    {"prices.gpu_hour", KT_REAL, "USD", "0", 0, BIG, 0, NULL, S(prices.gpu_hour), "price of one GPU for an hour"},
    {"prices.core_hour", KT_REAL, "USD", "0", 0, BIG, 0, NULL, S(prices.core_hour), "price of one CPU core for an hour (the job's prep cores)"},
    {"prices.dram_gb_hour", KT_REAL, "USD", "0", 0, BIG, 0, NULL, S(prices.dram_gb_hour), "price of one GB of the servers' cache (server.cache_gb, DRAM) for an hour; a job pays its servers' cache by its share of their GPUs"},
    {"prices.tier_gb_hour", KT_REAL, "USD", "0", 0, BIG, 0, NULL, S(prices.tier_gb_hour), "price of one GB of the servers' cache device (server.tier.cache_gb, e.g. NVMe) for an hour; a job pays by its share of the servers' GPUs"},
    {"sim.sample_above_items", KT_INT, "items", "100000000", 0, 4000000000.0, 0, NULL, S(sampling.above_items), "above this many items (lru or minio, loose items, one stream per cache) the simulator replays a hash-sampled share of the items (sim.sample_rate, SHARDS) for the hits and takes the timings from the model given them; the output says so"},
    {"sim.sample_rate", KT_REAL, "", "0.01", 0, 1, 1, NULL, S(sampling.rate), "share of the items a sampled run replays (items whose hash falls below it; the cache scaled alike)"},
    {"sim.sample_items_max", KT_INT, "items", "4000000", 1000, 4000000000.0, 0, NULL, S(sampling.items_max), "a sampled run replays at most about this many items: the share is lowered to fit (SHARDS' fixed-size form; time and memory stay bounded as the dataset grows)"},
    {"sim.servers", KT_ENUM, "", "auto", 0, 0, 0, server_mode_name, S(sampling.servers_mode), "per-server caches over alike servers (one job on every server, loose items, local caching): auto simulates every server when that fits this machine's memory and a sample of sim.server_sample of them (the shared store loaded by all) when not; sampled always samples; exact never does"},
    {"sim.server_sample", KT_INT, "servers", "16", 2, 65535, 0, NULL, S(sampling.server_sample), "servers a server-sampled run simulates (evenly spaced; each stands for its share of the others, their reads loading a shared store)"},
};

static const key_def_t job_keys[] = {
    {"name", KT_STRING, "", "", 0, 0, 0, NULL, J(name), "what the output calls this job (default: job<N>)"},
    {"model", KT_STRING, "", "", 0, 0, 0, NULL, J(model), "the DNN (e.g. resnet18): for the reader, and with gpu the row of the published rate table"},
    {"gpu", KT_STRING, "", "", 0, 0, 0, NULL, J(gpu), "the GPU (e.g. v100): with model, the job trains at the published per-GPU rate of that row of the table (`stallsim help gpus`, each row with its source) unless gpu_items_per_s or compute_s_per_batch is given, which overrides it (\"\" = no table)"},
    {"count", KT_INT, "jobs", "1", 1, 4096, 0, NULL, J(count), "identical copies of this job running at once (hyper-parameter search)"},
    {"gpus", KT_INT, "GPUs", NULL, 1, 1048576, 0, NULL, J(gpus), "GPUs of one copy (data-parallel, across servers when more than server.gpus)"},
    {"batch_per_gpu", KT_INT, "items", "256", 1, 1048576, 0, NULL, J(batch_per_gpu), "mini-batch per GPU"},
    {"gpu_items_per_s", KT_REAL, "items/s", "0", 0, 1e12, 0, NULL, J(gpu_items_per_s), "GPU ingestion rate per GPU (set this or compute_s_per_batch, or gpu and model for a published rate)"},
    {"compute_s_per_batch", KT_REAL, "s", "0", 0, 1e6, 0, NULL, J(compute_s_per_batch), "GPU compute time per iteration (set this or gpu_items_per_s)"},
    {"prefetch_batches", KT_INT, "batches", "2", 1, 1024, 0, NULL, J(prefetch_batches), "loader queue depth per GPU: batches prepared ahead of the GPU"},
    {"cpus", KT_INT, "cores", "0", 0, 65536, 0, NULL, J(cpus), "prep cores of one copy under partitioned prep (0 = an equal share of server.cpus)"},
    {"gpu_mem_gb", KT_REAL, "GB", "0", 0, 1e6, 0, NULL, J(gpu_mem_gb), "GPU memory the training takes on each of the job's GPUs (weights, optimizer state, activations), beside its input batches; checked against server.gpu_mem_gb"},
    {"host_mem_gb", KT_REAL, "GiB", "0", 0, 1e6, 0, NULL, J(host_mem_gb), "host memory each of the job's training processes holds itself (its resident set: the framework, the CUDA context's host side, the model's host copy, the Dataset's index), beside its loader's workers; checked against server.mem_gb"},
    {"train_cpu_ms", KT_REAL, "ms", "0", 0, 1e6, 0, NULL, J(train_cpu_ms), "CPU time each training process uses per iteration while its GPU computes (the Python step, kernel launches, a synchronize's spin; time.process_time() over iterations): taken from the server's cores, beside the loader's prep; an iteration lasts at least this long (0 = not charged; the pytorch kind takes it from loader.torch.step_ms)"},
    {"checkpoint.gb", KT_REAL, "GB", "0", 0, 1e9, 0, NULL, J(checkpoint.gb), "one checkpoint of the job (every rank's share of the weights and optimizer state together; a model of P parameters trained with Adam in mixed precision is about 16 P bytes): each rank writes its share to the dataset's storage (checkpoint.mode says whether the GPUs wait; 0 = none)"},
    {"checkpoint.every_steps", KT_INT, "steps", "0", 0, 1e12, 0, NULL, J(checkpoint.every_steps), "steps between the job's checkpoints, counted across epochs (0 = none)"},
    {"checkpoint.writers", KT_INT, "writes", "1", 1, 1024, 0, NULL, J(checkpoint.writers), "writes of its share each rank keeps in flight (torch.distributed.checkpoint's threads, a multipart upload's parts)"},
    {"checkpoint.mode", KT_ENUM, "", "sync", 0, 0, 0, ckpt_mode_name, J(checkpoint.mode), "sync: the GPUs wait while each rank writes its share; async (torch.distributed.checkpoint's async_save): the GPUs wait only while each copies its share to host memory (checkpoint.stage_gb_s), the staged state is held in the server's memory (counted against server.mem_gb) and written in the background, and a checkpoint waits for the last one's writes to end"},
    {"checkpoint.stage_gb_s", KT_REAL, "GB/s", "25", 0.001, 1e6, 0, NULL, J(checkpoint.stage_gb_s), "async: one GPU's copy of its share to host memory; a server's GPUs copy together, at most server.mem_gbps where given (PCIe 4.0 x16 moves 31.5 GB/s a direction (PCI-SIG); 25 is about 80 % of it, what CUDA's bandwidthTest commonly reports for pinned device-to-host copies: an estimate, not measured here)"},
    {"checkpoint.to", KT_ENUM, "", "storage", 0, 0, 0, ckpt_to_name, J(checkpoint.to), "where the checkpoints are written: storage (the data set's, server.storage: its reads and the writes share it) or tier (each server's own tier device, server.tier.*: a local NVMe, as a job writes locally before any upload; its writes at the tier's read rate, beside the tier's reads)"},
    {"prep.pipeline", KT_ENUM, "", "image_train", 0, 0, 0, pipeline_name, J(prep.pipeline), "this job's prep, each pipeline costed from calibrate"},
    {"prep.out_kb", KT_REAL, "KB", "0", 0, 1e9, 0, NULL, J(prep.out_kb), "memory of one item this job prepared (0 = the scenario's prep.out_kb)"},
};
/* clang-format on */

#define NJOB ((int)(sizeof job_keys / sizeof job_keys[0]))
_Static_assert(NJOB <= SCN_MAX_KEYS, "raise SCN_MAX_KEYS");

/* The scenario rows: the core rows with every kind's own rows spliced in
 * where their family's marker stands, built once (threads may ask at once). */
static key_def_t scen_rows[SCN_MAX_KEYS];
static int nscen;
static pthread_once_t built = PTHREAD_ONCE_INIT;

/* Whether a row of the same name is already spliced (a row several kinds
 * list is one key: the same field, or a programming error). */
static int spliced(const key_def_t *k) {
    for (int r = 0; r < nscen; r++)
        if (strcmp(scen_rows[r].name, k->name) == 0) {
            if (scen_rows[r].offset != k->offset || scen_rows[r].type != k->type) abort();
            return 1;
        }
    return 0;
}

/* schema_find's index of the scenario rows by name: open addressing, row + 1
 * in each used slot (names are unique, so a lookup finds what a scan of the
 * rows would; scenario_build looks up every assignment of every layer). */
#define NSLOTS 1024
_Static_assert(NSLOTS >= 2 * SCN_MAX_KEYS, "raise NSLOTS");
static short slots[NSLOTS];

static unsigned name_hash(const char *s) {
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* The scenario row called name, or -1, once index_rows has run. */
static int indexed_row(const char *name) {
    for (unsigned i = name_hash(name) % NSLOTS; slots[i]; i = (i + 1) % NSLOTS)
        if (strcmp(scen_rows[slots[i] - 1].name, name) == 0) return slots[i] - 1;
    return -1;
}

static void index_rows(void) {
    for (int r = 0; r < nscen; r++) {
        unsigned i = name_hash(scen_rows[r].name) % NSLOTS;
        while (slots[i])
            i = (i + 1) % NSLOTS;
        slots[i] = (short)(r + 1);
    }
}

/* The keys that pick a kind: their help is their row's and then the family's
 * kinds, each with its own help, so a new kind is listed where it is chosen. */
static const struct {
    const char *key;
    kind_family_t family;
    key_scope_t scope;
} kind_picks[] = {
    {"server.storage.kind", FAMILY_STORAGE, SCOPE_SCENARIO},
    {"loader.kind", FAMILY_LOADER, SCOPE_SCENARIO},
    {"loader.cache", FAMILY_CACHE, SCOPE_SCENARIO},
    {"prep.pipeline", FAMILY_PIPELINE, SCOPE_JOB},
};
#define NPICKS ((int)(sizeof kind_picks / sizeof kind_picks[0]))
static char pick_help[NPICKS][1024];
/* The job rows, their pick's help listing its kinds (list_kinds). */
static key_def_t job_rows[NJOB];

static key_def_t *pick_row(int p) {
    if (kind_picks[p].scope == SCOPE_SCENARIO) return &scen_rows[indexed_row(kind_picks[p].key)];
    for (int i = 0; i < NJOB; i++)
        if (!strcmp(job_rows[i].name, kind_picks[p].key)) return &job_rows[i];
    abort(); /* a pick names a key no table has */
}

static void list_kinds(void) {
    for (int p = 0; p < NPICKS; p++) {
        key_def_t *row = pick_row(p);
        char *h = pick_help[p];
        size_t used = (size_t)snprintf(h, sizeof pick_help[p], "%s: ", row->help);
        for (int i = 0; kinds->name(kind_picks[p].family, i) && used < sizeof pick_help[p]; i++)
            used += (size_t)snprintf(h + used, sizeof pick_help[p] - used, "%s%s (%s)",
                                     i ? ", " : "", kinds->name(kind_picks[p].family, i),
                                     kinds->help(kind_picks[p].family, i));
        if (used >= sizeof pick_help[p]) abort(); /* raise pick_help's size */
        row->help = h;
    }
}

/* A kind's row as the scenario stores it: a KIND_FIELD row moved into its
 * kind's block (offsets past the block are a programming error). */
static key_def_t own_row(const key_def_t *k, kind_family_t family, int i) {
    key_def_t row = *k;
    if (!(row.offset & KIND_OWN)) return row;
    size_t at = row.offset & ~KIND_OWN;
    if (at + row.size > SCN_KIND_OPTS) abort();
    row.offset = offsetof(scenario_t, opts) +
                 ((size_t)family * SCN_KINDS_A_FAMILY + (size_t)i) * sizeof(kind_opts_t) + at;
    return row;
}

static void build_rows(void) {
    if (!kinds) {
        fputs("stallsim: internal error: no kind registry (kinds.c is not linked in)\n", stderr);
        abort();
    }
    for (size_t r = 0; r < sizeof core_keys / sizeof core_keys[0]; r++) {
        if (core_keys[r].type != KT_SPLICE) {
            if (nscen == SCN_MAX_KEYS) abort(); /* raise SCN_MAX_KEYS */
            scen_rows[nscen++] = core_keys[r];
            continue;
        }
        kind_family_t family = (kind_family_t)core_keys[r].offset;
        for (int i = 0; kinds->name(family, i); i++) {
            int n;
            const key_def_t *k = kinds->keys(family, i, &n);
            if (n && i >= SCN_KINDS_A_FAMILY) abort(); /* raise SCN_KINDS_A_FAMILY */
            for (int j = 0; j < n; j++) {
                key_def_t row = own_row(&k[j], family, i);
                if (spliced(&row)) continue;
                if (nscen == SCN_MAX_KEYS) abort();
                scen_rows[nscen++] = row;
            }
        }
    }
    index_rows();
    memcpy(job_rows, job_keys, sizeof job_rows);
    list_kinds();
}

const key_def_t *schema_keys(key_scope_t scope, int *count) {
    pthread_once(&built, build_rows);
    if (scope == SCOPE_JOB) return *count = NJOB, job_rows;
    *count = nscen;
    return scen_rows;
}

int schema_find(key_scope_t scope, const char *name) {
    int n;
    const key_def_t *k = schema_keys(scope, &n);
    if (scope == SCOPE_SCENARIO) return indexed_row(name);
    for (int i = 0; i < n; i++)
        if (strcmp(k[i].name, name) == 0) return i;
    return -1;
}

const char *schema_key_at(size_t offset) {
    int n;
    const key_def_t *rows = schema_keys(SCOPE_SCENARIO, &n);
    for (int i = 0; i < n; i++)
        if (rows[i].offset == offset) return rows[i].name;
    return NULL;
}

const char *schema_suggest(const char *name, char *buf, size_t bufsize) {
    int best = 1 << 30, nrows;
    const key_def_t *rows = schema_keys(SCOPE_SCENARIO, &nrows);
    buf[0] = 0;
    for (int i = 0; i < nrows; i++) {
        int d = diag_edit_distance(name, rows[i].name);
        if (d < best) best = d, snprintf(buf, bufsize, "%s", rows[i].name);
    }
    /* Job keys are compared with the job prefix the user wrote, if any. */
    const char *tail = name;
    char prefix[64] = "jobs.0.";
    if (strncmp(name, "jobs.", 5) == 0) {
        const char *p = name + 5;
        const char *dot = strchr(p, '.');
        if (dot && (size_t)(dot + 1 - name) < sizeof prefix) {
            memcpy(prefix, name, (size_t)(dot + 1 - name));
            prefix[dot + 1 - name] = 0;
            tail = dot + 1;
        }
    }
    for (int i = 0; i < NJOB; i++) {
        int d = diag_edit_distance(tail, job_keys[i].name);
        if (d < best) best = d, snprintf(buf, bufsize, "%s%s", prefix, job_keys[i].name);
    }
    size_t len = strlen(name);
    int limit = len < 6 ? 2 : (int)(len / 3) + 1;
    return best <= limit ? buf : NULL;
}

static int parse_int(const char *t, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (end != t && *end == 0 && errno == 0) {
        *out = v;
        return 0;
    }
    /* Accept integral reals such as 1e6 or 4.0e9, which users write for large counts. */
    double d = strtod(t, &end);
    if (end == t || *end || !isfinite(d) || d != floor(d) || fabs(d) > 9.2e18) return -1;
    *out = (int64_t)d;
    return 0;
}

static int parse_real(const char *t, double *out) {
    char *end;
    errno = 0;
    double d = strtod(t, &end);
    /* ERANGE with a result below 1: an underflow (1e-310), not an overflow. */
    if (end != t && !*end && errno == ERANGE && fabs(d) < 1) return 2;
    if (end == t || *end || errno == ERANGE || !isfinite(d)) return -1;
    *out = d;
    return 0;
}

static int parse_bool(const char *t, int *out) {
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no",
                                                                                "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(t, yes[i]) == 0) return *out = 1, 0;
        if (strcmp(t, no[i]) == 0) return *out = 0, 0;
    }
    return -1;
}

/* The reference writes a maximum of SCHEMA_BIG as inf (no limit meant); an
 * error message (exact) gives the real one, which a value past it breaks. */
static void bounds_text(const key_def_t *k, char *buf, size_t n, int exact) {
    const char *lo = k->min_open ? "(" : "[";
    if (k->max >= BIG && !exact)
        snprintf(buf, n, "%s%.15g, inf)", lo, k->min);
    else
        snprintf(buf, n, "%s%.15g, %.15g]", lo, k->min, k->max);
}

static void choices_text(const key_def_t *k, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; k->choice(i) && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", k->choice(i));
}

int schema_store(const key_def_t *k, void *base, const char *text, char *why, size_t whysize) {
    char *p = (char *)base + k->offset;
    char b[256];
    switch (k->type) {
    case KT_INT:
    case KT_REAL: {
        /* Integers and reals share the bounds check; only parsing and storage differ. */
        int64_t iv = 0;
        double v = 0;
        const char *what = k->type == KT_INT ? "an integer" : "a number";
        int bad = k->type == KT_INT ? parse_int(text, &iv) : parse_real(text, &v);
        if (k->type == KT_INT) v = (double)iv;
        if (!bad && v >= k->min && v <= k->max && !(k->min_open && v <= k->min)) {
            if (k->type == KT_INT)
                memcpy(p, &iv, sizeof iv);
            else
                memcpy(p, &v, sizeof v);
            return 0;
        }
        bounds_text(k, b, sizeof b, 1);
        if (bad == 2)
            snprintf(why, whysize,
                     "too small for a double (below 2.2e-308, where precision is lost): "
                     "expected a number in %s",
                     b);
        else if (bad)
            snprintf(why, whysize, "expected %s in %s",
                     k->type == KT_INT ? "an integer" : "a finite number", b);
        else
            snprintf(why, whysize, "out of bounds: expected %s in %s", what, b);
        return -1;
    }
    case KT_BOOL: {
        int v;
        if (parse_bool(text, &v)) {
            snprintf(why, whysize, "expected true or false");
            return -1;
        }
        memcpy(p, &v, sizeof v);
        return 0;
    }
    case KT_ENUM:
        for (int i = 0; k->choice(i); i++)
            if (strcmp(text, k->choice(i)) == 0) {
                memcpy(p, &i, sizeof i);
                return 0;
            }
        choices_text(k, b, sizeof b);
        snprintf(why, whysize, "expected one of: %s", b);
        return -1;
    case KT_STRING:
        if (strlen(text) >= k->size) {
            snprintf(why, whysize, "too long: at most %zu characters", k->size - 1);
            return -1;
        }
        /* Names reach terminals, CSV and JSON: valid UTF-8, no control characters. */
        if (text_check(text, why, whysize)) return -1;
        memcpy(p, text, strlen(text) + 1);
        return 0;
    case KT_SPLICE:
        break; /* never a row of the built table */
    }
    return -1;
}

double schema_number(const key_def_t *k, const void *base) {
    const char *at = (const char *)base + k->offset;
    return k->type == KT_INT ? (double)*(const int64_t *)at : *(const double *)at;
}

void schema_format(const key_def_t *k, const void *base, char *buf, size_t n) {
    const char *p = (const char *)base + k->offset;
    switch (k->type) {
    case KT_INT: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, n, "%lld", (long long)v);
        break;
    }
    case KT_REAL: {
        double v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, n, "%.10g", v);
        break;
    }
    case KT_BOOL:
    case KT_ENUM: {
        int v;
        memcpy(&v, p, sizeof v);
        snprintf(buf, n, "%s", k->type == KT_BOOL ? (v ? "true" : "false") : k->choice(v));
        break;
    }
    case KT_STRING:
        snprintf(buf, n, "%s", p);
        break;
    case KT_SPLICE:
        buf[0] = 0;
        break;
    }
}

static const char *type_name(const key_def_t *k) {
    static const char *const names[] = {"integer", "number", "bool", "choice", "string"};
    return names[k->type];
}

static void print_rows(FILE *out, const key_def_t *rows, int n, const char *prefix, int md) {
    for (int i = 0; i < n; i++) {
        const key_def_t *k = &rows[i];
        char bounds[256] = "";
        if (k->type == KT_INT || k->type == KT_REAL) bounds_text(k, bounds, sizeof bounds, 0);
        if (k->type == KT_ENUM) choices_text(k, bounds, sizeof bounds);
        const char *def = k->def ? (k->def[0] ? k->def : "\"\"") : "required";
        if (md)
            fprintf(out, "| `%s%s` | %s | %s | %s | %s | %s |\n", prefix, k->name, type_name(k),
                    k->unit, def, bounds, k->help);
        else
            fprintf(out, "%s%-28s %-8s %-9s default %-12s %s\n    %s\n", prefix, k->name,
                    type_name(k), k->unit, def, bounds, k->help);
    }
}

void schema_print_reference(FILE *out, int md) {
    int nrows;
    const key_def_t *rows = schema_keys(SCOPE_SCENARIO, &nrows);
    if (md) {
        fprintf(out, "| key | type | unit | default | bounds | meaning |\n");
        fprintf(out, "| --- | --- | --- | --- | --- | --- |\n");
    } else {
        fprintf(out, "Scenario keys (YAML nesting or dotted paths; --set key=value):\n\n");
    }
    print_rows(out, rows, nrows, "", md);
    if (!md)
        fprintf(out, "\nJob keys (a list under `jobs:`; --set jobs.N.key=value, or jobs.key=value "
                     "for every job):\n\n");
    print_rows(out, job_rows, NJOB, "jobs[].", md);
    if (!md)
        fprintf(
            out,
            "\nVariants: `variants: {NAME: {key: value, ...}, ...}` -- each overrides keys of "
            "the base;\nthe first is the baseline the others' speed-ups are measured against.\n");
}
