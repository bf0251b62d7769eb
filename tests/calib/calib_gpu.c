/* calib_gpu: the CUDA augment kernel against the plain-C reference, where a
 * GPU is present; without one, that the GPU entry points refuse plainly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "gpu.h"
#include "gpu_bench.h"
#include "gpu_decode_bench.h"
#include "jpeg_gen.h"
#include <turbojpeg.h>

static int have_gpu(void) {
    char name[256], err[256];
    if (gpu_probe(name, sizeof name, err, sizeof err) != 0) {
        printf("no GPU to test on: %s\n", err);
        return 0;
    }
    printf("testing on %s\n", name);
    return 1;
}

static void test_kernel_matches_reference(void **state) {
    (void)state;
    if (!have_gpu()) {
        skip();
        return;
    }
    enum { N = 40 };
    static const int outs[][2] = {{224, 224}, {31, 17}, {1, 1}};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    aug_image imgs[N];
    aug_params ps[N];
    for (int i = 0; i < N; i++) {
        int w = 1 + (int)gsl_rng_uniform_int(r, 600), h = 1 + (int)gsl_rng_uniform_int(r, 500);
        unsigned char *px = malloc((size_t)w * h * 3);
        assert_non_null(px);
        for (size_t k = 0; k < (size_t)w * h * 3; k++)
            px[k] = (unsigned char)gsl_rng_uniform_int(r, 256);
        imgs[i] = (aug_image){px, w, h};
        if (i % 4 == 0)
            ps[i] = (aug_params){0, 0, w, h, i % 8 == 0};
        else
            aug_draw_params(r, w, h, &ps[i]);
    }
    for (size_t o = 0; o < sizeof outs / sizeof *outs; o++) {
        int ow = outs[o][0], oh = outs[o][1];
        size_t per = (size_t)3 * ow * oh;
        float *gpu = malloc(per * N * sizeof(float)), *ref = malloc(per * sizeof(float));
        double ms[2];
        char err[256];
        assert_non_null(gpu);
        assert_non_null(ref);
        int rc = gpu_augment(imgs, ps, N, ow, oh, gpu, 2, ms, err, sizeof err);
        if (rc) fprintf(stderr, "gpu_augment: %s\n", err);
        assert_int_equal(rc, 0);
        assert_true(ms[0] > 0.0 && ms[1] > 0.0);
        for (int i = 0; i < N; i++) {
            augment_ref(imgs[i].px, imgs[i].w, imgs[i].h, &ps[i], ow, oh, ref);
            for (size_t k = 0; k < per; k++) {
                double d = fabs((double)ref[k] - gpu[per * i + k]);
                if (!(d <= 1e-5)) {
                    fprintf(stderr, "item %d value %zu: ref %g gpu %g\n", i, k, ref[k],
                            gpu[per * i + k]);
                    fail();
                }
            }
        }
        free(gpu);
        free(ref);
    }
    for (int i = 0; i < N; i++)
        free((void *)imgs[i].px);
    gsl_rng_free(r);
}

static void test_copy_and_sgemm_rates(void **state) {
    (void)state;
    if (!have_gpu()) {
        skip();
        return;
    }
    double v[3];
    char err[256];
    assert_int_equal(gpu_h2d((size_t)16 << 20, 1, 3, v, err, sizeof err), 0);
    assert_true(v[0] > 0.1 && v[0] < 2000.0);
    assert_int_equal(gpu_h2d((size_t)16 << 20, 0, 3, v, err, sizeof err), 0);
    assert_true(v[0] > 0.01 && v[0] < 2000.0);
    assert_int_equal(gpu_sgemm(1024, 3, v, err, sizeof err), 0);
    assert_true(v[0] > 0.01 && v[0] < 1000.0);
}

/* Without a GPU, every entry point must fail with a reason, never a figure. */
static void test_no_gpu_says_why(void **state) {
    (void)state;
    char name[256], err[256] = "";
    if (gpu_probe(name, sizeof name, err, sizeof err) == 0) {
        printf("a GPU is present (%s): nothing to check here\n", name);
        skip();
        return;
    }
    assert_true(strlen(err) > 5);
    if (!gpu_built()) assert_non_null(strstr(err, "built without CUDA"));
    double v[1] = {-1.0};
    err[0] = '\0';
    if (!gpu_built()) {
        assert_int_equal(gpu_sgemm(64, 1, v, err, sizeof err), -1);
        assert_true(v[0] == -1.0);
        assert_non_null(strstr(err, "built without CUDA"));
        assert_int_equal(gpu_h2d(64, 1, 1, v, err, sizeof err), -1);
    }
    /* nvJPEG says why too (built without CUDA, or without nvJPEG, or no GPU). */
    const unsigned char *jp[1] = {(const unsigned char *)"x"};
    size_t sz[1] = {1};
    double h[1], d[1], mp[1], diff = -1;
    err[0] = '\0';
    assert_int_equal(gpu_nvjpeg(jp, sz, 1, 1, jp[0], h, d, mp, &diff, err, sizeof err), -1);
    assert_true(strlen(err) > 5 && diff == -1);
    printf("nvJPEG without a GPU: %s\n", err);
    /* A module that was built must load, its nvJPEG with it, and fail in
     * the library or the driver, not in dlopen. */
    if (gpu_nvjpeg_built())
        assert_null(strstr(err, "load"));
    else
        assert_non_null(strstr(err, "built without"));
}

/* nvJPEG's decode (prep.decode gpu's rates) where a GPU and nvJPEG are
 * present: positive times, megapixels of the images, RGB close to
 * TurboJPEG's. Elsewhere it refuses, saying why (no GPU, or built without
 * nvJPEG), and calibrate's bench reports no figure. */
static void test_nvjpeg_decode(void **state) {
    (void)state;
    enum { N = 6 };
    jpeg_item items[N];
    for (int i = 0; i < N; i++) {
        unsigned long size;
        char why[128];
        assert_int_equal(
            jpeg_gen_image(9, i, &items[i].jpeg, &size, &items[i].w, &items[i].h, why, sizeof why),
            0);
        items[i].size = (long)size;
        items[i].path = "generated";
    }
    jpeg_set set = {items, N, 0};
    nvjpeg_result r;
    int rc = gpu_decode_bench(&set, N, 3, &r);
    if (rc != 0) {
        printf("nvJPEG decode not tested: %s\n", r.reason);
        assert_int_equal(r.measured, 0);
        assert_true(strlen(r.reason) > 5);
        if (!gpu_built()) assert_non_null(strstr(r.reason, "built without CUDA"));
        for (int i = 0; i < N; i++)
            tjFree(items[i].jpeg);
        skip();
        return;
    }
    assert_int_equal(r.measured, 1);
    assert_true(r.gpu_ms_per_mp > 0 && r.host_ms_per_mb > 0);
    assert_true(r.mean_abs_diff <= 4);
    for (int i = 0; i < N; i++)
        tjFree(items[i].jpeg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_matches_reference),
        cmocka_unit_test(test_copy_and_sgemm_rates),
        cmocka_unit_test(test_no_gpu_says_why),
        cmocka_unit_test(test_nvjpeg_decode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
