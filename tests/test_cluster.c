/* Many jobs and many servers: exact cases worked by hand, conservation per
 * job and per server, the shared- and spread-cache closed forms against the
 * simulator, partitioned caching, and model-vs-simulator agreement within 2%
 * in single-bottleneck regimes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "kinds.h"
#include "testutil.h"

#define STEADY(kind, f)         model_hit_steady(cache_kind_find(kind), (f), NULL)
#define EPOCH(kind, f, p, k, e) model_hit_epoch(cache_kind_find(kind), (f), (p), (k), (e), NULL)

static scenario_t S;
static topology_t T;

static void free2(run_metrics_t *a, run_metrics_t *b) {
    metrics_free(a);
    metrics_free(b);
}

/* Two jobs share one coordinated stream of 4 batches that costs nothing to
 * load; fast computes 1 s a batch, slow 2 s, one batch may be staged ahead.
 * slow: batches start at 0, 2, 4, 6 and end at 8. fast may run one batch
 * ahead of slow: it starts batch k when slow starts batch k-1, i.e. at 0, 1,
 * 2, 4, and ends at 5 after 4 s of compute: 1 s of lock-step wait. */
static const char *lockstep =
    "epochs: 2\ndataset: {items: 8, item_kb: 100}\n"
    "server: {cpus: 4, gpus: 2, cache_gb: 0, storage: {read_mb_s: 1e9, latency_ms: 0}}\n"
    "prep: {decode_ms_per_mb: 0, augment_ms: 0}\n"
    "loader: {cache: none, prep: coordinated}\n"
    "jobs:\n"
    "  - {name: fast, gpus: 1, batch_per_gpu: 2, compute_s_per_batch: 1, prefetch_batches: 1}\n"
    "  - {name: slow, gpus: 1, batch_per_gpu: 2, compute_s_per_batch: 2, prefetch_batches: 1}\n";

static void test_lockstep_by_hand(void **state) {
    (void)state;
    run_metrics_t m, s;
    assert_int_equal(tu_run(lockstep, NULL, &S, &T, &m, &s), 0);
    const double want_epoch[] = {5, 8}, want_gpu[] = {4, 8};
    for (int i = 0; i < 2; i++)
        for (int e = 0; e < 2; e++) {
            const run_metrics_t *r[] = {&m, &s};
            for (int k = 0; k < 2; k++) {
                const epoch_metrics_t *x = metrics_at(r[k], i, e);
                /* The second epoch starts when both jobs have ended the first. */
                assert_true(fabs(x->epoch_s - want_epoch[i]) < 1e-6);
                assert_true(fabs(x->t_gpu_s - want_gpu[i]) < 1e-9);
            }
            assert_true(metrics_at(&s, i, e)->items_consumed == 8);
        }
    /* One stream: each item fetched and prepped once per epoch, not per job. */
    for (int e = 0; e < 2; e++) {
        assert_true(server_at(&s, 0, e)->accesses == 8);
        assert_true(metrics_at(&s, 0, e)->items_prepped == 8);
        assert_true(server_at(&s, 0, e)->staged_bytes == 1 * 2 * 602.112e3);
    }
    free2(&m, &s);
}

/* Two servers of one GPU each, one job over both, 4 items of 100 KB, and a
 * MinIO cache of one item per server shared by partitioned caching. Epoch 1
 * misses all 4 and each server keeps the first item it read; from then on the
 * union holds 2 of the 4 items and every item is read once an epoch, so
 * exactly 2 hits (local or remote) and 2 storage reads per epoch. */
static const char *tiny_dist = "epochs: 3\ndataset: {items: 4, item_kb: 100}\n"
                               "server: {count: 2, cpus: 2, gpus: 1, cache_gb: 0.0001}\n"
                               "loader: {cache: minio, dist_cache: partitioned}\n"
                               "jobs: [{gpus: 2, batch_per_gpu: 1, gpu_items_per_s: 100}]\n";

