/* che: closed-form hit rates of a cache shared by streams that reshuffle
 * every epoch (Che's characteristic-time approximation, extended with the
 * epoch phase). The LRU, MinIO and FIFO policies build their model on it.
 *
 * k streams share one cache holding fraction f of the data and advance in
 * step; each touches a given item in an epoch with probability p at a
 * uniform time u in [0, 1) (p = 1 for a job on one server; 1/S for one
 * server's share of a job spread over S); e is the 0-based epoch. */
#ifndef STALLSIM_CHE_H
#define STALLSIM_CHE_H

typedef struct {
    double f, p, g, q;
    int k;
} che_t;

che_t che_init(double f, double p, int k, int e);
/* Integral over [0, a] of the hit probability while the cache is not yet full. */
double che_fill_part(const che_t *s, double a);
/* When in the epoch the cache fills (0: full at its start; 1: not this epoch). */
double che_fill_time(const che_t *s);
/* The not-yet-full hit probability at u. */
double che_fill_at(const che_t *s, double u);

/* LRU: mean hit rate of epoch e, and the hit probability at u. */
double che_lru_epoch(double f, double p, int k, int e);
double che_lru_at(double f, double p, int k, int e, double u);

#endif
