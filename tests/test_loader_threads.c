/* loader.kind: threads, the simulator and the model against the closed form
 * per training process, items/s = min(threads / (CPU + read wait), cores /
 * CPU, 1 / GIL-held), in cases where one bound is far below the others:
 * GIL-bound, core-bound, thread-bound, read-bound, and two processes each
 * with its own GIL. Each case also states what a plausible wrong kind would
 * give (the GIL ignored, a core per thread, a read holding a core, one GIL
 * a server) and that it is far outside the tolerance, so the case fails on
 * it (the commit that added this file shows each failing on such a mutant);
 * then the rules the kind adds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kinds.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 1 GPU, 3200 equal items of 100 KB in batches of 32; prep is 1 ms of
 * decode and 2 ms of transform; no GIL unless a test sets it. The cache
 * holds everything: epoch 2 reads nothing. */
static const char *base = "epochs: 2\ndataset: {items: 3200, item_kb: 100}\n"
                          "server: {cpus: 4, gpus: 2, cache_gb: 1}\n"
                          "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 1, augment_ms: 2}\n"
                          "loader: {kind: threads, threads: 4, gil_read_ms: 0, gil_decode_share: 0,"
                          " gil_transform_share: 0, threads_collate_ms_per_item: 0}\n"
                          "jobs: [{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 1e-9}]\n";

static void near(const char *what, double got, double want, double tol) {
    if (fabs(got - want) > tol * want) fail_msg("%s: %.9g, want %.9g", what, got, want);
}

/* The wrong kind's figure is far outside the tolerance of the right one. */
static void tells_apart(const char *wrong, double wrong_s, double want, double tol) {
    if (fabs(wrong_s - want) <= 5 * tol * want)
        fail_msg("%s gives %.6g, too close to %.6g to be told apart", wrong, wrong_s, want);
}

/* Epoch `e` of simulator and model, both within tol of want. */
static void expect(const char *const *sets, int e, double want, double tol, const char *what) {
    run_metrics_t m, s;
    assert_int_equal(tu_run(base, sets, &S, &T, &m, &s), 0);
    char buf[128];
    snprintf(buf, sizeof buf, "%s (sim)", what);
    near(buf, metrics_at(&s, 0, e)->epoch_s, want, tol);
    snprintf(buf, sizeof buf, "%s (model)", what);
    near(buf, metrics_at(&m, 0, e)->epoch_s, want, tol);
    metrics_free(&m), metrics_free(&s);
}

/* The transform holds the GIL: 2 ms of each item's 3 ms, one at a time,
 * however many threads and cores: 3200 x 2 ms. */
static void test_gil_bound(void **state) {
    (void)state;
    const char *sets[] = {"loader.gil_transform_share=1", NULL};
    const double want = 3200 * 2e-3;
    expect(sets, 1, want, 1e-3, "GIL-bound");
    /* GIL ignored: 4 threads on 4 cores at 3 ms an item. */
    tells_apart("GIL ignored", 3200 * 3e-3 / 4, want, 1e-3);
    /* With the decode's share held too (1 ms of it), 3 ms an item. */
    const char *both[] = {"loader.gil_transform_share=1", "loader.gil_decode_share=1", NULL};
    expect(both, 1, 3200 * 3e-3, 1e-3, "GIL-bound, decode held too");
    tells_apart("decode share ignored", want, 3200 * 3e-3, 1e-3);
}

/* 8 threads on 2 cores, little GIL (0.2 ms): the cores bind, 3 ms / 2. */
static void test_core_bound(void **state) {
    (void)state;
    const char *sets[] = {"loader.threads=8", "server.cpus=2", "loader.gil_read_ms=0.2", NULL};
    /* CPU per item: 3 ms of prep and the read's 0.2 ms. */
    const double want = 3200 * 3.2e-3 / 2;
    expect(sets, 1, want, 2e-3, "core-bound");
    tells_apart("a core per thread", 3200 * 3.2e-3 / 8, want, 2e-3);
    tells_apart("GIL held for all of it", 3200 * 3.2e-3, want, 2e-3);
}

