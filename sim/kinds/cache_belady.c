/* cache_belady: the clairvoyant reference. On a miss the item is admitted and
 * then the cached items whose next use is furthest away are evicted until the
 * bytes fit (the item itself may be the one evicted). With unit sizes this is
 * Belady's optimum; over bytes it is the classic furthest-next-use heuristic,
 * an upper reference that no online policy should beat. A binary max-heap on
 * next use with each item's heap position in a dense array. */
#include <stdlib.h>

#include "cache.h"
#include "diag.h"
#include "schema.h"

#define NIL UINT32_MAX

typedef struct {
    uint64_t *key;  /* heap: next use */
    uint32_t *item; /* heap: item id */
    uint32_t *pos;  /* item -> heap index, NIL when not cached */
    uint32_t len;
} heap_t;

static int belady_init(cache_t *c) {
    heap_t *h = calloc(1, sizeof *h);
    if (!h) return -1;
    h->key = malloc((size_t)c->n * sizeof *h->key);
    h->item = malloc((size_t)c->n * sizeof *h->item);
    h->pos = malloc((size_t)c->n * sizeof *h->pos);
    c->state = h;
    if (!h->key || !h->item || !h->pos) return -1;
    for (uint32_t i = 0; i < c->n; i++)
        h->pos[i] = NIL;
    return 0;
}

static void swap(heap_t *h, uint32_t a, uint32_t b) {
    uint64_t k = h->key[a];
    uint32_t it = h->item[a];
    h->key[a] = h->key[b], h->item[a] = h->item[b];
    h->key[b] = k, h->item[b] = it;
    h->pos[h->item[a]] = a;
    h->pos[h->item[b]] = b;
}

static void sift_up(heap_t *h, uint32_t i) {
    while (i > 0 && h->key[(i - 1) / 2] < h->key[i]) {
        swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void sift_down(heap_t *h, uint32_t i) {
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->len && h->key[l] > h->key[m]) m = l;
        if (r < h->len && h->key[r] > h->key[m]) m = r;
        if (m == i) return;
        swap(h, i, m);
        i = m;
    }
}

static int belady_access(cache_t *c, uint32_t x, uint64_t next_use) {
    heap_t *h = c->state;
    if (h->pos[x] != NIL) {
        uint32_t i = h->pos[x];
        h->key[i] = next_use; /* only grows: the next use is later than now */
        sift_up(h, i);
        return 1;
    }
    uint32_t i = h->len++;
    h->key[i] = next_use;
    h->item[i] = x;
    h->pos[x] = i;
    sift_up(h, i);
    c->used += c->size[x];
    while (c->used > c->capacity) {
        uint32_t victim = h->item[0];
        swap(h, 0, --h->len);
        h->pos[victim] = NIL;
        sift_down(h, 0);
        c->used -= c->size[victim];
    }
    return 0;
}

static void belady_destroy(cache_t *c) {
    heap_t *h = c->state;
    if (!h) return;
    free(h->key), free(h->item), free(h->pos), free(h);
}

/* Model. The clairvoyant optimum can do no better than MinIO under
 * per-epoch reshuffles: an item's reuse interval runs from its access in one
 * epoch to its access in the next, so every interval contains the epoch
 * boundary, and at that instant the cache holds at most C bytes of the items
 * it will hit. Hence at most C/D of the accesses hit, and furthest-next-use
 * reaches it. It enters each epoch holding the items needed first: the first
 * f of the order hits, the rest misses. */
static double belady_epoch(double f, double p, int k, int e, int *exact) {
    (void)p, (void)k;
    *exact = 1;
    return e == 0 ? 0 : f < 1 ? (f > 0 ? f : 0) : 1;
}

static double belady_at(double f, double p, int k, int e, double u) {
    (void)p, (void)k;
    return e > 0 && u < f ? 1 : 0;
}

static double belady_bytes(double n) {
    return 16 * n; /* heap key (8), heap item (4), position (4) */
}

/* One clairvoyant order exists per stream; a cache fed by several
 * interleaved streams, or by a share of one, has none to follow. */
static int belady_check(const scenario_t *s, const topology_t *t) {
    int spread = 0;
    for (int i = 0; i < t->ninst; i++)
        spread |= t->inst[i].nservers > 1;
    int interleaved = s->loader.prep == PREP_PER_JOB && t->jobs_on_server_max > 1;
    if (!spread && !interleaved) return 0;
    diag_error(s->origin[schema_find(SCOPE_SCENARIO, "loader.cache")],
               "loader.cache: belady needs one stream per cache, but %s",
               spread ? "a job spread over servers gives each server's cache a share of its order"
                      : "several partitioned jobs interleave in one server's cache (use "
                        "loader.prep: coordinated, or another policy)");
    return EXIT_INPUT;
}

const cache_ops_t cache_belady = {
    .name = "belady",
    .help = "clairvoyant furthest-next-use (an upper bound)",
    .needs_future = 1,
    .init = belady_init,
    .access = belady_access,
    .destroy = belady_destroy,
    .hit_epoch = belady_epoch,
    .hit_at = belady_at,
    .state_bytes = belady_bytes,
    .check = belady_check,
};
