/* Synchronous checkpoints (jobs.N.checkpoint.*, sim/kinds/checkpoint.h)
 * against their closed forms, simulator and model alike: the GPUs wait
 * count x size / bandwidth on a disk whose channel every rank shares; on an
 * object store each rank's share in `writers` parts at one connection's
 * rate after a first byte; checkpoints counted across epochs; the wait kept
 * out of the stall split and named what binds; a stalled loader's epoch
 * marked approximate. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "checkpoint.h"
#include "memory.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 100 steps an epoch of 0.2 s each, GPU-bound, on a 500 MB/s disk. */
static const char *disk = "epochs: 2\ndataset: {items: 25600, item_kb: 100}\n"
                          "server: {cpus: 64, gpus: 8, cache_gb: 0,\n"
                          "  storage: {kind: fixed, latency_ms: 0.1, read_mb_s: 500}}\n"
                          "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
                          "loader: {cache: none}\n"
                          "jobs: [{gpus: 8, batch_per_gpu: 32, compute_s_per_batch: 0.2}]\n";

typedef struct {
    epoch_metrics_t sim[2], model[2];
} runs_t;

static runs_t run(const char *yaml, const char *const *sets) {
    run_metrics_t m, x;
    assert_int_equal(tu_run(yaml, sets, &S, &T, &m, &x), 0);
    runs_t r;
    for (int e = 0; e < 2; e++)
        r.sim[e] = *metrics_at(&x, 0, e), r.model[e] = *metrics_at(&m, 0, e);
    metrics_free(&m), metrics_free(&x);
    return r;
}

static void near(const char *what, double got, double want, double tol) {
    if (fabs(got - want) > tol * want) fail_msg("%s: %.6f, want %.6f", what, got, want);
}

/* A batch's reads on the disk: 256 items of 100 KB at 500 MB/s. */
#define BATCH_READ_S (256 * 100e3 / 500e6)

/* 8 GB at 500 MB/s is 16 s; every 30 steps is 3 in each epoch of 100
 * (30, 60, 90; then 120, 150, 180), 40 steps 2 then 3 (40, 80; 120, 160,
 * 200). The epoch is the run without them plus the waits; in the
 * simulator, where the writes share the disk's channel with the reads, also
 * the read of the batch the loader fetches during each (queued behind the
 * writes, it is not ready when they end), but for one after the epoch's
 * last step (200). */
static void test_disk(void **state) {
    (void)state;
    const runs_t none = run(disk, NULL);
    const char *every[] = {"30", "40"};
    const double count[2][2] = {{3, 3}, {2, 3}}, behind[2][2] = {{3, 3}, {2, 2}};
    for (int k = 0; k < 2; k++) {
        char ev[64];
        snprintf(ev, sizeof ev, "jobs.0.checkpoint.every_steps=%s", every[k]);
        const char *sets[] = {"jobs.0.checkpoint.gb=8", ev, NULL};
        const runs_t r = run(disk, sets);
        for (int e = 0; e < 2; e++) {
            const double want = count[k][e] * 16;
            near("sim checkpoint_s", r.sim[e].checkpoint_s, want, 0.001);
            near("model checkpoint_s", r.model[e].checkpoint_s, want, 0.001);
            near("sim epoch", r.sim[e].epoch_s,
                 none.sim[e].epoch_s + want + behind[k][e] * BATCH_READ_S, 0.0005);
            near("model epoch", r.model[e].epoch_s, none.model[e].epoch_s + want, 0.001);
            assert_int_equal(r.sim[e].bottleneck, BN_CHECKPOINT);
            /* the wait is neither prep nor fetch */
            assert_true(r.sim[e].prep_stall_s < 0.01 * r.sim[e].epoch_s);
            assert_true(fabs(r.sim[e].t_gpu_s - none.sim[e].t_gpu_s) < 1e-6);
        }
    }
}

/* Writes limited apart (server.storage.write_apart: a cgroup's wbps beside
 * its rbps) have a channel of their own: the batch read during a
 * checkpoint is not behind its writes, the epoch is the run without them
 * plus the waits, and the reads' channel counts none of the writes. */
