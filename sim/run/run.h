/* run: the one pipeline that `run`, `check`, `sweep` and `measure` take a
 * scenario through, so they cannot drift apart:
 *
 *   run_select   the variants to run, by name (all, in file order, if none)
 *   run_build    one variant: scenario layers, topology, every kind's checks,
 *                and (when it will be simulated) the memory budget
 *   run_execute  the model and the simulator into per-instance and
 *                per-server metrics
 *   run_release  frees what run_execute allocated
 *
 * `measure` builds with run_build and replaces run_execute with its real
 * pipeline. Metrics are derived by one rule inside the producers
 * (metrics_derive); nothing after this layer computes a stall. */
#ifndef STALLSIM_RUN_H
#define STALLSIM_RUN_H

#include "metrics.h"
#include "options.h"
#include "scenario.h"
#include "sim.h"
#include "spread.h"
#include "topology.h"

/* What every command that runs a scenario takes from its command line. A
 * command's options struct starts with one, so the shared rows below apply
 * to it: --set, --epochs and --variant (run_scenario_options), and
 * --model-only (run_model_only_option). */
typedef struct {
    const char *file; /* the scenario */
    assign_list_t sets;
    const char *only[SCN_MAX_VARIANTS];
    int nonly;
    int model_only;
} run_args_t;

extern const option_t run_scenario_options[];
extern const option_t run_model_only_option[];

typedef struct {
    scenario_t scn;
    topology_t topo;
    run_metrics_t model;
    run_metrics_t sim; /* sim.m == NULL when not simulated */
    /* The model's steady state of the first instance, from epoch
     * steady_from (0-based; past scn.epochs when the run ends warming). */
    epoch_metrics_t steady;
    int steady_from;
    /* A sampled simulation (run_sampled): the share of the items replayed
     * for the hits (0: simulated item by item), and three standard errors
     * of its hit rates, the largest over instances and epochs. */
    double sampled, sample_err;
    /* The prediction's sensitivity to the host profile's measured spread
     * (spread.h): filled by `run` alone (spread_load, spread_apply). */
    spread_t spread;
    /* "What to change" (advice_find.h), found and proven by `run`'s caller
     * after run_execute; NULL where none was asked. run_release frees it. */
    struct advice *advice;
} variant_run_t;

/* Variant indices into doc->variants (-1: a scenario without variants) of
 * the names in only[0..nonly), or of every variant when nonly is 0. cmd names
 * the command in the error. 0, or EXIT_INPUT after an error. */
int run_select(const scenario_doc_t *doc, const char *cmd, const char *const *only, int nonly,
               int *idx, int *n);

/* Bytes one simulation of v allocates: item by item (sim_memory_bytes), or
 * the replay of a sampled one (run_sampled). v built. */
double run_memory_bytes(const variant_run_t *v);

/* Builds variant `variant` of doc with the overrides `sets` into v->scn and
 * v->topo and checks it; when `simulations` > 0, also that this machine can
 * hold that many of its simulations at once (a sweep runs one per thread).
 * doc is not changed (threads may build from one doc). */
int run_build(const scenario_doc_t *doc, const assign_list_t *sets, int variant, int simulations,
              variant_run_t *v);
/* run_build, but a configuration past a memory limit its processes run
 * under (server.shm_mb) is built and said in *over_limit (1), not refused:
 * advise leaves it out of its search and says how many it left. */
int run_build_fitting(const scenario_doc_t *doc, const assign_list_t *sets, int variant,
                      int simulations, variant_run_t *v, int *over_limit);

/* run_build_fitting with `over` set last, after the variant (NULL: none):
 * the advice's proof (advice_find.h) builds what it prints. */
int run_build_over(const scenario_doc_t *doc, const assign_list_t *sets, const assign_list_t *over,
                   int variant, int simulations, variant_run_t *v, int *over_limit);

/* The model, and with `simulate` the simulator, of a built variant. 0, or
 * EXIT_RUNTIME without memory. */
int run_execute(variant_run_t *v, int simulate);
/* The same with the simulator watched and observed (sim_run_observed; either
 * NULL: none): SIM_STOPPED when the watch stopped it. */
int run_execute_observed(variant_run_t *v, int simulate, const sim_watch_t *watch,
                         const sim_observer_t *obs);
void run_release(variant_run_t *v);

/* Whether run_execute samples v's scenario instead of simulating it item by
 * item: more items than sim.sample_above_items and a cache the sampled
 * replay covers (sim/mrc: lru or minio, loose items, one stream a cache),
 * at sim.sample_rate or the lower share sim.sample_items_max allows.
 * Its `sim` metrics then have the sample's hit rates and the model's
 * timings given them (model_run_hits). */
int run_sampled(const scenario_t *s, const topology_t *t);
/* The source a simulated row names: "sample" for a sampled run (a share of
 * the items, or of the servers: sim.servers), else "sim". */
static inline const char *run_sim_source(const variant_run_t *v) {
    return v->sampled > 0 || v->sim.servers_sampled > 0 ? "sample" : "sim";
}

#endif
