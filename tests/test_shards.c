/* Record shards (dataset.shard_items) against closed forms: one request a
 * shard, whole; PyTorch's workers each streaming their own shards; the
 * pool's open shards as requests in flight; the cache holding whole shards
 * (LRU's and MinIO's hit rates over shards); how many shards a batch mixes;
 * and the rules. */
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
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 3200 items of 100 KB in shards of 32 (3.2 MB), an object store with a
 * 10 ms first byte and 10 MB/s a connection: a shard takes 0.33 s. */
static const char *base = "epochs: 1\ndataset: {items: 3200, item_kb: 100, shard_items: 32}\n"
                          "server: {cpus: 16, gpus: 1, cache_gb: 0,\n"
                          "  storage: {kind: object, first_byte_ms: 10, conn_mb_s: 10}}\n"
                          "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
                          "loader: {cache: none}\n"
                          "jobs: [{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.001}]\n";

typedef struct {
    double sim, model, reqs_sim, reqs_model, bytes, mix, hit_sim, hit_model;
    int approx;
} result_t;

static result_t run(const char *yaml, const char *const *sets, int epoch) {
    run_metrics_t m, s;
    assert_int_equal(tu_run(yaml, sets, &S, &T, &m, &s), 0);
    const epoch_metrics_t *a = metrics_at(&s, 0, epoch), *b = metrics_at(&m, 0, epoch);
    result_t r = {
        a->epoch_s,          b->epoch_s,  a->storage_reads, b->storage_reads, a->storage_read_bytes,
        a->shards_per_batch, a->hit_rate, b->hit_rate,      b->approximate};
    metrics_free(&m), metrics_free(&s);
    return r;
}

/* One whole-shard request per shard: 100 requests of 3.2 MB. */
static void test_requests(void **state) {
    (void)state;
    result_t r = run(base, (const char *[]){NULL}, 0);
    assert_true(r.reqs_sim == 100);
    assert_true(fabs(r.reqs_model - 100) < 1e-9);
    assert_true(r.bytes == 320e6);
    /* 3210 items: the last shard holds 10. */
    const char *odd[] = {"dataset.items=3210", NULL};
    assert_true(run(base, odd, 0).reqs_sim == 101);
}

/* PyTorch's W workers stream their own shards: worker w reads shards w,
 * w + W, ...; each batch is one shard (32 = 32), so each worker's 25 shards
 * take 25 x 0.33 s. Simulator and model within 1%. */
static void test_pytorch_workers(void **state) {
    (void)state;
    const char *sets[] = {"loader.kind=pytorch",           "loader.num_workers=4",
                          "loader.collate_ms_per_item=0",  "loader.share_ms_per_item=0",
                          "loader.transfer_ms_per_item=0", "loader.step_ms=0",
                          "loader.worker_start_ms=0",      NULL};
    result_t r = run(base, sets, 0);
    double want = 25 * (0.010 + 3.2 / 10) + 0.001;
    if (fabs(r.sim - want) > 0.01 * want || fabs(r.model - want) > 0.01 * want)
        fail_msg("pytorch shards: sim %.4f, model %.4f, want %.4f", r.sim, r.model, want);
    assert_true(fabs(r.mix - 1) < 1e-9); /* a worker's batch: its one shard */
}

/* 10 shards over 4 workers: two workers read 3, two read 2, and a
 * DataLoader over an IterableDataset takes batches from the workers that
 * still have data: the epoch is the busiest worker's 3 shards (the model,
 * with the workers even, says less and is marked approximate). */
static void test_uneven_workers(void **state) {
    (void)state;
    const char *yaml = "epochs: 1\ndataset: {items: 640, item_kb: 100, shard_items: 64}\n"
                       "server: {cpus: 16, gpus: 1, cache_gb: 0,\n"
                       "  storage: {kind: object, first_byte_ms: 50, conn_mb_s: 1e6}}\n"
                       "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 3.6, augment_ms: 0}\n"
                       "loader: {cache: none, kind: pytorch, num_workers: 4,\n"
                       "  collate_ms_per_item: 0, share_ms_per_item: 0, transfer_ms_per_item: 0,\n"
                       "  step_ms: 0, worker_start_ms: 0}\n"
                       "jobs: [{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.001}]\n";
    result_t r = run(yaml, (const char *[]){NULL}, 0);
    double want = 3 * (0.050 + 64 * 0.0036) + 0.001;
    if (fabs(r.sim - want) > 0.02 * want) fail_msg("uneven: sim %.4f, want %.4f", r.sim, want);
    assert_int_equal(r.approx, 1);
}