static void test_disk_apart(void **state) {
    (void)state;
    const runs_t none = run(disk, NULL);
    const char *sets[] = {"jobs.0.checkpoint.gb=8", "jobs.0.checkpoint.every_steps=30",
                          "server.storage.write_apart=true", NULL};
    const runs_t r = run(disk, sets);
    for (int e = 0; e < 2; e++) {
        near("sim", r.sim[e].epoch_s, none.sim[e].epoch_s + 3 * 16, 0.0001);
        near("model", r.model[e].epoch_s, none.model[e].epoch_s + 3 * 16, 0.0001);
        near("sim util", r.sim[e].storage_util * r.sim[e].epoch_s,
             none.sim[e].storage_util * none.sim[e].epoch_s, 0.001);
    }
    /* a disk-bound loader catches up while the GPUs wait: shorter than the
     * channel's work on one device */
    const char *bound[] = {"jobs.0.checkpoint.gb=8", "jobs.0.checkpoint.every_steps=30",
                           "jobs.0.compute_s_per_batch=0.001", "server.storage.write_apart=true",
                           NULL};
    const runs_t b = run(disk, bound);
    assert_true(b.sim[1].epoch_s < 100 * BATCH_READ_S + 3 * 16 - 0.05);
    assert_true(b.sim[1].storage_util <= 1);
}

/* checkpoint.to: tier writes to each server's own tier device (2000 MB/s
 * here): 8 GB is 4 s a checkpoint, 2 an epoch, and the reads of storage
 * (500 MB/s) see none of it; without a tier it is refused. */
static void test_to_tier(void **state) {
    (void)state;
    const char *sets[] = {"server.tier.cache_gb=1",    "server.tier.read_mb_s=2000",
                          "jobs.0.checkpoint.gb=8",    "jobs.0.checkpoint.every_steps=50",
                          "jobs.0.checkpoint.to=tier", NULL};
    const runs_t r = run(disk, sets);
    const char *tier_only[] = {"server.tier.cache_gb=1", "server.tier.read_mb_s=2000", NULL};
    const runs_t none = run(disk, tier_only);
    for (int e = 0; e < 2; e++) {
        near("sim", r.sim[e].checkpoint_s, 2 * 4, 0.001);
        near("model", r.model[e].checkpoint_s, 2 * 4, 0.001);
        near("sim epoch", r.sim[e].epoch_s, none.sim[e].epoch_s + 8, 0.001);
        near("storage util", r.sim[e].storage_util * r.sim[e].epoch_s,
             none.sim[e].storage_util * none.sim[e].epoch_s, 0.001);
    }
    const char *no_tier[] = {"jobs.0.checkpoint.gb=8", "jobs.0.checkpoint.every_steps=50",
                             "jobs.0.checkpoint.to=tier", NULL};
    run_metrics_t m, x;
    assert_int_not_equal(tu_run(disk, no_tier, &S, &T, &m, &x), 0);
}

/* An object store: each of 8 ranks writes 1 GB in `writers` parts, each
 * part a first byte (20 ms) and its bytes at 100 MB/s on a connection of
 * its own: 0.02 + 1000 / writers / 100 s. */
static void test_object_writers(void **state) {
    (void)state;
    static const char *obj =
        "epochs: 2\ndataset: {items: 25600, item_kb: 100}\n"
        "server: {cpus: 64, gpus: 8, cache_gb: 0,\n"
        "  storage: {kind: object, first_byte_ms: 20, conn_mb_s: 100, part_mb: 0}}\n"
        "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
        "loader: {cache: none}\n"
        "jobs: [{gpus: 8, batch_per_gpu: 32, compute_s_per_batch: 0.2,\n"
        "        checkpoint: {gb: 8, every_steps: 50}}]\n";
    const int writers[] = {1, 4, 16};
    for (int k = 0; k < 3; k++) {
        char w[64];
        snprintf(w, sizeof w, "jobs.0.checkpoint.writers=%d", writers[k]);
        const char *sets[] = {w, NULL};
        const runs_t r = run(obj, sets);
        const double each = 0.020 + 1000.0 / writers[k] / 100;
        near("sim", r.sim[0].checkpoint_s, 2 * each, 0.001);
        near("model", r.model[0].checkpoint_s, 2 * each, 0.001);
    }
    double secs[1];
    assert_int_equal(tu_build(obj, NULL, &S, &T), 0);
    checkpoint_model(&S, &T, secs);
    near("checkpoint_model", secs[0], 0.020 + 10, 0.001);
}