/* The same 8 threads on 2 cores, 4 a core, with a measured curve that
 * gives 0.6 of the cores' CPU at 4 threads a core (0.8 at 2): 3.2 ms / 1.2.
 * At 4 cores (2 a core) 0.8 of them: 3.2 ms / 3.2; at 8 cores (1 a core) the
 * curve costs nothing, as the thread-bound case has it. */
static void test_oversubscribed(void **state) {
    (void)state;
    const char *sets[] = {"loader.threads=8", "server.cpus=2", "loader.gil_read_ms=0.2",
                          "loader.threads_oversub=1:1, 2:0.8, 4:0.6", NULL};
    const double want = 3200 * 3.2e-3 / (2 * 0.6);
    expect(sets, 1, want, 2e-3, "8 threads on 2 cores, 0.6 at 4 a core");
    tells_apart("the curve ignored", 3200 * 3.2e-3 / 2, want, 2e-3);
    const char *four[] = {"loader.threads=8", "server.cpus=4", "loader.gil_read_ms=0.2",
                          "loader.threads_oversub=1:1, 2:0.8, 4:0.6", NULL};
    expect(four, 1, 3200 * 3.2e-3 / (4 * 0.8), 2e-3, "8 threads on 4 cores, 0.8 at 2 a core");
    const char *eight[] = {"loader.threads=8", "server.cpus=8", "loader.gil_read_ms=0.2",
                           "loader.threads_oversub=1:1, 2:0.8, 4:0.6", NULL};
    expect(eight, 1, 3200 * 3.2e-3 / 8, 2e-3, "8 threads on 8 cores, 1 a core");
}

/* 2 threads on 8 cores: the threads bind, 3 ms / 2. */
static void test_thread_bound(void **state) {
    (void)state;
    const char *sets[] = {"loader.threads=2", "server.cpus=8", NULL};
    const double want = 3200 * 3e-3 / 2;
    expect(sets, 1, want, 1e-3, "thread-bound");
    tells_apart("threads unbounded (the cores)", 3200 * 3e-3 / 8, want, 1e-3);
}

/* Cold reads of 20 ms each, nothing cached: a thread's cycle is 23 ms, of
 * which the wait holds neither a core nor the GIL, so 4 threads on 2 cores
 * with the transform's GIL give 4 items a 23 ms. */
static void test_read_bound(void **state) {
    (void)state;
    const char *sets[] = {"server.cache_gb=0",
                          "server.cpus=2",
                          "server.storage.latency_ms=20",
                          "server.storage.read_mb_s=1e12",
                          "server.storage.queue_depth=64",
                          "loader.gil_transform_share=1",
                          NULL};
    const double want = 3200 * 23e-3 / 4;
    expect(sets, 0, want, 2e-3, "read-bound");
    tells_apart("the read holding a core", 3200 * 23e-3 / 2, want, 2e-3);
    tells_apart("the read holding the GIL", 3200 * (20e-3 + 2e-3), want, 2e-3);
}

/* Two training processes on one server: each has its own GIL, so two GPUs
 * prepare twice as fast as one when the GIL binds. */
static void test_gil_per_process(void **state) {
    (void)state;
    const char *sets[] = {"loader.gil_transform_share=1", "server.cpus=16", "jobs.0.gpus=2", NULL};
    const double want = 3200 * 2e-3 / 2;
    expect(sets, 1, want, 1e-3, "GIL per process");
    tells_apart("one GIL a server", 3200 * 2e-3, want, 1e-3);
}

/* The collate in the training process holds the GIL for the transform's
 * share: 1 ms of collate beside 2 ms of transform, 3 ms of GIL an item. */
