/* server_sample: a run over many statistically alike servers simulated as a
 * sample of K of them (sim.servers, sim.server_sample).
 *
 * With a cache on every server the simulator's state grows as servers x
 * items; when one data-parallel job spans every server and reads loose items
 * through local caches, the servers differ only in which items their ranks
 * draw, each a 1/N share of every epoch's order. A sampled run keeps the
 * caches (and tiers, and own storage) of K evenly spaced servers; each
 * stands for its group, the servers up to the next sampled one, whose weight
 * its counts take. Every item of the order is still drawn, so each sampled
 * server sees exactly the items it would; a shared store still sees every
 * server's reads: each sampled read is repeated for the group's other
 * servers (their cache outcomes taken as the sampled server's), so its
 * queues and caps bind as with all N. Partitioned caching (owners, NICs),
 * record shards and jobs on part of the servers stay exact.
 *
 *   const char *why = server_sample_unfit(s, t);   NULL: it may be sampled
 *   server_sample_t p;  server_sample_init(&p, N, K);  ...  server_sample_free(&p);
 *   double pct = server_sample_bound(x, K, N);       from per-server figures */
#ifndef STALLSIM_SERVER_SAMPLE_H
#define STALLSIM_SERVER_SAMPLE_H

#include "scenario.h"
#include "topology.h"

typedef struct {
    int n, k;
    unsigned char *keep; /* [n]: 1 for a sampled server */
    double *weight;      /* [n]: servers a sampled one stands for (its own included), else 0 */
} server_sample_t;

/* NULL when the scenario's servers are alike enough to sample, else why not
 * (a phrase for an error message). */
const char *server_sample_unfit(const scenario_t *s, const topology_t *t);
/* 0, or -1 without memory. Servers floor(j N / K), j = 0..K-1 (K <= N). */
int server_sample_init(server_sample_t *p, int n, int k);
void server_sample_free(server_sample_t *p);
/* The half-width, in percent of their mean, of a 95% t-interval for the
 * mean of x[0..k) as a sample of k of n servers (with the finite-population
 * correction: 0 when k = n); 0 when the mean is 0. */
double server_sample_bound(const double *x, int k, int n);

#endif