/* A disk's writes at its write rate, not its read rate: 8 GB at 250 MB/s
 * is 32 s a checkpoint, the reads' 500 MB/s left as they were (the batch
 * read behind the first checkpoint's writes apart; the second is after the
 * epoch's last step). */
static void test_disk_write_rate(void **state) {
    (void)state;
    const char *sets[] = {"jobs.0.checkpoint.gb=8", "jobs.0.checkpoint.every_steps=50",
                          "server.storage.write_mb_s=250", NULL};
    const runs_t r = run(disk, sets);
    near("sim", r.sim[0].checkpoint_s, 2 * 32, 0.001);
    near("model", r.model[0].checkpoint_s, 2 * 32, 0.001);
    const runs_t none = run(disk, NULL);
    near("reads", r.sim[0].epoch_s - r.sim[0].checkpoint_s, none.sim[0].epoch_s + BATCH_READ_S,
         0.0005);
}

/* An object store's multipart PUTs: 8 ranks each write 1 GB as 4 files of
 * 250 MB, each 32 parts of 7.8125 MB (8 MB at most), 4 in flight: alone
 * 32 rounds of a first byte and a part at 100 MB/s. Under one prefix at
 * 100 PUT/s the 1024 parts take 10.24 s: the simulator's 503s and
 * back-offs leave it no faster, and near. */
static void test_object_put_parts(void **state) {
    (void)state;
    static const char *obj =
        "epochs: 1\ndataset: {items: 25600, item_kb: 100}\n"
        "server: {cpus: 64, gpus: 8, cache_gb: 0,\n"
        "  storage: {kind: object, first_byte_ms: 20, conn_mb_s: 100}}\n"
        "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
        "loader: {cache: none}\n"
        "jobs: [{gpus: 8, batch_per_gpu: 32, compute_s_per_batch: 0.2,\n"
        "        checkpoint: {gb: 8, every_steps: 50, writers: 4}}]\n";
    double sim[1], model[1];
    assert_int_equal(tu_build(obj, NULL, &S, &T), 0);
    assert_int_equal(checkpoint_sim(&S, &T, sim), 0);
    checkpoint_model(&S, &T, model);
    const double alone = 32 * (0.020 + 7.8125 / 100);
    near("sim alone", sim[0], alone, 0.001);
    near("model alone", model[0], alone, 0.001);
    const char *capped[] = {"server.storage.prefix_put_s=100", NULL};
    assert_int_equal(tu_build(obj, capped, &S, &T), 0);
    assert_int_equal(checkpoint_sim(&S, &T, sim), 0);
    checkpoint_model(&S, &T, model);
    near("model capped", model[0], 10.24, 0.001);
    assert_true(sim[0] >= 10.24 * 0.999);
    near("sim capped", sim[0], 10.24, 0.10);
    /* the GETs' rate is not the PUTs' */
    const char *gets[] = {"server.storage.prefix_get_s=100", NULL};
    assert_int_equal(tu_build(obj, gets, &S, &T), 0);
    assert_int_equal(checkpoint_sim(&S, &T, sim), 0);
    near("sim under a GET cap", sim[0], alone, 0.001);
}

/* Asynchronous: the GPUs wait to stage 8 GB over 8 GPUs at 25 GB/s each
 * (0.04 s), at most server.mem_gbps (100 GB/s: 0.08 s); the drain's 16 s
 * at 500 MB/s goes on behind. Every 90 steps (18 s of training) it ends
 * before the next checkpoint; every 30 (6 s) the next waits the rest of it,
 * 10 s, but the run's first has no drain before it. The staged state is
 * the server's memory. */
