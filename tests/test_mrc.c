/* mrc: a cache-size curve from one replay against a full simulation at each
 * size. The hit rates must be identical (LRU by stack distances, MinIO by
 * its per-size replay), every epoch, for one server, a job spread over two
 * servers, two jobs on their own servers, coordinated jobs sharing a stream,
 * drop_last, unit and spread item sizes; and mrc_inexact must refuse the
 * cases whose cache order the curve does not replay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mrc.h"
#include "sim.h"
#include "testutil.h"

static const char *base =
    "epochs: 4\nseed: 7\ndataset: {items: 3000, item_kb: 100, item_kb_cv: 0.8}\n"
    "server: {cpus: 8, gpus: 2, cache_gb: 0.1}\n"
    "prep: {decode_ms_per_mb: 1, augment_ms: 0.1}\n"
    "loader: {cache: lru}\n"
    "jobs: [{gpus: 2, batch_per_gpu: 16, gpu_items_per_s: 3000}]\n";

static const char *two_jobs =
    "epochs: 3\nseed: 3\ndataset: {items: 2000, item_kb: 64, item_kb_cv: 0.5}\n"
    "server: {count: 2, cpus: 8, gpus: 2, cache_gb: 0.05}\n"
    "prep: {decode_ms_per_mb: 1, augment_ms: 0.1}\n"
    "loader: {cache: lru}\n"
    "jobs:\n"
    "  - {name: a, gpus: 2, batch_per_gpu: 8, gpu_items_per_s: 3000}\n"
    "  - {name: b, gpus: 2, batch_per_gpu: 32, gpu_items_per_s: 900}\n";

/* The cache sizes of the check, in GB: empty, tiny, around the data, above it. */
static const char *const sizes[] = {"0",    "0.003", "0.02", "0.05", "0.1",
                                    "0.15", "0.2",   "0.31", "1"};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Curve vs a full simulation at every size, for yaml with the overrides in sets. */
static void check(const char *yaml, const char *const *sets) {
    scenario_t s;
    topology_t t;
    uint64_t caps[NSIZES];
    const char *all[32];
    int n = 0;
    for (; sets && sets[n]; n++)
        all[n] = sets[n];
    char gb[64];
    for (int c = 0; c < NSIZES; c++) {
        snprintf(gb, sizeof gb, "server.cache_gb=%s", sizes[c]);
        all[n] = gb, all[n + 1] = NULL;
        assert_int_equal(tu_build(yaml, all, &s, &t), 0);
        caps[c] = (uint64_t)scenario_cache_bytes(&s);
    }
    assert_null(mrc_inexact(&s, &t));
    mrc_t m;
    assert_int_equal(mrc_run(&s, &t, caps, NSIZES, &m), 0);
    int nonzero = 0, partial = 0;
    for (int c = 0; c < NSIZES; c++) {
        snprintf(gb, sizeof gb, "server.cache_gb=%s", sizes[c]);
        all[n] = gb, all[n + 1] = NULL;
        run_metrics_t model, sim;
        assert_int_equal(tu_run(yaml, all, &s, &t, &model, &sim), 0);
        for (int i = 0; i < t.ninst; i++)
            for (int e = 0; e < s.epochs; e++) {
                double hu[MRC_STEPS];
                double h = mrc_profile(&m, &t, c, i, e, hu);
                double want = metrics_at(&sim, i, e)->hit_rate;
                if (h != want)
                    fail_msg("cache_gb %s, instance %d, epoch %d: curve %.9f, simulator %.9f",
                             sizes[c], i, e + 1, h, want);
                nonzero += h > 0;
                partial += h > 0 && h < 0.99;
                double mean = 0;
                for (int j = 0; j < MRC_STEPS; j++)
                    mean += hu[j] * m.items[(t.inst[i].stream * s.epochs + e) * MRC_STEPS + j];
                assert_true(fabs(mean / m.reads[t.inst[i].stream * s.epochs + e] - h) < 1e-12);
            }
        metrics_free(&model), metrics_free(&sim);
    }
    /* The sizes span the interesting range: hits, and partial ones. */
    assert_true(nonzero > 0);
    assert_true(partial > 0);
    mrc_free(&m);
}

static void test_lru_one_server(void **state) {
    (void)state;
    check(base, NULL);
}

static void test_lru_unit_sizes(void **state) {
    (void)state;
    const char *sets[] = {"dataset.item_kb_cv=0", NULL};
    check(base, sets);
}

static void test_minio(void **state) {
    (void)state;
    const char *sets[] = {"loader.cache=minio", NULL};
    check(base, sets);
}

