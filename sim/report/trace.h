/* trace: the simulated timeline as a Chrome Trace Event file (the JSON
 * object format: {"traceEvents": [...]}), which ui.perfetto.dev and
 * chrome://tracing open. `stallsim run --trace FILE.json` writes one.
 *
 * One process per variant (pid 1, 2, ... in run order). In each:
 * - one track per job instance's GPUs (the simulator steps a data-parallel
 *   job's GPUs together): "compute", the training process's "CPU step",
 *   and the waits for data, "wait: fetch" and "wait: prep" (cat
 *   stall.fetch, stall.prep). A wait is split as the simulator's
 *   differential runs split the epoch's stall (DS-Analyzer: fetch stall =
 *   T - T_prep, prep stall = T_prep - T_gpu): each wait is fetch stall for
 *   the part of the lag of T behind T_prep (every item in memory) that it
 *   adds and the epoch never recovers, the rest prep stall; the CPU step
 *   is prep stall (it remains with every item in memory). Over a whole
 *   epoch the waits and CPU steps sum to the reported stalls (a negative
 *   fetch stall, T_prep past T, shows as prep);
 * - one track per prep core (pool loader) or DataLoader worker (pytorch):
 *   a slice per run of items of one batch on it (args: items, busy_s);
 * - counters: requests in flight per storage device, tier device and NIC;
 *   each server's cache occupancy (GB), each stream's staged batches and
 *   its hit rate so far in the epoch.
 * Only the window (epochs and iterations, 1-based, inclusive) is written;
 * the hit rate counts the whole epoch up to the batch. Times are the
 * simulated clock in microseconds from the run's start.
 *
 * Use:
 *   trace_t *t = trace_open(f, &window, scenario_path);
 *   for each variant: run_execute_observed(v, 1, trace_variant(t, v)); trace_variant_end(t);
 *   trace_close(t);   (writes the end of the object, frees t; 0 or -1 on a write error) */
#ifndef STALLSIM_TRACE_H
#define STALLSIM_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "run.h"
#include "sim.h"

typedef struct {
    int64_t epoch_lo, epoch_hi; /* 1-based, inclusive */
    int64_t iter_lo, iter_hi;
} trace_window_t;

#define TRACE_ALL INT64_MAX

/* Parses "A-B", "A" or "all" into [lo, hi]. 0, or -1 when malformed. */
int trace_parse_range(const char *text, int64_t *lo, int64_t *hi);

typedef struct trace trace_t;

/* NULL without memory. */
trace_t *trace_open(FILE *out, const trace_window_t *w, const char *scenario_path);
/* The observer for the variant about to run (its events go to the next pid). */
const sim_observer_t *trace_variant(trace_t *t, const variant_run_t *v);
/* Writes what the variant's run left buffered. 0, or -1 without memory. */
int trace_variant_end(trace_t *t);
int trace_close(trace_t *t);

#endif
