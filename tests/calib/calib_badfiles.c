/* calib_badfiles: a data folder with unreadable, empty, truncated, corrupt
 * and non-JPEG files: each is counted and skipped, the good ones kept; and
 * entries that are no files at all (a FIFO, a link to a directory, a folder
 * named *.jpg), a header claiming 65000 x 65000 pixels and a file without
 * read permission: none hangs, crashes or allocates the claimed size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <turbojpeg.h>
#include <unistd.h>
#include <signal.h>

#include "decode_bench.h"
#include "fileset.h"
#include "jpeg_gen.h"
#include "progress.h"

static char root[] = "/tmp/calib-bad-XXXXXX";

static void put(const char *rel, const void *buf, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n) assert_int_equal(fwrite(buf, 1, n, f), n);
    fclose(f);
}

static void test_bad_files_counted_and_skipped(void **state) {
    (void)state;
    char err[256], path[512];
    assert_non_null(mkdtemp(root));
    snprintf(path, sizeof path, "%s/a", root);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/b", root);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof path, "%s/b/deeper", root);
    assert_int_equal(mkdir(path, 0755), 0);

    unsigned char *jpeg;
    unsigned long size;
    int w, h;
    assert_int_equal(jpeg_gen_image(9, 0, &jpeg, &size, &w, &h, err, sizeof err), 0);
    put("a/good.jpg", jpeg, size);
    put("b/deeper/good2.JPEG", jpeg, size);
    put("b/truncated.jpg", jpeg, size / 2);
    put("b/empty.jpeg", "", 0);
    put("b/text.jpg", "this is not a JPEG\n", 19);
    put("b/readme.txt", "notes\n", 6);
    /* SOI, then garbage: not a decodable stream. */
    unsigned char *corrupt = malloc(size);
    memcpy(corrupt, jpeg, size);
    for (unsigned long i = 2; i < size; i++)
        corrupt[i] = (unsigned char)(i * 131 + 7);
    put("b/corrupt.jpg", corrupt, size);
    free(corrupt);
    char target[600];
    snprintf(target, sizeof target, "%s/b/missing-target", root);
    snprintf(path, sizeof path, "%s/b/dangling.jpg", root);
    assert_int_equal(symlink(target, path), 0);
    tjFree(jpeg);

    file_list fl = {0};
    assert_int_equal(fileset_scan(root, &fl, err, sizeof err), 0);
    assert_int_equal(fl.n, 7);
    assert_int_equal(fl.non_jpeg, 1);

    jpeg_set set;
    assert_int_equal(decode_load(&fl, &set, err, sizeof err), 0);
    assert_int_equal(set.n, 2);
    assert_int_equal(set.bad, 5);
    for (int i = 0; i < set.n; i++)
        assert_non_null(strstr(set.v[i].path, "good"));

    /* The two survivors have one size: the cost model has no line, so it is
     * the plain mean per item, and says so. */
    decode_result r;
    assert_int_equal(decode_bench(&set, 2, &r, err, sizeof err), 0);
    assert_int_equal(r.model_method, COST_MEAN_NO_LINE);
    assert_true(r.model_ms_per_mb == 0.0 && r.model_ms_per_item > 0.0);
    decode_set_free(&set);

    for (int i = 0; i < fl.n; i++)
        unlink(fl.v[i].path);
    fileset_free(&fl);
    const char *rest[] = {"b/readme.txt", "b/deeper", "a", "b"};
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", root, rest[i]);
        if (unlink(path) != 0) rmdir(path);
    }
    assert_int_equal(rmdir(root), 0);
}

/* Sets the frame size of the first SOFn marker: a valid header, absurd size. */
static int patch_dimensions(unsigned char *j, unsigned long n, unsigned hw) {
    for (unsigned long i = 2; i + 9 < n; i++)
        if (j[i] == 0xFF && j[i + 1] >= 0xC0 && j[i + 1] <= 0xC2) {
            j[i + 5] = j[i + 7] = (unsigned char)(hw >> 8);
            j[i + 6] = j[i + 8] = (unsigned char)hw;
            return 0;
        }
    return -1;
}

static void test_special_entries_never_hang(void **state) {
    (void)state;
    char err[256], path[600], target[600];
    snprintf(root, sizeof root, "/tmp/calib-bad-XXXXXX");
    assert_non_null(mkdtemp(root));
    /* A blocking open of the FIFO would hang here: fail instead. */
    alarm(60);
    unsigned char *jpeg;
    unsigned long size;
    int w, h;
    assert_int_equal(jpeg_gen_image(5, 0, &jpeg, &size, &w, &h, err, sizeof err), 0);
    put("good.jpg", jpeg, size);
    snprintf(path, sizeof path, "%s/folder.jpg", root);
    assert_int_equal(mkdir(path, 0755), 0); /* a folder named *.jpg is a folder: searched */
    put("folder.jpg/inside.jpg", jpeg, size);
    snprintf(path, sizeof path, "%s/fifo.jpg", root);
    assert_int_equal(mkfifo(path, 0644), 0);
    snprintf(target, sizeof target, "%s/folder.jpg", root);
    snprintf(path, sizeof path, "%s/dirlink.jpg", root);
    assert_int_equal(symlink(target, path), 0);
    unsigned char *huge = malloc(size);
    assert_non_null(huge);
    memcpy(huge, jpeg, size);
    assert_int_equal(patch_dimensions(huge, size, 65000), 0);
    put("huge.jpg", huge, size);
    free(huge);
    int expect_bad = 3; /* fifo, dirlink, huge */
    put("noperm.jpg", jpeg, size);
    snprintf(path, sizeof path, "%s/noperm.jpg", root);
    assert_int_equal(chmod(path, 0), 0);
    if (geteuid() == 0)
        printf("note: running as root, which reads a mode-000 file: noperm.jpg counts as good\n");
    else
        expect_bad++;
    tjFree(jpeg);

    file_list fl = {0};
    assert_int_equal(fileset_scan(root, &fl, err, sizeof err), 0);
    assert_int_equal(fl.n, 6); /* good, inside, fifo, dirlink, huge, noperm */
    jpeg_set set;
    assert_int_equal(decode_load(&fl, &set, err, sizeof err), 0);
    assert_int_equal(set.bad, expect_bad);
    assert_int_equal(set.n, 6 - expect_bad);
    decode_set_free(&set);
    alarm(0);

    fileset_free(&fl);
    const char *rest[] = {"good.jpg",  "folder.jpg/inside.jpg", "folder.jpg",
                          "fifo.jpg",  "dirlink.jpg",           "huge.jpg",
                          "noperm.jpg"};
    for (int i = 0; i < 7; i++) {
        snprintf(path, sizeof path, "%s/%s", root, rest[i]);
        if (unlink(path) != 0) rmdir(path);
    }
    assert_int_equal(rmdir(root), 0);
}

static void test_missing_dir_is_an_error(void **state) {
    (void)state;
    file_list fl = {0};
    char err[256];
    assert_int_equal(fileset_scan("/nonexistent/calib", &fl, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/calib"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_files_counted_and_skipped),
        cmocka_unit_test(test_special_entries_never_hang),
        cmocka_unit_test(test_missing_dir_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
