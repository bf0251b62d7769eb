/* cache_minio: CoorDL's MinIO cache. An item is admitted on its first access
 * while space remains and is never evicted, so after the first epoch a fixed
 * C/D share of the data hits and the rest never thrashes the cache. One bit
 * per item. */
#include <stdlib.h>

#include "cache.h"

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

const cache_ops_t cache_minio_ops = {"minio",      0, minio_init, minio_access, minio_prefetch,
                                     minio_destroy};
