/* The report's one check (valid.h) and the model/simulator gap (gap.h), held
 * to handmade figures: every format writes nothing and the command fails
 * (EXIT_RUNTIME) when one figure is non-finite, out of its range or a
 * negative time; floating noise prints as 0, never "-0"; a sim row more than
 * 5 % from the model is marked (`~`, model_differs), more than 10 % warned. */
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
#include "fig.h"
#include "model.h"
#include "report.h"
#include "testutil.h"
#include "valid.h"

static const char *yaml =
    "epochs: 2\ndataset: {items: 2000, item_kb: 100}\n"
    "server: {cpus: 4, gpus: 1, cache_gb: 0.1}\n"
    "jobs: [{name: net, gpus: 1, batch_per_gpu: 50, gpu_items_per_s: 1000}]\n";

static variant_run_t V;

static int setup(void **state) {
    (void)state;
    memset(&V, 0, sizeof V);
    if (tu_run(yaml, NULL, &V.scn, &V.topo, &V.model, &V.sim)) return -1;
    return model_steady(&V.scn, &V.topo, 0, &V.steady, &V.steady_from) ? -1 : 0;
}

static int teardown(void **state) {
    (void)state;
    metrics_free(&V.model);
    metrics_free(&V.sim);
    return 0;
}

/* What report_write writes in fmt (malloc'ed) and its return code. */
static char *write_fmt(report_format_t fmt, int *rc) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    *rc = report_write(f, fmt, "t.yaml", &V, 1, "test");
    fclose(f);
    return buf;
}

/* Sets one figure of the sim's epoch 2 to bad, checks that no format writes
 * a byte and every one fails, then puts the figure back. */
static void refused(double *field, double bad) {
    double keep = *field;
    *field = bad;
    for (int fmt = FORMAT_TEXT; fmt <= FORMAT_HTML; fmt++) {
        int rc;
        char *out = write_fmt((report_format_t)fmt, &rc);
        assert_int_equal(rc, EXIT_RUNTIME);
        assert_int_equal(strlen(out), 0);
        free(out);
    }
    *field = keep;
}

static void test_impossible_refused(void **state) {
    (void)state;
    epoch_metrics_t *s = metrics_at(&V.sim, 0, 1), *m = metrics_at(&V.model, 0, 0);
    refused(&s->fetch_stall_s, -2.5);      /* a negative stall */
    refused(&s->gpu_util, INFINITY);       /* gpu inf% */
    refused(&s->gpu_util, NAN);            /* -nan in JSON */
    refused(&s->cpu_util, 1.1);            /* a utilisation above 1 */
    refused(&s->hit_rate, 1.5);            /* a hit rate above 1 */
    refused(&s->hit_rate, -0.01);          /* and below 0 */
    refused(&m->epoch_s, 0);               /* an epoch of 0 s */
    refused(&m->t_gpu_s, -1);              /* a negative time */
    refused(&s->storage_read_bytes, -1e6); /* a negative count */
    refused(&server_at(&V.sim, 0, 0)->storage_read_bytes, -1);
    refused(&V.steady.hit_rate, NAN);
    /* measure's rows go through the same check (issue 33 S6: stall shares
     * outside 0-100 % were printed): a measured T below T_prep is refused. */
    epoch_metrics_t meas = *metrics_at(&V.sim, 0, 0);
    assert_int_equal(report_valid_row(&meas, NULL, &V.scn, "measure", "measured", 1), 0);
    meas.fetch_stall_s = -0.2 * meas.epoch_s;
    assert_int_equal(report_valid_row(&meas, NULL, &V.scn, "measure", "measured", 1), EXIT_RUNTIME);
    int rc;
    char *out = write_fmt(FORMAT_JSON, &rc); /* all back: it prints */
    assert_int_equal(rc, 0);
    assert_true(strlen(out) > 0);
    free(out);
}

/* Floating noise around zero (a stall of -1e-13 s) prints as 0 in every
 * format, and nothing prints as -0, inf or nan. */
static void test_noise_and_negative_zero(void **state) {
    (void)state;
    epoch_metrics_t *s = metrics_at(&V.sim, 0, 1);
    double keep = s->fetch_stall_s, keepr = s->remote_hit_rate;
    s->fetch_stall_s = -1e-13;
    s->remote_hit_rate = -0.0;
    for (int fmt = FORMAT_TEXT; fmt <= FORMAT_HTML; fmt++) {
        int rc;
        char *out = write_fmt((report_format_t)fmt, &rc);
        assert_int_equal(rc, 0);
        assert_null(strstr(out, "-0.0"));
        assert_null(strstr(out, "-1e-13"));
        assert_null(strstr(out, ": -0,"));
        assert_null(strstr(out, ",-0,"));
        assert_null(strstr(out, "inf"));
        assert_null(strstr(out, "nan"));
        free(out);
    }
    s->fetch_stall_s = keep, s->remote_hit_rate = keepr;
    char b[32];
    assert_string_equal(fig(b, sizeof b, -0.04, 1), "0.0");
    assert_string_equal(fig(b, sizeof b, -0.0, 2), "0.00");
    assert_string_equal(fig(b, sizeof b, -0.06, 1), "-0.1");
    assert_true(fig_ok(-1e-13, FIG_TIME, 10) && !fig_ok(-1e-3, FIG_TIME, 10));
    assert_true(fig_ok(1 + 1e-12, FIG_SHARE, 1) && !fig_ok(1.001, FIG_SHARE, 1));
}

/* The sim's epoch 2 at `ratio` times the model's: its CSV row's vs_model and
 * model_differs, and the text's ~ and warning. */
static void gap_case(double ratio, int marked, int warned) {
    epoch_metrics_t *s = metrics_at(&V.sim, 0, 1), *m = metrics_at(&V.model, 0, 1);
    epoch_metrics_t keep = *s;
    /* Scaled as a slower run would be: every time by ratio, the rates and
     * shares by its inverse, so every figure stays in its range. */
    s->epoch_s = m->epoch_s * ratio;
    s->throughput_items_s = m->throughput_items_s / ratio;
    s->gpu_util = m->gpu_util / (ratio > 1 ? ratio : 1);
    int rc;
    char *csv = write_fmt(FORMAT_CSV, &rc), *text = write_fmt(FORMAT_TEXT, &rc);
    char want[128];
    snprintf(want, sizeof want, ",%.6f,%d\n", ratio - 1, marked);
    assert_non_null(strstr(csv, want));
    assert_int_equal(strstr(text, "%~ ") != NULL, marked);
    snprintf(want, sizeof want,
             "warning: the simulator and the model differ by %.0f %% here (variant -, job net, "
             "epoch 2)",
             100 * fabs(ratio - 1));
    assert_int_equal(strstr(text, want) != NULL, warned);
    char *json = write_fmt(FORMAT_JSON, &rc);
    assert_non_null(strstr(json, marked ? "\"model_differs\": true" : "\"model_differs\": false"));
    free(csv), free(text), free(json);
    *s = keep;
}

static void test_gap_marked_and_warned(void **state) {
    (void)state;
    gap_case(1.03, 0, 0);
    gap_case(1.06, 1, 0);
    gap_case(1.5, 1, 1);
    gap_case(0.8, 1, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_impossible_refused),
        cmocka_unit_test(test_noise_and_negative_zero),
        cmocka_unit_test(test_gap_marked_and_warned),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
