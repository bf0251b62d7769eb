/* The reader's CPU per read (server.storage.cpu_us_per_read and _per_mb,
 * server.tier.cpu_us_*), against closed forms: with no prep, 2 cores and
 * reads that cost X seconds of a core each, an epoch is CPU-bound at
 * items / (2 / X), in the simulator and the model, for every loader kind
 * and wherever the read is served (storage, the tier's device, the page
 * cache; none for a hit in the loader's own memory). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 20000 items of 10 KB, 2 cores, a GPU a million items a second: at 100 us
 * a read, 2 cores read 20000 items/s, an epoch of 1 s (the GPU's 0.02 s). */
static const char *fast = "epochs: 2\ndataset: {items: 20000, item_kb: 10}\n"
                          "server: {cpus: 2, gpus: 1, cache_gb: 0, storage: {read_mb_s: 100000, "
                          "latency_ms: 0, queue_depth: 64}}\n"
                          "prep: {decode_ms_per_mb: 0, augment_ms: 0}\n"
                          "jobs: [{gpus: 1, batch_per_gpu: 32, gpu_items_per_s: 1000000}]\n";

/* Epoch 2 of the scenario, simulator and model, within 2 % of want s. */
static void expect(const char *what, const char *yaml, const char *const *sets, double want,
                   int bn) {
    run_metrics_t m, s;
    if (tu_run(yaml, sets, &S, &T, &m, &s) != 0) fail_msg("%s: does not build", what);
    const epoch_metrics_t *em = metrics_at(&m, 0, 1), *es = metrics_at(&s, 0, 1);
    if (fabs(es->epoch_s - want) > 0.02 * want || fabs(em->epoch_s - want) > 0.02 * want ||
        es->bottleneck != bn || em->bottleneck != bn)
        fail_msg("%s: sim %.4f s (bn %d), model %.4f s (bn %d), want %.4f s (bn %d)", what,
                 es->epoch_s, es->bottleneck, em->epoch_s, em->bottleneck, want, bn);
    if (bn == BN_PREP && (fabs(es->cpu_util - 1) > 0.02 || fabs(em->cpu_util - 1) > 0.02))
        fail_msg("%s: cpu_util sim %.3f, model %.3f, want 1", what, es->cpu_util, em->cpu_util);
    metrics_free(&m), metrics_free(&s);
}

/* Every loader kind charges it on its cores (their own overheads set to 0). */
static void test_loaders(void **state) {
    (void)state;
    const char *none[] = {"server.storage.cpu_us_per_read=0", NULL};
    expect("keys at 0: GPU-bound", fast, none, 0.02, BN_GPU);
    const char *pool[] = {"server.storage.cpu_us_per_read=100", NULL};
    expect("pool", fast, pool, 1.0, BN_PREP);
    const char *torch[] = {"server.storage.cpu_us_per_read=100",
                           "loader.kind=pytorch",
                           "loader.num_workers=4",
                           "loader.collate_ms_per_item=0",
                           "loader.worker_start_ms=0",
                           "loader.share_ms_per_item=0",
                           "loader.transfer_ms_per_item=0",
                           "loader.pin_ms_per_item=0",
                           "loader.step_ms=0",
                           NULL};
    expect("pytorch", fast, torch, 1.0, BN_PREP);
    const char *threads[] = {"server.storage.cpu_us_per_read=100",
                             "loader.kind=threads",
                             "loader.gil_read_ms=0",
                             "loader.gil_decode_share=0",
                             "loader.gil_transform_share=0",
                             "loader.threads_collate_ms_per_item=0",
                             NULL};
    expect("threads", fast, threads, 1.0, BN_PREP);
    const char *dali[] = {"server.storage.cpu_us_per_read=100", "loader.kind=dali", NULL};
    expect("dali", fast, dali, 1.0, BN_PREP);
}

/* Per MB: 50 us + 5000 us/MB x 0.01 MB = 100 us a read. Record shards of
 * 10 items: one read of 1000 us a shard, 100 us an item; a shard's bytes
 * cost each item its own share. */