static void test_partitioned_by_hand(void **state) {
    (void)state;
    run_metrics_t m, s;
    assert_int_equal(tu_run(tiny_dist, NULL, &S, &T, &m, &s), 0);
    for (int e = 0; e < 3; e++) {
        const epoch_metrics_t *x = metrics_at(&s, 0, e);
        double reads = 0, hits = 0, net_in = 0, net_out = 0;
        for (int v = 0; v < 2; v++) {
            const server_metrics_t *sv = server_at(&s, v, e);
            reads += sv->storage_reads;
            hits += sv->local_hits + sv->remote_hits;
            net_in += sv->net_in_bytes, net_out += sv->net_out_bytes;
            assert_true(sv->accesses == 2);
            assert_true(sv->remote_hits * 1e5 == sv->net_in_bytes);
        }
        assert_true(reads == (e == 0 ? 4 : 2));
        assert_true(hits == (e == 0 ? 0 : 2));
        assert_true(x->storage_reads == reads);
        assert_true(net_in == net_out);
        assert_true(fabs(x->hit_rate - metrics_at(&m, 0, e)->hit_rate) < 1e-12);
    }
    free2(&m, &s);
}

/* Four partitioned jobs on one server: each trains on every item once an
 * epoch, preps its own copy, and the cache sees four streams. */
static const char *four = "epochs: 2\ndataset: {items: 50000, item_kb: 100, item_kb_cv: 0.5}\n"
                          "server: {cpus: 16, gpus: 4, cache_gb: 1.5}\n"
                          "jobs: [{count: 4, gpus: 1, batch_per_gpu: 64, gpu_items_per_s: 900}]\n";

static void test_each_job_every_item(void **state) {
    (void)state;
    run_metrics_t m, s;
    assert_int_equal(tu_run(four, NULL, &S, &T, &m, &s), 0);
    const double n = 50000;
    for (int e = 0; e < 2; e++) {
        double reads = 0;
        for (int i = 0; i < 4; i++) {
            const epoch_metrics_t *x = metrics_at(&s, i, e);
            assert_true(x->items_consumed == n);
            assert_true(x->items_prepped == n);
            assert_true(x->storage_reads + llround(x->hit_rate * n) == n);
            reads += x->storage_reads;
        }
        const server_metrics_t *sv = server_at(&s, 0, e);
        assert_true(sv->accesses == 4 * n);
        assert_true(sv->storage_reads == reads);
        assert_true(sv->local_hits + sv->storage_reads == 4 * n);
    }
    free2(&m, &s);
}

/* Coordinated prep on two servers with two single-GPU jobs each: one stream
 * per server, so every item is fetched and prepped once per server per epoch. */
static const char *coord2 =
    "epochs: 2\ndataset: {items: 30000, item_kb: 100, item_kb_cv: 0.5}\n"
    "server: {count: 2, cpus: 8, gpus: 2, cache_gb: 1}\n"
    "loader: {cache: minio, prep: coordinated}\n"
    "jobs: [{count: 4, gpus: 1, batch_per_gpu: 32, gpu_items_per_s: 800}]\n";

static void test_coordinated_once_per_server(void **state) {
    (void)state;
    run_metrics_t m, s;
    assert_int_equal(tu_run(coord2, NULL, &S, &T, &m, &s), 0);
    for (int e = 0; e < 2; e++) {
        for (int v = 0; v < 2; v++) {
            const server_metrics_t *sv = server_at(&s, v, e);
            assert_true(sv->accesses == 30000);
            assert_true(sv->local_hits + sv->storage_reads == 30000);
        }
        for (int i = 0; i < 4; i++) {
            assert_true(metrics_at(&s, i, e)->items_prepped == 30000);
            assert_true(metrics_at(&s, i, e)->items_consumed == 30000);
        }
    }
    free2(&m, &s);
}

/* Each server's MinIO cache holds 55% of the data: together they hold it
 * all, so after epoch 1 nothing is read from storage. */
