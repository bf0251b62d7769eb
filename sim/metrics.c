/* metrics: see metrics.h. */
#include "metrics.h"

#include <stdlib.h>

const char *const bottleneck_names[] = {"gpu", "prep", "storage-bandwidth", "storage-latency",
                                        "network"};

int metrics_alloc(run_metrics_t *r, int ninst, int nepochs) {
    r->ninst = ninst;
    r->nepochs = nepochs;
    r->m = calloc((size_t)ninst * (size_t)nepochs, sizeof *r->m);
    return r->m ? 0 : -1;
}

void metrics_free(run_metrics_t *r) {
    free(r->m);
    r->m = NULL;
}
