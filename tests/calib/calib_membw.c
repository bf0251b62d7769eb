/* calib_membw: the memory-bandwidth benchmark (membw) and the count of the
 * image_train pipeline's buffer traffic per item (prep_traffic), the two
 * figures behind the bound on prep cores. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "clock.h"
#include "membw.h"
#include "prep_traffic.h"
#include "stability.h"

/* Three threads on small arrays: one point per thread count, each a
 * plausible rate (a host's memory moves 0.5 GB/s to 10 TB/s), quickly. */
static void test_bandwidth_curve(void **state) {
    (void)state;
    static membw_result r;
    char err[256] = "";
    double t0 = clock_now();
    int rc = membw_bench(3, 16, 3, &r, err, sizeof err);
    double el = clock_now() - t0;
    if (rc) fail_msg("membw_bench: %s", err);
    assert_int_equal(r.npoints, 3);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(r.curve[k].threads, k + 1);
        assert_int_equal(r.curve[k].gb_s.n, 3);
        if (!(r.curve[k].gb_s.median > 0.5 && r.curve[k].gb_s.median < 10000))
            fail_msg("%d threads: %g GB/s", k + 1, r.curve[k].gb_s.median);
    }
    assert_true(r.gb_s == r.curve[2].gb_s.median); /* the all-threads figure */
    assert_true(r.array_mb > 0 && r.array_mb <= 16);
    assert_true(el < 5); /* 3 x 16 MB: well under a second on any host */
    /* Thread counts: 1..8, then powers of two, then the most. */
    assert_int_equal(membw_bench(10, 1, 1, &r, err, sizeof err), 0);
    assert_int_equal(r.npoints, 9);
    assert_int_equal(r.curve[7].threads, 8);
    assert_int_equal(r.curve[8].threads, 10);
    /* Bad arguments are refused with a reason. */
    assert_int_equal(membw_bench(0, 16, 3, &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "bad arguments"));
    assert_int_equal(membw_bench(2, 0, 3, &r, err, sizeof err), -1);
    assert_int_equal(membw_bench(2, 16, 65, &r, err, sizeof err), -1);
}

/* Items of known sizes: the JPEG read, the RGB written and the float
 * output are exact; a 1 x 1 image's crop is its one pixel; a larger image's
 * crop reads at most its RGB and at least the output's worth of taps. */
static void test_traffic_count(void **state) {
    (void)state;
    jpeg_item items[2] = {{.path = "a", .size = 1000, .w = 1, .h = 1},
                          {.path = "b", .size = 3000, .w = 1, .h = 1}};
    jpeg_set set = {.v = items, .n = 2};
    prep_traffic t;
    assert_int_equal(prep_traffic_count(&set, 1, &t), 0);
    assert_int_equal(t.items, 2);
    assert_true(fabs(t.jpeg_read_mb - 2000e-6) < 1e-15);
    assert_true(fabs(t.rgb_write_mb - 3e-6) < 1e-15);
    assert_true(fabs(t.crop_read_mb - 3e-6) < 1e-15);
    assert_true(fabs(t.out_write_mb - 3.0 * 224 * 224 * 4 / 1e6) < 1e-15);
    assert_true(fabs(t.mb_per_item - (2000e-6 + 3e-6 + 3e-6 + 0.602112)) < 1e-12);

    jpeg_item big[3] = {{.path = "c", .size = 110000, .w = 500, .h = 375},
                        {.path = "d", .size = 90000, .w = 375, .h = 500},
                        {.path = "e", .size = 400000, .w = 1600, .h = 1200}};
    set = (jpeg_set){.v = big, .n = 3};
    assert_int_equal(prep_traffic_count(&set, 1, &t), 0);
    double rgb = 3.0 * (500 * 375 * 2 + 1600 * 1200) / 3 / 1e6;
    assert_true(fabs(t.rgb_write_mb - rgb) < 1e-12);
    assert_true(t.crop_read_mb > 0 && t.crop_read_mb <= rgb);
    /* Each crop is sampled on at least 224 rows or all its rows. */
    assert_true(t.crop_read_mb > 3.0 * 224 * 8 / 1e6);
    /* The same seed, the same crops. */
    prep_traffic u;
    assert_int_equal(prep_traffic_count(&set, 1, &u), 0);
    assert_true(u.crop_read_mb == t.crop_read_mb);
    set.n = 0;
    assert_int_equal(prep_traffic_count(&set, 1, &t), -1);
}

/* Arrays under four times the last-level cache are flagged; an unknown
 * cache is not judged. */
static void test_beyond_cache(void **state) {
    (void)state;
    stability_t s = {0};
    assert_int_equal(stability_beyond_cache(&s, "memory GB/s", 768, 32768), 0);
    assert_int_equal(stability_beyond_cache(&s, "memory GB/s", 768, 0), 0);
    assert_int_equal(s.nwarnings, 0);
    assert_int_equal(stability_beyond_cache(&s, "memory GB/s", 96, 32768), 1);
    assert_int_equal(s.nwarnings, 1);
    assert_non_null(strstr(s.warnings[0], "under 4x the 32768 KB last-level cache"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bandwidth_curve),
        cmocka_unit_test(test_traffic_count),
        cmocka_unit_test(test_beyond_cache),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
