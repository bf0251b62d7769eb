/* calib_read_cpu: the read-CPU benchmark (read_cpu_bench) on this host: a
 * read's CPU is positive and plausible at every size, a 1 MB read costs
 * more than a 4 KB one (the copy), the fits are non-negative, the GETs
 * from its loopback server are measured (or say why), and its files are
 * gone afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <sys/stat.h>

#include "read_cpu_bench.h"

static void test_host(void **state) {
    (void)state;
    static read_cpu_result r;
    char err[512] = "";
    if (read_cpu_bench(1, 3, &r, err, sizeof err) != 0) fail_msg("read_cpu_bench: %s", err);
    for (int k = 0; k < READ_CPU_NSIZES; k++) {
        double w = r.warm_us[k].median;
        /* 0.1 us to 10 ms a read: a syscall's least, and far past a copy */
        if (!(w > 0.1 && w < 1e4)) fail_msg("%g KB: warm %g us a read", r.size_kb[k], w);
        if (r.cold_ok && !(r.cold_us[k].median > 0.1 && r.cold_us[k].median < 1e5))
            fail_msg("%g KB: cold %g us a read", r.size_kb[k], r.cold_us[k].median);
    }
    if (!(r.warm_us[READ_CPU_NSIZES - 1].median > r.warm_us[0].median))
        fail_msg("1 MB read %g us <= 4 KB read %g us", r.warm_us[READ_CPU_NSIZES - 1].median,
                 r.warm_us[0].median);
    if (!(r.warm.per_x > 0) || r.warm.fixed < 0)
        fail_msg("warm fit %g + %g/MB", r.warm.fixed, r.warm.per_x);
    if (r.get_ok) {
        assert_true(r.get.fixed >= 0 && r.get.per_x >= 0);
        assert_true(r.get_us[0].median > 0.1);
    } else {
        assert_true(r.get_reason[0] != 0);
    }
    struct stat st;
    if (stat(r.dir, &st) == 0) fail_msg("%s left behind", r.dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_host)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
