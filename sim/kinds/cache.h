/* cache: what a cache policy is to stallsim, and the policy registry.
 *
 * Each policy is one file (cache_<name>.c) exporting one cache_ops_t. It owns
 * everything about itself: its simulation step over dense per-item arrays
 * (nothing is allocated per access), its closed-form hit rate for the model,
 * the bytes of state it needs for the memory budget, and any cross-key check.
 * kinds.c lists the policies; `loader.cache` picks one by name.
 *
 * A cache holds items of the sizes in `size` (bytes) up to `capacity` bytes.
 * Policies that need the future (belady) get each access's next-use time. */
#ifndef STALLSIM_CACHE_H
#define STALLSIM_CACHE_H

#include <stdint.h>

#include "scenario.h"
#include "topology.h"

#define CACHE_NEVER      UINT64_MAX /* next use of an item that is not used again */
#define CACHE_PAGE_BYTES 4096u      /* the kernel's page (x86-64's, arm64's default) */

typedef struct cache cache_t;

/* The exact cache-size curve a policy has (sim/mrc: every size from one
 * replay of the accesses), which mrc asks instead of the policy's name. */
typedef enum {
    CACHE_CURVE_NONE,  /* none: each size is its own simulation */
    CACHE_CURVE_STACK, /* a stack policy (LRU over bytes): one pass of stack distances */
    CACHE_CURVE_FILL   /* admit while there is room, never evict: a bit per size and item */
} cache_curve_t;

typedef struct {
    const char *name;
    const char *help;    /* one line for the key reference */
    int needs_future;    /* access() needs each access's next use */
    int partitionable;   /* CoorDL's partitioned caching (admit while room, never evict) is this
                            policy */
    cache_curve_t curve; /* its exact cache-size curve, if any */

    /* Simulator. init allocates the per-item state (0, or -1 without memory). */
    int (*init)(cache_t *c);
    /* Looks item up; 1 on a hit. On a miss, admits and evicts as the policy says. */
    int (*access)(cache_t *c, uint32_t item, uint64_t next_use);
    /* Hints that item will be accessed soon, to hide DRAM latency; may be
     * NULL. Stage 0 comes far ahead (the item's own state), stage 1 a few
     * accesses ahead (state that stage 0 leads to, e.g. list neighbours). */
    void (*prefetch)(const cache_t *c, uint32_t item, int stage);
    void (*destroy)(cache_t *c);

    /* Model. Hit rate in epoch e (0-based) of a cache holding fraction f of
     * the data, shared by k streams in step that each touch an item with
     * probability p per epoch; *exact says whether the form is exact. */
    double (*hit_epoch)(double f, double p, int k, int e, int *exact);
    /* The hit probability at position u in [0, 1) of epoch e's order; NULL
     * when the policy has no known profile (the model then uses hit_epoch). */
    double (*hit_at)(double f, double p, int k, int e, double u);

    /* Memory budget: bytes of state for one cache over n items. */
    double (*state_bytes)(double n);
    /* Checks a built scenario against this policy's limits (after the
     * topology is known); NULL when it has none. 0, or EXIT_INPUT after an
     * error at the scenario's own positions. */
    int (*check)(const scenario_t *s, const topology_t *t);
    /* What `measure` runs for this policy on a real pipeline: CACHE_REAL_*;
     * 0 (unset): measure cannot run it. */
    int real;
    /* 1: the cache's bytes are the loader's own memory (charged to the
     * server's limit); 0: none, or the page cache, which the kernel
     * reclaims before it kills anything. */
    int holds_memory;
    /* Optional: the bytes it can hold of its size `bytes` on a server whose
     * memory limit is `limit` of which the processes hold `held` (the page
     * cache has what they leave); NULL: its size, whatever they hold. */
    double (*room)(double bytes, double limit, double held);
    /* 1: the policy is a page cache that reads whole pages and reads ahead
     * (cache_init_pages): a miss sets cache_t.fetched to the bytes it read
     * from the device, and `stream` is set. */
    int pages;
    /* A sequential reader's read through the page cache: lane `lane` (one of
     * cache_t.lanes, streaming one entry at a time) reads [off, off + len)
     * of entry x. Returns the bytes it waits for from the device; *ahead
     * gets the bytes the kernel read ahead meanwhile, which cost the device
     * but not the reader's wait, and may be evicted before the reader gets
     * to them. */
    uint64_t (*stream)(cache_t *c, uint32_t lane, uint32_t x, uint64_t off, uint64_t len,
                       uint64_t *ahead);
} cache_ops_t;

enum {
    CACHE_REAL_NONE = 1, /* nothing cached */
    CACHE_REAL_PAGE,     /* the OS page cache of the files read (local files only) */
    CACHE_REAL_LOADER,   /* a cache of whole items in the loader's memory (MinIO) */
};

struct cache {
    const cache_ops_t *ops;
    const uint32_t *size;
    uint32_t n;
    uint64_t capacity, used;
    void *state;
    /* A policy that keeps each item's size beside its own state sets
     * size_view[x * size_stride] to it, so the simulator reads an item's
     * size and state from one cache line instead of two; NULL: none. Such
     * a policy keeps all of an item's state on that line: the simulator
     * then prefetches the line itself and calls no ops->prefetch. */
    const uint32_t *size_view;
    uint32_t size_stride;
    /* A page cache's (ops->pages; all 0 after cache_init): its page size,
     * the device's readahead window and the sequential readers, in bytes
     * and lanes; and the bytes the latest miss read from the device. */
    uint32_t page, read_ahead, lanes;
    uint64_t fetched;
    /* After ops->stream: the bytes into the entry its lane has read
     * through, to the end of the last window read ahead (at most the
     * entry's). */
    uint64_t reach;
};

/* Returns 0, or -1 when memory cannot be had. */
int cache_init(cache_t *c, const cache_ops_t *ops, uint32_t n, const uint32_t *size,
               uint64_t capacity);
/* cache_init for a page cache (ops->pages): whole pages of `page` bytes,
 * readahead windows of read_ahead bytes (0: none), `lanes` sequential
 * readers for ops->stream. Other policies ignore the three. */
int cache_init_pages(cache_t *c, const cache_ops_t *ops, uint32_t n, const uint32_t *size,
                     uint64_t capacity, uint32_t page, uint32_t read_ahead, uint32_t lanes);
/* A page cache's chunk (cache_init_pages): its readahead window, within
 * [32, 128] KiB (0: 128 KiB). No larger than Linux's default window, so
 * that a reader a large window ahead leaves behind it chunks reclaim can
 * take (not its whole window at once), nor smaller than 32 KiB, so that a
 * terabyte is at most 32 M of them. */
static inline uint64_t cache_chunk_bytes(uint64_t read_ahead) {
    const uint64_t lo = 32u << 10, hi = 128u << 10;
    return !read_ahead || read_ahead > hi ? hi : read_ahead < lo ? lo : read_ahead;
}

/* The mean bytes a miss reads from the device per item, where a read
 * fetches `items` items (one, or a record shard's): whole pages under a
 * page cache (ops->pages), else the item's own bytes, exactly the mean. */
double cache_read_bytes_mean(const scenario_t *s, double items);
void cache_destroy(cache_t *c);

#endif
