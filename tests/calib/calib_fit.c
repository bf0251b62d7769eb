/* calib_fit: least-squares fits recover known models (the decode cost model
 * on synthetic samples), the cost model never goes negative (bigger files
 * decoding faster, as noise on a busy host makes them, give the plain mean,
 * not -5 ms/MB), and the summaries compute what they claim. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include <string.h>

#include "decode_bench.h"
#include "fit.h"
#include "stats.h"

static void test_exact_line(void **state) {
    (void)state;
    double x[5] = {0.05, 0.1, 0.2, 0.3, 0.07}, y[5];
    for (int i = 0; i < 5; i++)
        y[i] = 3.5 * x[i] + 0.25;
    linear_fit f;
    assert_int_equal(fit_linear(x, y, 5, &f), 0);
    assert_float_equal(f.slope, 3.5, 1e-9);
    assert_float_equal(f.intercept, 0.25, 1e-9);
    assert_float_equal(f.r2, 1.0, 1e-9);
}

/* ms = 8 ms/MB * size + 0.05 ms, sizes lognormal around 110 KB, noise 2%. */
static void test_decode_fit_recovers_known_model(void **state) {
    (void)state;
    enum { N = 3000 };
    static double mb[N], ms[N];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int i = 0; i < N; i++) {
        mb[i] = gsl_ran_lognormal(r, -2.25, 0.5);
        ms[i] = (8.0 * mb[i] + 0.05) * (1.0 + gsl_ran_gaussian(r, 0.02));
    }
    linear_fit f;
    assert_int_equal(decode_fit(mb, ms, N, &f), 0);
    assert_float_equal(f.slope, 8.0, 0.08);
    assert_float_equal(f.intercept, 0.05, 0.01);
    assert_true(f.r2 > 0.95);
    gsl_rng_free(r);
}

static void test_degenerate_inputs(void **state) {
    (void)state;
    double x[3] = {1, 1, 1}, y[3] = {1, 2, 3};
    linear_fit f;
    assert_int_equal(fit_linear(x, y, 3, &f), -1);
    assert_int_equal(fit_linear(x, y, 1, &f), -1);
}

/* Per-file medians whose free line slopes down (-5.04 ms/MB in issue 31's
 * calib_cli run): the model holds ms/MB at 0 and takes the plain mean, and
 * says so; a free line with a negative intercept goes through 0 instead. */
static void test_cost_model_never_negative(void **state) {
    (void)state;
    double mb[6] = {0.02, 0.04, 0.06, 0.08, 0.10, 0.12};
    double ms[6] = {1.30, 1.22, 1.21, 1.10, 1.05, 0.98};
    linear_fit f;
    assert_int_equal(decode_fit(mb, ms, 6, &f), 0);
    assert_true(f.slope < -1.0); /* the data this case is about */
    decode_result r;
    memset(&r, 0, sizeof r);
    assert_int_equal(decode_model(mb, ms, 6, &r), 0);
    assert_float_equal(r.model_ms_per_mb, 0.0, 0.0);
    assert_float_equal(r.model_ms_per_item, (1.30 + 1.22 + 1.21 + 1.10 + 1.05 + 0.98) / 6, 1e-12);
    assert_int_equal(r.model_method, COST_MEAN);
    assert_non_null(strstr(cost_method_words(r.model_method), "plain mean"));

    /* Steep line below 0 at x = 0: through 0 fits better than the mean. */
    double y2[6];
    for (int i = 0; i < 6; i++)
        y2[i] = 10.0 * mb[i] - 0.05;
    assert_int_equal(decode_model(mb, y2, 6, &r), 0);
    assert_int_equal(r.model_method, COST_THROUGH_ORIGIN);
    assert_float_equal(r.model_ms_per_item, 0.0, 0.0);
    assert_true(r.model_ms_per_mb > 9.0 && r.model_ms_per_mb < 10.0);

    /* A physical line is kept as fitted. */
    for (int i = 0; i < 6; i++)
        y2[i] = 8.0 * mb[i] + 0.05;
    assert_int_equal(decode_model(mb, y2, 6, &r), 0);
    assert_int_equal(r.model_method, COST_FIT);
    assert_float_equal(r.model_ms_per_mb, 8.0, 1e-9);
    assert_float_equal(r.model_ms_per_item, 0.05, 1e-9);

    /* No line (every file one size, or one file): the mean, said so. */
    double same[3] = {0.1, 0.1, 0.1}, t[3] = {1.0, 2.0, 3.0};
    assert_int_equal(decode_model(same, t, 3, &r), 0);
    assert_int_equal(r.model_method, COST_MEAN_NO_LINE);
    assert_float_equal(r.model_ms_per_mb, 0.0, 0.0);
    assert_float_equal(r.model_ms_per_item, 2.0, 1e-12);
    assert_int_equal(decode_model(same, t, 0, &r), -1);
}

static void test_summaries(void **state) {
    (void)state;
    double v[100];
    for (int i = 0; i < 100; i++)
        v[i] = 100 - i; /* 100..1, unsorted order */
    stat_summary s = stats_summarize(v, 100);
    assert_float_equal(s.median, 50.5, 1e-12);
    assert_float_equal(s.min, 1, 0);
    assert_float_equal(s.max, 100, 0);
    assert_int_equal(s.n, 100);
    assert_float_equal(stats_percentile(v, 100, 90), 90.1, 1e-9);
    assert_float_equal(stats_percentile(v, 100, 99), 99.01, 1e-9);
    assert_float_equal(v[0], 100, 0); /* input untouched */
    double odd[5] = {5, 1, 4, 2, 3};
    assert_float_equal(stats_summarize(odd, 5).median, 3, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_line),
        cmocka_unit_test(test_decode_fit_recovers_known_model),
        cmocka_unit_test(test_degenerate_inputs),
        cmocka_unit_test(test_cost_model_never_negative),
        cmocka_unit_test(test_summaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
