/* The ssd kind (server.storage.kind: ssd): latency against the requests in
 * flight, piecewise linear between queue depths 1, 4, 16 and 32 and flat
 * beyond; a bandwidth all transfers share; an IOPS cap.
 *
 * - a flat curve is the fixed kind, read for read: byte-identical metrics,
 *   model and simulator, over loaders, caches, caps and shards;
 * - a rising curve: items/s = Q / (lat(Q) + size / peak), the simulator
 *   within 0.1% of it up to depth 32 (1% at 64, where bursts queue on a
 *   channel 79% busy) and slower than a flat curve at lat(1);
 * - reads in flight counted from the ring of completion times, by hand;
 * - the caps bind; PyTorch's synchronous workers pay lat(workers);
 * - bad input is refused with the key named, exit 2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "diag.h"
#include "kinds.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 3200 items of 100 KB, read once, everything but the device fast. */
static const char *base = "epochs: 1\ndataset: {items: 3200, item_kb: 100}\n"
                          "server: {cpus: 16, gpus: 1, cache_gb: 0, storage: {kind: ssd}}\n"
                          "prep: {decode_ms_per_mb: 0, decode_ms_per_item: 0.01, augment_ms: 0}\n"
                          "loader: {cache: none}\n"
                          "jobs: [{gpus: 1, batch_per_gpu: 32, compute_s_per_batch: 0.001}]\n";

/* A rising curve: 0.2, 0.5, 2 and 4 ms at 1, 4, 16 and 32 in flight. */
static const char *rising[] = {"server.storage.latency_qd1_ms=0.2",
                               "server.storage.latency_qd4_ms=0.5",
                               "server.storage.latency_qd16_ms=2",
                               "server.storage.latency_qd32_ms=4", "server.storage.peak_mb_s=2000"};
#define NRISING 5

/* lat(k) of `rising`, in seconds, by hand. */
static double rising_lat(int k) {
    if (k <= 1) return 0.0002;
    if (k <= 4) return 0.0002 + 0.0003 * (k - 1) / 3;
    if (k <= 16) return 0.0005 + 0.0015 * (k - 4) / 12;
    if (k <= 32) return 0.002 + 0.002 * (k - 16) / 16;
    return 0.004;
}

/* PyTorch's per-batch costs set to nothing, so the workers only read. */
static const char *torch_free[] = {
    "loader.kind=pytorch",        "loader.collate_ms_per_item=0",
    "loader.share_ms_per_item=0", "loader.transfer_ms_per_item=0",
    "loader.step_ms=0",           "loader.worker_start_ms=0",
    "loader.pin_ms_per_item=0",
};
#define NTORCH 7

static tu_epoch_t run(const char *yaml, const char *const *sets) {
    return tu_epoch(yaml, sets, &S, &T);
}

/* sets[] = common, then extra (NULL-terminated), into out (NULL-terminated). */
static void join(const char **out, const char *const *common, int nc, const char *const *extra) {
    int n = 0;
    for (int i = 0; i < nc; i++)
        out[n++] = common[i];
    for (int i = 0; extra && extra[i]; i++)
        out[n++] = extra[i];
    out[n] = NULL;
}

/* Every metric of every instance, epoch and server, model and simulator. */
static void assert_same_runs(const char *what, const char *yaml, const char *const *a,
                             const char *const *b) {
    run_metrics_t ma, sa, mb, sb;
    assert_int_equal(tu_run(yaml, a, &S, &T, &ma, &sa), 0);
    assert_int_equal(tu_run(yaml, b, &S, &T, &mb, &sb), 0);
    assert_int_equal(ma.ninst, mb.ninst);
    assert_int_equal(ma.nepochs, mb.nepochs);
    size_t n = (size_t)ma.ninst * (size_t)ma.nepochs;
    size_t ns = (size_t)ma.nservers * (size_t)ma.nepochs;
    if (memcmp(ma.m, mb.m, n * sizeof *ma.m) || memcmp(sa.m, sb.m, n * sizeof *sa.m) ||
        memcmp(ma.srv, mb.srv, ns * sizeof *ma.srv) || memcmp(sa.srv, sb.srv, ns * sizeof *sa.srv))
        fail_msg("%s: ssd with a flat curve differs from fixed (sim %.9g vs %.9g s, model %.9g "
                 "vs %.9g s)",
                 what, metrics_at(&sb, 0, 0)->epoch_s, metrics_at(&sa, 0, 0)->epoch_s,
                 metrics_at(&mb, 0, 0)->epoch_s, metrics_at(&ma, 0, 0)->epoch_s);
    metrics_free(&ma), metrics_free(&sa), metrics_free(&mb), metrics_free(&sb);
}