/* The pool with 20 open shards, 20 connections and a window wide enough:
 * 20 requests in flight, the 100 shards in 5 waves of 0.33 s. The model's
 * figure for the pool's lanes is an estimate (marked approximate). */
static void test_pool_lanes(void **state) {
    (void)state;
    const char *sets[] = {"loader.open_shards=20", "server.storage.reader_threads=20",
                          "jobs.0.prefetch_batches=64", NULL};
    result_t r = run(base, sets, 0);
    double want = 5 * (0.010 + 3.2 / 10);
    if (fabs(r.sim - want) > 0.03 * want || fabs(r.model - want) > 0.03 * want)
        fail_msg("pool lanes: sim %.4f, model %.4f, want %.4f", r.sim, r.model, want);
    assert_int_equal(r.approx, 1);
    assert_true(r.mix > 16 && r.mix <= 20); /* 32 items from 20 lanes in turn */
    /* One lane and a window of 2 batches of one shard each: 2 in flight. */
    const char *one[] = {NULL};
    r = run(base, one, 0);
    want = 100 * (0.010 + 3.2 / 10) / 2;
    if (fabs(r.sim - want) > 0.02 * want) fail_msg("one lane: sim %.4f, want %.4f", r.sim, want);
    assert_true(fabs(r.mix - 1) < 1e-9);
}

/* The cache holds whole shards: over 1000 shards, reshuffled each epoch,
 * LRU at half the data hits f + (1 - f) ln(1 - f) = 15.3% of them from epoch
 * 2 (the model's closed form), MinIO half. */
static void test_cache_shards(void **state) {
    (void)state;
    const char *yaml = "epochs: 2\ndataset: {items: 32000, item_kb: 100, shard_items: 32}\n"
                       "server: {cpus: 16, gpus: 1, cache_gb: 1.6}\n"
                       "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.001, augment_ms: 0}\n"
                       "jobs: [{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.0001}]\n";
    const char *lru[] = {"loader.cache=lru", NULL};
    result_t r = run(yaml, lru, 1);
    double want = 0.5 + 0.5 * log(0.5);
    if (fabs(r.hit_sim - want) > 0.03 || fabs(r.hit_model - want) > 1e-6)
        fail_msg("lru over shards: sim %.4f, model %.4f, want %.4f", r.hit_sim, r.hit_model, want);
    const char *minio[] = {"loader.cache=minio", NULL};
    r = run(yaml, minio, 1);
    if (fabs(r.hit_sim - 0.5) > 0.002) fail_msg("minio over shards: sim %.4f", r.hit_sim);
    /* Hits are whole shards: the bytes read are the misses' shards. */
    assert_true(fabs(r.bytes - (1 - r.hit_sim) * 3.2e9) < 1);
}

/* A shuffle buffer of B items: the GPUs first wait for it to fill (loose
 * files at 800 a second, GPU-bound at 0.2 s a batch: B = 3200 adds 4 s to
 * the 20 s of compute), and a batch then mixes more shards. */
static void test_shuffle_buffer(void **state) {
    (void)state;
    const char *loose = "epochs: 1\ndataset: {items: 3200, item_kb: 100}\n"
                        "server: {cpus: 16, gpus: 1, cache_gb: 0,\n"
                        "  storage: {kind: object, first_byte_ms: 10, conn_mb_s: 10}}\n"
                        "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
                        "loader: {cache: none}\n"
                        "jobs: [{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.2}]\n";
    const char *fill[] = {"loader.shuffle_buffer=3200", NULL};
    result_t r = run(loose, fill, 0);
    if (fabs(r.sim - 24) > 0.01 * 24 || fabs(r.model - 24) > 0.01 * 24)
        fail_msg("buffer fill: sim %.4f, model %.4f, want 24", r.sim, r.model);
    assert_int_equal(r.approx, 1);
    double mix[3];
    const char *bs[] = {"loader.shuffle_buffer=0", "loader.shuffle_buffer=64",
                        "loader.shuffle_buffer=640"};
    for (int i = 0; i < 3; i++) {
        const char *sets[] = {"loader.open_shards=4", bs[i], NULL};
        mix[i] = run(base, sets, 0).mix;
    }
    if (!(fabs(mix[0] - 4) < 1e-9 && mix[1] > mix[0] && mix[2] > mix[1] && mix[2] <= 32))
        fail_msg("shards a batch mixes: %.2f, %.2f, %.2f", mix[0], mix[1], mix[2]);
}

