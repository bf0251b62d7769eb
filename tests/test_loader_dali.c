/* loader.kind: dali, the simulator and the model against closed forms:
 * - N pipelines of T threads on C cores at a fixed CPU cost c an item
 *   prepare min(N T, C) / c items a second (whole rounds of T when the
 *   cores are not shared);
 * - the prefetch queue hides a storage jitter: a GPU-bound job whose reads
 *   vary from batch to batch runs at its GPU's pace with a deep queue and
 *   stalls with a queue of 1;
 * - the file reader on a hard disk: N pipelines of R reader threads keep
 *   N x R reads queued on the drive, so an epoch of random reads takes
 *   items x the drive's service at a queue of N x R (the hdd kind's SPTF
 *   closed form, taken from a scenario whose drive queue is capped at that
 *   depth by server.storage.ncq);
 * - DALI's memory formula (NVIDIA/DALI#840) on host and GPU, the GPU side
 *   refused past server.gpu_mem_gb;
 * - the kind's rules.
 * Each case states what a plausible wrong kind would give (one pipeline
 * for the server, a thread per core, the reader threads ignored) and that
 * it lies far outside the tolerance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "kinds.h"
#include "memory.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 4 GPUs on one server, 6400 equal items of 100 KB in batches of 32 per
 * GPU, 3 ms of CPU an item (1 of decode, 2 of augment); the cache holds
 * everything: epoch 2 reads nothing. */
static const char *base = "epochs: 2\ndataset: {items: 6400, item_kb: 100}\n"
                          "server: {cpus: 6, gpus: 4, cache_gb: 10}\n"
                          "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 1, augment_ms: 2}\n"
                          "loader: {kind: dali, num_threads: 3}\n"
                          "jobs: [{gpus: 4, batch_per_gpu: 32, compute_s_per_batch: 1e-9}]\n";

static void near(const char *what, double got, double want, double tol) {
    printf("%s: %.6g, want %.6g (%+.2f%%)\n", what, got, want, (got / want - 1) * 100);
    if (fabs(got - want) > tol * want) fail_msg("%s: %.9g, want %.9g", what, got, want);
}

static void tells_apart(const char *wrong, double wrong_s, double want, double tol) {
    if (fabs(wrong_s - want) <= 5 * tol * want)
        fail_msg("%s gives %.6g, too close to %.6g to be told apart", wrong, wrong_s, want);
}

/* Epoch e of simulator and model, both within tol of want. */
static void expect(const char *yaml, const char *const *sets, int e, double want, double tol,
                   const char *what) {
    run_metrics_t m, s;
    assert_int_equal(tu_run(yaml, sets, &S, &T, &m, &s), 0);
    char buf[128];
    snprintf(buf, sizeof buf, "%s (sim)", what);
    near(buf, metrics_at(&s, 0, e)->epoch_s, want, tol);
    snprintf(buf, sizeof buf, "%s (model)", what);
    near(buf, metrics_at(&m, 0, e)->epoch_s, want, tol);
    metrics_free(&m), metrics_free(&s);
}

/* 4 pipelines x 3 threads on 6 cores: the cores bind, 6 / 3 ms. */
static void test_core_bound(void **state) {
    (void)state;
    const double want = 6400 * 3e-3 / 6;
    expect(base, (const char *[]){NULL}, 1, want, 1e-3, "4 x 3 threads on 6 cores");
    tells_apart("one pipeline of 3 threads for the server", 6400 * 3e-3 / 3, want, 1e-3);
    const char *seven[] = {"loader.num_threads=5", "server.cpus=7", NULL};
    expect(base, seven, 1, 6400 * 3e-3 / 7, 1e-3, "4 x 5 threads on 7 cores");
}

