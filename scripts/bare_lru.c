/* bare_lru: the yardstick for the simulator's replay speed (scripts/bench.sh).
 *
 * The least a replay of E epochs of uniform reshuffles through an LRU cache
 * over bytes must do, written plainly: each epoch a Fisher-Yates shuffle of
 * the N item ids, then per access a lookup in a doubly linked recency list
 * kept in arrays (move to front on a hit; on a miss insert and evict from
 * the tail until the bytes fit). No timing model, no prefetching, no other
 * policy. Item sizes are drawn uniform on [1, 2 x mean) and the capacity is
 * a fraction of their sum, as the scenario's cache is of its dataset.
 *
 * usage: bare_lru N EPOCHS CACHE_FRACTION [MEAN_BYTES]
 * prints: accesses, CPU seconds of the epochs' loop (shuffles included), accesses/s, hit rate */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NIL UINT32_MAX

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t next_u64(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1du;
}

/* In [0, bound): the multiply-shift map (its bias of < bound / 2^32 does not
 * matter for a yardstick). */
static uint32_t below(uint32_t bound) {
    return (uint32_t)(((next_u64() >> 32) * (uint64_t)bound) >> 32);
}

typedef struct {
    uint32_t prev, next; /* neighbours in recency order; prev == NIL: not cached */
} node_t;

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bare_lru N EPOCHS CACHE_FRACTION [MEAN_BYTES]\n");
        return 2;
    }
    uint32_t n = (uint32_t)strtoul(argv[1], NULL, 10);
    int epochs = atoi(argv[2]);
    double frac = atof(argv[3]);
    double mean = argc > 4 ? atof(argv[4]) : 114e3;
    uint32_t *size = malloc((size_t)n * sizeof *size);
    uint32_t *perm = malloc((size_t)n * sizeof *perm);
    node_t *node = malloc(((size_t)n + 1) * sizeof *node); /* node[n]: the list's head */
    if (!n || !size || !perm || !node) {
        fprintf(stderr, "bare_lru: no memory for %u items\n", n);
        return 1;
    }
    double total = 0;
    for (uint32_t i = 0; i < n; i++) {
        size[i] = 1 + below((uint32_t)(2 * mean));
        total += size[i];
        perm[i] = i;
        node[i].prev = NIL;
    }
    node[n].prev = node[n].next = n;
    uint64_t capacity = (uint64_t)(frac * total), used = 0, hits = 0;

    struct timespec t0, t1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    for (int e = 0; e < epochs; e++) {
        for (uint32_t i = n - 1; i > 0; i--) {
            uint32_t j = below(i + 1), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        for (uint32_t k = 0; k < n; k++) {
            uint32_t x = perm[k];
            if (node[x].prev != NIL) { /* hit: unlink */
                hits++;
                node[node[x].prev].next = node[x].next;
                node[node[x].next].prev = node[x].prev;
            } else {
                used += size[x];
                while (used > capacity && node[n].prev != n) {
                    uint32_t y = node[n].prev; /* least recent */
                    node[node[y].prev].next = n;
                    node[n].prev = node[y].prev;
                    node[y].prev = NIL;
                    used -= size[y];
                }
            }
            /* to the front */
            node[x].prev = n;
            node[x].next = node[n].next;
            node[node[n].next].prev = x;
            node[n].next = x;
        }
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    double acc = (double)n * epochs;
    printf("%.0f %.4f %.0f %.4f\n", acc, s, acc / s, (double)hits / acc);
    free(size), free(perm), free(node);
    return 0;
}
