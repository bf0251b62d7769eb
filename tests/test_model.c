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
    assert_int_equal(metrics_at(&m, 0, 0)->bottleneck, BN_IN_FLIGHT);
    metrics_free(&m);
}

/* The memory-bandwidth bound on prep cores (server.mem_gbps,
 * prep.mem_mb_per_item), worked by hand: 2 ms of prep an item, 1 GB/s and
 * 0.5 MB an item: B = 1 x 1000 x 0.002 / 0.5 = 4 effective cores. */
static void test_prep_mem_bound(void **state) {
    (void)state;
    const char *yaml = "dataset: {items: 1000, item_kb: 100}\n"
                       "server: {cpus: 8, gpus: 1}\n"
                       "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0, augment_ms: 2}\n"
                       "jobs: [{gpus: 1, gpu_items_per_s: 1000}]\n";
    prep_cores_why_t w;
    /* Neither key: linear, and the curve extrapolated at its last gain (0.5). */
    const char *none[] = {NULL};
    assert_int_equal(tu_build(yaml, none, &S, &T), 0);
    near(scenario_prep_mem_bound(&S), 0, 0);
    assert_false(scenario_prep_cores_shaped(&S));
    near(scenario_prep_cores_why(&S, 64, &w), 64, 0);
    assert_false(w.mem_bound);
    near(scenario_prep_cores_total(&S, 64, 2), 64, 0);
    const char *curve[] = {"prep.scaling=1:1, 2:2, 4:3", NULL};
    assert_int_equal(tu_build(yaml, curve, &S, &T), 0);
    near(scenario_prep_cores_why(&S, 8, &w), 5, 1e-12);
    assert_true(w.extrapolated && !w.mem_bound && w.bound == 0);
    /* One key alone bounds nothing: the other set to 0 says so. */
    const char *one[] = {"prep.scaling=1:1, 2:2, 4:3", "server.mem_gbps=1",
                         "prep.mem_mb_per_item=0", NULL};
    assert_int_equal(tu_build(yaml, one, &S, &T), 0);
    near(scenario_prep_cores(&S, 8, NULL), 5, 1e-12);

    /* Both keys, under the curve: 4 bounds the extrapolation past 4 threads. */
    const char *both[] = {"prep.scaling=1:1, 2:2, 4:3", "server.mem_gbps=1",
                          "prep.mem_mb_per_item=0.5", NULL};
    assert_int_equal(tu_build(yaml, both, &S, &T), 0);
    near(scenario_prep_mem_bound(&S), 4, 1e-12);
    assert_true(scenario_prep_cores_shaped(&S));
    near(scenario_prep_cores_why(&S, 8, &w), 4, 1e-12); /* 5 extrapolated, bound at 4 */
    assert_true(w.extrapolated && w.mem_bound);
    near(w.bound, 4, 1e-12);
    near(scenario_prep_cores_why(&S, 5, &w), 3.5, 1e-12); /* past, below the bound */
    assert_true(w.extrapolated && !w.mem_bound);
    near(scenario_prep_cores_why(&S, 3, &w), 2.5, 1e-12); /* within: as measured */
    assert_true(!w.extrapolated && !w.mem_bound);
    near(scenario_prep_cores_why(&S, 0.5, &w), 0.5, 0);
    /* The model's spread over servers: 16 cores on 2 servers, 4 + 4. */
    near(scenario_prep_cores_total(&S, 16, 2), 8, 1e-12);
    /* The bound scales with the prep's time and the bandwidth, inversely
     * with the traffic: 10 GB/s bounds at 40, beyond 8 cores' 5. */
    const char *wide[] = {"prep.scaling=1:1, 2:2, 4:3", "server.mem_gbps=10",
                          "prep.mem_mb_per_item=0.5", NULL};
    assert_int_equal(tu_build(yaml, wide, &S, &T), 0);
    near(scenario_prep_cores_why(&S, 8, &w), 5, 1e-12);
    assert_true(w.extrapolated && !w.mem_bound);
    near(w.bound, 40, 1e-9);
    /* A bound below the last measured point (2 < 3) holds the curve there:
     * the measurement stands, flat past it. */
    const char *low[] = {"prep.scaling=1:1, 2:2, 4:3", "server.mem_gbps=0.5",
                         "prep.mem_mb_per_item=0.5", NULL};
    assert_int_equal(tu_build(yaml, low, &S, &T), 0);
    near(scenario_prep_mem_bound(&S), 3, 1e-12);
    near(scenario_prep_cores_why(&S, 8, &w), 3, 1e-12);
    assert_true(w.mem_bound);
    near(scenario_prep_cores_why(&S, 4, &w), 3, 1e-12);
    assert_false(w.mem_bound);

    /* Both keys without a curve: linear up to the bound, then flat there. */
    const char *lin[] = {"server.mem_gbps=1", "prep.mem_mb_per_item=0.5", NULL};
    assert_int_equal(tu_build(yaml, lin, &S, &T), 0);
    assert_true(scenario_prep_cores_shaped(&S));
    near(scenario_prep_cores_why(&S, 64, &w), 4, 1e-12);
    assert_true(!w.extrapolated && w.mem_bound);
    near(scenario_prep_cores_why(&S, 3, &w), 3, 0);
    assert_false(w.mem_bound);
    near(scenario_prep_cores_total(&S, 64, 2), 8, 1e-12);
    /* A bound below one core stays at the one core the costs were measured on. */
    const char *tiny[] = {"server.mem_gbps=0.01", "prep.mem_mb_per_item=0.5", NULL};
    assert_int_equal(tu_build(yaml, tiny, &S, &T), 0);
    near(scenario_prep_cores(&S, 8, NULL), 1, 0);
    near(scenario_prep_cores(&S, 0.5, NULL), 0.5, 0);
    /* Prep that costs nothing moves no traffic a second: no bound. */
    const char *free_prep[] = {"server.mem_gbps=1", "prep.mem_mb_per_item=0.5", "prep.augment_ms=0",
                               NULL};
    assert_int_equal(tu_build(yaml, free_prep, &S, &T), 0);
    near(scenario_prep_mem_bound(&S), 0, 0);
    near(scenario_prep_cores(&S, 8, NULL), 8, 0);

    /* Bad values and a key given alone are refused. */
    const char *neg[] = {"server.mem_gbps=-1", "prep.mem_mb_per_item=0.5", NULL};
    const char *text[] = {"server.mem_gbps=1", "prep.mem_mb_per_item=lots", NULL};
    const char *alone_bw[] = {"server.mem_gbps=1", NULL};
    const char *alone_mb[] = {"prep.mem_mb_per_item=0.5", NULL};
    const char *huge[] = {"server.mem_gbps=1e7", "prep.mem_mb_per_item=0.5", NULL};
    const char *const *bad[] = {neg, text, alone_bw, alone_mb, huge};
    for (int i = 0; i < 5; i++)
        assert_int_equal(tu_build(yaml, bad[i], &S, &T), EXIT_INPUT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lru_formula),      cmocka_unit_test(test_minio_and_policies),
        cmocka_unit_test(test_storage_rate),     cmocka_unit_test(test_pipeline),
        cmocka_unit_test(test_hand_case),        cmocka_unit_test(test_cache_lifts_fetch),
        cmocka_unit_test(test_bottleneck_names), cmocka_unit_test(test_prep_mem_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