/* 4 pipelines x 1 thread on 6 cores: the threads bind, 4 / 3 ms. */
static void test_thread_bound(void **state) {
    (void)state;
    const char *sets[] = {"loader.num_threads=1", NULL};
    const double want = 6400 * 3e-3 / 4;
    expect(base, sets, 1, want, 1e-3, "4 x 1 thread on 6 cores");
    tells_apart("a pool of the server's 6 cores", 6400 * 3e-3 / 6, want, 1e-3);
    /* 3 threads on 16 cores: a batch of 32 in 11 rounds of 3 ms. */
    const char *rounds[] = {"server.cpus=16", NULL};
    const double r = 50.0 * 11 * 3e-3;
    expect(base, rounds, 1, r, 1e-3, "4 x 3 threads on 16 cores");
    tells_apart("rounds ignored (12 threads as a fluid)", 6400 * 3e-3 / 12, r, 1e-3);
}

/* The training processes' CPU (jobs.N.train_cpu_ms) shares the cores with
 * the pipelines: 32 ms a batch of 32 is 1 ms an item beside the 3 ms of
 * prep, on 6 cores: 6 / 4 ms. */
static void test_train_cpu_shares(void **state) {
    (void)state;
    const char *sets[] = {"jobs.0.train_cpu_ms=32", NULL};
    const double want = 6400 * 4e-3 / 6;
    /* The last iteration's training CPU (32 ms) comes after the last prep:
     * the model adds it whole (+0.75%), the simulator overlaps part. */
    expect(base, sets, 1, want, 1e-2, "training CPU on the pipelines' cores");
    tells_apart("the training CPU on cores of its own", 6400 * 3e-3 / 6, want, 1e-2);
}

/* 1 GPU, batches of 4 items of 1 MB with a spread of sizes (cv 1), one
 * reader thread at 100 MB/s: a batch reads in 40 ms on average, its GPU
 * computes 44 ms. A deep queue keeps the GPU busy (the epoch is its 1000
 * batches of 44 ms and the first batch's read); a queue of 1 lets a run of
 * large batches stall it. */
static const char *jitter = "epochs: 1\ndataset: {items: 4000, item_kb: 1000, item_kb_cv: 1}\n"
                            "server: {cpus: 8, gpus: 1, cache_gb: 0,\n"
                            "  storage: {read_mb_s: 100, latency_ms: 0, queue_depth: 64}}\n"
                            "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
                            "loader: {kind: dali, cache: none}\n"
                            "jobs: [{gpus: 1, batch_per_gpu: 4, compute_s_per_batch: 0.044}]\n";

static double sim_epoch(const char *yaml, const char *const *sets) {
    run_metrics_t m, s;
    assert_int_equal(tu_run(yaml, sets, &S, &T, &m, &s), 0);
    double e = metrics_at(&s, 0, 0)->epoch_s;
    metrics_free(&m), metrics_free(&s);
    return e;
}

static void test_queue_hides_jitter(void **state) {
    (void)state;
    const double gpu_bound = 1000 * 0.044 + 4 * 1e6 / 100e6;
    const double deep = sim_epoch(jitter, (const char *[]){"loader.prefetch_queue_depth=8", NULL});
    near("queue of 8 (sim)", deep, gpu_bound, 5e-3);
    const double sep = sim_epoch(
        jitter, (const char *[]){"loader.cpu_queue_depth=4", "loader.gpu_queue_depth=4", NULL});
    near("separated queues 4 + 4 (sim)", sep, gpu_bound, 5e-3);
    const double one = sim_epoch(jitter, (const char *[]){"loader.prefetch_queue_depth=1", NULL});
    printf("queue of 1 (sim): %.3f s, %.1f%% past the GPU's pace\n", one,
           (one / gpu_bound - 1) * 100);
    tells_apart("a queue of 1 hiding it too", one, gpu_bound, 5e-3);
    /* The model has the mean costs, no jitter: the GPU's pace at any depth. */
    run_metrics_t m;
    assert_int_equal(
        tu_run(jitter, (const char *[]){"loader.prefetch_queue_depth=8", NULL}, &S, &T, &m, NULL),
        0);
    near("queue of 8 (model)", metrics_at(&m, 0, 0)->epoch_s, gpu_bound, 5e-3);
    metrics_free(&m);
}