static void test_collate_holds_gil(void **state) {
    (void)state;
    const char *sets[] = {"loader.gil_transform_share=1", "loader.threads_collate_ms_per_item=1",
                          "server.cpus=16", NULL};
    expect(sets, 1, 3200 * 3e-3, 2e-3, "collate under the GIL");
}

/* The training step (jobs.N.train_cpu_ms) is Python in the same process:
 * 32 ms a batch of 32 holds the GIL 1 ms an item beside the transform's 2. */
static void test_step_holds_gil(void **state) {
    (void)state;
    const char *sets[] = {"loader.gil_transform_share=1", "jobs.0.train_cpu_ms=32",
                          "server.cpus=16", NULL};
    const double want = 3200 * 3e-3;
    expect(sets, 1, want, 2e-3, "step under the GIL");
    tells_apart("the step beside the GIL", 3200 * 2e-3, want, 2e-3);
}

/* The loop's thread takes its GIL back loader.gil_reacquires_per_batch
 * times a step, each a switch interval times the pool's share of the GIL
 * while it works, serial with the step: a GPU of 200 ms a batch, the pool
 * far ahead of it (64 ms a batch). GIL-bound (transform held: 500 items/s
 * at 2 ms held) the pool holds it all the time: 10 x 5 ms a step. On 1
 * thread (3 ms an item, 1 of it held) it holds it a third of the time.
 * The epoch waits for its first batch's items (32 x 2 ms, x 3 ms) first. */
static void test_reacquire(void **state) {
    (void)state;
    const double steps = 3200 / 32;
    const char *busy[] = {"loader.gil_transform_share=1", "jobs.0.compute_s_per_batch=0.2",
                          "loader.gil_reacquires_per_batch=10", NULL};
    const double want = 32 * 2e-3 + steps * (0.2 + 10 * 5e-3);
    expect(busy, 1, want, 2e-3, "take-backs, the pool on the GIL");
    tells_apart("no take-back", 32 * 2e-3 + steps * 0.2, want, 2e-3);
    const char *third[] = {
        "loader.gil_transform_share=0.5",    "jobs.0.compute_s_per_batch=0.2", "loader.threads=1",
        "loader.gil_reacquires_per_batch=6", "loader.gil_switch_ms=20",        NULL};
    const double want3 = 32 * 3e-3 + steps * (0.2 + 6 * 20e-3 / 3);
    expect(third, 1, want3, 2e-3, "take-backs, the pool a third on the GIL");
    tells_apart("the pool always on the GIL", 32 * 3e-3 + steps * (0.2 + 6 * 20e-3), want3, 2e-3);
    tells_apart("the default switch interval", 32 * 3e-3 + steps * (0.2 + 6 * 5e-3 / 3), want3,
                2e-3);
    /* A free-threaded build holds no GIL: nothing to take back. */
    const char *ft[] = {"jobs.0.compute_s_per_batch=0.2", "loader.gil_reacquires_per_batch=10",
                        NULL};
    expect(ft, 1, 32 * 3e-3 / 4 + steps * 0.2, 2e-3, "take-backs without a GIL");
}

/* The training loop collates each batch itself after taking it, serial
 * with the step (the collate is in the iterator's next()): a GPU of 200 ms
 * a batch far behind the pool (32 items of 3 ms on 4 threads and 4 cores:
 * 24 ms a batch), 0.25 ms an item of collate, so every step waits 8 ms for
 * its own collate; the epoch waits for its first batch's items first. A
 * collate overlapped with the previous step (the kind before) hides all
 * but the first batch's. */
static void test_collate_serial(void **state) {
    (void)state;
    const double steps = 3200 / 32;
    const char *sets[] = {"jobs.0.compute_s_per_batch=0.2",
                          "loader.threads_collate_ms_per_item=0.25", NULL};
    const double want = 32 * 3e-3 / 4 + steps * (0.2 + 32 * 0.25e-3);
    expect(sets, 1, want, 2e-3, "collate serial with the step");
    tells_apart("the collate beside the step", 32 * 3e-3 / 4 + 32 * 0.25e-3 + steps * 0.2, want,
                2e-3);
}

