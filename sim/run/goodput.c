/* goodput: see goodput.h. */
#include "goodput.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>

#include "checkpoint.h"

/* Above this many segments over the horizon the draws would take long: the
 * closed form stands for them. */
#define DRAW_SEGMENTS_MAX 1e7

/* What a run's epochs give the reckoning. */
typedef struct {
    double lambda;  /* failures a second of the job's GPUs */
    double tau, w;  /* a segment's training wall, and with its checkpoint */
    double R;       /* a restart */
    double busy;    /* the GPUs' training share of the training wall */
    double H;       /* the horizon, seconds */
    double delta;   /* one checkpoint's wait: its write (async: its staging and any
                       drain past the segment) */
    double reload;  /* a restart's read of the last checkpoint: as long as its write */
    double step;    /* one step's wall, checkpoints left out */
    double train_s; /* an epoch's training wall, checkpoints left out */
} reckon_t;

static void reckon(const scenario_t *s, const topology_t *t, int i, const run_metrics_t *r,
                   reckon_t *k) {
    const job_t *j = &s->jobs[t->inst[i].job];
    const int e = r->nepochs - 1;
    const epoch_metrics_t *last = metrics_at(r, i, e), *first = metrics_at(r, i, 0);
    const double M = (double)(j->gpus * j->batch_per_gpu);
    const double steps = fmax(1, ceil(last->items_consumed / M));
    k->train_s = last->epoch_s - last->checkpoint_s;
    k->busy = k->train_s > 0 ? last->t_gpu_s / k->train_s : 0;
    k->step = k->train_s / steps;
    /* the producer's own write time (whether or not its epochs hold one) */
    k->reload = j->checkpoint.every_steps > 0 ? last->checkpoint_write_s : 0;
    k->delta = k->reload;
    const double tau = (double)j->checkpoint.every_steps * k->step;
    if (checkpoint_async(j) && k->reload > 0)
        k->delta = checkpoint_stage_one(s, &t->inst[i]) + fmax(0, k->reload - tau);
    k->H = s->failures.horizon_h * 3600;
    k->lambda = s->failures.mtbf_gpu_h > 0 ? (double)j->gpus / (s->failures.mtbf_gpu_h * 3600) : 0;
    /* a restart: its own time, the way to the first step, the reload */
    k->R = s->failures.restart_s + first->startup_first_s + first->resume_s + first->first_batch_s +
           k->reload;
    /* without checkpoints a failure loses all since the start */
    k->tau = k->reload > 0 ? tau : k->H;
    k->w = k->tau + k->delta;
}

/* Daly: a segment's expected wall under Poisson failures. */
static double segment_s(const reckon_t *k) {
    if (k->lambda <= 0) return k->w;
    return exp(k->lambda * k->R) * expm1(k->lambda * k->w) / k->lambda;
}

static void closed_form(const reckon_t *k, goodput_t *g) {
    const double T = segment_s(k);
    const double kept = isfinite(T) && T > 0 ? k->tau / T : 0;
    g->goodput = k->busy * kept;
    g->restarts = k->lambda * k->H;
    g->lost_s = isfinite(T) && T > 0 ? k->H * (1 - k->w / T) : k->H;
    g->useful_epoch_s = kept > 0 ? k->train_s / kept : INFINITY;
}

/* Failures drawn over the horizon: segments completed, or cut by a failure
 * and restarted (a failure during the restart restarts it). */
static void drawn(const scenario_t *s, const reckon_t *k, goodput_t *g) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng || k->lambda <= 0 || k->H / k->w > DRAW_SEGMENTS_MAX) {
        gsl_rng_free(rng);
        closed_form(k, g);
        return;
    }
    gsl_rng_set(rng, (unsigned long)s->seed);
    const double mean = 1 / k->lambda;
    double t = 0, work = 0, lost = 0, restarts = 0, fail = gsl_ran_exponential(rng, mean);
    while (t < k->H) {
        if (t + k->w <= fail) {
            t += k->w;
            if (t <= k->H) work += k->tau;
            continue;
        }
        lost += fail - t, t = fail;
        for (;;) { /* the restart, until one runs through */
            restarts++;
            fail = t + gsl_ran_exponential(rng, mean);
            if (fail >= t + k->R) break;
            lost += fail - t, t = fail;
        }
        lost += fmin(k->R, k->H - t), t += k->R;
    }
    gsl_rng_free(rng);
    g->goodput = k->busy * work / k->H;
    g->restarts = restarts, g->lost_s = fmin(lost, k->H);
    g->useful_epoch_s = work > 0 ? k->train_s * k->H / work : INFINITY;
}

int goodput_asked(const scenario_t *s) {
    int ck = 0;
    for (int k = 0; k < s->njobs; k++)
        ck |= s->jobs[k].checkpoint.gb > 0 && s->jobs[k].checkpoint.every_steps > 0;
    return ck || s->failures.mtbf_gpu_h > 0;
}

void goodput_of(const scenario_t *s, const topology_t *t, int i, const run_metrics_t *r, int draw,
                goodput_t *g) {
    reckon_t k;
    reckon(s, t, i, r, &k);
    *g = (goodput_t){.restart_s = k.R, .checkpoint_s = k.delta};
    if (k.delta > 0 && k.lambda > 0 && k.step > 0)
        g->best_every = fmax(1, round(sqrt(2 * k.delta / k.lambda) / k.step));
    if (draw)
        drawn(s, &k, g);
    else
        closed_form(&k, g);
}