static void test_partitioned_aggregate_holds_all(void **state) {
    (void)state;
    const char *y = "epochs: 3\ndataset: {items: 100000, item_kb: 100, item_kb_cv: 0.6}\n"
                    "server: {count: 2, cpus: 16, gpus: 4, cache_gb: 5.5}\n"
                    "loader: {cache: minio, dist_cache: partitioned}\n"
                    "jobs: [{gpus: 8, batch_per_gpu: 64, gpu_items_per_s: 900}]\n";
    run_metrics_t m, s;
    assert_int_equal(tu_run(y, NULL, &S, &T, &m, &s), 0);
    assert_true(metrics_at(&s, 0, 0)->storage_reads == 100000);
    for (int e = 1; e < 3; e++) {
        assert_true(metrics_at(&s, 0, e)->storage_reads == 0);
        assert_true(metrics_at(&m, 0, e)->storage_read_bytes == 0);
        for (int v = 0; v < 2; v++)
            assert_true(server_at(&s, v, e)->storage_read_bytes == 0);
        /* Half the hits come over the network, as the model says. */
        assert_true(fabs(metrics_at(&s, 0, e)->remote_hit_rate - 0.5) < 0.01);
    }
    free2(&m, &s);
}

/* k in-step streams through one LRU cache: the simulator against
 * f + (1-f) ln(1-f) / k in steady state and f (k-1) / k in the cold epoch. */
static void test_shared_lru_closed_form(void **state) {
    (void)state;
    const char *y = "epochs: 3\ndataset: {items: 200000, item_kb: 100}\n"
                    "server: {cpus: 64, gpus: 4, cache_gb: 6}\n"
                    "jobs: [{count: 4, gpus: 1, batch_per_gpu: 64, gpu_items_per_s: 3000}]\n";
    run_metrics_t m, s;
    assert_int_equal(tu_run(y, NULL, &S, &T, &m, &s), 0);
    double f = 0.3, k = 4;
    double cold = f * (k - 1) / k, steady = f + (1 - f) * log(1 - f) / k;
    assert_true(fabs(EPOCH("lru", f, 1, 4, 0) - cold) < 1e-9);
    assert_true(fabs(EPOCH("lru", f, 1, 4, 2) - steady) < 1e-9);
    for (int i = 0; i < 4; i++)
        for (int e = 0; e < 3; e++) {
            double h = metrics_at(&s, i, e)->hit_rate, want = e ? steady : cold;
            if (fabs(h - want) > 0.005)
                fail_msg("job %d epoch %d: sim %.4f, closed form %.4f", i, e + 1, h, want);
        }
    free2(&m, &s);
}

/* One server's share (p = 1/2) of a job over two servers, LRU, for a cache
 * smaller and larger than that share: per epoch, against the closed form. */
static void test_spread_lru_closed_form(void **state) {
    (void)state;
    const double fs[] = {0.3, 0.7};
    for (int c = 0; c < 2; c++) {
        char yaml[512];
        snprintf(yaml, sizeof yaml,
                 "epochs: 4\ndataset: {items: 200000, item_kb: 100}\n"
                 "server: {count: 2, cpus: 64, gpus: 4, cache_gb: %g}\n"
                 "jobs: [{gpus: 8, batch_per_gpu: 64, gpu_items_per_s: 3000}]\n",
                 fs[c] * 20);
        run_metrics_t m, s;
        assert_int_equal(tu_run(yaml, NULL, &S, &T, &m, &s), 0);
        for (int e = 0; e < 4; e++)
            for (int v = 0; v < 2; v++) {
                const server_metrics_t *sv = server_at(&s, v, e);
                double h = sv->local_hits / sv->accesses, want = EPOCH("lru", fs[c], 0.5, 1, e);
                if (fabs(h - want) > 0.005)
                    fail_msg("f=%.1f server %d epoch %d: sim %.4f, closed form %.4f", fs[c], v,
                             e + 1, h, want);
            }
        free2(&m, &s);
    }
}

