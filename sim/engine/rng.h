/* rng: the Mersenne Twister MT19937 (Matsumoto and Nishimura, 1998, with
 * their 2002 initialisation), as a gsl_rng_type whose state this module
 * owns, so that the simulator's hot loops (perm.c's shuffle: two draws an
 * item an epoch) draw inline instead of through two calls into GSL.
 *
 * It is the same generator as GSL's gsl_rng_mt19937, seeded the same way
 * (gsl_rng_set: seed 0 is 4357), and yields the same numbers draw for draw
 * (test_rng checks it against GSL's), so every output stays byte-identical;
 * the GSL distributions (gsl_ran_*) take it as any other gsl_rng.
 *
 *   gsl_rng *r = gsl_rng_alloc(rng_mt19937);
 *   gsl_rng_set(r, seed);
 *   uint32_t u = rng_next(r);       // == gsl_rng_get(r), inline
 *   gsl_rng_free(r);
 *
 * rng_next falls back to gsl_rng_get for a generator of another type. */
#ifndef STALLSIM_RNG_H
#define STALLSIM_RNG_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

enum { RNG_MT_N = 624 };

typedef struct {
    int mti; /* the next of out to give; RNG_MT_N: refill first */
    uint32_t mt[RNG_MT_N];
    /* mt's words tempered, all at once as they are made (a loop that
     * vectorises), so that a draw is a load. */
    uint32_t out[RNG_MT_N];
} rng_mt_state_t;

/* An array of one: its name is a constant address, which rng_next
 * compares a generator's type with. */
extern const gsl_rng_type rng_mt19937[1];

/* The next RNG_MT_N words of the state (the generator's recurrence) and
 * their tempered outputs. */
void rng_mt_refill(rng_mt_state_t *s);

static inline uint32_t rng_mt_next(rng_mt_state_t *s) {
    if (s->mti >= RNG_MT_N) rng_mt_refill(s);
    return s->out[s->mti++];
}

static inline uint32_t rng_next(const gsl_rng *r) {
    if (r->type != rng_mt19937) return (uint32_t)gsl_rng_get(r);
    return rng_mt_next(r->state);
}

#endif
