/* calib_pipelines: the eval transform and the audio pipeline calibrate
 * measures for prep.eval_ms and prep.audio_*: they compute what they claim
 * (a real transform timed, not a loop), checked against closed forms. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio_prep.h"
#include "augment_ref.h"
#include "eval_transform.h"
#include "audio_bench.h"
#include "eval_bench.h"

/* Resize 256 / centre crop 224: a uniform image stays uniform, and a ramp
 * along x stays the ramp bilinear resizing gives (linear in the resized
 * column, source x = (X + 0.5) * w / rw - 0.5), within uint8 rounding. */
static void test_eval_transform(void **state) {
    (void)state;
    const int w = 400, h = 300;
    unsigned char *src = malloc((size_t)w * h * 3);
    int rw, rh;
    eval_resized_dims(w, h, 256, &rw, &rh);
    assert_int_equal(rh, 256);
    assert_int_equal(rw, 341);
    unsigned char *tmp = malloc((size_t)rw * rh * 3);
    float *dst = malloc(sizeof *dst * 3 * 224 * 224);
    for (int i = 0; i < w * h; i++)
        src[3 * i] = 200, src[3 * i + 1] = 100, src[3 * i + 2] = 50;
    eval_cpu(src, w, h, 256, 224, tmp, dst);
    const float rgb[3] = {200, 100, 50};
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < 224 * 224; i++)
            assert_true(fabsf(dst[c * 224 * 224 + i] - (rgb[c] / 255 - aug_mean[c]) / aug_std[c]) <
                        1e-5f);
    /* A ramp: value x * 255 / 399 along x, the same in every row: steep
     * enough (0.75 a resized column) that a crop one column off fails. */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++)
                src[(y * w + x) * 3 + c] = (unsigned char)(x * 255 / 399);
    eval_cpu(src, w, h, 256, 224, tmp, dst);
    int left = (rw - 224) / 2; /* 58.5 rounds to even: 58 */
    double worst = 0;
    for (int x = 0; x < 224; x++) {
        double sx = (left + x + 0.5) * w / rw - 0.5;
        int x0 = (int)sx;
        double want = (x0 * 255 / 399) * (1 - (sx - x0)) + ((x0 + 1) * 255 / 399) * (sx - x0);
        double got = (dst[100 * 224 + x] * aug_std[0] + aug_mean[0]) * 255;
        if (fabs(got - want) > worst) worst = fabs(got - want);
    }
    assert_true(worst <= 0.5 + 1e-3);
    free(src), free(tmp), free(dst);
}

/* A 16-bit mono WAV of a sine at f Hz (amplitude 0.5). */
static unsigned char *tone(int rate, double f, double seconds, size_t *len) {
    unsigned char *b = wav_synth(rate, seconds, 1, len); /* for the header */
    long n = (long)(seconds * rate);
    for (long i = 0; i < n; i++) {
        int16_t q = (int16_t)lrint(0.5 * 32767 * sin(2 * M_PI * f * i / rate));
        b[44 + 2 * i] = (unsigned char)(q & 0xff);
        b[45 + 2 * i] = (unsigned char)(((uint16_t)q >> 8) & 0xff);
    }
    return b;
}

static void test_wav_decode(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = wav_synth(44100, 0.5, 3, &len);
    assert_int_equal(len, 44 + 2 * 22050);
    float *x;
    long n;
    int rate;
    char err[128];
    assert_int_equal(wav_decode(b, len, &x, &n, &rate, err, sizeof err), 0);
    assert_int_equal(n, 22050);
    assert_int_equal(rate, 44100);
    double rms = 0;
    for (long i = 0; i < n; i++) {
        assert_true(x[i] >= -1 && x[i] < 1);
        rms += x[i] * x[i];
    }
    assert_true(sqrt(rms / n) > 0.1); /* a signal, not silence */
    free(x);
    b[34] = 8; /* 8-bit: refused */
    assert_int_equal(wav_decode(b, len, &x, &n, &rate, err, sizeof err), -1);
    assert_non_null(strstr(err, "16-bit"));
    memcpy(b, "RIFX", 4);
    assert_int_equal(wav_decode(b, len, &x, &n, &rate, err, sizeof err), -1);
    free(b);
}

