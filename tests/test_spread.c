/* The prediction's sensitivity to a host profile's measured spread
 * (sim/run/spread.h) on scenarios with a closed form: prep-bound, where the
 * total is epochs x N x decode / cores and moves with decode exactly; GPU-
 * bound, where prep's spread moves nothing; a key the scenario sets itself,
 * which the profile's spread does not move; a spread that is not a number;
 * every profile with a description longer than a scenario value may be. */
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

#include "kinds.h"
#include "run.h"
#include "spread.h"

#define near(a, b, tol) assert_true(fabs((a) - (b)) <= (tol))

/* A profile with decode 10 ms an item on 4 cores and the given spread
 * lines, and a scenario of 10000 items over it (extra: its own keys). */
static int build(const char *spreads, const char *extra, double compute_s, variant_run_t *v,
                 spread_t *sp) {
    char dir[] = "/tmp/stallsim-spread-XXXXXX", prof[64], scn[64];
    if (!mkdtemp(dir)) return -1;
    snprintf(prof, sizeof prof, "%s/host.yaml", dir);
    snprintf(scn, sizeof scn, "%s/s.yaml", dir);
    /* calibrate's descriptions run past a value's 255 characters (its
     * ssd_model, 361): the spreads are read without them. */
    char long_text[400];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = 0;
    FILE *f = fopen(prof, "w");
    fprintf(f,
            "profile_version: 1\nscenario:\n  server: {cpus: 4}\n"
            "  prep: {decode_ms_per_item: 10, decode_ms_per_mb: 0, augment_ms: 0}\n"
            "measured:\n  storage:\n    ssd_model: \"%s\"\n"
            "  stability:\n    max_spread: 0.1\n    warnings: []\n"
            "    spread:\n%s",
            long_text, spreads);
    fclose(f);
    f = fopen(scn, "w");
    fprintf(f,
            "host: host.yaml\nepochs: 2\ndataset: {items: 10000, item_kb: 100}\n%s"
            "server: {gpus: 1}\n"
            "jobs: [{gpus: 1, batch_per_gpu: 10, compute_s_per_batch: %g}]\n",
            extra, compute_s);
    fclose(f);
    /* Its positions outlive the build, as in the program: the last one is
     * kept, each earlier one freed here (LeakSanitizer found them lost). */
    static scenario_doc_t doc;
    static int loaded;
    if (loaded) scenario_doc_free(&doc);
    loaded = 1;
    int rc = scenario_doc_load(&doc, scn);
    if (!rc) rc = run_build(&doc, NULL, -1, 0, v);
    if (!rc) rc = run_execute(v, 0);
    if (!rc) rc = spread_load(&doc, &v->scn, sp);
    if (!rc) rc = spread_apply(&v->scn, &v->topo, sp);
    unlink(prof), unlink(scn), rmdir(dir);
    return rc;
}

static void test_prep_bound_moves_with_decode(void **state) {
    (void)state;
    variant_run_t v = {0};
    spread_t sp;
    assert_int_equal(build("      prep.decode_ms_per_item: 0.2\n      loader.oversub: 0.5\n", "",
                           0.0001, &v, &sp),
                     0);
    /* The oversub curve is a string: no figure to move. */
    assert_int_equal(sp.n, 1);
    assert_string_equal(sp.key[0], "prep.decode_ms_per_item");
    /* 2 epochs x 10000 items x 10 ms / 4 cores = 50 s; decode x (1 +- 0.2)
     * moves it by 2 x 10000 x 2 ms / 4 = 10 s either way. */
    near(sp.total_s, 50, 0.01);
    near(sp.slow_s - sp.total_s, 10, 1e-6);
    near(sp.total_s - sp.fast_s, 10, 1e-6);
    near(sp.total_s, spread_total_s(&v.model), 1e-9);
    run_release(&v);
}

static void test_gpu_bound_does_not_move(void **state) {
    (void)state;
    variant_run_t v = {0};
    spread_t sp;
    /* 1000 batches of 1 s an epoch: prep's 25 s (30 at its slow bound) never
     * binds; only the pipeline's fill, the first batch's prep (m / P, P = 4
     * cores / 10 ms = 400 items/s), moves: 2 epochs x 10 items x 2 ms / 4. */
    assert_int_equal(build("      prep.decode_ms_per_item: 0.2\n", "", 1.0, &v, &sp), 0);
    assert_int_equal(sp.n, 1);
    near(sp.total_s, 2 * (1000 + 10 / 400.0), 1e-6);
    near(sp.slow_s - sp.total_s, 0.01, 1e-9);
    near(sp.total_s - sp.fast_s, 0.01, 1e-9);
    run_release(&v);
}

static void test_the_users_own_key_does_not_move(void **state) {
    (void)state;
    variant_run_t v = {0};
    spread_t sp;
    assert_int_equal(build("      prep.decode_ms_per_item: 0.2\n",
                           "prep: {decode_ms_per_item: 10}\n", 0.0001, &v, &sp),
                     0);
    assert_int_equal(sp.n, 0);
    run_release(&v);
}

static void test_bad_spread_is_an_input_error(void **state) {
    (void)state;
    variant_run_t v = {0};
    spread_t sp;
    assert_int_equal(build("      prep.decode_ms_per_item: lots\n", "", 0.0001, &v, &sp),
                     EXIT_INPUT);
    run_release(&v);
    assert_int_equal(build("      prep.decode_ms_per_item: -0.1\n", "", 0.0001, &v, &sp),
                     EXIT_INPUT);
    run_release(&v);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prep_bound_moves_with_decode),
        cmocka_unit_test(test_gpu_bound_does_not_move),
        cmocka_unit_test(test_the_users_own_key_does_not_move),
        cmocka_unit_test(test_bad_spread_is_an_input_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