/* PyTorch's workers each shuffle their own stream (WebDataset's shuffle(B)
 * in the worker): a batch draws from the worker's buffer, so it mixes more
 * of that worker's shards (an item stays a geometric number of draws, so
 * a batch reaches back past the last B items: 6.8 for B = 64), while the worker's reads and preps,
 * serial in one thread, take as long: the epoch time does not move. */
static void test_worker_buffer(void **state) {
    (void)state;
    const char *bs[] = {"loader.shuffle_buffer=0", "loader.shuffle_buffer=64",
                        "loader.shuffle_buffer=640"};
    result_t r[3];
    for (int i = 0; i < 3; i++) {
        const char *sets[] = {"loader.kind=pytorch",
                              "loader.num_workers=4",
                              "loader.collate_ms_per_item=0",
                              "loader.share_ms_per_item=0",
                              "loader.transfer_ms_per_item=0",
                              "loader.step_ms=0",
                              "loader.worker_start_ms=0",
                              bs[i],
                              NULL};
        r[i] = run(base, sets, 0);
    }
    if (!(fabs(r[0].mix - 1) < 1e-9 && r[1].mix > 1.5 && r[1].mix <= 16 && r[2].mix > r[1].mix))
        fail_msg("worker buffers mix: %.2f, %.2f, %.2f", r[0].mix, r[1].mix, r[2].mix);
    if (r[1].sim != r[0].sim || r[2].sim != r[0].sim || r[2].model != r[0].model)
        fail_msg("worker buffers moved the epoch: %.6f, %.6f, %.6f", r[0].sim, r[1].sim, r[2].sim);
    /* Two ranks: each rank's worker shuffles its own items. */
    const char *two[] = {"loader.kind=pytorch",
                         "loader.num_workers=2",
                         "server.gpus=2",
                         "jobs.gpus=2",
                         "jobs.batch_per_gpu=16",
                         "loader.shuffle_buffer=64",
                         NULL};
    result_t t = run(base, two, 0);
    two[5] = "loader.shuffle_buffer=0";
    result_t t0 = run(base, two, 0);
    if (!(fabs(t0.mix - 2) < 1e-9 && t.mix > t0.mix && t.mix <= 32 && t.sim == t0.sim))
        fail_msg("two ranks: mix %.2f -> %.2f, epoch %.6f -> %.6f", t0.mix, t.mix, t0.sim, t.sim);
}

/* 64 PyTorch workers each wait for a 100 MB shard of a 50 MB/s disk: the
 * reads reach the device out of time order over 128 s, past a calendar of
 * one item's transfer a bucket (it once gave 27 s for this epoch's 128 s of
 * transfers). No epoch may beat its bytes over the bandwidth. */
static void test_slow_device(void **state) {
    (void)state;
    const char *yaml = "epochs: 1\ndataset: {items: 64000, item_kb: 100, shard_items: 1000}\n"
                       "server: {cpus: 64, gpus: 8, cache_gb: 0,\n"
                       "  storage: {read_mb_s: 50, latency_ms: 0.1, queue_depth: 32}}\n"
                       "prep: {decode_ms_per_mb: 1, augment_ms: 0.1}\n"
                       "loader: {kind: pytorch, num_workers: 8, cache: none}\n"
                       "jobs: [{gpus: 8, batch_per_gpu: 64, gpu_items_per_s: 5000}]\n";
    result_t r = run(yaml, (const char *[]){NULL}, 0);
    if (!(r.sim >= 128 && fabs(r.sim - r.model) < 0.05 * r.model))
        fail_msg("slow device: sim %.2f, model %.2f, at least 128 s", r.sim, r.model);
}

/* Streamed shards through the page cache (loader.reader: stream, cache:
 * linux): 512 items of one 128 KiB readahead window each in 8 shards of 64,
 * on a 100 MB/s disk, read by W PyTorch workers in batches of b = 8. Each
 * item is a chunk: a worker entering chunk k reads k + 1 ahead, so at the
 * end of its batch it leaves one window read ahead, behind which the other
 * W - 1 workers' batches admit (W - 1) b windows (b + 1 where they re-read
 * one) before its next batch. It survives with room for (W - 1) b + 1 =
 * 25 windows (and 28); in 20 it is reclaimed every time and read again: one
 * window per batch that continues a shard, 1/b - 1/S of the epoch's bytes
 * (7/64), and the epoch longer by their transfer. One worker alone loses
 * nothing in a cache of 4 windows: the device reads the data once. */
