/* grid_run: the one runner of a grid's configurations, shared by `sweep`
 * and `advise`: one point builder and one thread pool.
 *
 * grid_sets builds configuration c's assignments: the fixed layers first
 * (--set, a price file's, an alternative's), then each varied key's value at
 * c, as if given by --set after them (the `variant` axis picks a variant and
 * sets no key). grid_build does that and builds the variant (run_build).
 *
 * grid_run runs spec->run for every configuration of [first, end) on worker
 * threads; each worker owns one grid_worker_t (a variant_run_t and an
 * assignment list, reused from one configuration to the next). With
 * spec->deliver, each configuration's bytes reach the calling thread
 * strictly in configuration order (workers stay a bounded window ahead), so
 * the output does not depend on the threads; without it, workers claim
 * spec->chunk configurations at a time and keep their results themselves.
 *
 *   grid_run_spec_t spec = {.first = 0, .end = g.size, .threads = 8,
 *                           .chunk = 64, .run = eval_one, .ctx = plan};
 *   int64_t bad;
 *   int rc = grid_run(&spec, &bad);   -- bad: the first invalid one, or -1 */
#ifndef STALLSIM_GRID_RUN_H
#define STALLSIM_GRID_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "run.h"
#include "scenario.h"
#include "sweep_grid.h"

typedef struct {
    variant_run_t *v;
    assign_list_t sets;
} grid_worker_t;

/* Runs configuration c with worker w; with ordered delivery it returns the
 * configuration's bytes in *buf (malloc'ed) and *len. 0, or an exit code. */
typedef int (*grid_run_fn)(void *ctx, grid_worker_t *w, int64_t c, char **buf, size_t *len);
/* Receives configuration c's bytes on the calling thread, in order; buf is
 * freed by the runner afterwards. 0, or an exit code that stops the run. */
typedef int (*grid_deliver_fn)(void *ctx, int64_t c, const char *buf, size_t len);

typedef struct {
    int64_t first, end; /* the configurations run: [first, end) */
    int threads;        /* at most this many workers (fewer for a small grid) */
    int chunk;          /* configurations claimed at once without deliver (1 with it) */
    grid_run_fn run;
    grid_deliver_fn deliver; /* NULL: nothing delivered */
    void *ctx;
} grid_run_spec_t;

/* --set and the other fixed layers in order, then configuration c's values
 * (c < 0: the layers alone) into l, emptied first. 0, or EXIT_RUNTIME. */
int grid_sets(const sweep_grid_t *g, const assign_list_t *const *layers, int nlayers, int64_t c,
              assign_list_t *l);

/* grid_sets into w->sets, then run_build of variant `variant` into w->v. */
int grid_build(const scenario_doc_t *doc, const sweep_grid_t *g, const assign_list_t *const *layers,
               int nlayers, int64_t c, int variant, int simulations, grid_worker_t *w);

/* Runs the spec. Returns 0 or the failure's exit code (an EXIT_RUNTIME
 * before an EXIT_INPUT); *failed_at is the lowest configuration that
 * returned EXIT_INPUT, or -1. */
int grid_run(const grid_run_spec_t *spec, int64_t *failed_at);

#endif
