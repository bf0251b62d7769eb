/* cache_lru: least recently used over bytes, as the OS page cache is
 * usually modelled. Simulation on the recency queue (cache_queue.h); the
 * model is Che's approximation with the epoch phase (che.h), exact for
 * streams in step. */
#include "cache_queue.h"
#include "che.h"

static int lru_access(cache_t *c, uint32_t x, uint64_t next_use) {
    (void)next_use;
    return list_access(c, x, 1);
}

static double lru_epoch(double f, double p, int k, int e, int *exact) {
    *exact = 1;
    return che_lru_epoch(f, p, k, e);
}

const cache_ops_t cache_lru = {
    .name = "lru",
    .help = "least recently used (the OS page cache)",
    .curve = CACHE_CURVE_STACK,
    .init = list_init,
    .access = lru_access,
    .prefetch = list_prefetch,
    .destroy = list_destroy,
    .hit_epoch = lru_epoch,
    .hit_at = che_lru_at,
    .state_bytes = list_state_bytes,
    .real = CACHE_REAL_PAGE,
};