/* 20000 random reads of 100 KB on a hard disk of 2 GB, nothing cached. */
static const char *disk = "epochs: 1\ndataset: {items: 20000, item_kb: 100}\n"
                          "server: {cpus: 16, gpus: 4, cache_gb: 0,\n"
                          "  storage: {kind: hdd, capacity_gb: 2}}\n"
                          "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
                          "loader: {kind: dali, cache: none}\n"
                          "jobs: [{gpus: 4, batch_per_gpu: 16, compute_s_per_batch: 0.001}]\n";

/* The drive's mean service of a 100 KB read with k requests queued: the
 * pool loader's window (128 reads) against a drive capped at ncq = k. */
static double drive_service(int k) {
    char q[64];
    snprintf(q, sizeof q, "server.storage.ncq=%d", k);
    const char *sets[] = {"loader.kind=pool", q, NULL};
    assert_int_equal(tu_build(disk, sets, &S, &T), 0);
    return scenario_storage(&S)->service_s(&S, 100e3);
}

static void test_disk_sees_readers(void **state) {
    (void)state;
    const struct { int gpus, readers; } c[] = {{1, 1}, {2, 1}, {4, 1}, {4, 2}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char g[64], r[64], what[96];
        snprintf(g, sizeof g, "jobs.0.gpus=%d", c[i].gpus);
        snprintf(r, sizeof r, "loader.reader_threads=%d", c[i].readers);
        const double want = 20000 * drive_service(c[i].gpus * c[i].readers);
        snprintf(what, sizeof what, "%d pipelines x %d reader threads on a disk", c[i].gpus,
                 c[i].readers);
        expect(disk, (const char *[]){g, r, NULL}, 0, want, 0.02, what);
        if (c[i].gpus * c[i].readers > 1)
            tells_apart("one read in flight", 20000 * drive_service(1), want, 0.02 / 5 * 2);
    }
    tells_apart("the reader threads ignored", 20000 * drive_service(4), 20000 * drive_service(8),
                0.02 / 5 * 2);
}

/* DALI's buffers (NVIDIA/DALI#840: each operator's output at its worst for
 * a batch, plus the queue's output buffers), per GPU. */
