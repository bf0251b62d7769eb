/* cache_queue: the recency queue behind LRU and FIFO over bytes, without
 * pointer chasing (static inline: the policies' hot path).
 *
 * A linked recency list makes every eviction a dependent random load (the
 * victim's predecessor), which caps an LRU near DRAM latency. Here recency is
 * a queue of item ids in access order plus, per item, the queue position of
 * its latest entry: an entry is live iff it is its item's latest. The least
 * recent cached item is the first live entry at the queue's front, so
 * eviction reads the queue sequentially and the per-item state it needs can
 * be prefetched far ahead. An LRU hit appends a new entry (the old one goes
 * stale); FIFO never appends on a hit, which is the whole difference. The
 * queue is compacted when full, so it stays within 2N + 1 entries. */
#ifndef STALLSIM_CACHE_QUEUE_H
#define STALLSIM_CACHE_QUEUE_H

#include <stdlib.h>

#include "cache.h"
#include "hugemem.h"

#define NIL UINT32_MAX

typedef struct {
    uint32_t pos;  /* queue position of the latest entry (mod 2^32), NIL: not cached */
    uint32_t size; /* beside pos: eviction and the simulator need both, one cache line */
} meta_t;

typedef struct {
    meta_t *meta;
    uint32_t *queue; /* ring of item ids */
    uint64_t mask;   /* ring capacity - 1 */
    uint64_t head;   /* next entry to pop (absolute position) */
    uint64_t tail;   /* next entry to push */
} list_t;

static inline int list_init(cache_t *c) {
    list_t *l = calloc(1, sizeof *l);
    if (!l) return -1;
    c->state = l;
    uint64_t cap = 1;
    while (cap < 2 * (uint64_t)c->n + 2)
        cap <<= 1;
    l->mask = cap - 1;
    l->meta = hugemem_alloc(c->n, sizeof *l->meta);
    l->queue = hugemem_alloc(cap, sizeof *l->queue);
    if (!l->meta || !l->queue) return -1;
    for (uint32_t i = 0; i < c->n; i++) {
        l->meta[i].pos = NIL;
        l->meta[i].size = c->size[i];
    }
    if (c->n) {
        c->size_view = &l->meta[0].size;
        c->size_stride = sizeof *l->meta / sizeof l->meta[0].size;
    }
    return 0;
}

enum { AHEAD = 8 }; /* queue entries whose item state is prefetched ahead */

/* Keeps only live entries, in order; positions restart from 0. Not
 * inlined: it runs once in about n accesses, and inlined its registers
 * made every access save and restore five. */
static __attribute__((noinline, unused)) void compact(list_t *l) {
    uint64_t out = 0;
    for (uint64_t p = l->head; p < l->tail; p++) {
        uint32_t x = l->queue[p & l->mask];
        /* every entry's check is a random read of its item's state */
        if (p + AHEAD < l->tail) __builtin_prefetch(&l->meta[l->queue[(p + AHEAD) & l->mask]], 1);
        if (l->meta[x].pos == (uint32_t)p) {
            l->queue[out & l->mask] = x;
            l->meta[x].pos = (uint32_t)out;
            out++;
        }
    }
    l->head = 0;
    l->tail = out;
}

static inline void push(list_t *l, uint32_t x) {
    if (l->tail - l->head > l->mask) compact(l);
    l->queue[l->tail & l->mask] = x;
    l->meta[x].pos = (uint32_t)l->tail;
    l->tail++;
}

static inline int list_access(cache_t *c, uint32_t x, int refresh) {
    list_t *l = c->state;
    meta_t *m = l->meta;
    if (m[x].pos != NIL) {
        if (refresh) push(l, x);
        return 1;
    }
    push(l, x);
    /* The queue's and the cache's counters in locals: a store to one of
     * them (all 64-bit) could be to another, and the compiler would reload
     * each at every entry popped. */
    uint64_t used = c->used + m[x].size;
    const uint64_t capacity = c->capacity;
    if (used > capacity) {
        const uint32_t *const queue = l->queue;
        const uint64_t mask = l->mask, tail = l->tail;
        uint64_t head = l->head;
        do {
            uint64_t p = head++;
            uint32_t y = queue[p & mask];
            if (p + AHEAD < tail) __builtin_prefetch(&m[queue[(p + AHEAD) & mask]], 1);
            if (m[y].pos != (uint32_t)p) continue; /* stale: y was used again later */
            m[y].pos = NIL;
            used -= m[y].size;
        } while (used > capacity);
        l->head = head;
    }
    c->used = used;
    return 0;
}

static inline void list_prefetch(const cache_t *c, uint32_t x, int stage) {
    const list_t *l = c->state;
    if (stage == 0) __builtin_prefetch(&l->meta[x], 1);
}

static inline void list_destroy(cache_t *c) {
    list_t *l = c->state;
    if (!l) return;
    free(l->meta), free(l->queue), free(l);
}

/* State per item: meta (8 bytes) plus a ring of 4-byte ids, the power of two >= 2n + 2. */
static inline double list_state_bytes(double n) {
    double cap = 1;
    while (cap < 2 * n + 2)
        cap *= 2;
    return 8 * n + 4 * cap;
}

#endif
