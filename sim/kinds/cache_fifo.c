/* cache_fifo: first in, first out over bytes: a hit does not refresh.
 * Simulation on the recency queue (cache_queue.h).
 *
 * Model: FIFO never refreshes a hit, so an item stays for a fixed window of
 * W = K / m accesses after its miss (m = miss fraction). With per-epoch
 * reshuffles the n-th later access of an item comes n + (U' - U) epochs later
 * (positions U, U' uniform), so it hits while that is below w = W / N. The
 * expected hits per insertion E[H] = sum_n F(w - n), F the triangular CDF on
 * (-1, 1), and m = 1 / (1 + E[H]) closes the fixed point w = f (1 + E[H]).
 * That holds for one stream; shared or spread caches borrow LRU's transient,
 * the nearest policy, and are marked approximate. */
#include <math.h>

#include "cache_queue.h"
#include "che.h"

static int fifo_access(cache_t *c, uint32_t x, uint64_t next_use) {
    (void)next_use;
    return list_access(c, x, 0);
}

static double tri_cdf(double x) {
    if (x <= -1) return 0;
    if (x >= 1) return 1;
    return x <= 0 ? (1 + x) * (1 + x) / 2 : 1 - (1 - x) * (1 - x) / 2;
}

static double fifo_steady(double f) {
    if (f <= 0) return 0;
    if (f >= 1) return 1;
    double w = f;
    for (int it = 0; it < 200; it++) {
        double eh = 0;
        for (int n = 1; n < w + 2; n++)
            eh += tri_cdf(w - n);
        double next = f * (1 + eh);
        if (fabs(next - w) < 1e-12) break;
        w = next;
    }
    return 1 - f / w;
}

static double fifo_epoch(double f, double p, int k, int e, int *exact) {
    *exact = 0;
    if (k == 1 && p >= 1) return e == 0 ? 0 : fifo_steady(f);
    return che_lru_epoch(f, p, k, e);
}

const cache_ops_t cache_fifo = {
    .name = "fifo",
    .help = "first in, first out",
    .init = list_init,
    .access = fifo_access,
    .prefetch = list_prefetch,
    .destroy = list_destroy,
    .hit_epoch = fifo_epoch,
    .state_bytes = list_state_bytes,
};
