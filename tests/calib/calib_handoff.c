/* calib_handoff: the hand-off benchmark (handoff_bench): a small batch handed
 * to 1 and 2 readers gives plausible, checked copies and leaves nothing in
 * /dev/shm; a batch larger than /dev/shm's free space is refused with the
 * reason before anything is created; the fit stays non-negative. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench.h"

#include "handoff_bench.h"

/* Segments this process left in /dev/shm. */
static int leftovers(void) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "stallsim-handoff-%ld-", (long)getpid());
    DIR *d = opendir("/dev/shm");
    int n = 0;
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

/* 4 MB to 1 and 2 readers, 3 batches each: every copy counted, each at a
 * rate a host's memory allows (0.01 to 100 ms/MB: 10 MB/s to 100 GB/s). */
static void test_small_batch(void **state) {
    (void)state;
    static handoff_result r;
    char err[512] = "";
    const int readers[] = {1, 2};
    if (handoff_bench(4e6, readers, 2, 3, &r, err, sizeof err) != 0)
        fail_msg("handoff_bench: %s", err);
    assert_int_equal(r.npoints, 2);
    assert_true(fabs(r.batch_mb - 4) < 1e-12);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(r.pt[k].readers, readers[k]);
        assert_int_equal(r.pt[k].cpu_ms_per_mb.n, 3 * readers[k]);
        double c = r.pt[k].cpu_ms_per_mb.median;
        if (!(c > 0.001 && c < 100)) fail_msg("%d readers: %g ms/MB", readers[k], c);
    }
    assert_int_equal(r.write_ms_per_mb.n, 6);
    assert_true(r.write_ms_per_mb.median > 0.001 && r.write_ms_per_mb.median < 100);
    assert_true(r.ms_per_mb >= 0 && r.ms_per_mb_per_reader >= 0);
    assert_true(r.ms_per_mb + r.ms_per_mb_per_reader > 0);
    assert_int_equal(leftovers(), 0);
}

/* Larger than /dev/shm's free space: refused, saying so, nothing created. */
static void test_refuses_past_shm(void **state) {
    (void)state;
    static handoff_result r;
    char err[512] = "";
    const int one[] = {1};
    double free_b = handoff_shm_free_bytes();
    if (free_b < 0) skip();
    assert_int_equal(handoff_bench(free_b + 1e9, one, 1, 1, &r, err, sizeof err), -1);
    if (!strstr(err, "does not fit /dev/shm") || !strstr(err, "MB free"))
        fail_msg("the reason: %s", err);
    assert_int_equal(leftovers(), 0);
    /* Bad arguments. */
    const int zero[] = {0}, many[] = {HANDOFF_MAX_READERS + 1};
    assert_int_equal(handoff_bench(4e6, zero, 1, 1, &r, err, sizeof err), -1);
    assert_int_equal(handoff_bench(4e6, many, 1, 1, &r, err, sizeof err), -1);
    assert_int_equal(handoff_bench(100, one, 1, 1, &r, err, sizeof err), -1);
    assert_int_equal(handoff_bench(4e6, one, 1, HANDOFF_MAX_REPS + 1, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad arguments"));
}

/* calibrate's entry under a file-size limit (ulimit -f: a segment is a
 * file): not measured, saying why, no keys, no failure of calibrate. */
static void test_calibrate_not_measured(void **state) {
    (void)state;
    const calib_bench_t *b = NULL;
    for (int i = 0; calib_benches[i]; i++)
        if (strcmp(calib_benches[i]->section, "handoff") == 0) b = calib_benches[i];
    assert_non_null(b);
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old, lim.rlim_cur = 4096;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    static handoff_result r;
    calib_ctx c = {.reps = 1};
    char err[256] = "";
    int rc = b->run(&c, &r, err, sizeof err);
    setrlimit(RLIMIT_FSIZE, &old);
    assert_int_equal(rc, 0);
    assert_int_equal(r.measured, 0);
    if (!strstr(r.reason, "file-size limit")) fail_msg("the reason: %s", r.reason);
    profile_keys k = {0};
    b->keys(&r, &k);
    assert_int_equal(k.n, 0);
    assert_int_equal(leftovers(), 0);
}

/* The fit: a line it recovers; a falling cost is flat at the mean, not a
 * negative slope; a line below the origin is pinned there. */
static void test_fit(void **state) {
    (void)state;
    const double n[] = {1, 2, 4, 8};
    double a, b;
    const double line[] = {0.2, 0.25, 0.35, 0.55};
    handoff_fit(n, line, 4, &a, &b);
    assert_true(fabs(a - 0.2) < 1e-12 && fabs(b - 0.05) < 1e-12);
    const double falling[] = {0.4, 0.3, 0.3, 0.2};
    handoff_fit(n, falling, 4, &a, &b);
    assert_true(fabs(a - 0.3) < 1e-12 && b == 0);
    const double steep[] = {0.0, 0.3, 0.9, 2.1}; /* OLS intercept below 0 */
    handoff_fit(n, steep, 4, &a, &b);
    assert_true(a == 0 && b > 0.29 && b < 0.31);
    const double single[] = {0.3};
    handoff_fit(n, single, 1, &a, &b);
    assert_true(fabs(a - 0.3) < 1e-12 && b == 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_batch),
        cmocka_unit_test(test_refuses_past_shm),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_calibrate_not_measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
