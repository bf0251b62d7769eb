/* cache_none: no cache; every access goes to storage. */
#include "cache.h"

static int none_init(cache_t *c) {
    (void)c;
    return 0;
}

static int none_access(cache_t *c, uint32_t item, uint64_t next_use) {
    (void)c, (void)item, (void)next_use;
    return 0;
}

static void none_destroy(cache_t *c) {
    (void)c;
}

static double none_epoch(double f, double p, int k, int e, int *exact) {
    (void)f, (void)p, (void)k, (void)e;
    *exact = 1;
    return 0;
}

static double none_bytes(double n) {
    (void)n;
    return 0;
}

const cache_ops_t cache_none = {
    .name = "none",
    .help = "no cache",
    .init = none_init,
    .access = none_access,
    .destroy = none_destroy,
    .hit_epoch = none_epoch,
    .state_bytes = none_bytes,
    .real = CACHE_REAL_NONE,
};
