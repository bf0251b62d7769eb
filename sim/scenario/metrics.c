/* metrics: see metrics.h. */
#include "metrics.h"

#include <math.h>
#include <stdlib.h>

/* A checkpoint share of the epoch at least this, and more than either
 * stall, names the checkpoints what binds. */
#define CHECKPOINT_SAID 0.01

const char *const bottleneck_names[] = {"gpu",
                                        "checkpoint",
                                        "prep",
                                        "gil",
                                        "memory-bandwidth",
                                        "loader-overhead",
                                        "storage-bandwidth",
                                        "storage-iops",
                                        "request-rate",
                                        "reads-in-flight",
                                        "network",
                                        "tier"};

void metrics_derive(epoch_metrics_t *m, double items) {
    m->throughput_items_s = items / m->epoch_s;
    m->gpu_util = m->t_gpu_s / m->epoch_s;
    /* Checkpoints hold both timelines alike: neither prep nor fetch. */
    m->prep_stall_s = fmax(0, m->t_prep_s - m->t_gpu_s - m->checkpoint_s);
    m->fetch_stall_s = m->epoch_s - m->t_prep_s;
    m->bottleneck = BN_GPU;
    if (m->checkpoint_s >= CHECKPOINT_SAID * m->epoch_s && m->checkpoint_s > m->prep_stall_s &&
        m->checkpoint_s > m->fetch_stall_s &&
        m->checkpoint_s > m->epoch_s - m->t_gpu_s - m->checkpoint_s) {
        m->bottleneck = BN_CHECKPOINT;
        return;
    }
    /* A GPU busy training or with prep of its own (nvJPEG, augment) is the
     * GPU binding: named for the larger of the two. */
    const double gpu_prep = m->epoch_s > 0 ? m->gpu_prep_s / m->epoch_s : 0;
    if (m->gpu_util + gpu_prep >= METRICS_GPU_BOUND) {
        if (gpu_prep > m->gpu_util) m->bottleneck = BN_PREP;
        return;
    }
    double best = 0;
    if (m->cpu_util > best) best = m->cpu_util, m->bottleneck = BN_PREP;
    if (gpu_prep > best) best = gpu_prep, m->bottleneck = BN_PREP;
    if (m->storage_util > best) best = m->storage_util, m->bottleneck = BN_STORAGE_BW;
    if (m->slot_util > best && m->slot_util > METRICS_GPU_BOUND)
        best = m->slot_util, m->bottleneck = BN_IN_FLIGHT;
    if (m->network_util > best) m->bottleneck = BN_NETWORK;
}

int metrics_alloc(run_metrics_t *r, int ninst, int nepochs) {
    r->ninst = ninst;
    r->nepochs = nepochs;
    r->nservers = 0;
    r->srv = NULL;
    r->m = calloc((size_t)ninst * (size_t)nepochs, sizeof *r->m);
    return r->m ? 0 : -1;
}

int metrics_alloc_servers(run_metrics_t *r, int nservers) {
    r->srv = calloc((size_t)nservers * (size_t)r->nepochs, sizeof *r->srv);
    r->nservers = r->srv ? nservers : 0;
    return r->srv ? 0 : -1;
}

void metrics_free(run_metrics_t *r) {
    free(r->m);
    free(r->srv);
    r->m = NULL;
    r->srv = NULL;
}