static void test_stream_page_cache(void **state) {
    (void)state;
    const char *yaml =
        "epochs: 1\ndataset: {items: 512, item_kb: 131.072, item_kb_cv: 0, shard_items: 64}\n"
        "server: {cpus: 16, gpus: 1,\n"
        "  storage: {read_mb_s: 100, latency_ms: 1, queue_depth: 4, read_ahead_kb: 128}}\n"
        "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 1, augment_ms: 0}\n"
        "loader: {kind: pytorch, cache: linux, reader: stream}\n"
        "jobs: [{gpus: 1, batch_per_gpu: 8, compute_s_per_batch: 0.001}]\n";
    const double win = 131072, D = 512 * win, rr = 1.0 / 8 - 1.0 / 64;
    run_metrics_t m, s;
    const char *one[] = {"loader.num_workers=1", "server.cache_gb=0.000524288", NULL};
    assert_int_equal(tu_run(yaml, one, &S, &T, &m, &s), 0);
    assert_true(metrics_at(&s, 0, 0)->storage_read_bytes == D);
    assert_true(fabs(metrics_at(&m, 0, 0)->storage_read_bytes - D) < 1e-6 * D);
    metrics_free(&m), metrics_free(&s);
    double epoch[2];
    const char *cache[2] = {"server.cache_gb=0.00524288", "server.cache_gb=0.00262144"};
    for (int k = 0; k < 2; k++) {
        const char *four[] = {"loader.num_workers=4", cache[k], NULL};
        assert_int_equal(tu_run(yaml, four, &S, &T, &m, &s), 0);
        const double want = k ? D * (1 + rr) : D, sim = metrics_at(&s, 0, 0)->storage_read_bytes;
        const double model = metrics_at(&m, 0, 0)->storage_read_bytes;
        epoch[k] = metrics_at(&s, 0, 0)->epoch_s;
        /* (the model's windows are a mean over where a turn ends in its
         * shard: within 1 %) */
        if (sim != want || fabs(model - want) > 0.01 * want)
            fail_msg("4 workers, %s: sim %.0f B, model %.0f B, want %.0f", cache[k], sim, model,
                     want);
        metrics_free(&m), metrics_free(&s);
    }
    const double extra = D * rr / 100e6;
    if (fabs(epoch[1] - epoch[0] - extra) > 0.1 * extra)
        fail_msg("re-reads cost %.4f s of epoch, their transfer %.4f s", epoch[1] - epoch[0],
                 extra);
}

static void test_rules(void **state) {
    (void)state;
    const char *loose = "epochs: 1\ndataset: {items: 3200, item_kb: 100}\n"
                        "jobs: [{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.001}]\n";
    const char *lanes[] = {"loader.open_shards=4", NULL};
    assert_int_equal(tu_build(loose, lanes, &S, &T), EXIT_INPUT);
    const char *belady[] = {"dataset.shard_items=32", "loader.cache=belady", NULL};
    assert_int_equal(tu_build(loose, belady, &S, &T), EXIT_INPUT);
    const char *huge[] = {"dataset.shard_items=100000", NULL}; /* 10 GB shards */
    assert_int_equal(tu_build(loose, huge, &S, &T), EXIT_INPUT);
    const char *both[] = {"dataset.shard_items=32", "dataset.shard_mb=1", NULL};
    assert_int_equal(tu_build(loose, both, &S, &T), EXIT_INPUT);
    /* By size: the items of mean size that fit, at least one. */
    const char *by_mb[] = {"dataset.shard_mb=3.25", NULL};
    assert_int_equal(tu_build(loose, by_mb, &S, &T), 0);
    assert_int_equal(S.dataset.shard_items, 32);
    const char *tiny[] = {"dataset.shard_mb=0.01", NULL};
    assert_int_equal(tu_build(loose, tiny, &S, &T), 0);
    assert_int_equal(S.dataset.shard_items, 1);
    const char *ok[] = {"dataset.shard_items=32", "loader.open_shards=4", NULL};
    assert_int_equal(tu_build(loose, ok, &S, &T), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests),       cmocka_unit_test(test_pytorch_workers),
        cmocka_unit_test(test_pool_lanes),     cmocka_unit_test(test_cache_shards),
        cmocka_unit_test(test_rules),          cmocka_unit_test(test_uneven_workers),
        cmocka_unit_test(test_shuffle_buffer), cmocka_unit_test(test_worker_buffer),
        cmocka_unit_test(test_slow_device),    cmocka_unit_test(test_stream_page_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
