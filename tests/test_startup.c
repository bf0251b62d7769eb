/* The start-up phase (startup.*, sim/kinds/startup.h) against its closed
 * forms, simulator and model alike: one resolver's LIST pages in turn and
 * its HEADs `threads` at once; N resolvers x R requests at a request-rate
 * cap take N R / cap; a device's queue depth shared by every resolver; a
 * prefix's 503s counted as throttled; no start-up without a resolver; and
 * the time to the first step is the start-up plus the first batch; a
 * restart's skip; the idle readers of a shard split. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "diag.h"
#include "kinds.h"
#include "model.h"
#include "readers.h"
#include "sim.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 4000 objects of 100 KB behind a 20 ms first byte, one server of 8 GPUs
 * with PyTorch's 4 workers a rank: 32 workers, 8 ranks. */
static const char *base =
    "epochs: 1\ndataset: {items: 4000, item_kb: 100}\n"
    "server: {cpus: 16, gpus: 8, cache_gb: 0, storage: {kind: object, first_byte_ms: 20}}\n"
    "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
    "loader: {cache: none, kind: pytorch, num_workers: 4}\n"
    "jobs: [{gpus: 8, batch_per_gpu: 32, compute_s_per_batch: 0.01}]\n";

typedef struct {
    epoch_metrics_t sim, model;
} pair_t;

static pair_t run(const char *yaml, const char *const *sets) {
    run_metrics_t m, x;
    assert_int_equal(tu_run(yaml, sets, &S, &T, &m, &x), 0);
    pair_t p = {*metrics_at(&x, 0, 0), *metrics_at(&m, 0, 0)};
    metrics_free(&m), metrics_free(&x);
    return p;
}

static void expect(const char *what, pair_t p, double want, double tol) {
    if (fabs(p.sim.startup_s - want) > tol * want || fabs(p.model.startup_s - want) > tol * want)
        fail_msg("%s: start-up sim %.6f s, model %.6f s, want %.6f s", what, p.sim.startup_s,
                 p.model.startup_s, want);
}

/* One resolver alone: 4 LIST pages of 1000 keys in turn (20 ms + 350 KB at
 * 80 MB/s each), then 4000 HEADs of 20 ms, `threads` at a time. */
static void test_one_resolver(void **state) {
    (void)state;
    const int threads[] = {1, 4, 16};
    for (int i = 0; i < 3; i++) {
        char th[64];
        snprintf(th, sizeof th, "startup.threads=%d", threads[i]);
        const char *sets[] = {"startup.resolve=one-rank", "startup.head_each=true", th, NULL};
        const double want = 4 * (0.020 + 350e3 / 80e6) + 4000 * 0.020 / threads[i];
        pair_t p = run(base, sets);
        expect(th, p, want, 0.001);
        assert_true(p.sim.startup_requests == 4004 && p.model.startup_requests == 4004);
        assert_true(p.sim.startup_throttled == 0);
    }
}

/* N resolvers x R requests at a cap of C GET/s take N R / C (the client's
 * limiter queues them: nothing refused), at every resolver count. */
static void test_rate_cap(void **state) {
    (void)state;
    const char *who[] = {"startup.resolve=one-rank", "startup.resolve=every-rank",
                         "startup.resolve=every-worker"};
    const double n[] = {1, 8, 32};
    for (int i = 0; i < 3; i++) {
        const char *sets[] = {who[i],
                              "startup.head_each=true",
                              "startup.list=false",
                              "startup.threads=64",
                              "server.storage.max_get_s=2000",
                              NULL};
        const double want = n[i] * 4000 / 2000.0;
        pair_t p = run(base, sets);
        expect(who[i], p, want, 0.01);
        assert_true(p.sim.startup_requests == n[i] * 4000);
        assert_int_equal(p.model.startup_approximate, 1);
    }
}

/* A prefix's cap answers the storm with 503s: the simulator counts them,
 * the time is at least the requests over the cap. */
