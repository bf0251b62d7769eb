/* The hard-disk kind (server.storage.kind: hdd) against its closed forms:
 * sequential reads at the media rate; a random read in arrival order pays
 * E_1 = track + (full - track) sqrt(f) 8/15 + half a revolution; NCQ's
 * shortest-positioning-first over k queued reads shortens that to E_k (the
 * SPTF integral of storage_hdd.c); a record shard pays one positioning for
 * all its items; the kind's rules. Tolerances: the simulator draws its
 * rotations and queued requests from the seed, so its means carry noise
 * (about 0.3% over 20000 reads), and SPTF's head drifts to the middle of
 * the data, where requests lie nearer (0.4-1.2% faster than the model's
 * uniform head). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "diag.h"
#include "kinds.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 20000 items of 100 KB (2 GB) on a disk of 2 GB: random reads seek over
 * the whole stroke. Everything but the disk is fast. */
static const char *base = "epochs: 1\ndataset: {items: 20000, item_kb: 100}\n"
                          "server: {cpus: 16, gpus: 1, cache_gb: 0,\n"
                          "  storage: {kind: hdd, capacity_gb: 2}}\n"
                          "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
                          "loader: {cache: none}\n"
                          "jobs: [{gpus: 1, batch_per_gpu: 64, compute_s_per_batch: 0.001}]\n";

/* The defaults: 7200 rpm, 1 ms track-to-track, 15 ms full stroke, 200 MB/s. */
#define REV   (60.0 / 7200)
#define TRACK 1e-3
#define FULL  15e-3
#define RATE  200e6

/* E_1 over a fraction f of the stroke. */
static double e1(double f) {
    return TRACK + (FULL - TRACK) * sqrt(f) * 8 / 15 + REV / 2;
}

