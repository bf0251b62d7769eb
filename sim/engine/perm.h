/* perm: uniform random permutations of [0, n), one per epoch, without a
 * random memory write per item.
 *
 * Rao–Sandelius: every item draws one of B buckets (B chosen so a bucket fits
 * in cache), items are scattered into buckets through B sequential write
 * streams, then each bucket is Fisher–Yates-shuffled in cache. Uniform bucket
 * draws plus uniform in-bucket shuffles give an exactly uniform permutation. */
#ifndef STALLSIM_PERM_H
#define STALLSIM_PERM_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "rng.h"

typedef struct {
    uint32_t n;
    uint32_t nbuckets;
    uint16_t *bucket; /* scratch: each item's bucket */
    uint32_t *count;  /* scratch: bucket sizes, then write cursors */
} perm_gen_t;

int perm_gen_init(perm_gen_t *g, uint32_t n);
void perm_gen_free(perm_gen_t *g);
/* Writes a uniform permutation of [0, n) to out (n entries). */
void perm_generate(perm_gen_t *g, gsl_rng *r, uint32_t *out);
/* Uniform integer in [0, bound) from r, exactly (Lemire's method with rejection). */
uint32_t perm_uniform(gsl_rng *r, uint32_t bound);
/* The same from s, rng.h's generator's state, inline; or, where s is NULL,
 * from r (any generator): mt19937 yields 32 uniform bits a draw, used raw
 * so that one draw gives one bounded integer. */
static inline uint32_t perm_bounded(rng_mt_state_t *s, gsl_rng *r, uint32_t bound) {
    uint64_t m = (uint64_t)(s ? rng_mt_next(s) : (uint32_t)gsl_rng_get(r)) * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = (uint32_t)(-bound) % bound;
        while (low < threshold) {
            m = (uint64_t)(s ? rng_mt_next(s) : (uint32_t)gsl_rng_get(r)) * bound;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

#endif