/* The training process's first-epoch warm-up (loader.threads_warmup_ms):
 * a lump of CPU on a core in the loop's thread before its first step, once
 * per process; reads free. Behind a GPU of 200 ms a batch it adds itself
 * to the epoch (500 ms) and the second epoch pays none. Where the cores
 * bind (8 threads on 2, a window of 8 batches the pool keeps filling) it
 * takes 300 ms of one of them: the pool does its 9.6 s of items and the
 * 0.3 s on 2 cores. */
static void test_warmup(void **state) {
    (void)state;
    const double steps = 3200 / 32;
    const char *gpu[] = {"loader.threads_warmup_ms=500", "jobs.0.compute_s_per_batch=0.2",
                         "server.storage.latency_ms=0", "server.storage.read_mb_s=1e9", NULL};
    const double want = 32 * 3e-3 / 4 + 0.5 + steps * 0.2;
    expect(gpu, 0, want, 2e-3, "warm-up behind the GPU");
    expect(gpu, 1, 32 * 3e-3 / 4 + steps * 0.2, 2e-3, "no warm-up in the second epoch");
    tells_apart("no warm-up", 32 * 3e-3 / 4 + steps * 0.2, want, 2e-3);
    const char *cores[] = {"loader.threads_warmup_ms=300",
                           "loader.threads=8",
                           "server.cpus=2",
                           "jobs.0.prefetch_batches=8",
                           "server.storage.latency_ms=0",
                           "server.storage.read_mb_s=1e9",
                           NULL};
    const double want2 = (3200 * 3e-3 + 0.3) / 2;
    expect(cores, 0, want2, 2e-3, "warm-up beside a core-bound pool");
    tells_apart("no warm-up", 3200 * 3e-3 / 2, want2, 2e-3);
    tells_apart("the warm-up holding the pool too", 3200 * 3e-3 / 2 + 0.3, want2, 2e-3);
}

static void test_rules(void **state) {
    (void)state;
    const char *bad[][5] = {
        {"loader.gil_decode_share=1.5", NULL},
        {"loader.gil_transform_share=-0.1", NULL},
        {"loader.threads=0", NULL},
        {"loader.gil_read_ms=-1", NULL},
        {"loader.gil_reacquires_per_batch=-1", NULL},
        {"loader.gil_switch_ms=-5", NULL},
        {"loader.threads_warmup_ms=-1", NULL},
        {"loader.threads_oversub=2:0.5", NULL},
        {"loader.threads_oversub=1:1, 2:1.5", NULL},
        {"loader.prep=coordinated", "jobs.0.count=2", NULL},
        {"loader.shuffle_buffer=64", NULL},
        {"dataset.shard_items=16", NULL},
        {"prep.decode=gpu", "prep.huffman_ms_per_mb=1", "prep.gpu_decode_ms_per_mp=0.1",
         "dataset.megapixels=0.2", NULL},
        {"loader.kind=pytorch", NULL}, /* the threads keys belong to threads */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tu_build(base, bad[i], &S, &T) != EXIT_INPUT) fail_msg("accepted: %s", bad[i][0]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gil_bound),
        cmocka_unit_test(test_core_bound),
        cmocka_unit_test(test_oversubscribed),
        cmocka_unit_test(test_thread_bound),
        cmocka_unit_test(test_read_bound),
        cmocka_unit_test(test_gil_per_process),
        cmocka_unit_test(test_collate_holds_gil),
        cmocka_unit_test(test_step_holds_gil),
        cmocka_unit_test(test_reacquire),
        cmocka_unit_test(test_collate_serial),
        cmocka_unit_test(test_warmup),
        cmocka_unit_test(test_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
