/* cache_minio: CoorDL's MinIO cache. An item is admitted on its first access
 * while space remains and is never evicted, so after the first epoch a fixed
 * C/D share of the data hits and the rest never thrashes the cache. One bit
 * per item. */
#include <math.h>
#include <stdlib.h>

#include "cache.h"
#include "che.h"

static int minio_init(cache_t *c) {
    c->state = calloc((size_t)c->n / 64 + 1, sizeof(uint64_t));
    return c->state ? 0 : -1;
}

static int minio_access(cache_t *c, uint32_t x, uint64_t next_use) {
    (void)next_use;
    uint64_t *bits = c->state;
    uint64_t mask = (uint64_t)1 << (x & 63);
    if (bits[x >> 6] & mask) return 1;
    if (c->used + c->size[x] <= c->capacity) {
        bits[x >> 6] |= mask;
        c->used += c->size[x];
    }
    return 0;
}

static void minio_prefetch(const cache_t *c, uint32_t x, int stage) {
    const uint64_t *bits = c->state;
    (void)stage;
    __builtin_prefetch(&bits[x >> 6]);
}

static void minio_destroy(cache_t *c) {
    free(c->state);
}

/* Model: MinIO keeps the first K distinct items it sees, so once full every
 * access hits with probability f; before, as the shared-cache fill (che.h). */
static double minio_epoch(double f, double p, int k, int e, int *exact) {
    *exact = 1;
    if (f <= 0 || p <= 0) return 0;
    che_t s = che_init(f < 1 ? f : 1, p, k, e);
    if (f >= 1) return che_fill_part(&s, 1);
    if (s.q <= s.g) return f;
    double a = che_fill_time(&s);
    return che_fill_part(&s, a) + (1 - a) * (1 - pow(s.g, k - 1) * s.q);
}

static double minio_at(double f, double p, int k, int e, double u) {
    if (f <= 0 || p <= 0) return 0;
    che_t s = che_init(f < 1 ? f : 1, p, k, e);
    if (f < 1 && s.q <= s.g) return f;
    double a = f >= 1 ? 1 : che_fill_time(&s);
    if (u < a) return che_fill_at(&s, u);
    return 1 - pow(s.g, k - 1) * s.q;
}

static double minio_bytes(double n) {
    return 8 * (n / 64 + 1); /* one bit per item */
}

const cache_ops_t cache_minio = {
    .name = "minio",
    .help = "CoorDL's MinIO: admit while there is room, never evict",
    .partitionable = 1,
    .curve = CACHE_CURVE_FILL,
    .init = minio_init,
    .access = minio_access,
    .prefetch = minio_prefetch,
    .destroy = minio_destroy,
    .hit_epoch = minio_epoch,
    .hit_at = minio_at,
    .state_bytes = minio_bytes,
    .real = CACHE_REAL_LOADER,
    .holds_memory = 1,
};
