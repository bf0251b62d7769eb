/* The analytical model against values worked out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>

#include <cmocka.h>

#include "model.h"
#include "kinds.h"
#include "testutil.h"

#define STEADY(kind, f)         model_hit_steady(cache_kind_find(kind), (f), NULL)
#define EPOCH(kind, f, p, k, e) model_hit_epoch(cache_kind_find(kind), (f), (p), (k), (e), NULL)

static scenario_t S;
static topology_t T;

#define near(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

static void test_lru_formula(void **state) {
    (void)state;
    /* f + (1 - f) ln(1 - f), evaluated by hand: */
    near(STEADY("lru", 0.25), 0.25 - 0.75 * 0.2876820725, 1e-9); /* 0.0342384 */
    near(STEADY("lru", 0.5), 0.5 - 0.5 * 0.6931471806, 1e-9);    /* 0.1534264 */
    near(STEADY("lru", 0.8), 0.8 - 0.2 * 1.6094379124, 1e-9);    /* 0.4781124 */
    near(STEADY("lru", 0), 0, 0);
    near(STEADY("lru", 1), 1, 0);
    near(STEADY("lru", 2.5), 1, 0);
}

static void test_minio_and_policies(void **state) {
    (void)state;
    int exact;
    near(model_hit_steady(cache_kind_find("minio"), 0.3, &exact), 0.3, 0);
    assert_int_equal(exact, 1);
    near(model_hit_steady(cache_kind_find("minio"), 1.7, &exact), 1.0, 0);
    near(model_hit_steady(cache_kind_find("none"), 0.9, &exact), 0, 0);
    /* The clairvoyant optimum is MinIO's C/D under reshuffling (see model.c). */
    near(STEADY("belady", 0.1), 0.1, 0);
    near(STEADY("belady", 1.5), 1, 0);
    /* Order of the policies at every f: belady = minio >= lru; fifo below C/D. */
    for (double f = 0.05; f < 1; f += 0.05) {
        near(STEADY("belady", f), model_hit_steady(cache_kind_find("minio"), f, NULL), 0);
        assert_true(f >= STEADY("lru", f));
        assert_true(STEADY("fifo", f) > 0 && STEADY("fifo", f) < f);
    }
}

static void test_storage_rate(void **state) {
    (void)state;
    int lat;
    scenario_t s = {0};
    s.server.storage.read_mb_s = 525, s.server.storage.latency_ms = 0.1;
    s.server.storage.queue_depth = 32;
    const storage_ops_t *fixed = scenario_storage(&s);
    assert_string_equal(fixed->name, "fixed");
    /* 525 MB/s, 110 KB items: bandwidth-bound at 525e6 / 110e3 = 4772.7 items/s. */
    near(fixed->items_s(&s, 110e3, &lat), 525e6 / 110e3, 1e-6);
    assert_int_equal(lat, 0);
    /* One request in flight: 1 / (0.1 ms + 110e3 / 525e6 s) = 3230.8 items/s. */
    s.server.storage.queue_depth = 1;
    near(fixed->items_s(&s, 110e3, &lat), 1 / (1e-4 + 110e3 / 525e6), 1e-6);
    assert_int_equal(lat, 1);
}

static void test_pipeline(void **state) {
    (void)state;
    /* Loader-bound: N/P + last batch. GPU-bound: first batch + all compute. */
    near(model_pipeline_s(1000, 50, 10, 10, 0.1), 20.1, 1e-12);
    near(model_pipeline_s(1000, 200, 10, 10, 0.1), 10.05, 1e-12);
}

/* N = 1000 items of 10 KB, one GPU at 100 items/s in batches of 10 (0.1 s
 * each, T_gpu = 10 s); 2 cores at 10 ms an item (200 items/s); storage at
 * 0.5 MB/s = 50 items/s, no cache. By hand: T = 1000/50 + 0.1 = 20.1 s,
 * T_prep = 10/200 + 10 = 10.05 s: prep stall 0.05 s, fetch stall 10.05 s. */
static const char *hand =
    "epochs: 2\ndataset: {items: 1000, item_kb: 10}\n"
    "server: {cpus: 2, gpus: 1, storage: {read_mb_s: 0.5, latency_ms: 0, queue_depth: 4}}\n"
    "prep: {decode_ms_per_mb: 0, augment_ms: 10}\nloader: {cache: none}\n"
    "jobs: [{gpus: 1, batch_per_gpu: 10, gpu_items_per_s: 100}]\n";

static void test_hand_case(void **state) {
    (void)state;
    run_metrics_t m;
    assert_int_equal(tu_run(hand, NULL, &S, &T, &m, NULL), 0);
    for (int e = 0; e < 2; e++) {
        const epoch_metrics_t *x = metrics_at(&m, 0, e);
        near(x->t_gpu_s, 10, 1e-9);
        near(x->epoch_s, 20.1, 1e-9);
        near(x->t_prep_s, 10.05, 1e-9);
        near(x->prep_stall_s, 0.05, 1e-9);
        near(x->fetch_stall_s, 10.05, 1e-9);
        near(x->gpu_util, 10 / 20.1, 1e-9);
        near(x->hit_rate, 0, 0);
        near(x->storage_read_bytes, 1e7, 1e-3);
        assert_int_equal(x->bottleneck, BN_STORAGE_BW);
    }
    metrics_free(&m);
}

static void test_cache_lifts_fetch(void **state) {
    (void)state;
    /* A MinIO cache of half the data halves the misses from epoch 2 on:
     * storage then serves 100 items/s of demand -> still the bottleneck, T = 1000/100 + 0.1. */
    const char *sets[] = {"loader.cache=minio", "server.cache_gb=0.005", NULL};
    run_metrics_t m;
    assert_int_equal(tu_run(hand, sets, &S, &T, &m, NULL), 0);
    near(metrics_at(&m, 0, 0)->epoch_s, 20.1, 1e-9);
    near(metrics_at(&m, 0, 1)->hit_rate, 0.5, 1e-12);
    near(metrics_at(&m, 0, 1)->epoch_s, 10.1, 1e-9);
    metrics_free(&m);
}

static void test_bottleneck_names(void **state) {
    (void)state;
    run_metrics_t m;
    const char *gpu[] = {"loader.cache=none", "server.storage.read_mb_s=1000", NULL};
    assert_int_equal(tu_run(hand, gpu, &S, &T, &m, NULL), 0);
    assert_int_equal(metrics_at(&m, 0, 0)->bottleneck, BN_GPU);
    metrics_free(&m);
    const char *prep[] = {"server.storage.read_mb_s=1000", "prep.augment_ms=100", NULL};
    assert_int_equal(tu_run(hand, prep, &S, &T, &m, NULL), 0);
    assert_int_equal(metrics_at(&m, 0, 0)->bottleneck, BN_PREP);
    metrics_free(&m);
    const char *lat[] = {"server.storage.latency_ms=100", "server.storage.read_mb_s=1000", NULL};
    assert_int_equal(tu_run(hand, lat, &S, &T, &m, NULL), 0);
    assert_int_equal(metrics_at(&m, 0, 0)->bottleneck, BN_STORAGE_LATENCY);
    metrics_free(&m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lru_formula),      cmocka_unit_test(test_minio_and_policies),
        cmocka_unit_test(test_storage_rate),     cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_hand_case),        cmocka_unit_test(test_cache_lifts_fetch),
        cmocka_unit_test(test_bottleneck_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
