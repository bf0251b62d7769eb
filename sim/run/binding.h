/* binding: what binds an epoch, named from the row's own stall split and
 * proven by what lifting each resource gains.
 *
 * A producer (model, simulator) labels each epoch by the side of its own
 * DS-Analyzer split (metrics_derive: the GPUs, else prep or fetch, whichever
 * stall is larger). On that side, binding lifts each resource the scenario's
 * kinds use in turn (its capacity keys doubled, its costs halved: the table
 * in binding.c) and runs the model of that epoch: the label is the resource
 * whose lift shortens the epoch most. Where no lift gains BINDING_GAIN, the
 * producer's own label stands. So a fetch-bound epoch is never called prep,
 * and "reads-in-flight" is said only where more readers would help.
 *
 *   binding_name(&v);                    after run_execute: every row's label
 *   binding_lift(s, BN_IN_FLIGHT, &t);   s with that resource doubled, in t
 */
#ifndef STALLSIM_BINDING_H
#define STALLSIM_BINDING_H

#include "metrics.h"
#include "run.h"
#include "scenario.h"

/* The least share of the epoch a lift must save for its resource to bind. */
#define BINDING_GAIN 0.01

/* Lever and lift tables name the loader's own knob (num_workers,
 * threads) as BINDING_KNOB; binding_key resolves it for s (NULL: the
 * loader has none) and returns any other name as it is. */
#define BINDING_KNOB "<knob>"
const char *binding_key(const scenario_t *s, const char *name);

/* Relabels v's model and simulator rows and its steady state (v executed). */
void binding_name(variant_run_t *v);

/* *out = s with resource bn lifted by `factor` (capacities x factor, costs /
 * factor; the keys s's kinds use). Returns the keys changed (0: none to lift). */
int binding_lift(const scenario_t *s, int bn, double factor, scenario_t *out);

/* The label of epoch e (0-based) of instance inst in s, for a row whose
 * producer labelled it m->bottleneck; T0 is the model's epoch time there. */
int binding_of(const scenario_t *s, int inst, int e, const epoch_metrics_t *m, double T0);

#endif