static void test_size_and_shards(void **state) {
    (void)state;
    const char *mb[] = {"server.storage.cpu_us_per_read=50", "server.storage.cpu_us_per_mb=5000",
                        NULL};
    expect("per MB", fast, mb, 1.0, BN_PREP);
    const char *sh[] = {"server.storage.cpu_us_per_read=1000", "dataset.shard_items=10", NULL};
    expect("shards", fast, sh, 1.0, BN_PREP);
    /* Shards of 20 MB at 10000 us/MB: 0.2 s of a core a shard, its items'
     * bytes' share each as they arrive (on the shard's first item the
     * simulator read the 10 shards one after another on one core: 2.02 s). */
    const char *big[] = {"server.storage.cpu_us_per_mb=10000", "dataset.shard_items=2000", NULL};
    expect("shards, per MB", fast, big, 1.0, BN_PREP);
}

/* Epoch 2 served by a cache of the whole data set: a page-cache hit is a
 * read() and pays server.cache_cpu_us_* (not storage's figure); a hit in
 * MinIO's memory pays nothing; the tier's device pays its own figure. */
static void test_where_served(void **state) {
    (void)state;
    const char *page[] = {"server.storage.cpu_us_per_read=1000",
                          "server.cache_cpu_us_per_read=50",
                          "server.cache_cpu_us_per_mb=5000",
                          "server.cache_gb=1",
                          "loader.cache=lru",
                          NULL};
    expect("page cache (lru)", fast, page, 1.0, BN_PREP);
    const char *linux_[] = {"server.cache_cpu_us_per_read=100", "server.cache_gb=1",
                            "loader.cache=linux", NULL};
    expect("page cache (linux)", fast, linux_, 1.0, BN_PREP);
    const char *minio[] = {"server.cache_cpu_us_per_read=100", "server.cache_gb=1",
                           "loader.cache=minio", NULL};
    expect("loader's memory (minio)", fast, minio, 0.02, BN_GPU);
    const char *tier[] = {"server.storage.cpu_us_per_read=1000", "server.tier.cache_gb=1",
                          "server.tier.cpu_us_per_read=100", NULL};
    expect("tier", fast, tier, 1.0, BN_PREP);
}

/* Partitioned caching over 2 servers of 2 cores, the data set cached in
 * the two: half the hits are remote and cost their reader 200 us (100 +
 * 10000 us/MB x 0.01 MB), the local half nothing (MinIO's memory): 20000
 * items x 0.5 x 200 us = 2 s of a core, over 4 cores 0.5 s. */
static void test_remote(void **state) {
    (void)state;
    const char *two = "epochs: 2\ndataset: {items: 20000, item_kb: 10}\n"
                      "server: {count: 2, cpus: 2, gpus: 1, cache_gb: 1, network: {gbit_s: 1000},"
                      " storage: {read_mb_s: 100000, latency_ms: 0, queue_depth: 64}}\n"
                      "loader: {cache: minio, dist_cache: partitioned}\n"
                      "prep: {decode_ms_per_mb: 0, augment_ms: 0}\n"
                      "jobs: [{gpus: 2, batch_per_gpu: 32, gpu_items_per_s: 1000000}]\n";
    const char *none[] = {"server.network.cpu_us_per_read=0", NULL};
    expect("remote hits free", two, none, 0.01, BN_GPU);
    const char *remote[] = {"server.network.cpu_us_per_read=100",
                            "server.network.cpu_us_per_mb=10000", NULL};
    expect("remote hits", two, remote, 0.5, BN_PREP);
}

/* An object store: a HEAD before each GET is a request too (2 x 50 us). */
static void test_object(void **state) {
    (void)state;
    const char *obj = "epochs: 2\ndataset: {items: 20000, item_kb: 10}\n"
                      "server: {cpus: 2, gpus: 1, cache_gb: 0, storage: {kind: object, "
                      "first_byte_ms: 1, reader_threads: 256, head: true}}\n"
                      "prep: {decode_ms_per_mb: 0, augment_ms: 0}\n"
                      "jobs: [{gpus: 1, batch_per_gpu: 32, gpu_items_per_s: 1000000, "
                      "prefetch_batches: 64}]\n";
    const char *head[] = {"server.storage.cpu_us_per_read=50", NULL};
    expect("object with HEAD", obj, head, 1.0, BN_PREP);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loaders),      cmocka_unit_test(test_size_and_shards),
        cmocka_unit_test(test_where_served), cmocka_unit_test(test_object),
        cmocka_unit_test(test_remote),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
