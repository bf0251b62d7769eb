/* calib_storage: eviction really empties the page cache (mincore), and the
 * storage benchmark's figures are consistent with each other. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fileset.h"
#include "jpeg_gen.h"
#include "progress.h"
#include "storage_bench.h"

static char dir[] = "/var/tmp/calib-storage-XXXXXX";
static file_list fl;
static char **paths;
static long *sizes;

static int setup(void **state) {
    (void)state;
    char err[256];
    if (!mkdtemp(dir)) return -1;
    if (jpeg_gen_dataset(dir, 24, 5, 2, err, sizeof err) != 0) return -1;
    if (fileset_scan(dir, &fl, err, sizeof err) != 0) return -1;
    paths = malloc(sizeof *paths * fl.n);
    sizes = malloc(sizeof *sizes * fl.n);
    for (int i = 0; i < fl.n; i++) {
        paths[i] = fl.v[i].path;
        sizes[i] = fl.v[i].size;
    }
    progress_set_quiet(1);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char sub[300];
    for (int i = 0; i < fl.n; i++)
        unlink(fl.v[i].path);
    for (int c = 0; c < 10; c++) {
        snprintf(sub, sizeof sub, "%s/class_%02d", dir, c);
        rmdir(sub);
    }
    rmdir(dir);
    fileset_free(&fl);
    free(paths);
    free(sizes);
    return 0;
}

static void test_eviction_empties_the_cache(void **state) {
    (void)state;
    struct statfs sf;
    if (statfs(dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC) {
        printf("%s is on tmpfs, which cannot evict: nothing to test\n", dir);
        skip();
        return;
    }
    for (int i = 0; i < fl.n; i++) { /* read everything: now cached */
        unsigned char *b;
        long n;
        assert_int_equal(fileset_read(paths[i], &b, &n), 0);
        free(b);
    }
    assert_true(storage_resident(paths, fl.n) > 0.9);
    double after = storage_evict(paths, fl.n);
    printf("resident after eviction: %.3f\n", after);
    assert_true(after >= 0.0 && after <= 0.01);
    assert_true(storage_resident(paths, fl.n) <= 0.01);
}

static void check_point(const storage_point *p) {
    assert_true(p->mb_s.min > 0 && p->mb_s.min <= p->mb_s.median && p->mb_s.median <= p->mb_s.max);
    assert_int_equal(p->mb_s.n, 5);
    assert_true(p->items_s.median > 0);
    assert_true(p->p50_ms > 0 && p->p50_ms <= p->p90_ms && p->p90_ms <= p->p99_ms);
}

static void test_bench_figures_consistent(void **state) {
    (void)state;
    storage_result r;
    char err[256];
    assert_int_equal(storage_bench(paths, sizes, fl.n, 5, 3, &r, err, sizeof err), 0);
    assert_int_equal(r.files, fl.n);
    double total = 0;
    for (int i = 0; i < fl.n; i++)
        total += sizes[i];
    assert_float_equal(r.total_mb, total / 1e6, 1e-9);
    for (int q = 0; q < STORAGE_NQD; q++) {
        check_point(&r.warm[q]);
        check_point(&r.cold[q]);
        assert_int_equal(r.cold[q].qd, storage_qds[q]);
        /* MB/s and items/s describe the same passes. */
        assert_float_equal(r.cold[q].mb_s.median / r.cold[q].items_s.median, r.total_mb / fl.n,
                           1e-9);
    }
    assert_non_null(r.cold_method);
    assert_non_null(r.fit_method);
    assert_true(r.read_mb_s > 0 && r.latency_ms > 0);
    assert_true(r.queue_depth == 1 || r.queue_depth == 4 || r.queue_depth == 16 ||
                r.queue_depth == 32);
    /* The ssd kind's curve: its bandwidth the mean of some cold medians, each
     * latency no more than Little's law gives the whole read at its depth. */
    double lo = r.cold[0].mb_s.median, hi = lo;
    for (int q = 1; q < STORAGE_NQD; q++) {
        if (r.cold[q].mb_s.median < lo) lo = r.cold[q].mb_s.median;
        if (r.cold[q].mb_s.median > hi) hi = r.cold[q].mb_s.median;
    }
    assert_true(r.peak_mb_s >= lo * (1 - 1e-9) && r.peak_mb_s <= hi * (1 + 1e-9));
    for (int q = 0; q < STORAGE_NQD; q++)
        assert_true(r.curve_ms[q] >= 0 &&
                    r.curve_ms[q] <= storage_qds[q] / r.cold[q].items_s.median * 1e3);
    if (r.eviction_ok && strcmp(r.cold_method, "fadvise_dontneed") == 0)
        assert_true(r.resident_after <= 0.01);
    /* The sequential stream reads the largest files, whole: every byte of
     * them, the fewest that reach STORAGE_SEQ_BYTES or all. */
    assert_true(r.seq_files >= 1 && r.seq_files <= fl.n && r.seq_mb_s > 0);
    assert_true(r.seq_mb * 1e6 <= total + 0.5);
    assert_true(r.seq_files == fl.n || r.seq_mb * 1e6 >= (double)STORAGE_SEQ_BYTES);
    /* Where: the files' folder, and the device's readahead as sysfs has it. */
    assert_int_equal(strncmp(r.dir, dir, strlen(dir)), 0);
    char device[96];
    long ra;
    int on = storage_where(paths[0], device, sizeof device, &ra) == 0;
    assert_int_equal(r.read_ahead_kb, on ? ra : -1);
    assert_string_equal(r.device, on ? device : "");
}

/* A file on no block device (procfs) has no device nor readahead. */
static void test_where_off_a_block_device(void **state) {
    (void)state;
    char device[96] = "x";
    long ra = 7;
    assert_int_equal(storage_where("/proc/self/stat", device, sizeof device, &ra), -1);
    assert_string_equal(device, "");
    assert_int_equal(ra, -1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eviction_empties_the_cache),
        cmocka_unit_test(test_bench_figures_consistent),
        cmocka_unit_test(test_where_off_a_block_device),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