static void test_memory(void **state) {
    (void)state;
    /* CPU decode: host holds a batch of files (100 KB, no spread), of
     * decoded images (0.25 MP x 3 B) and of outputs (prep.out_kb 150), the
     * CPU queue's 2 batches of outputs and the reader's batch of files; the
     * GPU its queue's 2 batches of outputs. */
    const char *cpu[] = {"dataset.megapixels=0.25", "prep.out_kb=150", NULL};
    assert_int_equal(tu_build(base, cpu, &S, &T), 0);
    const loader_ops_t *l = scenario_loader(&S);
    const double b = 32;
    near("host, CPU decode", l->proc_bytes(&S, &S.jobs[0], NULL, 0),
         b * (100e3 + 0.75e6 + 150e3) + 2 * b * 150e3 + b * 100e3, 1e-12);
    near("GPU, CPU decode", l->gpu_bytes(&S, &S.jobs[0], NULL, 0), 2 * b * 150e3, 1e-12);
    /* Mixed decode, separated queues 3 + 5: the host keeps files (the
     * reader's batch, the CPU queue's 3 batches of them) and nvJPEG's two
     * pinned 8 MiB buffers a thread; the GPU the decoder's images, the
     * outputs, the GPU queue's 5 batches and nvJPEG's 16 MiB device buffer
     * a thread (DALI's device_memory_padding and host_memory_padding). */
    const double nvjpeg = 3 * 16 * 1048576.0; /* 3 threads: the same both sides */
    const char *gpu[] = {"dataset.megapixels=0.25",
                         "prep.out_kb=150",
                         "prep.decode=gpu",
                         "prep.huffman_ms_per_mb=1",
                         "prep.gpu_decode_ms_per_mp=0.1",
                         "loader.cpu_queue_depth=3",
                         "loader.gpu_queue_depth=5",
                         NULL};
    assert_int_equal(tu_build(base, gpu, &S, &T), 0);
    near("host, mixed decode", l->proc_bytes(&S, &S.jobs[0], NULL, 0),
         b * 100e3 + 3 * b * 100e3 + b * 100e3 + nvjpeg, 1e-12);
    near("GPU, mixed decode", l->gpu_bytes(&S, &S.jobs[0], NULL, 0),
         b * (0.75e6 + 150e3) + 5 * b * 150e3 + nvjpeg, 1e-12);
    /* The server's memory counts 4 pipelines' host buffers. */
    memory_parts_t m = memory_peak(&S, &T, 0);
    near("server memory, 4 pipelines", m.total, 4 * (5 * b * 100e3 + nvjpeg), 1e-12);
    /* Past the GPU's memory: refused. 1 GB of training + 32 x 0.9 MB +
     * 5 x 32 x 150 KB + 3 x 16 MiB = 1.103 GB on a GPU of 1.10 GB (it
     * fitted before nvJPEG's buffers were counted). */
    const char *over[] = {"dataset.megapixels=0.25",
                          "prep.out_kb=150",
                          "prep.decode=gpu",
                          "prep.huffman_ms_per_mb=1",
                          "prep.gpu_decode_ms_per_mp=0.1",
                          "loader.cpu_queue_depth=3",
                          "loader.gpu_queue_depth=5",
                          "jobs.0.gpu_mem_gb=1",
                          "server.gpu_mem_gb=1.10",
                          NULL};
    assert_int_equal(tu_build(base, over, &S, &T), EXIT_INPUT);
    const char *fits[] = {"dataset.megapixels=0.25",
                          "prep.out_kb=150",
                          "prep.decode=gpu",
                          "prep.huffman_ms_per_mb=1",
                          "prep.gpu_decode_ms_per_mp=0.1",
                          "loader.cpu_queue_depth=3",
                          "loader.gpu_queue_depth=5",
                          "jobs.0.gpu_mem_gb=1",
                          "server.gpu_mem_gb=1.11",
                          NULL};
    assert_int_equal(tu_build(base, fits, &S, &T), 0);
}

static void test_rules(void **state) {
    (void)state;
    const char *bad[][5] = {
        {"loader.num_threads=0", NULL},
        {"loader.prefetch_queue_depth=0", NULL},
        {"loader.cpu_queue_depth=2", NULL}, /* without its gpu_size */
        {"loader.gpu_queue_depth=2", NULL},
        {"loader.cpu_queue_depth=2", "loader.gpu_queue_depth=2", "loader.prefetch_queue_depth=3",
         NULL},
        {"loader.reader_threads=0", NULL},
        {"loader.prep=coordinated", "jobs.0.count=2", "jobs.0.gpus=2", NULL},
        {"dataset.shard_items=16", NULL},
        {"jobs.0.prefetch_batches=4", NULL},
        {"loader.kind=pytorch", NULL}, /* the dali keys belong to dali */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (tu_build(base, bad[i], &S, &T) != EXIT_INPUT) fail_msg("accepted: %s", bad[i][0]);
    const char *good[][4] = {
        {"loader.cpu_queue_depth=2", "loader.gpu_queue_depth=3", NULL},
        {"loader.shuffle_buffer=1024", NULL},
        {"prep.decode=gpu", "prep.huffman_ms_per_mb=1", "prep.gpu_decode_ms_per_mp=0.1", NULL},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *sets[6] = {good[i][0], good[i][1], good[i][2], NULL, NULL, NULL};
        if (!strncmp(good[i][0], "prep.decode", 11)) sets[3] = "dataset.megapixels=0.2";
        if (tu_build(base, sets, &S, &T) != 0) fail_msg("refused: %s", good[i][0]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_core_bound),
        cmocka_unit_test(test_thread_bound),
        cmocka_unit_test(test_train_cpu_shares),
        cmocka_unit_test(test_queue_hides_jitter),
        cmocka_unit_test(test_disk_sees_readers),
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
