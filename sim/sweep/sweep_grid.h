/* sweep_grid: the grid of a sweep, from `--vary key=v1,v2,...` and
 * `--vary key=a:b:step` options to numbered configurations.
 *
 * Each --vary adds an axis; the grid is their cartesian product, the first
 * axis outermost (it changes slowest) and the last innermost, and configuration
 * c (0-based) takes value (c / stride_a) % n_a on axis a. Every value is
 * checked against the schema when the axis is added and stored in the
 * schema's canonical text (1e3 -> 1000), which is both what the scenario gets
 * and what the CSV column shows. Ranges include their end and compute value i
 * as a + i*step, so no rounding accumulates. The key `variant` is an axis of
 * variant names (checked against the scenario's).
 *
 * A tie (`--tie KEY=KEY2`, sweep_grid_tie) makes KEY2's axis move with KEY's:
 * both keep their columns, value i of one goes with value i of the other, and
 * the tied axis adds nothing to the grid's size or the configuration order
 * (workers = reads in flight: --tie loader.num_workers=server.storage.queue_depth). */
#ifndef STALLSIM_SWEEP_GRID_H
#define STALLSIM_SWEEP_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "run.h"
#include "scenario.h"

#define SWEEP_MAX_AXES    16
#define SWEEP_MAX_CONFIGS 100000000LL /* 10^8: validating them all takes ~20 min */

typedef struct {
    char key[SCN_STR];         /* as written: server.cpus, jobs.0.count, variant */
    char column[SCN_STR + 32]; /* CSV column: the key as written (units: stallsim help keys) */
    int is_variant;
    int tied_to; /* the axis this one moves with (its leader, never itself tied), or -1 */
    int nvalues;
    char **values; /* canonical text of each value */
} sweep_axis_t;

typedef struct {
    int naxes;
    sweep_axis_t axes[SWEEP_MAX_AXES];
    int64_t size;    /* configurations: product of the free axes' value counts (1 with no axis) */
    const char *cmd; /* the command its errors name: "sweep" (the default) or "advise" */
} sweep_grid_t;

/* The grid's command-line flags (--vary, --tie), shared by sweep and advise:
 * a command's options struct starts with sweep_grid_cmd_t's two members, so
 * the rows of sweep_grid_options apply to it as run_scenario_options do. */
typedef struct {
    const char *vary[SWEEP_MAX_AXES];
    int nvary;
    const char *tie[SWEEP_MAX_AXES];
    int ntie;
} sweep_grid_args_t;
typedef struct {
    run_args_t a;
    sweep_grid_args_t g;
} sweep_grid_cmd_t;
extern const option_t sweep_grid_options[];

void sweep_grid_init(sweep_grid_t *g);
void sweep_grid_free(sweep_grid_t *g);

/* Adds the axis of one --vary argument ("key=values"). variants are the
 * scenario's variant names (for the key `variant`). Returns 0, or EXIT_INPUT
 * after printing `stallsim sweep: --vary ARG: ...` naming the bad value, or
 * EXIT_RUNTIME when out of memory. */
int sweep_grid_add(sweep_grid_t *g, const char *arg, const char *const *variants, int nvariants);

/* Ties two varied keys (one --tie argument, "KEY=KEY2"): KEY2's axis then
 * moves with KEY's. Both must be varied with as many values each; a key tied
 * already, or tied to itself, is refused. Returns 0, or EXIT_INPUT after
 * printing `stallsim sweep: --tie ARG: ...`. */
int sweep_grid_tie(sweep_grid_t *g, const char *arg);

/* Every --vary of args, then every --tie, then sweep_grid_check_sets
 * against sets: 0, or the first error's exit code (after its message). */
int sweep_grid_build(sweep_grid_t *g, const sweep_grid_args_t *args, const char *const *variants,
                     int nvariants, const assign_list_t *sets);

/* Refuses a --set (or a shorthand such as --epochs) that names a varied key,
 * or overlaps it (jobs.KEY and jobs.N.KEY): EXIT_INPUT after printing
 * `stallsim sweep: --vary KEY: ...`, else 0. */
int sweep_grid_check_sets(const sweep_grid_t *g, const assign_list_t *sets);

/* The axis of a key as typed (jobs.00.X is jobs.0.X), or -1 when not varied. */
int sweep_grid_axis(const sweep_grid_t *g, const char *key);

/* The value index on each axis of configuration c (idx has g->naxes entries). */
void sweep_grid_point(const sweep_grid_t *g, int64_t c, int *idx);

#endif
