/* loader.kind: pytorch against hand-derived epoch times in cases where the
 * DataLoader's mechanics give them exactly: the synchronous single process,
 * workers taking batches round-robin, the prefetch window, synchronous
 * reads, worker start-up, contention, drop_last; the model beside; the
 * rules the kind adds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kinds.h"
#include "knob.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 1 GPU, 3200 equal items of 100 KB in batches of 32 (100 batches); prep is
 * 2 ms per item; the loader's other costs are zero unless a test sets them.
 * The cache holds everything, so epoch 2 reads nothing. */
static const char *base = "epochs: 2\ndataset: {items: 3200, item_kb: 100}\n"
                          "server: {cpus: 4, gpus: 1, cache_gb: 1}\n"
                          "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 2, augment_ms: 0}\n"
                          "loader: {kind: pytorch, collate_ms_per_item: 0, share_ms_per_item: 0,"
                          " transfer_ms_per_item: 0,"
                          " step_ms: 0, worker_start_ms: 0}\n"
                          "jobs: [{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 1e-9}]\n";

static void run(const char *const *sets, run_metrics_t *model, run_metrics_t *sim) {
    assert_int_equal(tu_run(base, sets, &S, &T, model, sim), 0);
}

static void near(const char *what, double got, double want, double tol) {
    if (fabs(got - want) > tol * want) fail_msg("%s: %.9g, want %.9g", what, got, want);
}

