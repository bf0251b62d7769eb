/* metrics: what one run (model or simulator) says about each job instance in
 * each epoch. Both producers fill the same struct so the report compares them
 * field by field. Times in seconds, sizes in bytes. */
#ifndef STALLSIM_METRICS_H
#define STALLSIM_METRICS_H

typedef enum {
    BN_GPU,
    BN_PREP,
    BN_STORAGE_BW,
    BN_STORAGE_LATENCY,
    BN_NETWORK,
    BN__COUNT
} bottleneck_t;

extern const char *const bottleneck_names[];

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
    double cpu_util;      /* busy core-seconds over cores x T */
    double storage_util;  /* transfer-busy seconds over T */
    double t_gpu_s;       /* differential run: GPUs fed instantly */
    double t_prep_s;      /* differential run: every item in memory */
    double items_prepped; /* conservation checks: items through prep this epoch */
    double storage_reads; /* reads that went to storage */
    int bottleneck;       /* bottleneck_t */
    int approximate;      /* model: no exact closed form for this case */
} epoch_metrics_t;

typedef struct {
    int ninst, nepochs;
    epoch_metrics_t *m; /* [inst * nepochs + epoch] */
} run_metrics_t;

int metrics_alloc(run_metrics_t *r, int ninst, int nepochs);
void metrics_free(run_metrics_t *r);
static inline epoch_metrics_t *metrics_at(const run_metrics_t *r, int inst, int epoch) {
    return &r->m[inst * r->nepochs + epoch];
}

#endif
