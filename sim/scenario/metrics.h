/* metrics: what one run (model or simulator) says about each job instance in
 * each epoch. Both producers fill the same struct so the report compares them
 * field by field. Times in seconds, sizes in bytes. */
#ifndef STALLSIM_METRICS_H
#define STALLSIM_METRICS_H

/* What binds an epoch: one vocabulary for every producer and output. The
 * first group is on the prep side of DS-Analyzer's split (its stall is
 * prep_stall_s), the second on the fetch side (fetch_stall_s). */
typedef enum {
    BN_GPU,
    BN_CHECKPOINT, /* the job's synchronous checkpoints (neither side: the GPUs wait on writes) */
    /* prep side */
    BN_PREP,   /* the cores (or the loader's workers) that prepare items */
    BN_GIL,    /* a thread loader's interpreter lock */
    BN_MEM_BW, /* the server's memory bandwidth (server.mem_gbps) */
    BN_LOADER, /* the loader's own work: worker start-up, collation, hand-over */
    /* fetch side */
    BN_STORAGE_BW,   /* the device's (or store's) bytes per second */
    BN_STORAGE_IOPS, /* the device's reads per second (read_iops, a disk's seeks) */
    BN_REQ_RATE,     /* a store's request-rate cap (max_get_s, a prefix's GET/s) */
    BN_IN_FLIGHT,    /* reads in flight x latency: workers, readers, queue depth, connections */
    BN_NETWORK,      /* the NICs (partitioned caching) */
    BN_TIER,         /* the server's local tier (server.tier) */
    BN__COUNT
} bottleneck_t;

extern const char *const bottleneck_names[];

/* Whether bottleneck b is on the fetch side of the split (else prep or gpu). */
static inline int bottleneck_fetch_side(int b) {
    return b >= BN_STORAGE_BW && b < BN__COUNT;
}

typedef struct {
    double epoch_s;
    double throughput_items_s;
    double gpu_util;      /* T_gpu / T */
    double prep_stall_s;  /* T_prep - T_gpu */
    double fetch_stall_s; /* T - T_prep */
    double hit_rate;      /* local + remote cache hits over accesses */
    double remote_hit_rate;
    double storage_read_bytes;
    double network_bytes;
    double cpu_util;         /* busy core-seconds over cores x T */
    double storage_util;     /* transfer-busy seconds over T */
    double slot_util;        /* storage request slots busy over queue_depth x T */
    double network_util;     /* NIC-busy seconds over T */
    double t_gpu_s;          /* differential run: GPUs fed instantly */
    double t_prep_s;         /* differential run: every item in memory */
    double items_prepped;    /* conservation checks: items through prep this epoch */
    double storage_reads;    /* reads that went to storage */
    double items_consumed;   /* items this job's GPUs trained on this epoch */
    double staged_bytes;     /* peak memory of batches prepared ahead for this job's stream */
    double shards_per_batch; /* record shards: distinct shards in a batch, mean (0: loose items) */
    double tier_hit_rate;    /* served by the tier (server.tier) over accesses */
    double gpu_prep_s;       /* of the training GPUs' busy time, prep (nvJPEG, GPU augment) */
    double storage_heads;    /* object stores: HEADs (server.storage.head) */
    double storage_retries;  /* requests refused (503 SlowDown) and retried; simulator only */
    double storage_lists;    /* LIST requests at the epoch's start (pages of 1000 keys) */
    double checkpoint_s;     /* the GPUs waiting on the job's checkpoints (on both timelines) */
    double checkpoint_write_s; /* one of its checkpoints' writes, as the producer had it */
    double first_batch_s;      /* the epoch's start to its first step (the GPUs' first wait) */
    double startup_s;          /* first epoch: the start-up phase before it (sim/kinds/startup.h) */
    double startup_lists, startup_gets, startup_heads; /* first epoch: its requests by kind */
    double startup_first_s; /* first epoch: of startup_s, to every rank's first batch worker done */
    double resume_s;        /* first epoch: a restart's skip to its position (startup.resume_by) */
    double startup_requests;  /* first epoch: the start-up phase's requests, and of them */
    double startup_throttled; /* refused (503/429) and retried */
    int startup_approximate;  /* first epoch: the start-up figure is the closed form's, not exact */
    int bottleneck;           /* bottleneck_t */
    int approximate;          /* model: no exact closed form for this case */
} epoch_metrics_t;

/* What one server saw in one epoch of the streams that read through it (a
 * stream's epoch, when streams on a server are at different epochs). */
typedef struct {
    double accesses;      /* items its GPUs asked for, once per stream */
    double local_hits;    /* served from its own cache */
    double remote_hits;   /* from another server's cache (partitioned caching) */
    double tier_hits;     /* from its tier (server.tier) */
    double storage_reads; /* from storage */
    double storage_read_bytes;
    double net_in_bytes, net_out_bytes;
    double staged_bytes; /* peak memory of prepared batches waiting for its GPUs */
} server_metrics_t;

typedef struct {
    int ninst, nepochs, nservers;
    epoch_metrics_t *m;    /* [inst * nepochs + epoch] */
    server_metrics_t *srv; /* [server * nepochs + epoch], or NULL when not wanted */
    /* The simulator's server sample (sim/engine/server_sample.h): servers
     * simulated (0: every one) and the bound of its figures, in percent. */
    int servers_sampled;
    double servers_bound;
} run_metrics_t;

/* The one rule every producer (simulator, model, measure) applies to what it
 * measured. The producer fills epoch_s, t_prep_s, t_gpu_s and the resource
 * utilisations (cpu, storage, slot, network); this derives throughput over
 * `items`, gpu_util, the two stalls (DS-Analyzer's differential split) and
 * the bottleneck: the GPUs when busy at least METRICS_GPU_BOUND of the time
 * (prep when more of that went to the GPU's own prep, gpu_prep_s, than to
 * training), else the busiest resource the producer accounts (request
 * slots only when nearly all are busy). This is the producers' first word:
 * the run layer (sim/run/binding.h) names what binds from the row's stall
 * split and what lifting each resource would gain. */
#define METRICS_GPU_BOUND 0.97
void metrics_derive(epoch_metrics_t *m, double items);

int metrics_alloc(run_metrics_t *r, int ninst, int nepochs);
/* Optional, after metrics_alloc: per-server figures for nservers servers. */
int metrics_alloc_servers(run_metrics_t *r, int nservers);
void metrics_free(run_metrics_t *r);
static inline epoch_metrics_t *metrics_at(const run_metrics_t *r, int inst, int epoch) {
    return &r->m[inst * r->nepochs + epoch];
}
static inline server_metrics_t *server_at(const run_metrics_t *r, int server, int epoch) {
    return &r->srv[server * r->nepochs + epoch];
}

#endif