/* A flat curve at L with peak_mb_s B is fixed's latency_ms L, read_mb_s B:
 * every figure identical, over both loaders (ordered reads and the
 * calendars of synchronous ones), a cache, spread sizes, the IOPS cap, a
 * shared device and record shards. */
static void test_flat_is_fixed(void **state) {
    (void)state;
    static const char *const fixed[] = {"server.storage.kind=fixed",
                                        "server.storage.latency_ms=0.7",
                                        "server.storage.read_mb_s=150"};
    static const char *const ssd[] = {"server.storage.kind=ssd",
                                      "server.storage.latency_qd1_ms=0.7",
                                      "server.storage.latency_qd4_ms=0.7",
                                      "server.storage.latency_qd16_ms=0.7",
                                      "server.storage.latency_qd32_ms=0.7",
                                      "server.storage.peak_mb_s=150"};
    static const char *const cases[][12] = {
        {"server.storage.queue_depth=8", NULL},
        {"server.storage.queue_depth=3", "server.storage.read_iops=900", NULL},
        {"epochs=3", "dataset.item_kb_cv=0.6", "server.cache_gb=0.15", "loader.cache=lru",
         "server.storage.queue_depth=40", NULL},
        {"loader.kind=pytorch", "loader.num_workers=4", "server.storage.queue_depth=16",
         "server.storage.read_iops=1500", NULL},
        {"loader.kind=pytorch", "loader.num_workers=3", "epochs=2", "dataset.item_kb_cv=0.3",
         "server.cache_gb=0.1", NULL},
        {"server.count=2", "server.storage.shared=true", "jobs.0.gpus=2",
         "server.storage.queue_depth=6", NULL},
        {"dataset.shard_items=16", "server.storage.queue_depth=4", NULL},
        {"loader.kind=pytorch", "loader.num_workers=2", "dataset.shard_items=8", NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *a[24], *b[24];
        join(a, fixed, 3, cases[c]);
        join(b, ssd, 6, cases[c]);
        char what[32];
        snprintf(what, sizeof what, "case %zu", c);
        assert_same_runs(what, base, a, b);
    }
}

/* A rising curve: Q / (lat(Q) + 100 KB / 2000 MB/s) items/s, at depths on
 * the points, between them (8, 24: interpolated) and beyond them (64: flat);
 * the window (prefetch) holds more than Q items so the device stays full.
 * The simulator's first Q reads of the epoch see 1..Q in flight (a little
 * faster than the closed form), the last ones fewer as the epoch drains:
 * within 0.1% up to 32 (measured: 0.01%). At 64 the channel is 79% busy and
 * a batch's reads, taken by the device together, queue on it: within 1%
 * (measured: 0.8% slower). The model is marked approximate. */
static void test_rising_curve(void **state) {
    (void)state;
    const int qd[] = {4, 8, 16, 24, 32, 64};
    for (size_t i = 0; i < sizeof qd / sizeof qd[0]; i++) {
        char q[64];
        snprintf(q, sizeof q, "server.storage.queue_depth=%d", qd[i]);
        const char *extra[] = {q, "jobs.0.prefetch_batches=4", NULL}, *sets[16];
        join(sets, rising, NRISING, extra);
        double want = 3200 * (rising_lat(qd[i]) + 0.1 / 2000) / qd[i] + 0.001;
        tu_epoch_t r = run(base, sets);
        char what[64];
        snprintf(what, sizeof what, "rising curve, qd %d", qd[i]);
        tu_expect_epoch(what, r, want, qd[i] <= 32 ? 0.001 : 0.01, BN_IN_FLIGHT);
        assert_int_equal(r.approx, 1);
        /* The same device flat at lat(1) is faster. */
        const char *flat[] = {
            "server.storage.latency_qd1_ms=0.2",  "server.storage.latency_qd4_ms=0.2",
            "server.storage.latency_qd16_ms=0.2", "server.storage.latency_qd32_ms=0.2",
            "server.storage.peak_mb_s=2000",      q,
            "jobs.0.prefetch_batches=4",          NULL};
        tu_epoch_t f = run(base, flat);
        assert_int_equal(f.approx, 0);
        if (!(f.sim < r.sim && f.model < r.model))
            fail_msg("qd %d: flat %.4f s (model %.4f) not faster than rising %.4f s (%.4f)", qd[i],
                     f.sim, f.model, r.sim, r.model);
    }
}

/* The caps: 400 IOPS is 8 s whatever the curve allows; 20 MB/s of 100 KB
 * items is 200/s, 16 s. */
static void test_caps(void **state) {
    (void)state;
    const char *iops[] = {"server.storage.read_iops=400", NULL}, *sets[16];
    join(sets, rising, NRISING, iops);
    tu_expect_epoch("read_iops", run(base, sets), 8 + 0.001, 0.005, BN_IN_FLIGHT);
    const char *bw[] = {
        "server.storage.latency_qd1_ms=0.01",  "server.storage.latency_qd4_ms=0.01",
        "server.storage.latency_qd16_ms=0.02", "server.storage.latency_qd32_ms=0.04",
        "server.storage.peak_mb_s=20",         NULL};
    tu_expect_epoch("peak_mb_s", run(base, bw), 16, 0.005, BN_STORAGE_BW);
}

/* The device by hand: queue depth 4, lat(k) = k ms (1 ms at 1 in flight,
 * 4 ms at 4; 2 and 3 ms between), transfers of no account. Each read pays
 * the latency of the reads in flight when the device takes it, itself
 * included; a read waits for the oldest of the 4 slots. */
static void test_in_flight_by_hand(void **state) {
    (void)state;
    const char *sets[] = {"server.storage.latency_qd1_ms=1",
                          "server.storage.latency_qd4_ms=4",
                          "server.storage.latency_qd16_ms=4",
                          "server.storage.latency_qd32_ms=4",
                          "server.storage.peak_mb_s=1e9",
                          "server.storage.queue_depth=4",
                          NULL};
    assert_int_equal(tu_build(base, sets, &S, &T), 0);
    storage_t d = {.ops = scenario_storage(&S), .unordered = 0};
    assert_string_equal(d.ops->name, "ssd");
    assert_int_equal(d.ops->init(&d, &S), 0);
    io_acct_t acct = {0};
    /* issue (ms) -> end (ms): alone; with the first in flight; alone again
     * (both done); then a burst at 3 ms of 2, 3, 4 in flight; the slots of
     * the first two are free by then, the burst's fourth waits for the slot
     * freed at 4 ms and finds 4 in flight there. */
    const double issue[] = {0, 0.5, 3, 3, 3, 3, 3};
    const double want[] = {1, 2.5, 4, 5, 6, 7, 8};
    for (int i = 0; i < 7; i++) {
        double end = d.ops->read(&d, issue[i] / 1e3, 1e5, 0, 0, &acct) * 1e3;
        if (fabs(end - want[i]) > 1e-6)
            fail_msg("read %d: ends at %.6f ms, want %g", i, end, want[i]);
    }
    assert_true(acct.reads == 7);
    d.ops->destroy(&d);

    /* Reads out of time order (synchronous workers: 2 of them) pay lat(2) =
     * 2 ms each, wherever they fall. */
    const char *torch[] = {"loader.kind=pytorch",
                           "loader.num_workers=2",
                           "server.storage.latency_qd1_ms=1",
                           "server.storage.latency_qd4_ms=4",
                           "server.storage.latency_qd16_ms=4",
                           "server.storage.latency_qd32_ms=4",
                           "server.storage.peak_mb_s=1e9",
                           NULL};
    assert_int_equal(tu_build(base, torch, &S, &T), 0);
    storage_t u = {.ops = scenario_storage(&S), .unordered = 1};
    assert_int_equal(u.ops->init(&u, &S), 0);
    const double when[] = {10, 0, 5};
    for (int i = 0; i < 3; i++) {
        double end = u.ops->read(&u, when[i] / 1e3, 1e5, 0, 0, &acct) * 1e3;
        if (fabs(end - (when[i] + 2)) > 1e-6)
            fail_msg("unordered read at %g ms ends at %.6f ms, want %g", when[i], end, when[i] + 2);
    }
    u.ops->destroy(&u);
}

static void near_model(double got, double want) {
    if (fabs(got - want) > 1e-12) fail_msg("service_s %.9f, want %.9f", got, want);
}

/* A rate limit's bucket (fixed: server.storage.burst_ms): 100 KB at
 * 40 MB/s is 2.5 ms of the channel. With a 100 ms bucket, a read after the
 * channel idled ends when it is ready (plus no transfer), in order and out
 * of it; back to back, the average rate holds: 100 reads at once end
 * 250 ms - 100 ms after. Without one each waits its transfer. */
static void test_fixed_bucket(void **state) {
    (void)state;
    for (int unordered = 0; unordered < 2; unordered++) {
        const char *sets[] = {"server.storage.kind=fixed", "server.storage.read_mb_s=40",
                              "server.storage.latency_ms=0", "server.storage.burst_ms=100",
                              unordered ? "loader.kind=pytorch" : "loader.kind=pool", NULL};
        assert_int_equal(tu_build(base, sets, &S, &T), 0);
        storage_t d = {.ops = scenario_storage(&S), .unordered = unordered};
        assert_int_equal(d.ops->init(&d, &S), 0);
        io_acct_t acct = {0};
        /* idle reads, 10 ms apart: each at once */
        for (int i = 0; i < 5; i++) {
            const double at = 0.5 + 0.010 * i;
            const double end = d.ops->read(&d, at, 1e5, 0, 0, &acct);
            if (fabs(end - at) > 1e-9) fail_msg("idle read %d: %.6f s, want %.6f", i, end, at);
        }
        /* 100 at once at 1 s: the bucket's 100 ms, then the rate */
        double last = 0;
        for (int i = 0; i < 100; i++)
            last = d.ops->read(&d, 1.0, 1e5, 0, 0, &acct);
        if (fabs(last - (1.0 + 0.250 - 0.100)) > 0.0026)
            fail_msg("100 reads at once (unordered %d): the last at %.6f s, want 1.150", unordered,
                     last);
        near_model(d.ops->service_s(&S, 1e5), 0);
        d.ops->destroy(&d);
    }
    const char *none[] = {"server.storage.kind=fixed", "server.storage.read_mb_s=40",
                          "server.storage.latency_ms=0", NULL};
    assert_int_equal(tu_build(base, none, &S, &T), 0);
    storage_t d = {.ops = scenario_storage(&S), .unordered = 0};
    assert_int_equal(d.ops->init(&d, &S), 0);
    io_acct_t acct = {0};
    const double end = d.ops->read(&d, 0.5, 1e5, 0, 0, &acct);
    if (fabs(end - 0.5025) > 1e-9) fail_msg("without a bucket: %.6f s, want 0.5025", end);
    near_model(d.ops->service_s(&S, 1e5), 0.0025);
    d.ops->destroy(&d);
}

/* PyTorch's workers read synchronously: W workers are W reads in flight,
 * each paying lat(W) (8 workers: lat(8) = 1 ms, between the points). Batch
 * k goes to worker k mod W, so the busiest reads ceil(100 / W) batches
 * (within 0.1%; measured: exact to the printed digits). Transfers are made negligible (1e5 MB/s):
 * the calendar of the channel (storage_queue.h's, shared) delays reads out of time order that share
 * a bucket, which the fixed kind shows as well (4 workers, 2000 MB/s: 3%). */
static void test_pytorch_workers(void **state) {
    (void)state;
    const int workers[] = {1, 4, 8};
    for (int i = 0; i < 3; i++) {
        char w[64];
        snprintf(w, sizeof w, "loader.num_workers=%d", workers[i]);
        const char *extra[] = {w, NULL}, *common[16], *sets[24];
        join(common, torch_free, NTORCH, NULL);
        for (int k = 0; k < NRISING; k++)
            common[NTORCH + k] = rising[k];
        common[NTORCH + NRISING] = "server.storage.peak_mb_s=1e5";
        join(sets, common, NTORCH + NRISING + 1, extra);
        /* The batches of the last round come together: the GPUs compute
         * them one after another (1 ms each). */
        double rounds = ceil(100.0 / workers[i]), last = 100 - (rounds - 1) * workers[i];
        double want = rounds * 32 * (rising_lat(workers[i]) + 0.1 / 1e5 + 0.00001) + last * 0.001;
        char what[64];
        snprintf(what, sizeof what, "pytorch %d workers", workers[i]);
        tu_expect_epoch(what, run(base, sets), want, 0.001, -1);
    }
}

/* What build printed on stderr, with its exit code. */
static int build_err(const char *yaml, const char *const *sets, char *err, size_t n) {
    fflush(stderr);
    char path[] = "/tmp/stallsim-ssd-err-XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    assert_true(fd >= 0 && saved >= 0);
    dup2(fd, 2);
    int rc = tu_build(yaml, sets, &S, &T);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t got = pread(fd, err, n - 1, 0);
    err[got > 0 ? got : 0] = '\0';
    close(fd);
    unlink(path);
    return rc;
}

static void expect_refused(const char *const *sets, const char *needle) {
    char err[2048];
    assert_int_equal(build_err(base, sets, err, sizeof err), EXIT_INPUT);
    if (!strstr(err, needle)) fail_msg("stderr lacks '%s': %s", needle, err);
}

/* Bad input, each refused with the key named (exit 2); a curve from a host
 * profile counts as given. */
static void test_rules(void **state) {
    (void)state;
    /* Part of a curve: the points not given are named. */
    const char *part[] = {"server.storage.latency_qd1_ms=0.1", "server.storage.latency_qd32_ms=2",
                          NULL};
    expect_refused(part, "server.storage.latency_qd4_ms: not given, while "
                         "server.storage.latency_qd1_ms is");
    expect_refused(part, "server.storage.latency_qd16_ms: not given");
    /* A negative latency: the row's bound. */
    const char *neg[] = {"server.storage.latency_qd1_ms=0.1", "server.storage.latency_qd4_ms=-1",
                         "server.storage.latency_qd16_ms=1", "server.storage.latency_qd32_ms=2",
                         NULL};
    expect_refused(neg, "key 'server.storage.latency_qd4_ms': out of bounds");
    const char *zero_bw[] = {"server.storage.peak_mb_s=0", NULL};
    expect_refused(zero_bw, "key 'server.storage.peak_mb_s': out of bounds");
    /* The fixed kind's own keys under ssd, and ssd's under fixed. */
    const char *lat[] = {"server.storage.latency_ms=1", NULL};
    expect_refused(lat, "key 'server.storage.latency_ms' belongs to server.storage.kind: fixed, "
                        "but this scenario uses ssd");
    const char *mb[] = {"server.storage.read_mb_s=100", NULL};
    expect_refused(mb, "belongs to server.storage.kind: fixed");
    const char *curve_fixed[] = {"server.storage.kind=fixed", "server.storage.latency_qd1_ms=1",
                                 NULL};
    expect_refused(curve_fixed, "key 'server.storage.latency_qd1_ms' belongs to "
                                "server.storage.kind: ssd, but this scenario uses fixed");
    /* The keys both kinds list: each kind's; object lists neither. */
    const char *shared[] = {"server.storage.read_iops=100", "server.storage.queue_depth=4", NULL};
    assert_int_equal(tu_build(base, shared, &S, &T), 0);
    const char *shared_fixed[] = {"server.storage.kind=fixed", "server.storage.read_iops=100",
                                  "server.storage.queue_depth=4", NULL};
    assert_int_equal(tu_build(base, shared_fixed, &S, &T), 0);
    const char *object[] = {"server.storage.kind=object", "server.storage.read_iops=100", NULL};
    expect_refused(object, "key 'server.storage.read_iops' belongs to server.storage.kind: fixed "
                           "or ssd, but this scenario uses object");
    const char *all[] = {"server.storage.latency_qd1_ms=0.1", "server.storage.latency_qd4_ms=0.1",
                         "server.storage.latency_qd16_ms=1", "server.storage.latency_qd32_ms=2",
                         NULL};
    assert_int_equal(tu_build(base, all, &S, &T), 0);

    /* A host profile's curve is given: one point overridden is still whole. */
    char prof[] = "/tmp/stallsim-ssd-profile-XXXXXX";
    int fd = mkstemp(prof);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("profile_version: 1\nscenario:\n  server:\n    storage:\n      read_mb_s: 500\n"
          "      latency_ms: 0.2\n      queue_depth: 32\n      latency_qd1_ms: 0.1\n"
          "      latency_qd4_ms: 0.3\n      latency_qd16_ms: 1.2\n      latency_qd32_ms: 2.5\n"
          "      peak_mb_s: 600\n",
          f);
    fclose(f);
    char yaml[1024];
    snprintf(yaml, sizeof yaml, "host: %s\n%s", prof, base);
    const char *one[] = {"server.storage.latency_qd4_ms=0.4", NULL};
    assert_int_equal(tu_build(yaml, one, &S, &T), 0);
    assert_true(tu_key(&S, "server.storage.latency_qd1_ms") == 0.1);
    assert_true(tu_key(&S, "server.storage.latency_qd4_ms") == 0.4);
    assert_true(tu_key(&S, "server.storage.latency_qd32_ms") == 2.5);
    assert_true(tu_key(&S, "server.storage.peak_mb_s") == 600);
    unlink(prof);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flat_is_fixed),
        cmocka_unit_test(test_rising_curve),
        cmocka_unit_test(test_caps),
        cmocka_unit_test(test_in_flight_by_hand),
        cmocka_unit_test(test_fixed_bucket),
        cmocka_unit_test(test_pytorch_workers),
        cmocka_unit_test(test_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