/* The test's own uniform numbers (xorshift64*), apart from the kind's. */
static uint64_t rs = 88172645463325252ull;
static double uniform(void) {
    rs ^= rs >> 12, rs ^= rs << 25, rs ^= rs >> 27;
    return (double)((rs * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* The kind on its own, as the engine drives it. */
static storage_t open_disk(const char *const *sets, int unordered) {
    assert_int_equal(tu_build(base, sets, &S, &T), 0);
    storage_t d = {0};
    d.ops = scenario_storage(&S);
    d.unordered = unordered;
    assert_string_equal(d.ops->name, "hdd");
    assert_int_equal(d.ops->init(&d, &S), 0);
    return d;
}

/* Mean service of n random reads of `bytes`: all issued at once (a queue as
 * deep as the drive takes), or each when the last is done (one at a time). */
static double random_reads(storage_t *d, int n, double bytes, int at_once) {
    io_acct_t acct = {0};
    double span = 2e9 - bytes, end = 0;
    for (int i = 0; i < n; i++)
        end = d->ops->read(d, at_once ? 0 : end, bytes, floor(uniform() * span), 0, &acct);
    assert_true(acct.reads == n);
    return end / n;
}

/* (1) Reads that follow on cost their transfer alone, at the media rate,
 * however deep the queue. Items of spread sizes laid at multiples of the
 * mean: a read that starts inside the last one follows on, a gap before
 * one is read through (cheaper than a seek); each pays its own bytes. */
static void test_sequential(void **state) {
    (void)state;
    storage_t d = open_disk((const char *[]){NULL}, 0);
    io_acct_t acct = {0};
    double end = 0;
    for (int i = 0; i < 1000; i++)
        end = d.ops->read(&d, 0, 1e6, i * 1e6, 0, &acct);
    if (fabs(end - 1000 * 1e6 / RATE) > 1e-9) fail_msg("sequential: %.9f s, want 5 s", end);
    d.ops->destroy(&d);

    d = open_disk((const char *[]){NULL}, 0);
    end = 0;
    for (int i = 0; i < 1000; i++) /* 50 KB and 150 KB in turn, 100 KB apart */
        end = d.ops->read(&d, 0, i % 2 ? 150e3 : 50e3, i * 100e3, 0, &acct);
    /* 100 MB of items and the 500 gaps of 50 KB after the small ones. */
    if (fabs(end - 125e6 / RATE) > 1e-9) fail_msg("spread sizes: %.9f s, want 0.625 s", end);
    d.ops->destroy(&d);
}

/* (2) One read at a time: the real distance from the head, a drawn
 * rotation; the mean over 20000 reads is E_1 + transfer (noise 0.2%). The
 * model's integral at k = 1 is the closed form to 1e-6. */
static void test_random_qd1(void **state) {
    (void)state;
    const char *one[] = {"server.storage.ncq=1", NULL};
    storage_t d = open_disk(one, 0);
    double want = e1(1) + 100e3 / RATE, got = random_reads(&d, 20000, 100e3, 1);
    printf("qd1: simulated %.4f ms, closed form %.4f ms (%+.2f%%)\n", got * 1e3, want * 1e3,
           (got / want - 1) * 100);
    if (fabs(got - want) > 0.01 * want)
        fail_msg("qd1: %.4f ms, want %.4f ms", got * 1e3, want * 1e3);
    double model = d.ops->service_s(&S, 100e3);
    if (fabs(model - want) > 1e-6 * want)
        fail_msg("model E_1 %.6f ms, want %.6f", model * 1e3, want * 1e3);
    d.ops->destroy(&d);
    /* One at a time under NCQ is still one in the queue. */
    d = open_disk((const char *[]){NULL}, 0);
    got = random_reads(&d, 20000, 100e3, 0);
    if (fabs(got - want) > 0.01 * want) fail_msg("qd1, ncq 32: %.4f ms", got * 1e3);
    d.ops->destroy(&d);
    /* A dataset on 1/25 of the disk seeks over 1/25 of the stroke. */
    const char *short_stroke[] = {"server.storage.ncq=1", "server.storage.capacity_gb=50", NULL};
    d = open_disk(short_stroke, 0);
    want = e1(0.04) + 100e3 / RATE, got = random_reads(&d, 20000, 100e3, 1);
    if (fabs(got - want) > 0.01 * want)
        fail_msg("1/25 stroke: %.4f ms, want %.4f", got * 1e3, want * 1e3);
    d.ops->destroy(&d);
}

/* (3) NCQ: with the queue full the drive picks the nearest of k; the
 * simulated mean against the model's E_k, and the gain over arrival order.
 * Where seeks cost nothing but the settle, E_k = track + rev / (k + 1). */
static void test_ncq(void **state) {
    (void)state;
    const int ks[] = {2, 8, 32};
    double qd1 = e1(1) + 100e3 / RATE;
    for (int i = 0; i < 3; i++) {
        char q[64];
        snprintf(q, sizeof q, "server.storage.ncq=%d", ks[i]);
        const char *sets[] = {q, NULL};
        storage_t d = open_disk(sets, 0);
        double want = d.ops->service_s(&S, 100e3), got = random_reads(&d, 20000, 100e3, 1);
        printf("ncq %2d: simulated %.4f ms, closed form %.4f ms (%+.2f%%), %.2fx arrival order\n",
               ks[i], got * 1e3, want * 1e3, (got / want - 1) * 100, qd1 / got);
        if (fabs(got - want) > 0.02 * want)
            fail_msg("ncq %d: %.4f ms, want %.4f ms", ks[i], got * 1e3, want * 1e3);
        assert_true(got < qd1);
        d.ops->destroy(&d);
        const char *flat[] = {q, "server.storage.capacity_gb=1e12", NULL};
        d = open_disk(flat, 0);
        double e = d.ops->service_s(&S, 0), f = TRACK + REV / (ks[i] + 1);
        if (fabs(e - f) > 1e-5 * f)
            fail_msg("flat ncq %d: %.6f ms, want %.6f", ks[i], e * 1e3, f * 1e3);
        d.ops->destroy(&d);
    }
}

static tu_epoch_t run(const char *const *sets) {
    return tu_epoch(base, sets, &S, &T);
}

/* The figures, beside the check, for the log. */
static void expect(const char *what, tu_epoch_t r, double want, double tol, int bn) {
    printf("%s: sim %.3f s, model %.3f s, closed form %.3f s\n", what, r.sim, r.model, want);
    tu_expect_epoch(what, r, want, tol, bn);
}

/* The engine's epochs: 20000 random reads through the pool loader (batches
 * of 64, two ahead: the queue is full), seek-bound. */
static void test_epochs(void **state) {
    (void)state;
    const char *one[] = {"server.storage.ncq=1", NULL};
    tu_epoch_t r = run(one);
    expect("loose, ncq 1", r, 20000 * (e1(1) + 100e3 / RATE) + 0.001, 0.01, BN_IN_FLIGHT);
    assert_int_equal(r.approx, 0);
    assert_true(r.reads == 20000);
    tu_epoch_t q = run((const char *[]){NULL});
    expect("loose, ncq 32", q, q.model, 0.02, BN_IN_FLIGHT);
    assert_int_equal(q.approx, 1);
    assert_true(q.sim < r.sim / 2);
}

/* (4) Record shards of 100 items: one positioning a shard, its 10 MB at the
 * media rate; loose items pay one each: the seek ratio
 * (E + b / rate) / (E / 100 + b / rate), 21x here. */
static void test_shards(void **state) {
    (void)state;
    const char *loose[] = {"server.storage.ncq=1", NULL};
    const char *shards[] = {"server.storage.ncq=1", "dataset.shard_items=100", NULL};
    double e = e1(1), b = 100e3 / RATE;
    tu_epoch_t l = run(loose), s = run(shards);
    expect("shards of 100", s, 200 * (e + 100 * b), 0.02, BN_STORAGE_BW);
    assert_true(s.reads == 200);
    double ratio = l.sim / s.sim, want = (e + b) / (e / 100 + b);
    printf("loose / shards: %.2fx, closed form %.2fx\n", ratio, want);
    if (fabs(ratio - want) > 0.02 * want) fail_msg("seek ratio %.2f, want %.2f", ratio, want);
}

/* PyTorch's workers read synchronously: W workers keep W reads queued (k =
 * min(ncq, W)); the head is a calendar. */
static void test_pytorch_workers(void **state) {
    (void)state;
    const int workers[] = {1, 8};
    for (int i = 0; i < 2; i++) {
        char w[64];
        snprintf(w, sizeof w, "loader.num_workers=%d", workers[i]);
        const char *sets[] = {"loader.kind=pytorch",
                              "loader.collate_ms_per_item=0",
                              "loader.share_ms_per_item=0",
                              "loader.transfer_ms_per_item=0",
                              "loader.step_ms=0",
                              "loader.worker_start_ms=0",
                              "loader.pin_ms_per_item=0",
                              w,
                              NULL};
        tu_epoch_t r = run(sets);
        char what[64];
        snprintf(what, sizeof what, "pytorch, %d workers", workers[i]);
        expect(what, r, r.model, 0.02, -1);
        assert_int_equal(r.approx, workers[i] > 1);
        if (workers[i] == 1) /* each item: its read, then 0.01 ms of prep */
            expect(what, r, 20000 * (e1(1) + 100e3 / RATE + 1e-5) + 0.001, 0.01, -1);
    }
}

/* Same scenario and seed: the same draws; another seed: others. */
static void test_seed(void **state) {
    (void)state;
    tu_epoch_t a = run((const char *[]){NULL}), b = run((const char *[]){NULL});
    tu_epoch_t c = run((const char *[]){"seed=2", NULL});
    assert_true(a.sim == b.sim);
    assert_true(a.sim != c.sim);
    assert_true(fabs(a.sim - c.sim) < 0.02 * a.sim);
}

/* (5) The kind's rules, and other kinds' keys refused under it. */
static void test_rules(void **state) {
    (void)state;
    const char *seek[] = {"server.storage.seek_track_ms=20", NULL};
    assert_int_equal(tu_build(base, seek, &S, &T), EXIT_INPUT);
    const char *full[] = {"server.storage.capacity_gb=1", NULL};
    assert_int_equal(tu_build(base, full, &S, &T), EXIT_INPUT);
    const char *fixed[] = {"server.storage.queue_depth=8", NULL};
    assert_int_equal(tu_build(base, fixed, &S, &T), EXIT_INPUT);
    const char *fixed_yaml = "dataset: {items: 100, item_kb: 10}\n"
                             "jobs: [{gpus: 1, gpu_items_per_s: 100}]\n";
    const char *mine[] = {"server.storage.rpm=5400", NULL};
    assert_int_equal(tu_build(fixed_yaml, (const char *[]){NULL}, &S, &T), 0);
    assert_int_equal(tu_build(fixed_yaml, mine, &S, &T), EXIT_INPUT);
    const char *ok[] = {"server.storage.seek_track_ms=15", "server.storage.rpm=15000", NULL};
    assert_int_equal(tu_build(base, ok, &S, &T), 0);
}

/* The end-to-end scenario, tests/data/hdd-imagenet.yaml (ImageNet-1k on a
 * 4 TB disk), by the model: loose JPEGs seek-bound at 1 / (E_32 + 114 KB /
 * rate), E_1 = 6.6 ms in arrival order; 1000 MB shards at the media rate. */
static void test_data_file(void **state) {
    (void)state;
    const char *dir = getenv("STALLSIM_TESTS");
    char path[512];
    snprintf(path, sizeof path, "%s/data/hdd-imagenet.yaml", dir ? dir : "tests");
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char yaml[8192];
    size_t n = fread(yaml, 1, sizeof yaml - 1, f);
    fclose(f);
    yaml[n] = 0;
    assert_int_equal(tu_build(yaml, (const char *[]){NULL}, &S, &T), 0);
    const storage_ops_t *d = scenario_storage(&S);
    int lat;
    double f_span = 1281167 * 114e3 / 4000e9, loose = d->items_s(&S, 114e3, &lat);
    double e32 = 1 / loose - 114e3 / RATE;
    printf("hdd-imagenet: E_32 %.3f ms, %.0f reads/s\n", e32 * 1e3, loose);
    assert_true(lat);
    assert_true(e32 > 0.002 && e32 < 0.0025);
    assert_int_equal(d->model_exact(&S), 0);
    assert_int_equal(tu_build(yaml, (const char *[]){"server.storage.ncq=1", NULL}, &S, &T), 0);
    double one = d->service_s(&S, 0);
    if (fabs(one - e1(f_span)) > 1e-6 * one) fail_msg("E_1 %.4f ms", one * 1e3);
    assert_int_equal(d->model_exact(&S), 1);
    assert_int_equal(tu_build(yaml, (const char *[]){"dataset.shard_mb=1000", NULL}, &S, &T), 0);
    double per_read = 8771 * 114e3, shards = d->items_s(&S, per_read, &lat) * 8771;
    printf("hdd-imagenet: shards %.0f items/s (media rate %.0f), %.1fx loose\n", shards,
           RATE / 114e3, shards / loose);
    assert_false(lat);
    assert_true(shards > 0.99 * RATE / 114e3 && shards < RATE / 114e3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequential), cmocka_unit_test(test_random_qd1),
        cmocka_unit_test(test_ncq),        cmocka_unit_test(test_epochs),
        cmocka_unit_test(test_shards),     cmocka_unit_test(test_pytorch_workers),
        cmocka_unit_test(test_seed),       cmocka_unit_test(test_rules),
        cmocka_unit_test(test_data_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
