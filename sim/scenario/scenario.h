/* scenario: the effective configuration of one simulated training setup.
 *
 * A scenario_t is built from layers of key=value assignments, each checked
 * against the schema (schema.h), applied in this order, later ones winning:
 * built-in defaults < host profile (`host:`) < scenario file < --set < the
 * variant's overrides. scenario_doc_t is the parsed file (base keys plus
 * named variants); scenario_build() turns it into one scenario_t per variant.
 * Units are SI: 1 KB = 1e3 bytes, 1 MB = 1e6, 1 GB = 1e9. */
#ifndef STALLSIM_SCENARIO_H
#define STALLSIM_SCENARIO_H

#include <stdint.h>
#include <stddef.h>

#include "diag.h"

#define SCN_STR            128
#define SCN_PATH           1024
#define SCN_MAX_SERVERS    4096 /* server.count bound */
#define SCN_MAX_JOBS       64
#define SCN_MAX_VARIANTS   32
#define SCN_MAX_KEYS       192 /* upper bound on schema rows of one scope */
#define SCN_ITEM_BYTES_MAX 4e9 /* the largest item the simulator holds (uint32 sizes) */
#define SCN_MAX_CURVE      32  /* points of prep.scaling */

/* A kind's own options live in a block of the scenario that this header
 * knows only by size: the kind's file declares its options struct, checks
 * that it fits (SCN_KIND_OPTS_FITS), its rows name its fields
 * (KIND_FIELD, schema.h) and it reads them through scenario_kind_opts. One
 * block a kind of each family (kind_family_t, schema.h), so every kind's
 * defaults are stored whichever kind a scenario picks. */
