/* cost: what a run costs in dollars, from the scenario's prices (prices.*,
 * usually from a price file: the `prices` key) and a run's metrics. Prices
 * have no built-in values: an unpriced scenario costs nothing and the
 * reports leave cost out.
 *
 *   if (cost_priced(s)) { cost_t c; cost_epoch(s, t, i, e, m, &c); ... }
 *
 * A stream's reads and cores are charged once, to its lead instance (the
 * instances sharing a coordinated stream report the same reads); GPUs to
 * every instance, and a server's cache (DRAM and tier) to the instances on
 * it by their share of its GPUs, so the jobs of a full server pay it once. */
#ifndef STALLSIM_COST_H
#define STALLSIM_COST_H

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

typedef struct {
    double requests;  /* storage reads (GETs) and HEADs x prices.get_per_1000 / 1000 */
    double lists;     /* listing the dataset: once, in the first epoch, or every epoch */
    double egress;    /* bytes read from storage x prices.egress_per_gb */
    double gpu;       /* the instance's GPUs for the epoch */
    double gpu_stall; /* the part of gpu spent waiting for data: (T - T_gpu) */
    double cores;     /* the instance's prep cores for the epoch */
    double cache;     /* its share of its servers' cache and tier GB for the epoch */
    double total;     /* requests + lists + egress + gpu + cores + cache */
} cost_t;

/* 1 when any price is set. */
int cost_priced(const scenario_t *s);
/* Dollars of instance i's epoch e (0-based), whose metrics are m. */
void cost_epoch(const scenario_t *s, const topology_t *t, int i, int e, const epoch_metrics_t *m,
                cost_t *c);
/* c += d */
void cost_add(cost_t *c, const cost_t *d);

#endif
