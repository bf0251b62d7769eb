/* cache: the policy registry (see cache.h) and the trivial `none` policy. */
#include "cache.h"

#include <string.h>

#include "scenario.h"

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
static const cache_ops_t cache_none_ops = {"none", 0, none_init, none_access, NULL, none_destroy};

/* Indexed by cache_kind_t, so the schema's names and this table stay in step. */
static const cache_ops_t *const registry[CACHE__COUNT] = {
    [CACHE_NONE] = &cache_none_ops,     [CACHE_LRU] = &cache_lru_ops,
    [CACHE_MINIO] = &cache_minio_ops,   [CACHE_FIFO] = &cache_fifo_ops,
    [CACHE_BELADY] = &cache_belady_ops,
};

const cache_ops_t *cache_policy(int kind) {
    return kind >= 0 && kind < CACHE__COUNT ? registry[kind] : NULL;
}

int cache_init(cache_t *c, int kind, uint32_t n, const uint32_t *size, uint64_t capacity) {
    memset(c, 0, sizeof *c);
    c->ops = cache_policy(kind);
    c->size = size;
    c->n = n;
    c->capacity = capacity;
    return c->ops->init(c);
}

void cache_destroy(cache_t *c) {
    if (c->ops) c->ops->destroy(c);
    memset(c, 0, sizeof *c);
}
