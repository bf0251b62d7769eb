/* goodput: what share of a run's wall time trains, with checkpoints and
 * failures beside the data stalls (issue 57). From a producer's steady
 * epoch (its last: checkpoint waits included) and first epoch (the time to
 * the first step), for each job instance over failures.horizon_h:
 *
 * - a failure every failures.mtbf_gpu_h / G hours on average (G GPUs),
 *   losing the work since the last checkpoint, then a restart: restart_s,
 *   the time to the first step (start-up, resume, first batch) and the
 *   checkpoint's reload (a read as long as its write);
 * - the closed form: Daly's expected wall time of a segment of w seconds
 *   between checkpoints under Poisson failures, e^(λR) (e^(λw) - 1) / λ,
 *   and the Young/Daly interval sqrt(2 δ / λ);
 * - the simulator's figure: failures drawn from the seed over the horizon.
 *
 *   goodput_t g;  goodput_of(s, t, i, r, draw, &g) */
#ifndef STALLSIM_GOODPUT_H
#define STALLSIM_GOODPUT_H

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

typedef struct {
    double goodput;      /* GPU training time over wall time, 0..1 */
    double restarts;     /* expected (closed form) or drawn */
    double lost_s;       /* work lost to failures, seconds of wall */
    double restart_s;    /* one restart, all of it */
    double checkpoint_s; /* one checkpoint's write */
    double best_every;   /* the Young/Daly interval, in steps (0: no failures or no checkpoints) */
    double useful_epoch_s; /* wall time per epoch of training kept */
} goodput_t;

/* Whether s reckons goodput: failures, or a job that checkpoints. */
int goodput_asked(const scenario_t *s);
/* Instance i of r (model or simulator rows of s); draw: failures drawn from
 * the seed, else the closed form. */
void goodput_of(const scenario_t *s, const topology_t *t, int i, const run_metrics_t *r, int draw,
                goodput_t *g);

#endif