/* 44.1 -> 16 kHz keeps a 1 kHz tone: its RMS (0.5 / sqrt 2) and its zero
 * crossings (2000 a second); the log-mel's loudest filter is the one
 * centred nearest 1 kHz. */
static void test_resample_and_logmel(void **state) {
    (void)state;
    size_t len;
    unsigned char *b = tone(44100, 1000, 1.0, &len);
    audio_ctx *a = audio_ctx_new(44100, 16000, 400, 160, 80);
    assert_non_null(a);
    float *x;
    long n;
    int rate;
    char err[128];
    assert_int_equal(wav_decode(b, len, &x, &n, &rate, err, sizeof err), 0);
    long m = audio_resampled_len(a, n);
    assert_int_equal(m, 16000);
    float *y = malloc(sizeof *y * (size_t)m);
    assert_int_equal(audio_resample(a, x, n, y), m);
    double rms = 0;
    int cross = 0;
    for (long i = 1000; i < 15000; i++) {
        rms += y[i] * y[i];
        cross += (y[i - 1] < 0) != (y[i] < 0);
    }
    rms = sqrt(rms / 14000);
    assert_true(fabs(rms - 0.5 / sqrt(2)) < 0.01);
    assert_true(abs(cross - 1750) <= 2); /* 14000 samples = 0.875 s */
    size_t cap = 80 * (size_t)(m / 160 + 1);
    float *mel = malloc(sizeof *mel * cap);
    long frames = audio_run(a, b, len, mel, cap, err, sizeof err);
    assert_int_equal(frames, 16000 / 160 + 1);
    double top = audio_hz_to_mel(8000);
    int best = 0, want = 0;
    double nearest = 1e9;
    for (int k = 0; k < 80; k++) {
        if (mel[(size_t)k * frames + 50] > mel[(size_t)best * frames + 50]) best = k;
        double c = audio_mel_to_hz(top * (k + 1) / 81);
        if (fabs(c - 1000) < nearest) nearest = fabs(c - 1000), want = k;
    }
    assert_int_equal(best, want);
    /* The pipeline refuses a WAV at another rate than its input. */
    audio_ctx *b16 = audio_ctx_new(16000, 16000, 400, 160, 80);
    assert_int_equal(audio_run(b16, b, len, mel, cap, err, sizeof err), -1);
    assert_non_null(strstr(err, "44100 Hz"));
    audio_ctx_free(b16);
    free(x), free(y), free(mel), free(b);
    audio_ctx_free(a);
}

/* The benchmarks report positive costs, and the audio cost grows with the
 * clip (a fit over 1..4 s clips with a positive slope). */
static void test_benches(void **state) {
    (void)state;
    const int w = 320, h = 240;
    unsigned char *px = calloc((size_t)w * h * 3, 1);
    aug_image im = {px, w, h};
    eval_result e;
    char err[128];
    assert_int_equal(eval_bench(&im, 1, 20, 3, &e, err, sizeof err), 0);
    assert_true(e.ms_per_item.median > 0 && e.ms_per_item.n == 3);
    audio_result a;
    assert_int_equal(audio_bench(4, 3, 1, &a, err, sizeof err), 0);
    /* Held >= 0 (on a busy host the free fit may not be); not all zero. */
    assert_true(a.model_ms_per_mb >= 0 && a.model_ms_per_item >= 0 && a.fit.n == 4);
    assert_true(a.model_ms_per_mb + a.model_ms_per_item > 0);
    assert_int_equal(audio_bench(1, 3, 1, &a, err, sizeof err), -1);
    free(px);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eval_transform),
        cmocka_unit_test(test_wav_decode),
        cmocka_unit_test(test_resample_and_logmel),
        cmocka_unit_test(test_benches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
