/* rng: see rng.h. The recurrence and tempering as in Matsumoto and
 * Nishimura's paper (ACM TOMACS 8(1), 1998) and their mt19937ar.c
 * initialisation, in 32-bit words. */
#include "rng.h"

enum { M = 397 };
#define UPPER    0x80000000u /* the most significant bit */
#define LOWER    0x7fffffffu /* the 31 least */
#define MATRIX_A 0x9908b0dfu

static inline uint32_t twist(uint32_t a, uint32_t b, uint32_t m) {
    uint32_t y = (a & UPPER) | (b & LOWER);
    return m ^ (y >> 1) ^ (-(y & 1u) & MATRIX_A);
}

void rng_mt_refill(rng_mt_state_t *s) {
    uint32_t *mt = s->mt;
    const int N = RNG_MT_N;
    int k = 0;
    /* Three loops so that none wraps an index: the first reads only words
     * it has not yet rewritten, and vectorises. */
    for (; k < N - M; k++)
        mt[k] = twist(mt[k], mt[k + 1], mt[k + M]);
    for (; k < N - 1; k++)
        mt[k] = twist(mt[k], mt[k + 1], mt[k + M - N]);
    mt[N - 1] = twist(mt[N - 1], mt[0], mt[M - 1]);
    for (k = 0; k < N; k++) {
        uint32_t y = mt[k];
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680u;
        y ^= (y << 15) & 0xefc60000u;
        y ^= y >> 18;
        s->out[k] = y;
    }
    s->mti = 0;
}

static void mt_set(void *vstate, unsigned long seed) {
    rng_mt_state_t *s = vstate;
    if (seed == 0) seed = 4357; /* GSL's default seed */
    s->mt[0] = (uint32_t)(seed & 0xffffffffUL);
    for (int i = 1; i < RNG_MT_N; i++)
        s->mt[i] = 1812433253u * (s->mt[i - 1] ^ (s->mt[i - 1] >> 30)) + (uint32_t)i;
    s->mti = RNG_MT_N;
}

static unsigned long mt_get(void *vstate) {
    return rng_mt_next(vstate);
}

static double mt_get_double(void *vstate) {
    return (double)mt_get(vstate) / 4294967296.0;
}

const gsl_rng_type rng_mt19937[1] = {
    {"stallsim-mt19937", 0xffffffffUL, 0, sizeof(rng_mt_state_t), mt_set, mt_get, mt_get_double},
};
