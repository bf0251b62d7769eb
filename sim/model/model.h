/* model: the closed-form analytical model of a scenario (DS-Analyzer's
 * what-if analysis, extended). Per job instance and epoch it gives the cache
 * hit rate of the policy, the rates of each resource (GPU ingestion, prep
 * cores, storage bandwidth and latency x queue depth, network), throughput as
 * their minimum, epoch time with pipeline fill, the differential stalls and
 * the bottleneck's name. It answers in microseconds and is held against the
 * simulator (tests/); where no exact closed form exists the result is marked
 * approximate rather than presented as exact. */
#ifndef STALLSIM_MODEL_H
#define STALLSIM_MODEL_H

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

/* Fills out (allocated by the caller: t->ninst x s->epochs). */
void model_run(const scenario_t *s, const topology_t *t, run_metrics_t *out);
/* The same for epochs first.. only (each epoch's figures stand alone: the
 * earlier ones are left as they are); a search that needs the last epoch
 * alone saves the rest. */
void model_run_from(const scenario_t *s, const topology_t *t, run_metrics_t *out, int first);

/* Slices of each epoch's order the model's hit profile has. */
#define MODEL_STEPS 256

/* Instance i's hits in epoch e from elsewhere (a replayed cache-size curve):
 * fills hu[0..MODEL_STEPS) with the hit probability of each slice of the
 * order and returns the epoch's hit rate. */
typedef double (*model_hits_fn)(void *ctx, int i, int e, double *hu);

/* model_run with the cache's hits from hits() instead of the policy's
 * closed form: the timings follow from them as they do from the closed
 * form's. */
void model_run_hits(const scenario_t *s, const topology_t *t, model_hits_fn hits, void *ctx,
                    run_metrics_t *out);

/* The steady state of instance `inst`: the model's epoch once its hit rate
 * stops changing (within 1e-4 over the epochs after it, up to 1000 epochs).
 * Writes that epoch's metrics to *out and its 0-based index to *from (which
 * may lie past the scenario's epochs: with several servers each one sees
 * part of every epoch, and its cache fills over many). 0, or -1 without
 * memory. */
int model_steady(const scenario_t *s, const topology_t *t, int inst, epoch_metrics_t *out,
                 int *from);

/* Hit rate in epoch e (0-based) of cache policy `kind` (registry index,
 * kinds.h) holding fraction f = C/D, shared by k streams in step, each
 * touching an item with probability p per epoch (1/S for one server of a job
 * over S servers); exact says whether the formula is exact for that policy.
 * The closed forms live with each policy (sim/kinds/cache_*.c). */
double model_hit_epoch(int kind, double f, double p, int k, int e, int *exact);
/* The hit probability at position u in [0, 1) of epoch e's order (flat for
 * policies without a known profile); model_hit_epoch is its mean over u. */
double model_hit_at(int kind, double f, double p, int k, int e, double u);
/* Steady-state (epoch >= 2) hit rate of one reshuffled stream. */
double model_hit_steady(int kind, double f, int *exact);

/* Epoch time of a two-stage pipeline: a loader at P items/s feeding GPUs that
 * need t_gpu seconds of compute in total, batches of m items, the last batch
 * taking t_last seconds: N/P + t_last when loader-bound, m/P + t_gpu otherwise. */
double model_pipeline_s(double n, double p, double t_gpu, double m, double t_last);

#endif
