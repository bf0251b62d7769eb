/* perm: see perm.h. */
#include "perm.h"

#include <stdlib.h>
#include <string.h>

#include "hugemem.h"
#include "rng.h"

uint32_t perm_uniform(gsl_rng *r, uint32_t bound) {
    return perm_bounded(r->type == rng_mt19937 ? r->state : NULL, r, bound);
}

int perm_gen_init(perm_gen_t *g, uint32_t n) {
    memset(g, 0, sizeof *g);
    g->n = n;
    /* ~4096 items (16 KB) a bucket keeps the in-bucket shuffle in L1/L2; the
     * B write streams (one cache line each) stay in L2 too. */
    uint32_t b = n / 4096 + 1;
    if (b > 65535) b = 65535;
    g->nbuckets = b;
    g->bucket = hugemem_alloc(n, sizeof *g->bucket);
    g->count = malloc((size_t)(b + 1) * sizeof *g->count);
    if (!g->bucket || !g->count) {
        perm_gen_free(g);
        return -1;
    }
    return 0;
}

void perm_gen_free(perm_gen_t *g) {
    free(g->bucket);
    free(g->count);
    memset(g, 0, sizeof *g);
}

/* Where generate() draws from: rng.h's generator's state s, inline, its
 * outputs read at a cursor of our own (mti) written back at the end (a
 * store to count[] or out[], uint32_t as s's words are, could otherwise be
 * one to s->mti, reloaded and stored at every draw); or, where mt is 0, r
 * through GSL. The same draws in the same order either way. */
typedef struct {
    rng_mt_state_t *s;
    gsl_rng *r;
    int mti, mt; /* mt: a constant where inlined */
} draws_t;

static inline uint32_t draw(draws_t *d) {
    if (!d->mt) return (uint32_t)gsl_rng_get(d->r);
    if (d->mti >= RNG_MT_N) {
        rng_mt_refill(d->s);
        d->mti = 0;
    }
    return d->s->out[d->mti++];
}

/* perm_bounded's draw (Lemire's method with rejection) from d. */
static inline uint32_t bounded(draws_t *d, uint32_t bound) {
    uint64_t m = (uint64_t)draw(d) * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = (uint32_t)(-bound) % bound;
        while (low < threshold) {
            m = (uint64_t)draw(d) * bound;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

/* perm_generate with its draws from s (mt: 1) or r (draws_t). Inlined
 * into both of perm_generate's calls, where mt is a constant. The scratch
 * arrays' addresses in locals: a store through one could be to g's fields,
 * as far as the compiler knows. */
static inline __attribute__((always_inline)) void
generate(perm_gen_t *g, rng_mt_state_t *s, gsl_rng *r, uint32_t *out, const int mt) {
    const uint32_t n = g->n, b = g->nbuckets;
    uint16_t *const bucket = g->bucket;
    uint32_t *const count = g->count;
    draws_t d = {s, r, mt ? s->mti : 0, mt};
    memset(count, 0, (size_t)(b + 1) * sizeof *count);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = b > 1 ? bounded(&d, b) : 0;
        bucket[i] = (uint16_t)k;
        count[k + 1]++;
    }
    for (uint32_t k = 1; k <= b; k++)
        count[k] += count[k - 1];
    for (uint32_t i = 0; i < n; i++)
        out[count[bucket[i]]++] = i;
    /* count[k] is now the end of bucket k; bucket k starts where k-1 ended. */
    uint32_t start = 0;
    for (uint32_t k = 0; k < b; k++) {
        uint32_t end = count[k];
        for (uint32_t i = end - start; i > 1; i--) {
            uint32_t j = bounded(&d, i);
            uint32_t t = out[start + i - 1];
            out[start + i - 1] = out[start + j];
            out[start + j] = t;
        }
        start = end;
    }
    if (mt) s->mti = d.mti;
}

void perm_generate(perm_gen_t *g, gsl_rng *r, uint32_t *out) {
    if (r->type == rng_mt19937)
        generate(g, r->state, NULL, out, 1);
    else
        generate(g, NULL, r, out, 0);
}
