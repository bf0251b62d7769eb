/* loader.kind: pool against a plain earliest-free-core scan: every item's
 * prep end on both timelines must be the same double, for pools of every
 * size around the sorted array's padding and the heap's threshold, with
 * ties (times on a coarse grid) and ready times before and after the
 * earliest free core; under a measured curve each item dilated by the
 * cores busy as it starts, and that dilation's closed forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "loader.h"
#include "scenario.h"

extern const loader_ops_t loader_pool;

static uint64_t lcg = 12345;

/* A small whole number of half seconds: equal times are common. */
static double grid(int span) {
    lcg = lcg * 6364136223846793005u + 1442695040888963407u;
    return (double)((lcg >> 33) % (uint64_t)(2 * span)) / 2;
}

/* The reference: the first of the earliest-free cores takes the item. */
static double scan(double *t, int n, double ready, double dur) {
    int at = 0;
    for (int i = 1; i < n; i++)
        if (t[i] < t[at]) at = i;
    t[at] = (t[at] > ready ? t[at] : ready) + dur;
    return t[at];
}

/* The same, the item dilated by k / (the curve's cores at k) for the k
 * cores busy as it starts, itself among them (NULL curve: linear). */
static double scan_curve(double *t, int n, double ready, double dur, const scenario_t *s) {
    int at = 0;
    for (int i = 1; i < n; i++)
        if (t[i] < t[at]) at = i;
    const double start = t[at] > ready ? t[at] : ready;
    int k = 1;
    for (int i = 0; i < n; i++)
        k += i != at && t[i] > start;
    if (scenario_prep_cores_shaped(s)) dur *= k / scenario_prep_cores(s, k, NULL);
    t[at] = start + dur;
    return t[at];
}

/* prep.scaling "1:1, 2:1.5, 4:2, 8:3" as scenario_build parses it. */
static void set_curve(scenario_t *s) {
    static const double th[] = {1, 2, 4, 8}, sp[] = {1, 1.5, 2, 3};
    s->prep.scaling_n = 4;
    memcpy(s->prep.scaling_threads, th, sizeof th);
    memcpy(s->prep.scaling_speedup, sp, sizeof sp);
}

static void against_scan(int curve) {
    static const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 23, 24, 25, 31, 47, 48, 49, 64, 100};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        static scenario_t scn;
        memset(&scn, 0, sizeof scn);
        if (curve) set_curve(&scn);
        prep_t p;
        memset(&p, 0, sizeof p);
        p.s = &scn;
        p.ns = 1;
        p.cores = n;
        assert_int_equal(loader_pool.init(&p), 0);
        double ref[2][100] = {{0}};
        double clock = 0;
        for (int i = 0; i < 20000; i++) {
            /* ready drifts forward about as fast as the pool drains */
            clock += grid(2) / n;
            double ready = clock + grid(3) - 1.5, ready_mem = clock / 2, dur = grid(4) + 0.5;
            prep_end_t e = loader_pool.item(&p, 0, 0, ready, ready_mem, dur);
            double want =
                curve ? scan_curve(ref[0], n, ready, dur, &scn) : scan(ref[0], n, ready, dur);
            double want_mem = curve ? scan_curve(ref[1], n, ready_mem, dur, &scn)
                                    : scan(ref[1], n, ready_mem, dur);
            if (e.t != want || e.mem != want_mem)
                fail_msg("%d cores, item %d: %.17g / %.17g, want %.17g / %.17g", n, i, e.t, e.mem,
                         want, want_mem);
        }
        loader_pool.destroy(&p);
    }
}

static void test_against_scan(void **state) {
    (void)state;
    against_scan(0);
}

static void test_curve_against_scan(void **state) {
    (void)state;
    against_scan(1);
}

static void near(double got, double want) {
    if (fabs(got - want) > 1e-12 * (fabs(want) + 1)) fail_msg("%.17g, want %.17g", got, want);
}

/* Closed forms under "1:1, 2:1.5, 4:2, 8:3" on 8 cores, items of 1 s: one
 * at a time (each starting after the last ends) runs undilated, where the
 * pool's old slowdown, fixed from every core the window could keep busy,
 * gave each 8/3 s; eight at once start with 0..7 others busy and end at
 * k / cores(k): 1, 4/3, 3/1.75, 2, 5/2.25, 6/2.5, 7/2.75, 8/3. */
static void test_curve_closed_forms(void **state) {
    (void)state;
    static scenario_t scn;
    memset(&scn, 0, sizeof scn);
    set_curve(&scn);
    prep_t p;
    memset(&p, 0, sizeof p);
    p.s = &scn, p.ns = 1, p.cores = 8, p.busy_max = 8;
    assert_int_equal(loader_pool.init(&p), 0);
    assert_true(p.slowdown == 1.0);
    near(p.cpu_slots, 8);
    for (int i = 0; i < 10; i++) {
        near(loader_pool.item(&p, 0, 0, 2.0 * i, 2.0 * i, 1).t, 2.0 * i + 1);
        assert_true(p.dilation == 1.0);
    }
    loader_pool.destroy(&p);
    assert_int_equal(loader_pool.init(&p), 0);
    static const double cores[] = {1, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3};
    for (int k = 1; k <= 8; k++) {
        near(loader_pool.item(&p, 0, 0, 0, 0, 1).t, k / cores[k - 1]);
        near(p.dilation, k / cores[k - 1]); /* its core held as long */
    }
    loader_pool.destroy(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_scan),
        cmocka_unit_test(test_curve_against_scan),
        cmocka_unit_test(test_curve_closed_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
