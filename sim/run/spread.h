/* spread: how much the model's prediction moves when the host profile's
 * figures move by their measured spread. stallsim-probe repeats each timed
 * figure and writes its spread, (max - min) / median over the repeats it
 * kept, under measured.stability.spread.<scenario key> (python/stallsim/
 * stable.py); a figure x with spread s is then anywhere in x (1 - s) ..
 * x (1 + s) (which holds the repeats' min..max). The model runs again with
 * each figure at its bounds alone (to learn which way it moves the time),
 * then with every figure at the bound that slows it and at the one that
 * speeds it: the total time's range. A key the scenario or --set gives
 * itself is the user's, not the profile's: it does not move.
 *
 *   spread_load(&doc, &v->scn, &v->spread);     after run_build
 *   spread_apply(&v->scn, &v->topo, &v->spread); after run_execute
 *   v->spread.n == 0: no spread applies (no host profile, a profile
 *   without measured.stability.spread, or every such key overridden). */
#ifndef STALLSIM_SPREAD_H
#define STALLSIM_SPREAD_H

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

enum { SPREAD_MAX_KEYS = 16 };

typedef struct {
    int n;                              /* figures that apply */
    char key[SPREAD_MAX_KEYS][SCN_STR]; /* scenario keys, in the profile's order */
    double rel[SPREAD_MAX_KEYS];        /* each one's relative spread */
    int row[SPREAD_MAX_KEYS];           /* its schema row */
    int widest;                         /* the index of the largest rel */
    char profile[SCN_PATH];             /* the host profile, as found */
    double total_s, slow_s, fast_s; /* the model's total: as given, at the slow and fast bounds */
} spread_t;

/* The spreads of s's host profile that apply to s. 0, or EXIT_INPUT after
 * an error (a spread that is not a number >= 0). */
int spread_load(const scenario_doc_t *doc, const scenario_t *s, spread_t *out);
/* Runs the model at the spreads' bounds (sp->n > 0; else does nothing).
 * 0, or EXIT_RUNTIME without memory. */
int spread_apply(const scenario_t *s, const topology_t *t, spread_t *sp);
/* The model's total time of a run: each epoch's slowest instance, summed
 * (report_total_s's rule, which this layer cannot call). */
double spread_total_s(const run_metrics_t *m);

#endif
