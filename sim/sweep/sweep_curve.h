/* sweep_curve: a sweep over server.cache_gb alone answered from one
 * cache-size curve (sim/mrc) instead of one simulation per size.
 *
 * Where the curve is exact (mrc_inexact), each size's hits per epoch and
 * along the order come from one replay of the simulator's access sequence,
 * and its timings from the model given those hits (model_run_hits); rows
 * with source `curve`. The first, the middle and the last size are also
 * simulated in full (rows with source `sim` beside their `curve` rows), and
 * the curve's error against them is printed. The replay and those three
 * simulations run at once on the sweep's threads.
 *
 * Use: sweep_curve_plan (NULL: simulate every configuration as usual), then
 * sweep_curve_rows per configuration for the row counts, sweep_curve_run
 * once before the rows are written, sweep_curve_config per configuration,
 * sweep_curve_free. */
#ifndef STALLSIM_SWEEP_CURVE_H
#define STALLSIM_SWEEP_CURVE_H

#include <stdint.h>
#include <stdio.h>

#include "run.h"
#include "sweep_grid.h"

typedef struct sweep_curve sweep_curve_t;

/* Builds configuration c into v (run_build): 0, or an exit code. */
typedef int (*sweep_build_fn)(void *ctx, int64_t c, variant_run_t *v);

/* A curve for grid g when its one axis is server.cache_gb, one variant runs
 * per configuration and the curve is exact for the scenario; else *out =
 * NULL (and a note on stderr saying why, when only exactness is missing).
 * 0, or an exit code. */
int sweep_curve_plan(const sweep_grid_t *g, int variants, int threads, sweep_build_fn build,
                     void *ctx, sweep_curve_t **out);

/* Rows per instance and epoch of configuration c: 2 (model, curve), or 3
 * for a simulated one (model, sim, curve). */
int sweep_curve_rows(const sweep_curve_t *cv, int64_t c);

/* Bytes held at once by sweep_curve_run: the replay beside as many of the
 * three simulations as the threads run with it, each at most `largest`
 * bytes; *replay gets the replay's own. */
double sweep_curve_memory(const sweep_curve_t *cv, double largest, double *replay);

/* The replay and the full simulations, on up to `threads` threads; prints
 * the curve's error against the simulations. 0, or an exit code. */
int sweep_curve_run(sweep_curve_t *cv);

/* Configuration c's CSV rows to m, each prefixed by prefix. 0, or an exit code. */
int sweep_curve_config(const sweep_curve_t *cv, int64_t c, variant_run_t *v, FILE *m,
                       const char *prefix);

void sweep_curve_free(sweep_curve_t *cv);

#endif
