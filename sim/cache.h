/* cache: the registry of simulated cache policies.
 *
 * Each policy is a small table of function pointers (cache_ops_t) in its own
 * file; cache_init picks one by cache_kind_t. A cache holds items of the sizes
 * in `size` (bytes) up to `capacity` bytes; per-item state lives in dense
 * arrays indexed by item id, allocated once, so an access allocates nothing.
 * Policies that need the future (belady) get each access's next-use time. */
#ifndef STALLSIM_CACHE_H
#define STALLSIM_CACHE_H

#include <stdint.h>

#define CACHE_NEVER UINT64_MAX /* next use of an item that is not used again */

typedef struct cache cache_t;

typedef struct {
    const char *name;
    int needs_future;
    int (*init)(cache_t *c);
    /* Looks item up; 1 on a hit. On a miss, admits and evicts as the policy says. */
    int (*access)(cache_t *c, uint32_t item, uint64_t next_use);
    /* Hints that item will be accessed soon, to hide DRAM latency; may be
     * NULL. Stage 0 comes far ahead (the item's own state), stage 1 a few
     * accesses ahead (state that stage 0 leads to, e.g. list neighbours). */
    void (*prefetch)(const cache_t *c, uint32_t item, int stage);
    void (*destroy)(cache_t *c);
} cache_ops_t;

struct cache {
    const cache_ops_t *ops;
    const uint32_t *size;
    uint32_t n;
    uint64_t capacity, used;
    void *state;
};

/* Returns 0, or -1 when memory cannot be had. */
int cache_init(cache_t *c, int kind, uint32_t n, const uint32_t *size, uint64_t capacity);
void cache_destroy(cache_t *c);
const cache_ops_t *cache_policy(int kind);

extern const cache_ops_t cache_lru_ops, cache_fifo_ops, cache_minio_ops, cache_belady_ops;

#endif