static void test_prefix_refusals(void **state) {
    (void)state;
    const char *sets[] = {"startup.resolve=every-worker",
                          "startup.head_each=true",
                          "startup.list=false",
                          "startup.threads=8",
                          "server.storage.prefix_get_s=4000",
                          NULL};
    pair_t p = run(base, sets);
    const double floor_s = 32 * 4000 / 4000.0;
    assert_true(p.sim.startup_throttled > 0);
    /* every rank's worker 0 done by the last resolver's end; the closed
     * form's fair shares end together */
    assert_true(p.sim.startup_first_s > 0 && p.sim.startup_first_s <= p.sim.startup_s);
    assert_true(p.model.startup_first_s == p.model.startup_s);
    assert_true(p.sim.startup_s >= floor_s * 0.999);
    assert_true(fabs(p.model.startup_s - floor_s) < 1e-6 * floor_s);
}

/* A disk's queue depth is one device's: 32 workers x 4000 stats of 2 ms on
 * a queue of 32 take 4000 x 2 ms whatever the resolvers' threads. */
static void test_device_queue(void **state) {
    (void)state;
    static const char *disk =
        "epochs: 1\ndataset: {items: 4000, item_kb: 100}\n"
        "server: {cpus: 16, gpus: 8, cache_gb: 0,\n"
        "  storage: {kind: fixed, latency_ms: 2, read_mb_s: 500, queue_depth: 32}}\n"
        "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
        "loader: {cache: none, kind: pytorch, num_workers: 4}\n"
        "jobs: [{gpus: 8, batch_per_gpu: 32, compute_s_per_batch: 0.01}]\n";
    const char *sets[] = {"startup.resolve=every-worker", "startup.head_each=true",
                          "startup.list=false", "startup.threads=4", NULL};
    expect("queue depth 32", run(disk, sets), 32 * 4000 * 0.002 / 32, 0.02);
}

/* One rank reads a 1 MB metadata file from a disk limited to 10 MB/s
 * behind 2 ms: 2 ms + 100 ms. Under a rate limit's bucket (burst_ms) the
 * device was idle only over the first byte's 2 ms, so the bucket moves
 * 2 ms of the transfer ahead, however deep it is (semfuzz seed 3: the
 * model's bound ignored the bucket, the simulator took the 0.1 ms). */
static void test_bucket_at_launch(void **state) {
    (void)state;
    static const char *disk =
        "epochs: 1\ndataset: {items: 4000, item_kb: 100}\n"
        "server: {cpus: 16, gpus: 8, cache_gb: 0,\n"
        "  storage: {kind: fixed, latency_ms: 2, read_mb_s: 10, queue_depth: 32}}\n"
        "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
        "loader: {cache: none, kind: pytorch, num_workers: 4}\n"
        "jobs: [{gpus: 8, batch_per_gpu: 32, compute_s_per_batch: 0.01}]\n";
    const char *none[] = {"startup.resolve=one-rank", "startup.list=false", "startup.metadata_mb=1",
                          NULL};
    expect("no bucket", run(disk, none), 0.102, 1e-6);
    const char *b50[] = {"startup.resolve=one-rank", "startup.list=false", "startup.metadata_mb=1",
                         "server.storage.burst_ms=50", NULL};
    expect("a 50 ms bucket", run(disk, b50), 0.100, 1e-6);
}

/* No resolver, no start-up; the first step is still the first batch's wait,
 * and with a start-up it comes that much later. */
static void test_first_step(void **state) {
    (void)state;
    pair_t none = run(base, NULL);
    assert_true(none.sim.startup_s == 0 && none.model.startup_s == 0);
    assert_true(none.sim.startup_requests == 0);
    assert_true(none.sim.first_batch_s > 0 && none.sim.first_batch_s < none.sim.epoch_s);
    assert_true(none.model.first_batch_s > 0 && none.model.first_batch_s <= none.model.epoch_s);
    const char *sets[] = {"startup.resolve=one-rank", "startup.metadata_mb=40", NULL};
    pair_t p = run(base, sets);
    /* 4 pages, then 40 MB at one connection's 80 MB/s after its first byte */
    expect("index", p, 4 * (0.020 + 350e3 / 80e6) + 0.020 + 0.5, 0.001);
    assert_true(p.sim.first_batch_s == none.sim.first_batch_s);
    assert_true(p.sim.epoch_s == none.sim.epoch_s);
}

