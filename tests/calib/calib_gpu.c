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
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_matches_reference),
        cmocka_unit_test(test_copy_and_sgemm_rates),
        cmocka_unit_test(test_no_gpu_says_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