static void test_async(void **state) {
    (void)state;
    const char *rare[] = {"jobs.0.checkpoint.gb=8", "jobs.0.checkpoint.every_steps=90",
                          "jobs.0.checkpoint.mode=async", NULL};
    runs_t r = run(disk, rare);
    for (int e = 0; e < 2; e++) {
        near("sim rare", r.sim[e].checkpoint_s, 0.04, 0.001);
        near("model rare", r.model[e].checkpoint_s, 0.04, 0.001);
        assert_int_equal(r.model[e].approximate, 1);
    }
    const char *membw[] = {"jobs.0.checkpoint.gb=8", "jobs.0.checkpoint.every_steps=90",
                           "jobs.0.checkpoint.mode=async", "server.mem_gbps=100", NULL};
    r = run(disk, membw);
    near("sim mem_gbps", r.sim[0].checkpoint_s, 0.08, 0.001);
    near("model mem_gbps", r.model[0].checkpoint_s, 0.08, 0.001);
    const char *often[] = {"jobs.0.checkpoint.gb=8", "jobs.0.checkpoint.every_steps=30",
                           "jobs.0.checkpoint.mode=async", NULL};
    r = run(disk, often);
    /* Every 30 steps the drains share the disk's channel with the reads (a
     * quarter of it): the epoch is at least the channel's work, 5.12 s of
     * reads and 3 x 16 s of writes, which the simulator cannot beat and the
     * model gives. In the simulator the reads queue behind a drain's
     * requests (a file's, up to queue_depth in flight, as writeback sends
     * them), the steps slow, and the device idles between drains: above
     * it, within a third. */
    const double work = 100 * BATCH_READ_S + 3 * 16;
    assert_true(r.sim[1].epoch_s >= work * 0.9999);
    assert_true(r.sim[1].epoch_s <= work * 1.33);
    near("model shared", r.model[1].epoch_s, work, 0.001);
    assert_true(r.sim[1].storage_util <= 1 && r.sim[1].storage_util > 0.9);
    near("model util", r.model[1].storage_util, 1, 0.001);
    assert_int_equal(tu_build(disk, often, &S, &T), 0);
    near("staged", memory_peak(&S, &T, 0).staged, 8e9, 1e-9);
    assert_true(memory_peak(&S, &T, 0).total >= 8e9);
    const char *sync[] = {"jobs.0.checkpoint.gb=8", "jobs.0.checkpoint.every_steps=30", NULL};
    assert_int_equal(tu_build(disk, sync, &S, &T), 0);
    assert_true(memory_peak(&S, &T, 0).staged == 0);
}

/* A loader the disk binds: the writes take the channel from its reads, so
 * it cannot catch up while the GPUs wait on a checkpoint (on a device of
 * their own it did); the epoch is the channel's work, the reads' 5.12 s
 * and 3 x 16 s of writes, in both. */
static void test_shared_disk(void **state) {
    (void)state;
    const char *sets[] = {"jobs.0.checkpoint.gb=8", "jobs.0.checkpoint.every_steps=30",
                          "jobs.0.compute_s_per_batch=0.001", NULL};
    const runs_t r = run(disk, sets);
    const double work = 100 * BATCH_READ_S + 3 * 16;
    for (int e = 0; e < 2; e++) {
        assert_true(r.sim[e].epoch_s >= work * 0.9999);
        near("sim", r.sim[e].epoch_s, work, 0.005);
        near("model", r.model[e].epoch_s, work, 0.005);
        assert_true(r.sim[e].checkpoint_s > 0);
    }
}

/* No checkpoints: none counted, the run as it was. */
static void test_none(void **state) {
    (void)state;
    assert_int_equal(tu_build(disk, NULL, &S, &T), 0);
    assert_true(checkpoint_count(&S.jobs[0], 0, 1000) == 0);
    const char *only_size[] = {"jobs.0.checkpoint.gb=8", NULL};
    const runs_t r = run(disk, only_size);
    assert_true(r.sim[0].checkpoint_s == 0 && r.model[0].checkpoint_s == 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk),
        cmocka_unit_test(test_disk_apart),
        cmocka_unit_test(test_to_tier),
        cmocka_unit_test(test_object_writers),
        cmocka_unit_test(test_disk_write_rate),
        cmocka_unit_test(test_object_put_parts),
        cmocka_unit_test(test_async),
        cmocka_unit_test(test_shared_disk),
        cmocka_unit_test(test_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
