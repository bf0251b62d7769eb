/* mrc: a whole cache-size curve (hits per epoch and along each epoch's order,
 * for many cache sizes at once) from one replay of the access sequence the
 * simulator generates: same seed, same item sizes, same permutations, same
 * ranks to servers.
 *
 * LRU over bytes is a stack policy: an access hits a cache of C bytes iff
 * its byte stack distance (its own size plus the bytes of the distinct
 * items used since its last use) is at most C, so one pass of stack
 * distances (a Fenwick tree over last-use times) answers every C exactly.
 * MinIO (admit while room, never evict) is replayed for up to 64 sizes at
 * once, one bit per size and item. Other policies are not stack policies
 * (FIFO, the Linux page cache's two lists, furthest-next-use over bytes): no
 * curve; a policy says which curve it has (cache_ops_t.curve). Where the
 * simulator's own order of cache accesses depends on its timing (streams
 * interleaved in one cache), on other caches (a tier, CoorDL's partitioned
 * caches) or on shards, mrc_inexact says so and nothing here applies.
 *
 * Datasets too large to replay item by item take a hash-sampled share of
 * the items (mrc_run_sampled).
 *
 * Use: mrc_inexact(s, t) == NULL, then mrc_run(s, t, caps, ncap, &m), then
 * mrc_profile(&m, t, c, ...) for cache size c, and mrc_free(&m). */
#ifndef STALLSIM_MRC_H
#define STALLSIM_MRC_H

#include <stdint.h>

#include "scenario.h"
#include "topology.h"

/* Slices of each epoch's order the hits are counted in: the model's. */
#define MRC_STEPS 256

typedef struct {
    int ncap, epochs, nstreams;
    /* hits[((c * nstreams + k) * epochs + e) * MRC_STEPS + j]: stream k's hits
     * in epoch e at positions of slice j of its order, at capacity caps[c]. */
    double *hits;
    /* items[(k * epochs + e) * MRC_STEPS + j]: the replayed reads of stream
     * k's epoch e in slice j of its order; reads[k * epochs + e]: in all. */
    double *items;
    double *reads;
    double rate; /* share of the items replayed: 1, or the sample's */
} mrc_t;

/* NULL when a curve of s's cache policy over its cache size is exact for
 * the simulator, else why not (one line). */
const char *mrc_inexact(const scenario_t *s, const topology_t *t);

/* Replays s (as sim_run would, with s's cache policy) once for every
 * capacity caps[0..ncap) in bytes. 0, or -1 without memory. */
int mrc_run(const scenario_t *s, const topology_t *t, const uint64_t *caps, int ncap, mrc_t *m);
void mrc_free(mrc_t *m);

/* mrc_run on a sample (SHARDS, Waldspurger et al., FAST'15): only the items
 * whose hash falls below `rate`, each epoch's order a uniform permutation of
 * them at uniform random positions of the full order (the restriction of a
 * uniform permutation, though not the simulator's own draws), through
 * caches scaled by the sample's share (m->rate). Hit rates are estimates:
 * their standard error is about sqrt(h (1 - h) / reads) over the sample's
 * reads of an epoch. */
int mrc_run_sampled(const scenario_t *s, const topology_t *t, const uint64_t *caps, int ncap,
                    double rate, mrc_t *m);

/* Bytes mrc_run (rate 1) or mrc_run_sampled needs at most for ncap sizes
 * (the sample's size taken 1% over its expectation). */
double mrc_memory_bytes(const scenario_t *s, const topology_t *t, double rate, int ncap);

/* Capacity c's figures for instance i in epoch e: its hit rate (hits over
 * the positions read, as the simulator counts it) and the hit probability
 * of each slice of the order (hu, MRC_STEPS entries). */
double mrc_profile(const mrc_t *m, const topology_t *t, int c, int i, int e, double *hu);

#endif