static void test_lru_spread_over_servers(void **state) {
    (void)state;
    const char *sets[] = {"server.count=2", "server.gpus=1", NULL};
    check(base, sets);
}

static void test_minio_spread_over_servers(void **state) {
    (void)state;
    const char *sets[] = {"server.count=2", "server.gpus=1", "loader.cache=minio", NULL};
    check(base, sets);
}

static void test_two_jobs_own_servers(void **state) {
    (void)state;
    check(two_jobs, NULL);
}

static void test_coordinated_stream(void **state) {
    (void)state;
    const char *sets[] = {"server.count=1", "server.gpus=4", "loader.prep=coordinated",
                          "jobs.1.batch_per_gpu=8", NULL};
    check(two_jobs, sets);
}

static void test_drop_last(void **state) {
    (void)state;
    const char *sets[] = {"loader.kind=pytorch", "loader.drop_last=true", "jobs.0.batch_per_gpu=28",
                          NULL};
    check(base, sets);
}

/* A 10% sample against the exact replay of 200,000 items, at sizes from a
 * few percent of the data to all of it: each epoch's hit rate within four
 * of the sample's standard errors plus 0.2 pp (the positions' and sizes'
 * draws are the sample's own, not the simulator's). */
static void test_sampled(void **state) {
    (void)state;
    const char *cache[] = {"lru", "minio"};
    for (int p = 0; p < 2; p++) {
        char set[64], items[] = "dataset.items=200000";
        snprintf(set, sizeof set, "loader.cache=%s", cache[p]);
        const char *sets[] = {set, items, NULL};
        scenario_t s;
        topology_t t;
        assert_int_equal(tu_build(base, sets, &s, &t), 0);
        const double D = scenario_dataset_bytes(&s);
        uint64_t caps[] = {(uint64_t)(0.05 * D), (uint64_t)(0.3 * D), (uint64_t)(0.6 * D),
                           (uint64_t)(0.9 * D), (uint64_t)(1.1 * D)};
        mrc_t exact, sample;
        assert_int_equal(mrc_run(&s, &t, caps, 5, &exact), 0);
        assert_int_equal(mrc_run_sampled(&s, &t, caps, 5, 0.1, &sample), 0);
        assert_true(fabs(sample.rate - 0.1) < 0.01);
        double worst = 0;
        for (int c = 0; c < 5; c++)
            for (int e = 0; e < s.epochs; e++) {
                double hu[MRC_STEPS];
                double a = mrc_profile(&exact, &t, c, 0, e, hu);
                double b = mrc_profile(&sample, &t, c, 0, e, hu);
                double se = sqrt(a * (1 - a) / sample.reads[e]);
                if (fabs(a - b) > 4 * se + 0.002)
                    fail_msg("%s, size %d, epoch %d: exact %.5f, sampled %.5f (se %.5f)", cache[p],
                             c, e + 1, a, b, se);
                if (fabs(a - b) > worst) worst = fabs(a - b);
            }
        print_message("%s: largest sampled error %.3f pp\n", cache[p], 100 * worst);
        mrc_free(&exact), mrc_free(&sample);
    }
}

static void refused(const char *yaml, const char *const *sets) {
    scenario_t s;
    topology_t t;
    assert_int_equal(tu_build(yaml, sets, &s, &t), 0);
    assert_non_null(mrc_inexact(&s, &t));
}

static void test_refused(void **state) {
    (void)state;
    const char *fifo[] = {"loader.cache=fifo", NULL};
    refused(base, fifo);
    const char *linux_[] = {"loader.cache=linux", NULL};
    refused(base, linux_);
    const char *belady[] = {"loader.cache=belady", NULL};
    refused(base, belady);
    const char *shards[] = {"dataset.shard_items=10", NULL};
    refused(base, shards);
    /* Two partitioned jobs in one server's cache: interleaved by timing. */
    const char *shared[] = {"server.count=1", "server.gpus=4", NULL};
    refused(two_jobs, shared);
    const char *dist[] = {"server.count=2", "server.gpus=1", "loader.dist_cache=partitioned",
                          "loader.cache=minio", NULL};
    refused(base, dist);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lru_one_server),
        cmocka_unit_test(test_lru_unit_sizes),
        cmocka_unit_test(test_minio),
        cmocka_unit_test(test_lru_spread_over_servers),
        cmocka_unit_test(test_minio_spread_over_servers),
        cmocka_unit_test(test_two_jobs_own_servers),
        cmocka_unit_test(test_coordinated_stream),
        cmocka_unit_test(test_drop_last),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_sampled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