/* A restart by skipping reads the items before its position with no step:
 * half of 4000 items of 100 KB at 200 MB/s is 1 s; by index, nothing. */
static void test_resume(void **state) {
    (void)state;
    static const char *disk =
        "epochs: 1\ndataset: {items: 4000, item_kb: 100}\n"
        "server: {cpus: 16, gpus: 8, cache_gb: 0,\n"
        "  storage: {kind: fixed, latency_ms: 0.01, read_mb_s: 200}}\n"
        "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
        "loader: {cache: none}\n"
        "jobs: [{gpus: 8, batch_per_gpu: 32, compute_s_per_batch: 0.1}]\n";
    const char *skip[] = {"startup.resume_at=0.5", "startup.resume_by=skip", NULL};
    pair_t p = run(disk, skip);
    if (fabs(p.sim.resume_s - 1) > 0.02 || fabs(p.model.resume_s - 1) > 0.02)
        fail_msg("skip: resume sim %.6f s, model %.6f s, want 1 s", p.sim.resume_s,
                 p.model.resume_s);
    const char *index[] = {"startup.resume_at=0.5", "startup.resume_by=index", NULL};
    pair_t q = run(disk, index);
    assert_true(q.sim.resume_s == 0 && q.model.resume_s == 0);
    /* the epochs are the run's own either way */
    assert_true(p.sim.epoch_s == q.sim.epoch_s && p.model.epoch_s == q.model.epoch_s);
}

/* Readers left idle: S shards over G ranks x W workers, shard i to reader
 * i mod GW: max(0, GW - S) idle, the busiest ceil(S / GW); the pool's
 * lanes (one stream) are never split. */
static void test_idle_readers(void **state) {
    (void)state;
    const int shards[] = {1, 3, 16, 64, 100}, workers[] = {1, 4, 8}, gpus[] = {1, 8};
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 2; c++) {
                char items[64], w[64], g[64];
                snprintf(items, sizeof items, "dataset.items=%d", shards[a] * 100);
                snprintf(w, sizeof w, "loader.num_workers=%d", workers[b]);
                snprintf(g, sizeof g, "jobs.0.gpus=%d", gpus[c]);
                const char *sets[] = {items,
                                      w,
                                      g,
                                      "dataset.shard_items=100",
                                      "loader.kind=pytorch",
                                      "jobs.0.batch_per_gpu=1",
                                      NULL};
                assert_int_equal(tu_build(base, sets, &S, &T), 0);
                readers_split_t r;
                assert_int_equal(readers_split(&S, &S.jobs[0], &r), 1);
                const int64_t R = (int64_t)workers[b] * gpus[c];
                assert_true(r.shards == shards[a] && r.readers == R);
                assert_true(r.idle == (R > shards[a] ? R - shards[a] : 0));
                assert_true(r.most == (shards[a] + R - 1) / R);
            }
    const char *pool[] = {"dataset.shard_items=100", "loader.kind=pool", "loader.num_workers=0",
                          NULL};
    if (tu_build(base, pool, &S, &T) == 0) {
        readers_split_t r;
        assert_int_equal(readers_split(&S, &S.jobs[0], &r), 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_resolver),    cmocka_unit_test(test_rate_cap),
        cmocka_unit_test(test_prefix_refusals), cmocka_unit_test(test_device_queue),
        cmocka_unit_test(test_first_step),      cmocka_unit_test(test_resume),
        cmocka_unit_test(test_idle_readers),    cmocka_unit_test(test_bucket_at_launch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
