/* metrics: see metrics.h. */
#include "metrics.h"

#include <stdlib.h>

const char *const bottleneck_names[] = {"gpu", "prep", "storage-bandwidth", "storage-latency",
                                        "network"};

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
