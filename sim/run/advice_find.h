/* advice_find: "what to change", found with the model and proven by the
 * simulator before anything is printed.
 *
 * From an executed variant it searches the user's own keys for a
 * configuration whose GPUs are busy `target` of the judged epoch (the run's
 * last). Each step asks what binds (binding.h) and tries that resource's
 * levers (a table in advice_find.c: the loader's workers or threads, reader
 * threads, queue depth, connections, cores, bandwidth, IOPS, prefixes,
 * cache): the first that reaches the target alone, with the least value
 * that does; else the one that saves most, up to where doubling it stops
 * paying, and the search goes on with what binds then. A resource no key
 * lifts stops it. The configuration found is then built as the user would
 * build it (its keys set last, after the variant) and simulated; where the
 * simulator falls short of the target, the search aims higher and goes on,
 * a few rounds at most. Nothing is asked of a resource that does not bind.
 *
 *   advice_t a;
 *   advice_find(doc, sets, variant, &v, 0.9, simulate, &a);   v executed
 *
 * STALLSIM_ADVICE_TRACE=1 in the environment prints each model step of the
 * search to stderr (what bound, the aim, what the step did): for a line
 * whose keys surprise. */
#ifndef STALLSIM_ADVICE_FIND_H
#define STALLSIM_ADVICE_FIND_H

#include "run.h"
#include "scenario.h"

/* The GPU utilisation `run`'s advice aims at. */
#define ADVICE_TARGET   0.9
#define ADVICE_MAX_SETS 8
/* The simulator within this of the target has reached it (its steps are
 * whole batches; the model's are fluid). */
#define ADVICE_TOL 0.02

typedef enum {
    ADVICE_NONE,  /* no advice (the scenario did not build again) */
    ADVICE_GPU,   /* the GPUs bind: nothing else would help */
    ADVICE_MET,   /* at or above the target already */
    ADVICE_FOUND, /* the keys below reach it (proven where simulated) */
    ADVICE_SHORT  /* the keys below are as far as the levers go; `stop` binds then */
} advice_status_t;

typedef struct advice {
    int status; /* advice_status_t */
    int epoch;  /* 0-based, the epoch judged */
    double target;
    double util; /* now: the simulator's where it ran, else the model's */
    int binds;   /* now, bottleneck_t */
    int n;       /* keys to set */
    char key[ADVICE_MAX_SETS][SCN_STR];
    char value[ADVICE_MAX_SETS][48];
    char was[ADVICE_MAX_SETS][48];
    double model_util; /* with them */
    double sim_util;   /* with them; NAN where not simulated */
    double epoch_s;    /* with them, the simulator's where it ran */
    int then_binds;    /* with them (the simulator's row's label where it ran) */
    int stop;          /* ADVICE_SHORT: the resource no key lifts further; else -1 */
    int proofs;        /* simulator runs it took */
} advice_t;

/* advice_find into a new v->advice for every variant of runs (built from
 * doc, sets and idx[k], executed). 0, or EXIT_RUNTIME without memory. */
int advice_find_all(const scenario_doc_t *doc, const assign_list_t *sets, const int *idx,
                    variant_run_t *runs, int nv, int simulate);

/* Fills *a for instance 0 of v (built from doc, sets and variant, and
 * executed); simulate 0: the model alone (no proof). 0, or EXIT_RUNTIME
 * without memory. */
int advice_find(const scenario_doc_t *doc, const assign_list_t *sets, int variant,
                const variant_run_t *v, double target, int simulate, advice_t *a);

#endif
