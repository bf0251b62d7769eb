/* cost: see cost.h. */
#include "cost.h"

#include <math.h>
#include <string.h>

#include "kinds.h"

int cost_priced(const scenario_t *s) {
    return s->prices.get_per_1000 > 0 || s->prices.list_per_1000 > 0 ||
           s->prices.egress_per_gb > 0 || s->prices.gpu_hour > 0 || s->prices.core_hour > 0 ||
           s->prices.dram_gb_hour > 0 || s->prices.tier_gb_hour > 0;
}

void cost_epoch(const scenario_t *s, const topology_t *t, int i, int e, const epoch_metrics_t *m,
                cost_t *c) {
    memset(c, 0, sizeof *c);
    const instance_t *in = &t->inst[i];
    const double hours = m->epoch_s / 3600, gpus = (double)s->jobs[in->job].gpus;
    c->gpu = hours * gpus * s->prices.gpu_hour;
    double stall = m->epoch_s - m->t_gpu_s;
    c->gpu_stall = (stall > 0 ? stall : 0) / 3600 * gpus * s->prices.gpu_hour;
    if (in->lead == i) {
        /* S3 prices a HEAD as a GET; it bills no 5XX answer, so the 503s
         * of retried requests cost time, not money (S3 user guide,
         * "Billing for Amazon S3 error responses"). */
        double gets = m->storage_reads + m->storage_heads;
        c->requests = gets / 1000 * s->prices.get_per_1000;
        c->egress = m->storage_read_bytes / 1e9 * s->prices.egress_per_gb;
        c->cores = hours * in->cpus * s->prices.core_hour;
        /* A LIST returns at most 1000 keys (S3's ListObjectsV2); a kind that
         * says what it lists (the object store: each epoch, or shards) says. */
        const storage_ops_t *ops = scenario_storage(s);
        double lists = ops->lists ? ops->lists(s, e)
                       : e == 0   ? ceil((double)s->dataset.items / 1000)
                                  : 0;
        c->lists = lists / 1000 * s->prices.list_per_1000;
    }
    const double share = (double)in->nservers * in->gpus_per_server / (double)s->server.gpus;
    c->cache = hours * share *
               (s->server.cache_gb * s->prices.dram_gb_hour +
                tier_opts(s)->cache_gb * s->prices.tier_gb_hour);
    c->total = c->requests + c->lists + c->egress + c->gpu + c->cores + c->cache;
}

void cost_add(cost_t *c, const cost_t *d) {
    c->requests += d->requests, c->lists += d->lists, c->egress += d->egress;
    c->gpu += d->gpu, c->gpu_stall += d->gpu_stall, c->cores += d->cores, c->cache += d->cache;
    c->total += d->total;
}
