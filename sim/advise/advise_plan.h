/* advise_plan: what `stallsim advise` works on, shared by its modules:
 * its options, the targets, one configuration's summary (a point), a search
 * of the grid (the main variant's, or an alternative's) and the plan that
 * holds them.
 *
 *   advise.c         options, setting up, the order of the steps
 *   advise_target.c  --target: the metrics a target names and their values
 *   advise_search.c  the model over the grid (grid_run.h), the simulator's
 *                    confirmations, the Pareto front
 *   advise_useful.c  --minimize cost_per_useful_epoch: the objective, and job
 *                    0's checkpoint interval searched (the Young/Daly interval
 *                    a candidate)
 *   advise_out.c     the answer as text, JSON or CSV */
#ifndef STALLSIM_ADVISE_PLAN_H
#define STALLSIM_ADVISE_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"
#include "run.h"
#include "scenario.h"
#include "sweep_grid.h"

#define MAX_TARGETS 8
#define MAX_ALTS    8
#define MAX_CONFIGS 10000000LL /* one result of 56 bytes each is kept per configuration */
#define MAX_SIMS    100

typedef struct {
    run_args_t a;        /* first, then g: the shared rows' offsets are into them */
    sweep_grid_args_t g; /* --vary, --tie, as sweep's */
    const char *target[MAX_TARGETS];
    int ntarget;
    const char *alt[MAX_ALTS];
    int nalt;
    const char *prices, *minimize, *maximize;
    int confirm; /* simulations in all (0: the default) */
    int threads;
    double max_seconds; /* --max-seconds: 0, no bound */
    report_format_t format;
} advise_opts_t;
_Static_assert(offsetof(advise_opts_t, g) == offsetof(sweep_grid_cmd_t, g),
               "sweep_grid_options' offsets");

typedef struct {
    int metric;
    int ge; /* >= (else <=) */
    double value;
    const char *text;
} advise_target_t;

/* What the model (or the simulator) says of one configuration: its last
 * epoch, the worst job instance for each figure. */
typedef struct {
    double objective; /* minimised: dollars, the key's value, or minus it when maximised */
    double cost;      /* dollars of the whole run (0 when unpriced) */
    double util;      /* GPU utilisation of the least busy instance */
    double lead;      /* the first target's metric, worst instance */
    double epoch_s;   /* the slowest instance's epoch */
    signed char ok;   /* meets every target */
    signed char bottleneck;
    signed char over_limit; /* past a memory limit (server.shm_mb): would crash, left out */
} advise_point_t;

typedef struct {
    int64_t c;
    advise_point_t model, sim;
} advise_checked_t;

typedef struct {
    char name[SCN_STR * 4]; /* what the alternative changes, for the reader */
    int variant;            /* into doc->variants, -1 = none */
    assign_list_t extra;    /* --alternative's assignments */
    advise_point_t *pts;
    int64_t nok;
    int64_t nover;  /* left out: past a memory limit */
    int64_t rec;    /* the recommendation (confirmed, or the model's with no simulation), -1 */
    int64_t *order; /* the feasible configurations, best first */
    advise_checked_t *sims; /* every simulated configuration, in the order run */
    int nsims;
} advise_search_t;

typedef struct {
    const advise_opts_t *o;
    scenario_doc_t *doc;
    sweep_grid_t grid;
    advise_target_t targets[MAX_TARGETS];
    int ntargets;
    int obj_axis;           /* the varied key minimised or maximised, or -1 for cost */
    int maximize;           /* the objective key is maximised */
    int per_useful;         /* obj_axis -1: dollars per useful epoch (goodout.h), not of the run */
    double young_daly;      /* per_useful: job 0's Young/Daly interval as given, steps (0: none) */
    char useful_vary[2048]; /* per_useful: the interval's --vary, as advise_useful made it */
    double *obj_value;      /* numeric value of each of obj_axis's values */
    assign_list_t base;     /* --set, --prices */
    int variant;            /* the variant searched */
    int simulate;           /* simulations allowed in all */
    int sims_left;
    advise_search_t main;
    advise_search_t alts[SCN_MAX_VARIANTS + MAX_ALTS];
    int nalts;
    int have_given; /* the scenario as given evaluated */
    advise_point_t given;
    char *given_advice; /* run's "what to change" line for the scenario as given, or NULL */
    int64_t *pareto;
    int64_t npareto;
} advise_plan_t;

/* ---- advise_target.c ---- */

/* Parses one --target (METRIC>=X or METRIC<=X) into t: 0, or EXIT_INPUT after its message. */
int advise_target_parse(const char *arg, advise_target_t *t);
/* The value of target metric `metric` for instance inst of r, whose last
 * epoch is `last` (a start-up metric reads the first), and its name. */
double advise_metric_of(const run_metrics_t *r, int inst, int last, int metric);
/* 1 when metric is read in the first epoch (the start-up's). */
int advise_metric_first(int metric);
const char *advise_metric_name(int metric);

/* ---- advise_useful.c ---- */

#define ADVISE_USEFUL "cost_per_useful_epoch"
/* 1 when --minimize names the dollars per useful epoch. */
int advise_useful_wanted(const char *minimize);
/* The scenario as given must be priced and checkpoint or fail; job 0's
 * checkpoint interval becomes an axis of the grid (its given value and the
 * Young/Daly interval of the model as given, with 1/4, 1/2, 2 and 4 times
 * it), or the Young/Daly interval joins the user's own --vary of it. 0, or
 * an exit code after its message. */
int advise_useful_setup(advise_plan_t *p);
/* The dollars per useful epoch of r (v's model or simulator rows), summed
 * over the job instances; INFINITY where one keeps no work. */
double advise_useful_objective(const variant_run_t *v, const run_metrics_t *r);

/* ---- advise_search.c ---- */

/* --set and --prices, the search's alternative, then configuration c's
 * values (c < 0: the scenario as given) into l; *key_value is c's value of
 * the objective's key. 0, or EXIT_RUNTIME. */
int advise_config_sets(const advise_plan_t *p, const advise_search_t *s, int64_t c,
                       assign_list_t *l, double *key_value);
/* Builds configuration c (c < 0: as given), runs the model and, with
 * `simulate`, the simulator, into *model and *sim. 0 or an exit code. */
int advise_evaluate(const advise_plan_t *p, const advise_search_t *s, int64_t c, int simulate,
                    variant_run_t *v, assign_list_t *sets, advise_point_t *model,
                    advise_point_t *sim);
/* The model over the whole grid into s->pts, and the feasible configurations best first. */
int advise_search_model(advise_plan_t *p, advise_search_t *s);
/* The best feasible configuration the simulator confirms, in at most `budget` simulations. */
int advise_confirm(advise_plan_t *p, advise_search_t *s, int budget);
/* The main search's Pareto front, with simulations beside the recommendation while any are left. */
int advise_pareto(advise_plan_t *p);
/* The simulation of configuration c in s, or NULL. */
const advise_checked_t *advise_sim_of(const advise_search_t *s, int64_t c);

/* ---- advise_out.c ---- */

/* The answer in the options' format. */
void advise_write(FILE *f, const advise_plan_t *p);

#endif