/* num_workers = 0: read, prepare, collate, step and compute, one after another. */
static void test_synchronous(void **state) {
    (void)state;
    /* The training process collates without sharing: share_ms_per_item is a worker's. */
    const char *sets[] = {"jobs.0.compute_s_per_batch=0.05", "loader.collate_ms_per_item=0.5",
                          "loader.step_ms=1", "loader.share_ms_per_item=7", NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    double want = 100 * (32 * (2e-3 + 0.5e-3) + 1e-3 + 0.05);
    near("sim epoch 2", metrics_at(&s, 0, 1)->epoch_s, want, 1e-6);
    near("model epoch 2", metrics_at(&m, 0, 1)->epoch_s, want, 1e-6);
    near("t_gpu", metrics_at(&s, 0, 1)->t_gpu_s, 100 * 0.05, 1e-12);
    metrics_free(&m), metrics_free(&s);
}

/* Eight workers on one core, one batch each: the model shares the core as
 * the scheduler does (all eight batches done together, at the slowdown
 * that fits the workers and the loop: 8 x (2 + 1/32) / 2 = 8.125), and the
 * loop then drains the eight with the core to itself, 1 ms of CPU and
 * 10 ms of GPU each (pinned to one core, 8 warm DataLoader workers' batches
 * arrived within 0.11 s of each other after 1.5 s, then one every 14 ms:
 * VALIDATION.md, "PyTorch past the cores"). At the workers' share the
 * drain took 8 x (8.125 + 10) ms, and a GPU twice as fast lengthened the
 * model's epoch (semfuzz seed 31). The simulator shares the core the same
 * way (its batches all done at 8 x 64 ms, where serving them in the order
 * walked made them one 64 ms apart and the epoch 0.538 s); its first epoch
 * is the closed form (the second starts its first batch at the runnable
 * share of the first epoch's reads, which no longer come). */
static void test_drain_after_workers(void **state) {
    (void)state;
    const char *sets[] = {"dataset.items=256",
                          "server.cpus=1",
                          "loader.num_workers=8",
                          "loader.step_ms=1",
                          "jobs.0.compute_s_per_batch=0.01",
                          NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    const double sg = 8 * (2e-3 + 1e-3 / 32) / 2e-3;
    near("model epoch 2", metrics_at(&m, 0, 1)->epoch_s, 32 * 2e-3 * sg + 8 * (1e-3 + 0.01), 1e-6);
    /* The simulator: the eight batches together, then the drain (the
     * loop, idle until the first, does not share the workers' core). Its
     * first epoch, 0.5 % short: a batch not walked yet is taken at this
     * one's runnable share so far, its first read's wait in. */
    near("sim epoch 1", metrics_at(&s, 0, 0)->epoch_s, 8 * 32 * 2e-3 + 8 * (1e-3 + 0.01), 1e-2);
    near("sim epoch 2", metrics_at(&s, 0, 1)->epoch_s, 8 * 32 * 2e-3 + 8 * (1e-3 + 0.01), 1e-3);
    metrics_free(&m), metrics_free(&s);
}

/* Two workers, no GPU work: each works through every other batch back to
 * back, so the epoch is 50 batch-times; four workers on two cores take as
 * long (each at half speed). */
static void test_workers_and_contention(void **state) {
    (void)state;
    const double w = 32 * 2e-3;
    const char *two[] = {"loader.num_workers=2", NULL};
    run_metrics_t m, s;
    run(two, &m, &s);
    near("2 workers sim", metrics_at(&s, 0, 1)->epoch_s, 50 * w, 1e-6);
    near("2 workers model", metrics_at(&m, 0, 1)->epoch_s, 50 * w, 1e-6);
    metrics_free(&m), metrics_free(&s);
    const char *four[] = {"loader.num_workers=4", "server.cpus=2", NULL};
    run(four, &m, &s);
    /* The cores are a fluid in buckets of a few ms: the last one may end a bucket late. */
    near("4 workers on 2 cores sim", metrics_at(&s, 0, 1)->epoch_s, 50 * w, 1e-3);
    near("4 workers on 2 cores model", metrics_at(&m, 0, 1)->epoch_s, 50 * w, 1e-6);
    metrics_free(&m), metrics_free(&s);
    /* All cores busy at half the speed of one: twice as long. */
    const char *slow[] = {"loader.num_workers=2", "server.cpus=2", "loader.core_efficiency=0.5",
                          NULL};
    run(slow, &m, &s);
    near("efficiency 0.5 sim", metrics_at(&s, 0, 1)->epoch_s, 100 * w, 1e-3);
    near("efficiency 0.5 model", metrics_at(&m, 0, 1)->epoch_s, 100 * w, 1e-6);
    metrics_free(&m), metrics_free(&s);
}

/* loader.oversub: 8 workers on 2 cores are 4 per core; the curve gives 0.5
 * at 4 x (linear between 2:0.75 and 6:0.25), so the cores give half their CPU
 * and the epoch takes twice as long as at 2 workers. 1 worker per core (2
 * workers) stays at 1: the curve starts past the cores. */
static void test_oversubscription(void **state) {
    (void)state;
    const double w = 32 * 2e-3;
    const char *eight[] = {"loader.num_workers=8", "server.cpus=2",
                           "loader.oversub=1:1, 2:0.75, 6:0.25", NULL};
    run_metrics_t m, s;
    run(eight, &m, &s);
    near("8 workers at 0.5 sim", metrics_at(&s, 0, 1)->epoch_s, 100 * w, 1e-3);
    near("8 workers at 0.5 model", metrics_at(&m, 0, 1)->epoch_s, 100 * w, 1e-6);
    metrics_free(&m), metrics_free(&s);
    const char *two[] = {"loader.num_workers=2", "server.cpus=2",
                         "loader.oversub=1:1, 2:0.75, 6:0.25", NULL};
    run(two, &m, &s);
    near("2 workers sim", metrics_at(&s, 0, 1)->epoch_s, 50 * w, 1e-6);
    near("2 workers model", metrics_at(&m, 0, 1)->epoch_s, 50 * w, 1e-6);
    metrics_free(&m), metrics_free(&s);
    /* Past the last point the curve stays at it: 64 workers are 32 per core. */
    const char *many[] = {"loader.num_workers=64", "server.cpus=2", "loader.prefetch_factor=1",
                          "loader.oversub=1:1, 2:0.8, 8:0.25", NULL};
    run(many, &m, &s);
    near("64 workers at 0.25 model", metrics_at(&m, 0, 1)->epoch_s, 200 * w, 0.02);
    near("64 workers at 0.25 sim", metrics_at(&s, 0, 1)->epoch_s, 200 * w, 0.02);
    metrics_free(&m), metrics_free(&s);
    const char *bad[][2] = {
        {"loader.oversub=2:1, 4:0.5", NULL}, {"loader.oversub=1:1", NULL},
        {"loader.oversub=1:1, 2:1.5", NULL}, {"loader.oversub=1:1, 1:0.5", NULL},
        {"loader.oversub=1:1, 2:x", NULL},   {"loader.oversub=1:1, 2:0", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(tu_build(base, bad[i], &S, &T), EXIT_INPUT);
}

/* The best num_workers by the model: items wait 20 ms for their read and
 * take 2 ms of CPU on 2 cores. Without a curve more workers never cost, so
 * the fewest within 1 % of the plateau win (the cores' 1000 items/s need
 * 11 x 2 ms + 20 ms cycles at least: 24 is the first step past); with the
 * cores' CPU halving at every doubling past 2 workers a core the epoch is a
 * U over num_workers with its bottom at 12: 6 workers a core leave the
 * cores 0.375 of their CPU, 375 items/s, where 8 workers' reads allow 364
 * and 16 workers' cores 250. */
static void test_best_workers(void **state) {
    (void)state;
    const char *flat[] = {"server.storage.latency_ms=20",
                          "server.storage.read_mb_s=1e12",
                          "server.storage.queue_depth=256",
                          "server.cpus=2",
                          "loader.cache=none",
                          NULL};
    knob_best_t b;
    assert_int_equal(tu_build(base, flat, &S, &T), 0);
    assert_int_equal(model_best_knob(&S, &b), 1);
    assert_string_equal(b.key, "loader.num_workers");
    assert_int_equal(b.value[0], 0);
    assert_int_equal(b.value[b.n - 1], 32);
    for (int i = 1; i < b.n; i++)
        assert_true(b.run_s[i] <= b.run_s[i - 1] * 1.001);
    assert_int_equal(b.best, 24);
    const char *u[] = {"server.storage.latency_ms=20",
                       "server.storage.read_mb_s=1e12",
                       "server.storage.queue_depth=256",
                       "server.cpus=2",
                       "loader.cache=none",
                       "loader.oversub=1:1, 2:1, 4:0.5, 8:0.25, 16:0.125",
                       NULL};
    assert_int_equal(tu_build(base, u, &S, &T), 0);
    assert_int_equal(model_best_knob(&S, &b), 1);
    assert_int_equal(b.best, 12);
    assert_true(b.run_s[b.n - 1] > 1.5 * b.best_s);
    assert_true(b.run_s[1] > 1.5 * b.best_s);
}

/* Eight workers on two cores, each item 2 ms of CPU after a 2 ms read: a
 * worker waiting for its read holds no core, and the cores then bind. A
 * worker's cycle is s x 2 ms + 2 ms, eight of them use 8 x 2 ms / cycle
 * core-seconds a second, and the two cores are full at a cycle of 8 ms
 * (s = 3): 1000 items/s, the cores' own rate (the last round's four
 * workers just fill them at s = 1). A per-run factor from the mean demand
 * (8 x 2 / 4 = 4 busy: s = 2) made it 2.4 s. */
static void test_cpu_shared_with_waits(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_workers=8",
                          "server.cpus=2",
                          "server.storage.latency_ms=2",
                          "server.storage.read_mb_s=1e12",
                          "server.storage.queue_depth=64",
                          "loader.prefetch_factor=1",
                          NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    /* The simulator shares the cores by the runnable workers it counts at
     * their mean share, not item by item: where fewer are runnable for a
     * while the cores idle, and the epoch is 1.4 % longer (the calendar
     * alone, serving in turn, gave 3.2 s and batches one at a time). */
    near("cold epoch sim", metrics_at(&s, 0, 0)->epoch_s, 3200 * 2e-3 / 2, 0.02);
    near("cold epoch model", metrics_at(&m, 0, 0)->epoch_s, 3200 * 2e-3 / 2, 0.01);
    assert_true(metrics_at(&s, 0, 0)->cpu_util <= 1);
    metrics_free(&m), metrics_free(&s);
    /* With reads of 20 ms the workers wait most of the time: eight cycles
     * of 22 ms give 364 items/s, under the cores' 1000, so no slowdown: 13
     * rounds of 32 items (100 batches on 8 workers). */
    const char *slow_reads[] = {"loader.num_workers=8",
                                "server.cpus=2",
                                "server.storage.latency_ms=20",
                                "server.storage.read_mb_s=1e12",
                                "server.storage.queue_depth=64",
                                "loader.prefetch_factor=1",
                                NULL};
    run(slow_reads, &m, &s);
    near("slow reads sim", metrics_at(&s, 0, 0)->epoch_s, 13 * 32 * 22e-3, 0.01);
    near("slow reads model", metrics_at(&m, 0, 0)->epoch_s, 13 * 32 * 22e-3, 0.01);
    metrics_free(&m), metrics_free(&s);
}

/* A tier that serves every miss in 0.1 ms over a store of 100 ms: the
 * second epoch's workers wait for the tier, not the store, so sixteen of
 * them on four cores are CPU-bound at 4 / 2 ms = 2000 items/s (a factor
 * fixed from the store's wait costed them as idle: 5.3x faster). */
static void test_tier_hits_hold_cores(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_workers=16",
                          "server.cache_gb=0.0001",
                          "server.storage.latency_ms=100",
                          "server.storage.read_mb_s=1e12",
                          "server.storage.queue_depth=256",
                          "server.tier.cache_gb=1",
                          "server.tier.latency_ms=0.1",
                          "server.tier.read_mb_s=1e9",
                          NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    near("tier epoch sim", metrics_at(&s, 0, 1)->epoch_s, 3200 * 2e-3 / 4, 0.02);
    near("tier epoch model", metrics_at(&m, 0, 1)->epoch_s, 3200 * 2e-3 / 4, 0.01);
    assert_true(metrics_at(&s, 0, 1)->cpu_util <= 1 && metrics_at(&m, 0, 1)->cpu_util <= 1);
    metrics_free(&m), metrics_free(&s);
}

/* The training process's step CPU shares the cores with the workers: one
 * core, one worker of 2 ms an item and a step of 32 ms an iteration. Alone
 * the worker's 64 ms batches overlap the 32 ms steps; sharing the core, an
 * epoch costs all of its CPU, 100 x (64 + 32) ms. */
static void test_step_cpu_shares_cores(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_workers=1", "server.cpus=1", "loader.step_ms=32", NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    near("sim", metrics_at(&s, 0, 1)->epoch_s, 100 * (64e-3 + 32e-3), 0.01);
    near("model", metrics_at(&m, 0, 1)->epoch_s, 100 * (64e-3 + 32e-3), 0.01);
    metrics_free(&m), metrics_free(&s);
}

/* GPU-bound with the window full: the first batch's latency, then one
 * iteration (receive + step + compute) after another. */
static void test_gpu_bound(void **state) {
    (void)state;
    const char *sets[] = {
        "loader.num_workers=2", "jobs.0.compute_s_per_batch=0.2", "loader.transfer_ms_per_item=0.1",
        "loader.step_ms=0.5",   "loader.share_ms_per_item=0.25",  NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    double first = 32 * (2e-3 + 0.25e-3), iter = 32 * 0.1e-3 + 0.5e-3 + 0.2;
    near("sim", metrics_at(&s, 0, 1)->epoch_s, first + 100 * iter, 1e-6);
    near("model", metrics_at(&m, 0, 1)->epoch_s, first + 100 * iter, 1e-6);
    metrics_free(&m), metrics_free(&s);
}

/* The hand-over by the item's bytes (prep.out_kb, 602.112 KB here): a
 * worker's loader.copy_ms_per_mb on top of its items, twice as much for an
 * item twice the size, and nothing without workers (the training process
 * collates in its own memory); the training process's receive_ms_per_mb a
 * batch, serial with the GPU's compute. */
static void test_handover_per_mb(void **state) {
    (void)state;
    const char *one[] = {"loader.num_workers=1", "loader.copy_ms_per_mb=5", NULL};
    const char *twice[] = {"loader.num_workers=1", "loader.copy_ms_per_mb=5",
                           "prep.out_kb=1204.224", NULL};
    const char *none[] = {"loader.num_workers=0", "loader.copy_ms_per_mb=5",
                          "loader.receive_ms_per_mb=5", NULL};
    const char *recv[] = {"loader.num_workers=2", "jobs.0.compute_s_per_batch=0.2",
                          "loader.receive_ms_per_mb=1", NULL};
    const char *const *sets[] = {one, twice, none, recv};
    const double mb = 0.602112, first = 32 * 2e-3;
    const double want[] = {3200 * (2e-3 + 5e-3 * mb), 3200 * (2e-3 + 5e-3 * 2 * mb), 3200 * 2e-3,
                           first + 100 * (32 * 1e-3 * mb + 0.2)};
    for (int k = 0; k < 4; k++) {
        run_metrics_t m, s;
        run(sets[k], &m, &s);
        near("sim", metrics_at(&s, 0, 1)->epoch_s, want[k], k == 3 ? 1e-6 : 0.01);
        near("model", metrics_at(&m, 0, 1)->epoch_s, want[k], k == 3 ? 1e-6 : 0.01);
        metrics_free(&m), metrics_free(&s);
    }
}

/* The training process's wait to receive a batch (loader.receive_wait_ms)
 * holds no core, and is for the worker's GIL: not where the batch's worker
 * has no batch left; on one core beside a worker it takes none of the
 * worker's time; without workers there is nothing to receive. */
static void test_receive_wait(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_workers=2",
                          "jobs.0.compute_s_per_batch=0.2",
                          "loader.transfer_ms_per_item=0.1",
                          "loader.step_ms=0.5",
                          "loader.share_ms_per_item=0.25",
                          "loader.receive_wait_ms=3",
                          NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    /* GPU-bound: the wait at every iteration but the last round's two,
     * whose workers have no batch left to hold their GIL (the model's
     * drain also leaves out the two before, taken after the last worker
     * was done). */
    double first = 32 * (2e-3 + 0.25e-3), iter = 32 * 0.1e-3 + 0.5e-3 + 0.2;
    near("sim", metrics_at(&s, 0, 1)->epoch_s, first + 100 * iter + 98 * 3e-3, 1e-6);
    near("model", metrics_at(&m, 0, 1)->epoch_s, first + 100 * iter + 96 * 3e-3, 1e-6);
    metrics_free(&m), metrics_free(&s);
    /* Loader-bound on one core: 64 ms of prep a batch; the 30 ms wait a
     * batch overlaps the worker's next batch, and the last batch's worker
     * has none (the wait was charged there too: 6.43 s). */
    const char *bound[] = {"loader.num_workers=1", "server.cpus=1", "loader.receive_wait_ms=30",
                           NULL};
    run(bound, &m, &s);
    near("sim, loader-bound", metrics_at(&s, 0, 1)->epoch_s, 100 * 64e-3, 1e-6);
    near("model, loader-bound", metrics_at(&m, 0, 1)->epoch_s, 100 * 64e-3, 1e-6);
    metrics_free(&m), metrics_free(&s);
    const char *none[] = {"jobs.0.compute_s_per_batch=0.05", "loader.receive_wait_ms=30", NULL};
    run(none, &m, &s);
    near("sim, no workers", metrics_at(&s, 0, 1)->epoch_s, 100 * (32 * 2e-3 + 0.05), 1e-6);
    near("model, no workers", metrics_at(&m, 0, 1)->epoch_s, 100 * (32 * 2e-3 + 0.05), 1e-6);
    metrics_free(&m), metrics_free(&s);
}

/* One worker reads synchronously: each miss waits its latency before the
 * item's prep; the iterator forks the worker again at every epoch unless
 * persistent. */
static void test_sync_reads_and_start(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_workers=1",          "server.storage.latency_ms=1",
                          "server.storage.read_mb_s=1e12", "loader.worker_start_ms=30",
                          "loader.prefetch_factor=1",      NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    double miss = 1e-3 + 100e3 / 1e18;
    near("cold epoch sim", metrics_at(&s, 0, 0)->epoch_s, 0.03 + 100 * 32 * (2e-3 + miss), 1e-6);
    near("cold epoch model", metrics_at(&m, 0, 0)->epoch_s, 0.03 + 100 * 32 * (2e-3 + miss), 1e-6);
    near("warm epoch, forked again", metrics_at(&s, 0, 1)->epoch_s, 0.03 + 100 * 32 * 2e-3, 1e-6);
    metrics_free(&m), metrics_free(&s);
    const char *keep[] = {"loader.num_workers=1", "loader.worker_start_ms=30",
                          "loader.persistent_workers=true", NULL};
    run(keep, &m, &s);
    /* The first epoch is cold: the default device's 0.1 ms + 100 KB at 525 MB/s per read. */
    double dflt = 0.1e-3 + 100e3 / 525e6;
    near("persistent: first epoch forks", metrics_at(&s, 0, 0)->epoch_s,
         0.03 + 100 * 32 * (2e-3 + dflt), 1e-6);
    near("persistent: second does not", metrics_at(&s, 0, 1)->epoch_s, 100 * 32 * 2e-3, 1e-6);
    near("persistent: model", metrics_at(&m, 0, 1)->epoch_s, 100 * 32 * 2e-3, 1e-6);
    metrics_free(&m), metrics_free(&s);
}

/* loader.worker_warmup_ms: a fresh worker's first items cost more CPU than
 * warm ones, once per worker start. As worker_init_ms alone, 4 workers on 4
 * cores: 0.4 s of forks, 50 ms of warm-up, 25 batches of 64 ms: 2.05 s.
 * 16 workers on 2 cores, CPU-bound: the cores do 3200 x 2 ms of items and
 * 16 x 100 ms of warm-up, (6.4 + 1.6) / 2 = 4 s, where 16 workers cost no
 * more than 2 without it (3.2 s); persistent workers pay it in epoch 1 only.
 * Over 256 items (8 batches) only the 8 workers given a batch warm up:
 * (256 x 2 ms + 8 x 100 ms) / 2 = 0.656 s (all 16 charged: 1.056 s).
 * 4 GPUs' 8 workers each on 2 cores, GPU-bound at 0.5 s a batch: the 32
 * warm-ups take 3.2 s of CPU on 2 cores, all at once (1.6 s), then the 32
 * workers' first batches, all at once too (32 x 64 ms on 2 cores: the GPU
 * has no batch yet to thin them out), then 25 steps: 15.124 s (served in
 * turn, the first batch had come 64 ms after the warm-ups: 14.164 s; the
 * model had 12.66: each worker's warm-up at the items' share of the
 * cores, which the GPU keeps light). */
static void test_worker_warmup(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_workers=4", "loader.worker_start_ms=100",
                          "loader.worker_warmup_ms=50", NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    near("warm-up as a start, sim", metrics_at(&s, 0, 1)->epoch_s, 0.45 + 25 * 0.064, 1e-6);
    near("warm-up as a start, model", metrics_at(&m, 0, 1)->epoch_s, 0.45 + 25 * 0.064, 1e-6);
    metrics_free(&m), metrics_free(&s);
    const char *crowd[] = {"loader.num_workers=16", "server.cpus=2", "loader.worker_warmup_ms=100",
                           NULL};
    run(crowd, &m, &s);
    near("16 warm-ups on 2 cores, sim", metrics_at(&s, 0, 1)->epoch_s, 4.0, 1e-2);
    near("16 warm-ups on 2 cores, model", metrics_at(&m, 0, 1)->epoch_s, 4.0, 1e-2);
    metrics_free(&m), metrics_free(&s);
    const char *few[] = {"loader.num_workers=16", "server.cpus=2", "loader.worker_warmup_ms=100",
                         "dataset.items=256", NULL};
    run(few, &m, &s);
    near("8 batches for 16 workers, sim", metrics_at(&s, 0, 1)->epoch_s, 0.656, 1e-2);
    near("8 batches for 16 workers, model", metrics_at(&m, 0, 1)->epoch_s, 0.656, 1e-2);
    metrics_free(&m), metrics_free(&s);
    /* A worker's own start (worker_init_ms) is CPU before its first item as
     * the warm-up is: all ranks' starts or warm-ups at once take their CPU
     * over the cores, in the model too (it had charged one worker's start:
     * 12.664 s). */
    const char *cost[] = {"loader.worker_warmup_ms=100", "loader.worker_init_ms=100"};
    for (int i = 0; i < 2; i++) {
        const char *ranks[] = {"loader.num_workers=8",
                               "server.cpus=2",
                               cost[i],
                               "server.gpus=4",
                               "jobs.0.gpus=4",
                               "jobs.0.compute_s_per_batch=0.5",
                               NULL};
        char what[96];
        run(ranks, &m, &s);
        snprintf(what, sizeof what, "4 ranks' %s, GPU-bound, sim", cost[i]);
        near(what, metrics_at(&s, 0, 1)->epoch_s, 15.124, 1e-3);
        snprintf(what, sizeof what, "4 ranks' %s, GPU-bound, model", cost[i]);
        near(what, metrics_at(&m, 0, 1)->epoch_s, 15.124, 1e-3);
        metrics_free(&m), metrics_free(&s);
    }
    const char *keep[] = {"loader.num_workers=16", "server.cpus=2", "loader.worker_warmup_ms=100",
                          "loader.persistent_workers=true", NULL};
    run(keep, &m, &s);
    near("persistent: warm in epoch 2, sim", metrics_at(&s, 0, 1)->epoch_s, 3.2, 1e-2);
    near("persistent: warm in epoch 2, model", metrics_at(&m, 0, 1)->epoch_s, 3.2, 1e-2);
    metrics_free(&m), metrics_free(&s);
}

/* The iterator hands out its first indices only once the last worker is
 * forked: 8 workers on 2 cores forked 100 ms apart start no item before
 * 0.8 s, then 3200 x 2 ms of items on 2 cores, 4 s; epoch 2 forks again.
 * A worker that started as soon as it was forked would have the cores busy
 * from 0.2 s (3.4 s). Persistent workers: 3.2 s in epoch 2. */
static void test_indices_after_forks(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_workers=8", "server.cpus=2", "loader.worker_start_ms=100",
                          NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    near("no item before the last fork, sim", metrics_at(&s, 0, 1)->epoch_s, 4.0, 1e-2);
    near("no item before the last fork, model", metrics_at(&m, 0, 1)->epoch_s, 4.0, 1e-2);
    metrics_free(&m), metrics_free(&s);
    const char *keep[] = {"loader.num_workers=8", "server.cpus=2", "loader.worker_start_ms=100",
                          "loader.persistent_workers=true", NULL};
    run(keep, &m, &s);
    near("persistent, sim", metrics_at(&s, 0, 1)->epoch_s, 3.2, 1e-2);
    near("persistent, model", metrics_at(&m, 0, 1)->epoch_s, 3.2, 1e-2);
    metrics_free(&m), metrics_free(&s);
}

/* loader.worker_exit_ms: the epoch's last next() shuts the workers down and
 * joins them before the loop goes on. 4 workers on 4 cores: 1.6 s of items,
 * then 4 exits of 50 ms at once, 1.65 s. 16 workers on 2 cores: 3200 x 2 ms
 * of items on 2 cores (3.2 s), then 16 x 50 ms of exits on 2 cores, 3.6 s.
 * Persistent workers are not shut down between epochs: 3.2 s. */
static void test_worker_exit(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_workers=4", "loader.worker_exit_ms=50", NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    near("4 exits on 4 cores, sim", metrics_at(&s, 0, 1)->epoch_s, 1.65, 1e-6);
    near("4 exits on 4 cores, model", metrics_at(&m, 0, 1)->epoch_s, 1.65, 1e-6);
    metrics_free(&m), metrics_free(&s);
    const char *crowd[] = {"loader.num_workers=16", "server.cpus=2", "loader.worker_exit_ms=50",
                           NULL};
    run(crowd, &m, &s);
    near("16 exits on 2 cores, sim", metrics_at(&s, 0, 1)->epoch_s, 3.6, 1e-2);
    near("16 exits on 2 cores, model", metrics_at(&m, 0, 1)->epoch_s, 3.6, 1e-2);
    metrics_free(&m), metrics_free(&s);
    const char *keep[] = {"loader.num_workers=16", "server.cpus=2", "loader.worker_exit_ms=50",
                          "loader.persistent_workers=true", NULL};
    run(keep, &m, &s);
    near("persistent: no exit, sim", metrics_at(&s, 0, 1)->epoch_s, 3.2, 1e-2);
    near("persistent: no exit, model", metrics_at(&m, 0, 1)->epoch_s, 3.2, 1e-2);
    metrics_free(&m), metrics_free(&s);
}

/* The iterator forks its workers one after another (100 ms each) and the
 * loop takes no batch before the last is forked; each worker then spends
 * 50 ms of CPU of its own before its first item. 4 workers on 4 cores, 25
 * batches of 64 ms each: worker 3, forked at 0.4 s and ready at 0.45 s,
 * works through its 25 batches without a pause (its prefetched batches are
 * taken as they come), so the epoch ends at 0.45 + 25 x 0.064 = 2.05 s
 * (epoch 2 forks again). 8 workers over 4 short batches: the loop waits for
 * the iterator, 8 x 100 ms, though 4 workers would do, and the first
 * indices go out only then: one batch of 32 x 0.1 ms after 0.8 s. */
static void test_iterator_start(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_workers=4", "loader.worker_start_ms=100",
                          "loader.worker_init_ms=50", NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    near("fork and init, sim", metrics_at(&s, 0, 1)->epoch_s, 0.45 + 25 * 0.064, 1e-6);
    near("fork and init, model", metrics_at(&m, 0, 1)->epoch_s, 0.45 + 25 * 0.064, 1e-6);
    metrics_free(&m), metrics_free(&s);
    const char *wide[] = {"loader.num_workers=8",     "loader.worker_start_ms=100",
                          "dataset.items=128",        "prep.decode_ms_per_item=0.1",
                          "loader.prefetch_factor=1", NULL};
    run(wide, &m, &s);
    near("iterator of 8, sim", metrics_at(&s, 0, 1)->epoch_s, 0.8 + 32 * 0.1e-3, 1e-6);
    near("iterator of 8, model", metrics_at(&m, 0, 1)->epoch_s, 0.8 + 32 * 0.1e-3, 1e-6);
    metrics_free(&m), metrics_free(&s);
    const char *keep[] = {
        "loader.num_workers=8",        "loader.worker_start_ms=100",     "dataset.items=128",
        "prep.decode_ms_per_item=0.1", "loader.persistent_workers=true", NULL};
    run(keep, &m, &s);
    near("persistent: no iterator to wait for, sim", metrics_at(&s, 0, 1)->epoch_s, 0.0032, 1e-5);
    near("persistent: model", metrics_at(&m, 0, 1)->epoch_s, 0.0032, 1e-5);
    metrics_free(&m), metrics_free(&s);
}

/* Eight workers reading synchronously, each item 0.01 ms of prep: the reads
 * that arrive out of time order (the engine walks batch after batch) still
 * see the device as it is: latency-bound at 8 / latency (100 batches on 8
 * workers: 13 rounds), queue-bound at
 * queue_depth / latency, bandwidth-bound at bandwidth / size. */
static void test_readers_bound(void **state) {
    (void)state;
    struct {
        const char *lat, *bw, *qd;
        double want;
    } c[] = {
        {"server.storage.latency_ms=10", "server.storage.read_mb_s=1e9",
         "server.storage.queue_depth=64", 13 * 32 * (10.01e-3 + 100e3 / 1e15)},
        {"server.storage.latency_ms=10", "server.storage.read_mb_s=1e9",
         "server.storage.queue_depth=2", 3200 * 10e-3 / 2},
        {"server.storage.latency_ms=0", "server.storage.read_mb_s=100",
         "server.storage.queue_depth=64", 3200 * 100e3 / 100e6},
    };
    for (int i = 0; i < 3; i++) {
        const char *sets[] = {"loader.num_workers=8",
                              "server.cpus=16",
                              "prep.decode_ms_per_item=0.01",
                              c[i].lat,
                              c[i].bw,
                              c[i].qd,
                              NULL};
        run_metrics_t m, s;
        run(sets, &m, &s);
        char what[160];
        snprintf(what, sizeof what, "%s %s %s: sim", c[i].lat, c[i].bw, c[i].qd);
        near(what, metrics_at(&s, 0, 0)->epoch_s, c[i].want, 0.005);
        snprintf(what, sizeof what, "%s %s %s: model", c[i].lat, c[i].bw, c[i].qd);
        near(what, metrics_at(&m, 0, 0)->epoch_s, c[i].want, 0.005);
        metrics_free(&m), metrics_free(&s);
    }
}

/* Many workers' big batches over a bandwidth-bound channel: their reads come
 * out of time order by up to 64 batches of 512 reads (33 s here), and the
 * channel still moves no more than its bandwidth: the epoch is the bytes
 * over it. (The calendars once remembered 20 s back and served older reads
 * as if alone: 1.7 % more than the bandwidth, storage_util 1.017.) */
static void test_channel_far_out_of_order(void **state) {
    (void)state;
    const char *sets[] = {"dataset.items=65536",
                          "loader.num_workers=64",
                          "server.cpus=64",
                          "server.cache_gb=0",
                          "jobs.0.batch_per_gpu=512",
                          "prep.decode_ms_per_item=0.01",
                          "server.storage.latency_ms=0.2",
                          "server.storage.read_mb_s=100",
                          "server.storage.queue_depth=32",
                          NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    const double want = 65536 * 100e3 / 100e6;
    for (int e = 0; e < 2; e++) {
        const epoch_metrics_t *x = metrics_at(&s, 0, e);
        if (x->storage_util > 1 || x->epoch_s < want * (1 - 1e-9))
            fail_msg(
                "epoch %d: %.6f s at storage_util %.6f; the bytes over the bandwidth take %.6f s",
                e + 1, x->epoch_s, x->storage_util, want);
        near("sim", x->epoch_s, want, 0.01);
    }
    metrics_free(&m), metrics_free(&s);
}

/* Reads that cost nothing cost nothing however out of order they come: the
 * same epoch as reads that all hit the cache (the calendar once clamped old
 * reads forward, serialising four workers). */
static void test_free_reads(void **state) {
    (void)state;
    const char *hits[] = {"loader.num_workers=4", NULL};
    const char *free_reads[] = {"loader.num_workers=4", "loader.cache=none",
                                "server.storage.latency_ms=0", "server.storage.read_mb_s=1e9",
                                NULL};
    run_metrics_t m, s, m2, s2;
    run(hits, &m, &s);
    run(free_reads, &m2, &s2);
    near("free reads", metrics_at(&s2, 0, 1)->epoch_s, metrics_at(&s, 0, 1)->epoch_s, 1e-6);
    near("free reads, cold epoch", metrics_at(&s2, 0, 0)->epoch_s, metrics_at(&s, 0, 1)->epoch_s,
         1e-6);
    metrics_free(&m), metrics_free(&s), metrics_free(&m2), metrics_free(&s2);
}

/* 3200 items in batches of 96 (two GPUs of 48): 33 whole batches, 32 left. */
static void test_drop_last(void **state) {
    (void)state;
    /* Reads cost nothing: the items drop_last skipped in epoch 1 miss in epoch 2. */
    const char *sets[] = {"jobs.0.gpus=2",
                          "jobs.0.batch_per_gpu=48",
                          "server.gpus=2",
                          "loader.drop_last=true",
                          "loader.num_workers=1",
                          "loader.cache=none",
                          "server.storage.latency_ms=0",
                          "server.storage.read_mb_s=1e12",
                          NULL};
    run_metrics_t m, s;
    run(sets, &m, &s);
    assert_true(metrics_at(&s, 0, 1)->items_consumed == 33 * 96);
    assert_true(metrics_at(&s, 0, 0)->items_prepped == 33 * 96);
    assert_true(metrics_at(&m, 0, 1)->items_consumed == 33 * 96);
    /* Two ranks, each with its own worker: 48 items per batch each, in parallel. */
    near("sim", metrics_at(&s, 0, 1)->epoch_s, 33 * 48 * 2e-3, 1e-6);
    near("model", metrics_at(&m, 0, 1)->epoch_s, 33 * 48 * 2e-3, 1e-6);
    metrics_free(&m), metrics_free(&s);
}

static void test_rules(void **state) {
    (void)state;
    const char *coord[] = {"loader.prep=coordinated", NULL};
    assert_int_equal(tu_build(base, coord, &S, &T), EXIT_INPUT);
    const char *dist[] = {"loader.dist_cache=partitioned", "loader.cache=minio", NULL};
    assert_int_equal(tu_build(base, dist, &S, &T), EXIT_INPUT);
    const char *tiny[] = {"loader.drop_last=true", "dataset.items=31", NULL};
    assert_int_equal(tu_build(base, tiny, &S, &T), EXIT_INPUT);
    /* The pool loader has no workers: the key is refused, not ignored. */
    const char *pool[] = {"loader.kind=pool", NULL};
    assert_int_equal(tu_build(base, pool, &S, &T), EXIT_INPUT);
    /* The pool's window is not the DataLoader's: refused, not ignored. */
    const char *window[] = {"jobs.0.prefetch_batches=4", NULL};
    assert_int_equal(tu_build(base, window, &S, &T), EXIT_INPUT);
    const char *ok[] = {"loader.num_workers=3", NULL};
    assert_int_equal(tu_build(base, ok, &S, &T), 0);
    assert_string_equal(scenario_loader(&S)->name, "pytorch");
    assert_int_equal(loader_staged_batches(&S, &S.jobs[0]), 6);
}

/* The storage kinds size their queues by the loader's synchronous readers:
 * ranks x workers, a server holding at most its GPUs' ranks; none for the
 * pool, which issues a batch's reads at once. */
static void test_readers_in_flight(void **state) {
    (void)state;
    const char *one[] = {"loader.num_workers=3", NULL};
    assert_int_equal(tu_build(base, one, &S, &T), 0);
    assert_int_equal(loader_sync_readers(&S), 3);
    const char *many[] = {"loader.num_workers=3", "server.count=2", "server.gpus=4",
                          "jobs.0.gpus=2",        "jobs.0.count=3", NULL};
    assert_int_equal(tu_build(base, many, &S, &T), 0);
    assert_int_equal(loader_sync_readers(&S), 4 * 3);
    const char *pool = "dataset: {items: 100, item_kb: 100}\nserver: {gpus: 1}\n"
                       "jobs: [{gpus: 1, gpu_items_per_s: 100}]\n";
    assert_int_equal(tu_build(pool, NULL, &S, &T), 0);
    assert_int_equal(loader_sync_readers(&S), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_synchronous),
        cmocka_unit_test(test_workers_and_contention),
        cmocka_unit_test(test_gpu_bound),
        cmocka_unit_test(test_receive_wait),
        cmocka_unit_test(test_handover_per_mb),
        cmocka_unit_test(test_sync_reads_and_start),
        cmocka_unit_test(test_iterator_start),
        cmocka_unit_test(test_readers_bound),
        cmocka_unit_test(test_free_reads),
        cmocka_unit_test(test_channel_far_out_of_order),
        cmocka_unit_test(test_drop_last),
        cmocka_unit_test(test_rules),
        cmocka_unit_test(test_readers_in_flight),
        cmocka_unit_test(test_cpu_shared_with_waits),
        cmocka_unit_test(test_tier_hits_hold_cores),
        cmocka_unit_test(test_step_cpu_shares_cores),
        cmocka_unit_test(test_oversubscription),
        cmocka_unit_test(test_worker_warmup),
        cmocka_unit_test(test_worker_exit),
        cmocka_unit_test(test_indices_after_forks),
        cmocka_unit_test(test_best_workers),
        cmocka_unit_test(test_drain_after_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
