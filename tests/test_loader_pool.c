/* loader.kind: pool against a plain earliest-free-core scan: every item's
 * prep end on both timelines must be the same double, for pools of every
 * size around the sorted array's padding and the heap's threshold, with
 * ties (times on a coarse grid) and ready times before and after the
 * earliest free core. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "loader.h"

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

static void test_against_scan(void **state) {
    (void)state;
    static const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 23, 24, 25, 31, 47, 48, 49, 64, 100};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int n = sizes[k];
        static scenario_t scn; /* no prep.scaling: linear cores */
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
            double want = scan(ref[0], n, ready, dur), want_mem = scan(ref[1], n, ready_mem, dur);
            if (e.t != want || e.mem != want_mem)
                fail_msg("%d cores, item %d: %.17g / %.17g, want %.17g / %.17g", n, i, e.t, e.mem,
                         want, want_mem);
        }
        loader_pool.destroy(&p);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_scan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
