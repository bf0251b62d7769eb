/* test_measure_files: `stallsim measure` reads the data set it listed. A file
 * whose size changed after the listing (rewritten, truncated, grown) is
 * counted as unreadable and named on stderr, not timed as if it were the
 * listed data (issue 33, S5). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline.h"

static char dir[] = "/tmp/measure-files-XXXXXX";
static char path[128];

static void write_bytes(long n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (long i = 0; i < n; i++)
        fputc('x', f);
    assert_int_equal(fclose(f), 0);
}

/* One epoch over the one file, listed at `listed` bytes. */
static pipe_epoch epoch(long listed) {
    char *paths[1] = {path};
    long sizes[1] = {listed};
    pipe_cfg cfg = {.n = 1,
                    .paths = paths,
                    .sizes = sizes,
                    .workers = 1,
                    .fetchers = 1,
                    .batch_items = 1,
                    .prefetch = 1,
                    .seed = 1};
    pipeline *p = NULL;
    char err[256];
    assert_int_equal(pipe_create(&cfg, &p, err, sizeof err), 0);
    uint32_t perm[1] = {0};
    pipe_epoch ep;
    memset(&ep, 0, sizeof ep);
    assert_int_equal(pipe_run_epoch(p, perm, &ep, err, sizeof err), 0);
    pipe_destroy(p);
    return ep;
}

static void test_same_size_is_read(void **st) {
    (void)st;
    write_bytes(1000);
    pipe_epoch ep = epoch(1000);
    assert_int_equal(ep.reads, 1);
    assert_true(ep.read_bytes == 1000);
}

static void test_grown_is_unreadable(void **st) {
    (void)st;
    write_bytes(3000);
    pipe_epoch ep = epoch(1000);
    assert_int_equal(ep.reads, 0); /* before the fix: 1 read of 3000 bytes */
    assert_int_equal(ep.failed, 1);
    assert_true(ep.read_bytes == 0);
}

static void test_truncated_is_unreadable(void **st) {
    (void)st;
    write_bytes(10);
    pipe_epoch ep = epoch(1000);
    assert_int_equal(ep.reads, 0);
    assert_int_equal(ep.failed, 1);
}

int main(void) {
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/a.jpg", dir);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_size_is_read),
        cmocka_unit_test(test_grown_is_unreadable),
        cmocka_unit_test(test_truncated_is_unreadable),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    unlink(path);
    rmdir(dir);
    return rc;
}