static void check_agree(const char *name, const char *yaml, const char *const *sets, int want_bn) {
    run_metrics_t m, s;
    assert_int_equal(tu_run(yaml, sets, &S, &T, &m, &s), 0);
    for (int i = 0; i < T.ninst; i++)
        for (int e = 0; e < S.epochs; e++) {
            const epoch_metrics_t *a = metrics_at(&m, i, e), *b = metrics_at(&s, i, e);
            double d = (b->epoch_s - a->epoch_s) / a->epoch_s;
            if (fabs(d) > 0.02)
                fail_msg("%s job %d epoch %d: sim %.2f s, model %.2f s (%+.2f%%)", name, i, e + 1,
                         b->epoch_s, a->epoch_s, 100 * d);
            if (fabs(b->hit_rate - a->hit_rate) > 0.01)
                fail_msg("%s job %d epoch %d: hit sim %.4f, model %.4f", name, i, e + 1,
                         b->hit_rate, a->hit_rate);
        }
    const epoch_metrics_t *last = metrics_at(&m, 0, (int)S.epochs - 1);
    if (last->bottleneck != want_bn)
        fail_msg("%s: model bottleneck %d, want %d", name, last->bottleneck, want_bn);
    free2(&m, &s);
}

static const char *hp = "epochs: 3\ndataset: {items: 100000, item_kb: 110, item_kb_cv: 0.6}\n"
                        "server: {cpus: 8, gpus: 4, cache_gb: 5.5}\n"
                        "prep: {decode_ms_per_mb: 20, augment_ms: 0.9}\n"
                        "jobs: [{count: 4, gpus: 1, batch_per_gpu: 128, gpu_items_per_s: 2000}]\n";

static const char *ms = "epochs: 3\ndataset: {items: 100000, item_kb: 370, item_kb_cv: 0.6}\n"
                        "server: {count: 2, cpus: 24, gpus: 8, cache_gb: 22}\n"
                        "prep: {decode_ms_per_mb: 20, augment_ms: 0.9}\n"
                        "jobs: [{gpus: 16, batch_per_gpu: 64, gpu_items_per_s: 700}]\n";

static void test_cluster_regimes(void **state) {
    (void)state;
    /* Prep-bound: 2 cores per job, LRU shared by 4 streams. */
    const char *prep[] = {"server.storage.read_mb_s=5000", NULL};
    check_agree("4 jobs prep-bound", hp, prep, BN_PREP);
    /* 8 cores over 3 jobs: 2.67 cores each, not 2. */
    const char *frac[] = {"server.storage.read_mb_s=5000", "jobs.count=3", NULL};
    check_agree("3 jobs on 8 cores prep-bound", hp, frac, BN_PREP);
    /* One job, clairvoyant cache, storage-bound: its hits come first in each epoch. */
    const char *belady[] = {"jobs.count=1", "loader.cache=belady", "server.cpus=32",
                            "server.storage.read_mb_s=150", NULL};
    check_agree("1 job belady storage-bound", hp, belady, BN_STORAGE_BW);
    /* Storage-bound: 4 streams' misses on one 150 MB/s device. */
    const char *stor[] = {"server.storage.read_mb_s=150", "server.cpus=32", NULL};
    check_agree("4 jobs storage-bound", hp, stor, BN_STORAGE_BW);
    /* Coordinated, GPU-bound: one stream on all cores. */
    const char *coord[] = {"loader.prep=coordinated", "loader.cache=minio", "server.cpus=24",
                           "server.storage.read_mb_s=5000", NULL};
    check_agree("4 jobs coordinated gpu-bound", hp, coord, BN_GPU);
    /* Two servers, local LRU, each with its own SSD. */
    check_agree("2 servers local lru", ms, NULL, BN_STORAGE_BW);
    /* Two servers sharing one storage (NFS): half the bandwidth each. */
    const char *shared[] = {"server.storage.shared=true", "server.storage.read_mb_s=1000", NULL};
    check_agree("2 servers shared storage", ms, shared, BN_STORAGE_BW);
    /* Partitioned MinIO over a slow network: remote hits bound the loader. */
    const char *net[] = {"loader.cache=minio", "loader.dist_cache=partitioned",
                         "server.network.gbit_s=2", "server.cache_gb=20", NULL};
    check_agree("2 servers partitioned, network-bound", ms, net, BN_NETWORK);
}

