/* calib_stability: the rules that flag calibrate figures as untrustworthy
 * (sim/calibrate/stability.c), on fixed readings, and a real measurement of a
 * host kept busy by a competing process. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "stability.h"

static void test_host_rule(void **state) {
    (void)state;
    stability_t s = {0};
    /* An idle host: nothing to say. */
    assert_int_equal(stability_judge_host(&s, 0.5, 2, 0.10, 0.00), 0);
    assert_int_equal(s.nwarnings, 0);
    /* Each reading past its bound is flagged, and says which. */
    assert_int_equal(stability_judge_host(&s, 3.0, 2, 0.0, 0.0), 1);
    assert_non_null(strstr(s.warnings[0], "load average 3.00 on 2 cores"));
    assert_int_equal(stability_judge_host(&s, 0.0, 2, 0.5, 0.0), 1);
    assert_non_null(strstr(s.warnings[1], "other processes took 50%"));
    assert_int_equal(stability_judge_host(&s, 0.0, 2, 0.0, 0.10), 1);
    assert_non_null(strstr(s.warnings[2], "stole 10%"));
    assert_int_equal(s.nwarnings, 3);
}

static void test_figure_rule(void **state) {
    (void)state;
    stability_t s = {0};
    /* The 8.9 vs 19.6 ms/MB case: a spread far past 25% is flagged. */
    stat_summary wide = {.median = 12.0, .min = 8.9, .max = 19.6, .n = 7};
    stat_summary tight = {.median = 12.0, .min = 11.5, .max = 12.8, .n = 7};
    stat_summary one = {.median = 12.0, .min = 8.0, .max = 20.0, .n = 1};
    assert_true(stability_figure(&s, "decode ms/MB", wide) > 0.85);
    assert_int_equal(s.nwarnings, 1);
    assert_non_null(strstr(s.warnings[0], "decode ms/MB varied by 89%"));
    assert_true(stability_figure(&s, "decode ms/MB", tight) < STABILITY_MAX_SPREAD);
    assert_int_equal(stability_figure(&s, "x", one), 0); /* one sample: no spread to judge */
    assert_int_equal(s.nwarnings, 1);
}

/* A real reading: a child spinning on every core for the measurement shows
 * up as other processes' CPU time. */
static void test_busy_host_measured(void **state) {
    (void)state;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (access("/proc/stat", R_OK) != 0) skip();
    stability_t s;
    stability_begin(&s);
    pid_t kids[64];
    int n = cores > 0 && cores < 64 ? (int)cores : 1;
    for (int i = 0; i < n; i++)
        if ((kids[i] = fork()) == 0)
            for (volatile unsigned long x = 0;; x++) {
            }
    struct timespec t = {1, 200000000};
    nanosleep(&t, NULL);
    for (int i = 0; i < n; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    stability_end(&s);
    assert_true(s.host_known);
    assert_true(s.other_share > STABILITY_MAX_OTHER);
    int flagged = 0;
    for (int i = 0; i < s.nwarnings; i++)
        flagged |= strstr(s.warnings[i], "other processes took") != NULL;
    assert_true(flagged);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_rule),
        cmocka_unit_test(test_figure_rule),
        cmocka_unit_test(test_busy_host_measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