#define SCN_KIND_FAMILIES  5
#define SCN_KINDS_A_FAMILY 8
#define SCN_KIND_OPTS      384 /* bytes of one kind's block */
typedef struct {
    _Alignas(8) unsigned char b[SCN_KIND_OPTS];
} kind_opts_t;
#define SCN_KIND_OPTS_FITS(T)                                                                      \
    _Static_assert(sizeof(T) <= SCN_KIND_OPTS && _Alignof(T) <= 8, #T " fits a kind's block")

/* Each enum has a names table in schema.c, indexed by value. Both keys call
 * their non-default value "partitioned" (CoorDL's word); inside the code the
 * two ideas have their own names: prep per job, caches sharded by server. */
typedef enum { PREP_PER_JOB, PREP_COORDINATED, PREP__COUNT } prep_mode_t;
typedef enum { DIST_LOCAL, DIST_SHARDED, DIST__COUNT } dist_mode_t;
/* sim.servers: when a run over alike servers simulates a sample of them. */
typedef enum { SERVERS_AUTO, SERVERS_SAMPLED, SERVERS_EXACT, SERVERS__COUNT } server_mode_t;
/* Where images are decoded (prep.decode): on the CPU, or on the GPU that
 * trains (nvJPEG as DALI's "mixed": the Huffman stage stays on the CPU). */
typedef enum { DECODE_CPU, DECODE_GPU, DECODE__COUNT } decode_place_t;
/* jobs.N.checkpoint.mode (sim/kinds/checkpoint.h) */
typedef enum { CKPT_SYNC, CKPT_ASYNC, CKPT__COUNT } ckpt_mode_t;
/* jobs.N.checkpoint.to: the data set's storage, or each server's tier device */
typedef enum { CKPT_TO_STORAGE, CKPT_TO_TIER, CKPT_TO__COUNT } ckpt_to_t;
/* startup.resolve: who resolves the dataset before the first step (lists
 * its objects, stats each, downloads its index): nobody, one rank that
 * broadcasts, every rank, or every rank's every loader worker. */
typedef enum {
    RESOLVE_NONE,
    RESOLVE_ONE_RANK,
    RESOLVE_EVERY_RANK,
    RESOLVE_EVERY_WORKER,
    RESOLVE__COUNT
} resolve_by_t;
/* resume.by: how a restarted job reaches its position in the epoch: by the
 * loader's saved state (state_dict: no cost), or by iterating the loader
 * through the items before it (each read and prepared, no step). */
typedef enum { RESUME_INDEX, RESUME_SKIP, RESUME__COUNT } resume_by_t;
/* How a record shard is read (loader.reader): whole with one request ahead
 * of its items, or streamed in order by the worker that decodes its items,
 * each read past the kernel's readahead blocking it (WebDataset, an
 * IterableDataset over tar shards, tf.data's TFRecordDataset). */
typedef enum { READER_WHOLE, READER_STREAM, READER__COUNT } reader_mode_t;

typedef struct {
    char name[SCN_STR];
    char model[SCN_STR];
    char gpu[SCN_STR]; /* with model, a row of the published rate table (gpu_rates.h) */
    /* That row, when the table has it (NULL: none, or no gpu); rate_given:
     * a rate was set (gpu_items_per_s or compute_s_per_batch), overriding it. */
    const struct gpu_rate *rate_row;
    int rate_given;
    int64_t count; /* identical copies of this job (hyper-parameter search) */
    int64_t gpus;
    int64_t batch_per_gpu;
    double gpu_items_per_s;     /* per GPU; 0 = use compute_s_per_batch */
    double compute_s_per_batch; /* per iteration; 0 = use gpu_items_per_s */
    int64_t prefetch_batches;
    int64_t cpus;        /* cores for this job's prep under partitioned prep; 0 = an equal share */
    double gpu_mem_gb;   /* GPU memory the training itself takes on each GPU */
    double host_mem_gb;  /* host memory each training process holds itself (GiB) */
    double train_cpu_ms; /* CPU of each training process per iteration, beside its GPU's compute */
    struct {             /* synchronous checkpoints (sim/kinds/checkpoint.h) */
        double gb;       /* one checkpoint of the job, all its ranks; 0 = none */
        int64_t every_steps; /* steps between checkpoints; 0 = none */
        int64_t writers;     /* writes in flight per rank */
        int mode;            /* ckpt_mode_t */
        double stage_gb_s;   /* async: one GPU's copy of its share to host memory */
        int to;              /* ckpt_to_t */
    } checkpoint;
    struct {
        int pipeline;  /* index into the pipeline kinds (sim/kinds/pipeline_kind.h) */
        double out_kb; /* one prepared item; 0 = the scenario's prep.out_kb */
    } prep;
    src_pos_t origin[SCN_MAX_KEYS];
    /* A job that exists only because a key named a later one (jobs.63.gpus
     * makes jobs 1 to 62): that key's position and its job. */
    src_pos_t made_at;
    int made_by;
} job_t;

typedef struct {
    char name[SCN_STR];
    char variant[SCN_STR];
    char host[SCN_PATH];
    char prices_file[SCN_PATH];
    int64_t seed;
    int64_t epochs;
    struct {
        int64_t items;
        double item_kb;
        double item_kb_cv;
        int64_t shard_items; /* record shards of this many items; 0 or 1 = one object per item */
        double shard_mb;     /* record shards of this size: sets shard_items (scenario_validate) */
        double megapixels;   /* mean decoded size of an image; 0 = not given */
    } dataset;
    struct {
        int64_t count;
        int64_t cpus;
        int64_t gpus;
        double cache_gb;
        double mem_gbps; /* memory bandwidth, all cores (calibrate); 0 = no bound on prep cores */
        /* The reader's CPU for a hit in the page cache, per read and per MB. */
        double cache_cpu_us_per_read, cache_cpu_us_per_mb;
        struct {
            int kind; /* index into the storage kinds (kinds.h) */
            double read_mb_s;
            double latency_ms;
            double read_iops;
            double write_mb_s; /* a disk's write bandwidth; 0 = its read rate */
            double write_request_kb; /* a disk's largest write request */
            int write_apart;         /* a disk's writes on a queue and channel of their own */
            double burst_ms;         /* fixed: the rate limit's bucket, ms of its rate */
            int64_t queue_depth;
            int shared;
            /* The reader's CPU for one read (the kernel's syscall and copy,
             * TCP and the HTTP client's): per read and per MB; 0 = none. */
            double cpu_us_per_read, cpu_us_per_mb;
            /* The kernel's readahead window on the device (its read_ahead_kb):
             * a streaming reader's reads past it block; the page cache's
             * read-ahead pages. */
            int64_t read_ahead_kb;
        } storage;
        struct {
            double gbit_s;
            double latency_us;
            /* A remote hit's CPU on its reader: the request and the TCP receive. */
            double cpu_us_per_read, cpu_us_per_mb;
        } network;
        double gpu_mem_gb; /* memory of each GPU; 0 = not checked */
        double shm_mb;     /* the servers' /dev/shm; 0 = not checked */
        double mem_gb;     /* each server's memory limit (GiB); 0 = not checked */
    } server;
    struct {
        double decode_ms_per_mb;
        double decode_ms_per_item;
        double augment_ms;
        int on_gpu;
        double gpu_augment_ms;
        double out_kb;
        int decode;               /* decode_place_t */
        double huffman_ms_per_mb; /* decode gpu: the CPU's Huffman stage; 0 = not given */
        double huffman_ms_per_item;
        double gpu_decode_ms_per_mp; /* decode gpu: GPU time per megapixel; 0 = not given */
        double hw_decode_mp_s;       /* decode gpu: the GPU's hardware JPEG decoder; 0 = none */
        double hw_decoder_load;      /* decode gpu: the share of images sent to it */
        double mem_mb_per_item;    /* prep's buffer traffic per item; 0 = no bound on prep cores */
        char scaling[SCN_STR * 2]; /* "THREADS:SPEEDUP, ..." as written; "" = linear */
        /* prep.scaling parsed by scenario_build: thread counts ascending from 1. */
        int scaling_n;
        double scaling_threads[SCN_MAX_CURVE], scaling_speedup[SCN_MAX_CURVE];
    } prep;
    struct {
        int kind;       /* index into the loader kinds (kinds.h) */
        int cache;      /* index into the cache policy registry (kinds.h) */
        int prep;       /* prep_mode_t */
        int dist_cache; /* dist_mode_t */
        int reader;     /* reader_mode_t */
        double staging_mb;
        int64_t shuffle_buffer; /* items shuffled in a buffer before batching (kinds.c:
                                   loader_buffer_slices) */
    } loader;
    struct {                /* the phase before the first step (sim/kinds/startup.h) */
        int resolve;        /* resolve_by_t */
        int list;           /* LIST pages of the dataset's objects, 1000 keys each */
        int head_each;      /* a HEAD (or stat) of every object */
        double metadata_mb; /* an index or metadata file each resolver downloads */
        int64_t threads;    /* requests in flight per resolver */
        double resume_at;   /* share of the first epoch done before a restart (0: a new run) */
        int resume_by;      /* resume_by_t */
    } startup;
    struct {               /* failures and restarts (sim/run/goodput.h) */
        double mtbf_gpu_h; /* mean hours between failures of one GPU; 0 = none */
        double restart_s;  /* a restart's own time: scheduling, containers, processes */
        double horizon_h;  /* the span goodput is reckoned over */
    } failures;
    struct { /* USD; 0 = not charged (no built-in prices) */
        double get_per_1000;
        double list_per_1000;
        double egress_per_gb;
        double gpu_hour;
        double core_hour;
        double dram_gb_hour; /* server.cache_gb */
        double tier_gb_hour; /* server.tier.cache_gb */
    } prices;
    struct { /* sim.*: sampled simulation of very large datasets (sim/mrc) */
        int64_t above_items;
        double rate;
        int64_t items_max;
        /* sim.servers and sim.server_sample: a run over many alike servers
         * simulated as a sample of them (sim/engine/server_sample.h). */
        int servers_mode;      /* server_mode_t */
        int64_t server_sample; /* K: servers a sampled run simulates */
        int servers_sampled;   /* resolved by run.c: K, or 0 for every server */
    } sampling;
    int njobs;
    job_t jobs[SCN_MAX_JOBS];
    /* Each kind's own options (scenario_kind_opts), by family and index. */
    kind_opts_t opts[SCN_KIND_FAMILIES][SCN_KINDS_A_FAMILY];
    /* Where each scenario-scope key got its value (schema row order). */
    src_pos_t origin[SCN_MAX_KEYS];
    /* The layer that set each key (SCN_LAYER_*), 0 for a built-in default,
     * a host profile's or a price file's: a kind switched by a later layer
     * leaves an earlier layer's keys of the old kind behind. */
    unsigned char explicit_key[SCN_MAX_KEYS];
    unsigned char layer; /* the layer being applied (scenario_build) */
} scenario_t;

enum { SCN_LAYER_BASE = 1, SCN_LAYER_SET = 2, SCN_LAYER_VARIANT = 3 };

/* One "key = value" from a file, a --set or a variant, with its position. */
typedef struct {
    char key[SCN_STR];
    char value[SCN_STR * 2];
    src_pos_t pos;    /* of the value */
    src_pos_t keypos; /* of the key (= pos for --set) */
    int is_scalar;    /* 0 when the YAML node was a mapping or sequence where a value belongs */
} assign_t;

typedef struct {
    assign_t *v;
    size_t n, cap;
} assign_list_t;

typedef struct {
    char name[SCN_STR];
    src_pos_t pos;
    assign_list_t set;
} variant_t;

typedef struct {
    char *path; /* the file as the user named it; src_pos_t.file points here */
    assign_list_t base;
    int nvariants;
    variant_t variants[SCN_MAX_VARIANTS];
} scenario_doc_t;

/* Parses a YAML scenario into doc. Returns 0, or EXIT_INPUT after printing errors. */
int scenario_doc_load(scenario_doc_t *doc, const char *path);
/* The same from `len` bytes at `text` (not NUL-terminated); `name` stands for
 * the file in positions and messages (the fuzzers and tests use it). */
int scenario_doc_load_mem(scenario_doc_t *doc, const char *name, const void *text, size_t len);
void scenario_doc_free(scenario_doc_t *doc);
/* Reads the `scenario:` mapping of a host profile into out (display names it in errors). */
int scenario_profile_load(const char *path, const char *display, assign_list_t *out);
/* Any YAML mapping as dotted key = value assignments with their positions
 * (a list or a mapping where a value stands: is_scalar 0), for importers. */
int scenario_flat_load(const char *path, const char *display, assign_list_t *out);
/* Only the mapping at the dotted path `section` (e.g. a host profile's
 * measured.stability.spread), its keys under that prefix; nothing when the
 * file has no such mapping. The rest of the file is not read into out. */
int scenario_flat_section_load(const char *path, const char *display, const char *section,
                               assign_list_t *out);
/* The prices.* assignments of a price file (the `prices` key). */
int scenario_prices_load(const char *path, const char *display, assign_list_t *out);
int scenario_profile_load_mem(const void *text, size_t len, const char *display,
                              assign_list_t *out);

/* The FNV-1a hash of a file's bytes (a scenario, host profile or price
 * file) as this process read them: each file loaded by path is read once
 * and kept, a pipe too. 0, or EXIT_INPUT after an error. */
int scenario_file_hash(const char *path, uint64_t *hash);

/* The file a `host:` value names: beside the scenario if there, else as
 * given (relative to the working directory). 0, or EXIT_RUNTIME. */
int scenario_host_path(const scenario_doc_t *doc, const char *host, char *path, size_t n);

/* Adds a "--set key=value" argument to list. Returns 0, or EXIT_INPUT after an error. */
int assign_parse_set(assign_list_t *list, const char *arg);
/* The same for a shorthand option (--epochs N is key "epochs", value N). */
int assign_parse_key(assign_list_t *list, const char *key, const char *value);
int assign_push(assign_list_t *list, const char *key, const char *value, src_pos_t pos,
                src_pos_t keypos, int is_scalar);
void assign_list_free(assign_list_t *list);

/* Builds the effective scenario of variant `variant` (-1 = the base alone)
 * with the extra overrides `sets`. Validates every key and cross-key rule.
 * Returns 0, or EXIT_INPUT after printing every error found. */
int scenario_build(const scenario_doc_t *doc, const assign_list_t *sets, int variant,
                   scenario_t *s);
/* The same with `over` applied last, after the variant (NULL: none): the
 * advice's proof builds exactly what it will print. */
int scenario_build_over(const scenario_doc_t *doc, const assign_list_t *sets, int variant,
                        const assign_list_t *over, scenario_t *s);

/* A --set that variant `variant` sets too is the variant's (the layers'
 * order): a warning for each, naming key, variant and its value, so that it
 * is said, not ignored silently (`run` and `check`; advise notes its own). */
void scenario_warn_overridden(const scenario_doc_t *doc, const assign_list_t *sets, int variant);

/* `run` and `check`'s rule on top of scenario_build's: every job's global
 * batch fits in the data set (a smaller set is one partial step an epoch).
 * 0, or EXIT_INPUT after the error. (Tests and `measure` of a handful of
 * files run such epochs on purpose.) */
int scenario_check_batches(const scenario_t *s, const scenario_doc_t *doc);

/* Derived figures every consumer needs, computed in one place. */
double scenario_item_bytes_mean(const scenario_t *s);
/* Items in one read request: dataset.shard_items for record shards read
 * whole, a readahead window's for shards streamed (loader.reader: stream;
 * one item without readahead), else 1. */
double scenario_items_per_read(const scenario_t *s);
/* Items in one stored object: dataset.shard_items for record shards, else 1. */
double scenario_shard_items(const scenario_t *s);
/* Bytes of one streaming reader's read (the readahead window; 0: none). */
double scenario_read_ahead_bytes(const scenario_t *s);
/* The kernel's next readahead window of a file read in order after one of
 * prev bytes (0: the file's first), up to the window (mm/readahead.c). */
double scenario_ra_window(const scenario_t *s, double prev);
double scenario_cache_bytes(const scenario_t *s);   /* per server */
double scenario_dataset_bytes(const scenario_t *s); /* expected: items x mean */
/* Per-item CPU prep time in seconds for an item of `bytes`, augment included
 * unless it runs on the GPU. */
double scenario_prep_s(const scenario_t *s, double bytes);
/* Effective cores of `cores` prep cores on one server: the measured curve
 * prep.scaling (linear between its points, from the origin below 1 core, and
 * past its last point at its last marginal gain per core, never negative);
 * `cores` itself when the scenario has no curve. With server.mem_gbps and
 * prep.mem_mb_per_item both > 0, at most scenario_prep_mem_bound's cores
 * past the last measured point (past one core without a curve). Sets
 * *extrapolated (when not NULL) to 1 when cores lies past the curve's last
 * point. */
double scenario_prep_cores(const scenario_t *s, double cores, int *extrapolated);
/* Why scenario_prep_cores gave its figure, for the report. */
typedef struct {
    int extrapolated; /* cores lie past the curve's last measured point */
    int mem_bound;    /* the memory-bandwidth bound set the figure */
    double bound;     /* scenario_prep_mem_bound (0 = none) */
} prep_cores_why_t;
/* scenario_prep_cores, saying why in *why (when not NULL). */
double scenario_prep_cores_why(const scenario_t *s, double cores, prep_cores_why_t *why);
/* The effective cores at which prep fills the memory bandwidth:
 * server.mem_gbps x 1000 x scenario_prep_s(mean item) / prep.mem_mb_per_item,
 * at least the curve's last speed-up (1 without a curve); 0 when either key
 * is 0 or prep costs no CPU time (no bound). Applied to each stream's cores
 * on a server alone, as the curve is (not divided among streams). */
double scenario_prep_mem_bound(const scenario_t *s);
/* 1 when prep cores are not plain linear: a curve, or the memory bound. */
int scenario_prep_cores_shaped(const scenario_t *s);
/* The same for `total` cores spread evenly over ns servers (total itself
 * when scenario_prep_cores_shaped is 0). */
double scenario_prep_cores_total(const scenario_t *s, double total, int ns);
/* Memory of one item job j prepared, in bytes (its prep.out_kb, else the
 * scenario's). */
double scenario_job_out_item_bytes(const scenario_t *s, const job_t *j);
const char *decode_place_name(int i);
const char *ckpt_mode_name(int i);
const char *ckpt_to_name(int i);
/* Where job j's key was given (file:line:col), else where any of its keys
 * was: what an error about the job points at. */
src_pos_t scenario_job_pos(const scenario_t *s, int j, const char *key);
/* prep.decode gpu: the share of images the GPU's hardware JPEG decoder takes
 * (prep.hw_decoder_load where prep.hw_decode_mp_s > 0, else 0). */
double scenario_hw_decode_share(const scenario_t *s);
/* Memory of one prepared item, in bytes. */
double scenario_out_item_bytes(const scenario_t *s);
/* How many batches job j's loader may prepare ahead: its prefetch_batches, or
 * under coordinated prep what loader.staging_mb holds (at least 1). */
int64_t scenario_staged_batches(const scenario_t *s, const job_t *j);
/* Total job instances (sum of counts) and GPUs they use. */
int scenario_job_instances(const scenario_t *s);

#endif
