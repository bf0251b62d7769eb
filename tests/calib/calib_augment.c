/* calib_augment: the optimized CPU augment against the plain-C reference,
 * the reference against hand-checkable cases, and the crop-parameter draw
 * against torchvision's rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "augment.h"
#include "augment_ref.h"

static unsigned char *random_image(gsl_rng *r, int w, int h) {
    unsigned char *px = malloc((size_t)w * h * 3);
    assert_non_null(px);
    for (size_t i = 0; i < (size_t)w * h * 3; i++)
        px[i] = (unsigned char)gsl_rng_uniform_int(r, 256);
    return px;
}

static double max_diff(const float *a, const float *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        if (!(d <= m)) m = d; /* NaN propagates as a failure */
    }
    return m;
}

static void compare(const unsigned char *px, int w, int h, aug_params p, int ow, int oh) {
    size_t n = (size_t)3 * ow * oh;
    float *ref = malloc(n * sizeof *ref), *cpu = malloc(n * sizeof *cpu);
    assert_non_null(ref);
    assert_non_null(cpu);
    augment_ref(px, w, h, &p, ow, oh, ref);
    augment_cpu(px, w, h, &p, ow, oh, cpu);
    double d = max_diff(ref, cpu, n);
    if (d > 1e-5)
        fprintf(stderr, "image %dx%d crop (%d,%d %dx%d) flip %d out %dx%d: max diff %g\n", w, h,
                p.x, p.y, p.w, p.h, p.flip, ow, oh, d);
    assert_true(d <= 1e-5);
    free(ref);
    free(cpu);
}

static void test_cpu_matches_reference(void **state) {
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    static const int sizes[][2] = {{1, 1}, {7, 5}, {224, 224}, {500, 375}, {333, 471}};
    static const int outs[][2] = {{224, 224}, {7, 5}, {1, 1}, {64, 96}};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        unsigned char *px = random_image(r, w, h);
        for (size_t o = 0; o < sizeof outs / sizeof *outs; o++) {
            for (int flip = 0; flip <= 1; flip++) {
                compare(px, w, h, (aug_params){0, 0, w, h, flip}, outs[o][0], outs[o][1]);
                compare(px, w, h, (aug_params){w - 1, h - 1, 1, 1, flip}, outs[o][0], outs[o][1]);
                compare(px, w, h, (aug_params){w / 3, h / 4, w - w / 3, h - h / 4, flip},
                        outs[o][0], outs[o][1]);
            }
            for (int k = 0; k < 20; k++) { /* drawn crops, as in training */
                aug_params p;
                aug_draw_params(r, w, h, &p);
                compare(px, w, h, p, outs[o][0], outs[o][1]);
            }
        }
        free(px);
    }
    gsl_rng_free(r);
}

/* An uncropped, unscaled image is normalization alone; a flip mirrors it. */
static void test_reference_identity_and_flip(void **state) {
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    const int w = 9, h = 6;
    unsigned char *px = random_image(r, w, h);
    float out[3 * 9 * 6], flipped[3 * 9 * 6];
    augment_ref(px, w, h, &(aug_params){0, 0, w, h, 0}, w, h, out);
    augment_ref(px, w, h, &(aug_params){0, 0, w, h, 1}, w, h, flipped);
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double want = (px[(y * w + x) * 3 + c] / 255.0 - aug_mean[c]) / aug_std[c];
                assert_float_equal(out[(c * h + y) * w + x], want, 1e-5);
                assert_float_equal(flipped[(c * h + y) * w + (w - 1 - x)], want, 1e-5);
            }
    /* Upscaling 2x2 to 4x4 samples at 1/4 and 3/4 of a pixel: known blends. */
    unsigned char sq[12] = {0, 0, 0, 100, 100, 100, 200, 200, 200, 255, 255, 255};
    float up[3 * 16];
    augment_ref(sq, 2, 2, &(aug_params){0, 0, 2, 2, 0}, 4, 4, up);
    double v11 = 0.75 * (0.75 * 0 + 0.25 * 100) + 0.25 * (0.75 * 200 + 0.25 * 255);
    assert_float_equal(up[1 * 4 + 1], (v11 / 255.0 - aug_mean[0]) / aug_std[0], 1e-5);
    assert_float_equal(up[0], (0.0 - aug_mean[0]) / aug_std[0], 1e-5); /* clamped corner */
    free(px);
    gsl_rng_free(r);
}

static void test_params_follow_torchvision(void **state) {
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    const int w = 500, h = 375, n = 20000;
    int flips = 0;
    double min_area = 1, max_area = 0, min_ratio = 10, max_ratio = 0;
    for (int i = 0; i < n; i++) {
        aug_params p;
        aug_draw_params(r, w, h, &p);
        assert_true(p.w >= 1 && p.h >= 1 && p.x >= 0 && p.y >= 0);
        assert_true(p.x + p.w <= w && p.y + p.h <= h);
        double area = (double)p.w * p.h / (w * h), ratio = (double)p.w / p.h;
        min_area = fmin(min_area, area);
        max_area = fmax(max_area, area);
        min_ratio = fmin(min_ratio, ratio);
        max_ratio = fmax(max_ratio, ratio);
        flips += p.flip;
    }
    /* Rounding w and h to integers moves area and ratio a little. */
    assert_true(min_area > 0.075 && min_area < 0.09);
    assert_true(max_area > 0.95);
    assert_true(min_ratio > 0.74 && min_ratio < 0.77);
    assert_true(max_ratio > 1.31 && max_ratio < 1.35);
    assert_true(fabs((double)flips / n - 0.5) < 0.02);
    /* Same seed, same crops. */
    gsl_rng *a = gsl_rng_alloc(gsl_rng_mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(a, 42);
    gsl_rng_set(b, 42);
    for (int i = 0; i < 100; i++) {
        aug_params pa, pb;
        aug_draw_params(a, w, h, &pa);
        aug_draw_params(b, w, h, &pb);
        assert_memory_equal(&pa, &pb, sizeof pa);
    }
    gsl_rng_free(a);
    gsl_rng_free(b);
    gsl_rng_free(r);
}

/* A 1000x10 strip: no random crop fits, so every draw is the centre crop
 * with the ratio clamped to 4/3: 13 x 10 at x = 493. */
static void test_params_fallback_centre_crop(void **state) {
    (void)state;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int i = 0; i < 50; i++) {
        aug_params p;
        aug_draw_params(r, 1000, 10, &p);
        assert_int_equal(p.w, 13);
        assert_int_equal(p.h, 10);
        assert_int_equal(p.x, 493);
        assert_int_equal(p.y, 0);
        aug_draw_params(r, 10, 1000, &p); /* tall: width kept, height = w / (3/4) */
        assert_int_equal(p.w, 10);
        assert_int_equal(p.h, 13);
        assert_int_equal(p.y, 493);
    }
    gsl_rng_free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_matches_reference),
        cmocka_unit_test(test_reference_identity_and_flip),
        cmocka_unit_test(test_params_follow_torchvision),
        cmocka_unit_test(test_params_fallback_centre_crop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