static void test_refusals(void **state) {
    (void)state;
    /* A clairvoyant policy has no single order to follow under 4 streams. */
    const char *belady[] = {"loader.cache=belady", NULL};
    assert_int_equal(tu_build(four, belady, &S, &T), EXIT_INPUT);
    const char *belady_coord[] = {"loader.cache=belady", "loader.prep=coordinated", NULL};
    assert_int_equal(tu_build(four, belady_coord, &S, &T), 0);
    /* 1 MB of staging holds no batch of 64 x 602 KB. */
    const char *staging[] = {"loader.prep=coordinated", "loader.staging_mb=1", NULL};
    assert_int_equal(tu_build(four, staging, &S, &T), EXIT_INPUT);
}

/* The staging budget bounds the batches prepared ahead, measured. */
static void test_staging_bound(void **state) {
    (void)state;
    const char *sets[] = {"loader.prep=coordinated", "loader.cache=minio", "loader.staging_mb=135",
                          NULL}; /* 3.5 batches of 38.5 MB */
    run_metrics_t m, s;
    assert_int_equal(tu_run(four, sets, &S, &T, &m, &s), 0);
    double batch = 64 * 602.112e3;
    for (int e = 0; e < 2; e++) {
        assert_true(metrics_at(&s, 0, e)->staged_bytes == 3 * batch);
        assert_true(metrics_at(&m, 0, e)->staged_bytes == 3 * batch);
        assert_true(server_at(&s, 0, e)->staged_bytes == 3 * batch);
    }
    free2(&m, &s);
}

/* One storage shared by the two servers of one job: the model's storage
 * utilisation is that of the one device, as the simulator's (it once
 * divided by the servers: 0.5 where the simulator said 1.0). */
static void test_shared_storage_util(void **state) {
    (void)state;
    static const char *yaml =
        "epochs: 2\ndataset: {items: 20000, item_kb: 200}\n"
        "server: {count: 2, cpus: 16, gpus: 1, cache_gb: 0,\n"
        "         storage: {read_mb_s: 100, latency_ms: 0.1, queue_depth: 8, shared: true}}\n"
        "prep: {decode_ms_per_mb: 1, augment_ms: 0}\n"
        "loader: {cache: none}\n"
        "jobs: [{name: j, gpus: 2, batch_per_gpu: 32, gpu_items_per_s: 1e6}]\n";
    run_metrics_t m, s;
    assert_int_equal(tu_run(yaml, NULL, &S, &T, &m, &s), 0);
    for (int e = 0; e < 2; e++) {
        double mu = metrics_at(&m, 0, e)->storage_util, su = metrics_at(&s, 0, e)->storage_util;
        /* Storage-bound: the one device is busy all the time. */
        assert_true(su > 0.97 && su <= 1.0 + 1e-9);
        assert_true(fabs(mu - su) < 0.02);
    }
    free2(&m, &s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lockstep_by_hand),
        cmocka_unit_test(test_partitioned_by_hand),
        cmocka_unit_test(test_each_job_every_item),
        cmocka_unit_test(test_coordinated_once_per_server),
        cmocka_unit_test(test_partitioned_aggregate_holds_all),
        cmocka_unit_test(test_shared_lru_closed_form),
        cmocka_unit_test(test_spread_lru_closed_form),
        cmocka_unit_test(test_cluster_regimes),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_staging_bound),
        cmocka_unit_test(test_shared_storage_util),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
