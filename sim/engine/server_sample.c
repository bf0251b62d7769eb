/* server_sample: see server_sample.h. */
#include "server_sample.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>

const char *server_sample_unfit(const scenario_t *s, const topology_t *t) {
    if (s->server.count < 2) return "one server";
    if (s->loader.dist_cache == DIST_SHARDED)
        return "partitioned caching (loader.dist_cache: partitioned) is simulated exactly";
    if (s->dataset.shard_items > 1)
        return "record shards are read by one server and served to all: simulated exactly";
    if (t->nstreams != 1) return "more than one stream (several jobs or copies)";
    for (int i = 0; i < t->ninst; i++)
        if (t->inst[i].first_server != 0 || t->inst[i].nservers != (int)s->server.count)
            return "a job that does not span every server";
    return NULL;
}

int server_sample_init(server_sample_t *p, int n, int k) {
    p->n = n, p->k = k < n ? k : n;
    p->keep = calloc((size_t)n, sizeof *p->keep);
    p->weight = calloc((size_t)n, sizeof *p->weight);
    if (!p->keep || !p->weight) {
        server_sample_free(p);
        return -1;
    }
    for (int j = 0; j < p->k; j++) {
        /* In 64 bits: j x n passes 2^31 for tens of thousands of servers. */
        int at = (int)((int64_t)j * n / p->k), next = (int)((int64_t)(j + 1) * n / p->k);
        p->keep[at] = 1;
        p->weight[at] = next - at;
    }
    return 0;
}

void server_sample_free(server_sample_t *p) {
    free(p->keep), free(p->weight);
    p->keep = NULL, p->weight = NULL;
}

double server_sample_bound(const double *x, int k, int n) {
    if (k < 2 || k >= n) return 0;
    double mean = 0, ss = 0;
    for (int j = 0; j < k; j++)
        mean += x[j];
    mean /= k;
    for (int j = 0; j < k; j++)
        ss += (x[j] - mean) * (x[j] - mean);
    if (!(mean > 0)) return 0;
    double sd = sqrt(ss / (k - 1));
    double fpc = sqrt((double)(n - k) / (double)(n - 1));
    return 100 * gsl_cdf_tdist_Pinv(0.975, k - 1) * sd / sqrt((double)k) * fpc / mean;
}
