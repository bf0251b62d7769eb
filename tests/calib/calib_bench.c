/* calib_bench: the registry of calibration benchmarks (bench.h) is whole:
 * every entry has a section and the operations calibrate and the profile
 * writer call, no two share a section (the profile would hold a mapping
 * twice), and every result fits its block without overlapping another. Then
 * the profile of all-zero results is written (every benchmark's keys and
 * sections, ranks that nest) and parses as a mapping per section. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "profile.h"

static void test_every_entry_whole(void **state) {
    (void)state;
    int n = 0;
    for (int i = 0; calib_benches[i]; i++, n++) {
        const calib_bench_t *b = calib_benches[i];
        assert_non_null(b->section);
        assert_true(b->section[0] != '\0');
        assert_true(b->size > 0);
        assert_non_null(b->run);
        assert_non_null(b->keys);
        assert_non_null(b->measured);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(b->section, calib_benches[j]->section);
    }
    assert_true(n >= 9); /* storage, decode, augment, membw, traffic, eval, audio, nvjpeg, gpu */
}

static void test_blocks_apart(void **state) {
    (void)state;
    static calib_results r;
    const unsigned char *lo = r.results, *hi = r.results + sizeof r.results;
    for (int i = 0; calib_benches[i]; i++) {
        const unsigned char *a = calib_result(&r, calib_benches[i]);
        assert_true(a >= lo && a + calib_benches[i]->size <= hi);
        assert_true(((uintptr_t)a & 15) == 0);
        for (int j = 0; j < i; j++) {
            const unsigned char *b = calib_result(&r, calib_benches[j]);
            assert_true(b + calib_benches[j]->size <= a || a + calib_benches[i]->size <= b);
        }
    }
}

static void test_zero_results_write(void **state) {
    (void)state;
    static calib_results r;
    char *text = NULL, line[256];
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    assert_int_equal(profile_emit(m, &r), 0);
    fclose(m);
    for (int i = 0; calib_benches[i]; i++) {
        snprintf(line, sizeof line, "\n  %s:\n", calib_benches[i]->section);
        assert_non_null(strstr(text, line));
    }
    assert_non_null(strstr(text, "\nscenario:\n  server:\n    cpus: 0\n"));
    free(text);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_entry_whole),
        cmocka_unit_test(test_blocks_apart),
        cmocka_unit_test(test_zero_results_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
