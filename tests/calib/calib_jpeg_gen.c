/* calib_jpeg_gen: generated JPEGs decode, have ImageNet-like dimensions and
 * sizes, are deterministic, and look like photographs (neither flat nor
 * white noise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <unistd.h>

#include "fileset.h"
#include "jpeg_gen.h"

#define N 40

static void test_images_decode_with_intended_sizes(void **state) {
    (void)state;
    tjhandle tj = tjInitDecompress();
    double total = 0, smallest = 1e9, largest = 0, sw = 0, sh = 0;
    for (int i = 0; i < N; i++) {
        unsigned char *jpeg;
        unsigned long size;
        int w, h, jw, jh, ss, cs;
        char err[256];
        assert_int_equal(jpeg_gen_image(7, i, &jpeg, &size, &w, &h, err, sizeof err), 0);
        assert_true(w >= JPEG_GEN_MIN_W && w <= JPEG_GEN_MAX_W);
        assert_true(h >= JPEG_GEN_MIN_H && h <= JPEG_GEN_MAX_H);
        assert_int_equal(tjDecompressHeader3(tj, jpeg, size, &jw, &jh, &ss, &cs), 0);
        assert_int_equal(jw, w);
        assert_int_equal(jh, h);
        unsigned char *rgb = malloc((size_t)w * h * 3);
        assert_int_equal(tjDecompress2(tj, jpeg, size, rgb, w, 0, h, TJPF_RGB, 0), 0);
        free(rgb);
        tjFree(jpeg);
        total += size;
        smallest = fmin(smallest, size);
        largest = fmax(largest, size);
        sw += w;
        sh += h;
    }
    printf("mean %.1f KB (%.1f..%.1f), mean %.0f x %.0f px\n", total / N / 1e3, smallest / 1e3,
           largest / 1e3, sw / N, sh / N);
    assert_true(total / N > 80e3 && total / N < 150e3); /* ImageNet: ~110 KB */
    assert_true(largest / smallest > 1.5);              /* varied, not one size */
    assert_true(sw / N > 340 && sw / N < 460);
    assert_true(sh / N > 290 && sh / N < 410);
    tjDestroy(tj);
}

static void test_deterministic(void **state) {
    (void)state;
    unsigned char *a, *b, *c;
    unsigned long sa, sb, sc;
    int w, h;
    char err[256];
    assert_int_equal(jpeg_gen_image(3, 5, &a, &sa, &w, &h, err, sizeof err), 0);
    assert_int_equal(jpeg_gen_image(3, 5, &b, &sb, &w, &h, err, sizeof err), 0);
    assert_int_equal(jpeg_gen_image(4, 5, &c, &sc, &w, &h, err, sizeof err), 0);
    assert_int_equal(sa, sb);
    assert_memory_equal(a, b, sa);
    assert_true(sa != sc || memcmp(a, c, sa) != 0);
    tjFree(a);
    tjFree(b);
    tjFree(c);
}

/* Luma spread (not flat) and neighbour correlation (not white noise). */
static void test_photograph_like(void **state) {
    (void)state;
    for (int i = 0; i < 8; i++) {
        unsigned char *px;
        int w, h;
        assert_int_equal(jpeg_gen_pixels(11, i, &px, &w, &h), 0);
        size_t n = (size_t)w * h;
        double *y = malloc(n * sizeof *y), mean = 0, var = 0, cov = 0;
        for (size_t k = 0; k < n; k++) {
            y[k] = 0.299 * px[3 * k] + 0.587 * px[3 * k + 1] + 0.114 * px[3 * k + 2];
            mean += y[k];
        }
        mean /= n;
        for (size_t k = 0; k < n; k++)
            var += (y[k] - mean) * (y[k] - mean);
        for (int r = 0; r < h; r++)
            for (int x = 0; x + 1 < w; x++)
                cov += (y[(size_t)r * w + x] - mean) * (y[(size_t)r * w + x + 1] - mean);
        double sd = sqrt(var / n), corr = cov / var;
        printf("image %d: luma sd %.1f, lag-1 correlation %.3f\n", i, sd, corr);
        assert_true(sd > 15.0);
        assert_true(corr > 0.6 && corr < 0.995);
        free(y);
        free(px);
    }
}

static void test_dataset_is_an_image_folder(void **state) {
    (void)state;
    char dir[] = "/tmp/calib-gen-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char err[256];
    assert_int_equal(jpeg_gen_dataset(dir, 23, 1, 2, err, sizeof err), 0);
    file_list fl = {0};
    assert_int_equal(fileset_scan(dir, &fl, err, sizeof err), 0);
    assert_int_equal(fl.n, 23);
    assert_non_null(strstr(fl.v[0].path, "/class_00/img_000000.jpg"));
    /* Same bytes whatever the thread count. */
    unsigned char *jpeg;
    unsigned long size;
    int w, h;
    assert_int_equal(jpeg_gen_image(1, 0, &jpeg, &size, &w, &h, err, sizeof err), 0);
    unsigned char *disk;
    long dsize;
    assert_int_equal(fileset_read(fl.v[0].path, &disk, &dsize), 0);
    assert_int_equal(dsize, (long)size);
    assert_memory_equal(disk, jpeg, size);
    free(disk);
    tjFree(jpeg);
    for (int i = 0; i < fl.n; i++)
        unlink(fl.v[i].path);
    char sub[300];
    for (int c = 0; c < 10; c++) {
        snprintf(sub, sizeof sub, "%s/class_%02d", dir, c);
        rmdir(sub);
    }
    assert_int_equal(rmdir(dir), 0);
    fileset_free(&fl);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_images_decode_with_intended_sizes),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_photograph_like),
        cmocka_unit_test(test_dataset_is_an_image_folder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
