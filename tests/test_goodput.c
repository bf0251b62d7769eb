/* Goodput (sim/run/goodput.h) against its closed forms: without failures
 * the GPUs' share of the epoch; with them, failures drawn over a long
 * horizon converge on Daly's expected segment time; the Young/Daly
 * interval; a job that never checkpoints keeps nothing of a horizon much
 * longer than its time between failures; more often checkpoints cost the
 * failure-free run and save the failing one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "goodput.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 100 steps an epoch of 0.2 s, GPU-bound; 8 GB checkpoints at 500 MB/s
 * (16 s) every 300 steps. */
static const char *base = "epochs: 2\ndataset: {items: 25600, item_kb: 100}\n"
                          "server: {cpus: 64, gpus: 8, cache_gb: 0,\n"
                          "  storage: {kind: fixed, latency_ms: 0.1, read_mb_s: 500}}\n"
                          "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
                          "loader: {cache: none}\n"
                          "jobs: [{gpus: 8, batch_per_gpu: 32, compute_s_per_batch: 0.2,\n"
                          "        checkpoint: {gb: 8, every_steps: 300}}]\n";

typedef struct {
    goodput_t model, sim;
    double busy; /* the simulator's last epoch: t_gpu over its wall less checkpoints */
} pair_t;

static pair_t run(const char *const *sets) {
    run_metrics_t m, x;
    assert_int_equal(tu_run(base, sets, &S, &T, &m, &x), 0);
    pair_t p;
    goodput_of(&S, &T, 0, &m, 0, &p.model);
    goodput_of(&S, &T, 0, &x, 1, &p.sim);
    const epoch_metrics_t *e = metrics_at(&x, 0, 1);
    p.busy = e->t_gpu_s / (e->epoch_s - e->checkpoint_s);
    metrics_free(&m), metrics_free(&x);
    return p;
}

/* No failures: the GPUs' share of a segment of 300 steps (60 s) and its
 * 16 s checkpoint; no restart, nothing lost. */
static void test_no_failures(void **state) {
    (void)state;
    pair_t p = run(NULL);
    const double want = p.busy * 60 / 76;
    assert_true(fabs(p.model.goodput - want) < 1e-3 && fabs(p.sim.goodput - want) < 1e-3);
    assert_true(p.sim.restarts == 0 && p.sim.lost_s == 0 && p.model.best_every == 0);
    assert_true(fabs(p.sim.checkpoint_s - 16) < 0.02);
}

/* A failure every 6.25 h (50 h a GPU, 8 GPUs) over 10^5 h: about 16,000
 * drawn, their goodput within 1 % of Daly's, and as many restarts. */
static void test_draws_converge(void **state) {
    (void)state;
    const char *sets[] = {"failures.mtbf_gpu_h=50", "failures.horizon_h=100000", NULL};
    pair_t p = run(sets);
    if (fabs(p.sim.goodput / p.model.goodput - 1) > 0.01)
        fail_msg("drawn %.5f, closed form %.5f", p.sim.goodput, p.model.goodput);
    assert_true(fabs(p.sim.restarts / p.model.restarts - 1) < 0.03);
    /* Daly by hand: R = 120 s + the first step + the 16 s reload */
    const double lambda = 8 / (50 * 3600.0), w = 60 + 16, R = p.model.restart_s;
    const double seg = exp(lambda * R) * expm1(lambda * w) / lambda;
    assert_true(fabs(p.model.goodput - p.busy * 60 / seg) < 1e-3);
    /* Young/Daly: sqrt(2 x 16 s / lambda) in steps of about 0.2 s (the
     * epoch's 20.05 s over its 100 steps) */
    const double yd = sqrt(2 * 16 / lambda) / 0.2005;
    if (fabs(p.model.best_every / yd - 1) > 0.002)
        fail_msg("Young/Daly: %.0f steps, want %.0f", p.model.best_every, yd);
}

/* Never a checkpoint, a failure every 6.25 h over a week of 168 h: the
 * chance of a week without one is e^-27, so nothing is kept. */
static void test_no_checkpoints(void **state) {
    (void)state;
    const char *sets[] = {"failures.mtbf_gpu_h=50", "jobs.0.checkpoint.every_steps=0", NULL};
    pair_t p = run(sets);
    assert_true(p.model.goodput < 1e-6 && p.sim.goodput < 1e-6);
    assert_true(p.sim.restarts > 10);
}

/* Checkpoints far more often than the Young/Daly interval cost more than
 * the failures they save, and far rarer ones lose more than they cost. */
static void test_interval(void **state) {
    (void)state;
    const char *at[] = {"jobs.0.checkpoint.every_steps=100", "jobs.0.checkpoint.every_steps=1700",
                        "jobs.0.checkpoint.every_steps=40000"};
    double g[3];
    for (int k = 0; k < 3; k++) {
        const char *sets[] = {"failures.mtbf_gpu_h=50", at[k], NULL};
        g[k] = run(sets).model.goodput;
    }
    assert_true(g[1] > g[0] && g[1] > g[2]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_failures),
        cmocka_unit_test(test_draws_converge),
        cmocka_unit_test(test_no_checkpoints),
        cmocka_unit_test(test_interval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
