/* audio_bench: see audio_bench.h. */
#include "audio_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio_prep.h"
#include "bench.h"
#include "clock.h"
#include "progress.h"

int audio_bench(int clips, int reps, unsigned long seed, audio_result *out, char *err,
                size_t errlen) {
    memset(out, 0, sizeof *out);
    enum { MAX_CLIPS = 32 };
    if (clips < 2 || clips > MAX_CLIPS || reps < 1 || reps > 64) {
        snprintf(err, errlen, "audio: bad arguments");
        return -1;
    }
    *out = (audio_result){.clips = clips,
                          .reps = reps,
                          .rate_in = 44100,
                          .rate_out = 16000,
                          .n_fft = 400,
                          .hop = 160,
                          .n_mels = 80};
    audio_ctx *a = audio_ctx_new(out->rate_in, out->rate_out, out->n_fft, out->hop, out->n_mels);
    unsigned char *wav[MAX_CLIPS] = {0};
    size_t len[MAX_CLIPS];
    /* Clip k lasts k + 1 seconds: the longest's frames bound the output. */
    size_t cap = (size_t)out->n_mels * ((size_t)clips * out->rate_out / out->hop + 2);
    float *mel = malloc(sizeof *mel * cap);
    int rc = a && mel ? 0 : -1;
    for (int k = 0; k < clips && rc == 0; k++)
        if (!(wav[k] = wav_synth(out->rate_in, k + 1, seed + (unsigned long)k, &len[k]))) rc = -1;
    if (rc) snprintf(err, errlen, "audio: out of memory");
    double t_clip[MAX_CLIPS][64], per_s[64], x[MAX_CLIPS], y[MAX_CLIPS], total_mb = 0;
    for (int r = -1; r < reps && rc == 0; r++) { /* pass -1 warms up */
        double sum = 0;
        for (int k = 0; k < clips && rc == 0; k++) {
            double t0 = clock_now();
            if (audio_run(a, wav[k], len[k], mel, cap, err, errlen) < 0) rc = -1;
            double dt = clock_now() - t0;
            if (r >= 0) t_clip[k][r] = dt * 1e3;
            sum += dt;
        }
        if (r >= 0) per_s[r] = sum * 1e3 / (clips * (clips + 1) / 2.0);
    }
    for (int k = 0; k < clips && rc == 0; k++) {
        x[k] = len[k] / 1e6;
        y[k] = stats_summarize(t_clip[k], reps).median;
        total_mb += x[k];
    }
    if (rc == 0 && fit_linear(x, y, clips, &out->fit) != 0) {
        snprintf(err, errlen, "audio: no fit");
        rc = -1;
    }
    if (rc == 0) {
        out->mean_mb = total_mb / clips;
        out->ms_per_audio_s = stats_summarize(per_s, reps);
        /* A negative fixed cost or slope is noise on a busy host: the
         * bounded fit holds both >= 0. */
        cost_line c;
        fit_cost_line(x, y, clips, &c);
        out->model_ms_per_mb = c.per_x, out->model_ms_per_item = c.fixed;
        out->model_method = c.method;
        progress("audio pipeline: %.3f ms/MB of WAV + %.3f ms (free fit r2 %.3f; %s; %.2f ms per "
                 "audio second)",
                 out->model_ms_per_mb, out->model_ms_per_item, out->fit.r2,
                 cost_method_words(out->model_method), out->ms_per_audio_s.median);
    }
    for (int k = 0; k < clips; k++)
        free(wav[k]);
    free(mel);
    audio_ctx_free(a);
    return rc;
}

/* calibrate's benchmark: clips of 1..8 s (1..4 quick), for prep.audio_*. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    return audio_bench(c->quick ? 4 : 8, c->reps, c->seed, res, err, errlen);
}

static void bench_keys(const void *res, profile_keys *k) {
    const audio_result *au = res;
    profile_key_num(k, CALIB_KEY(900, "prep.audio_ms_per_mb"), au->model_ms_per_mb);
    profile_key_num(k, CALIB_KEY(901, "prep.audio_ms_per_item"), au->model_ms_per_item);
}

static void bench_measured(const void *res, prof_t *o) {
    const audio_result *au = res;
    FILE *f = o->f;
    prof_str(
        o, 4, "operation",
        "WAV 16-bit PCM decode, windowed-sinc resample, log-mel (Hann, GSL real FFT, HTK mel)");
    prof_int(o, 4, "rate_in_hz", au->rate_in);
    prof_int(o, 4, "rate_out_hz", au->rate_out);
    prof_int(o, 4, "n_fft", au->n_fft);
    prof_int(o, 4, "hop", au->hop);
    prof_int(o, 4, "n_mels", au->n_mels);
    prof_int(o, 4, "clips", au->clips);
    prof_str(o, 4, "clip_seconds", "1 .. clips, generated (chirp with harmonics and noise)");
    prof_int(o, 4, "repetitions", au->reps);
    prof_num(o, 4, "mean_mb", au->mean_mb);
    prof_stat(o, 4, "ms_per_audio_second", au->ms_per_audio_s);
    fprintf(f, "    fit: {ms_per_mb: %s, ", prof_n(o, au->fit.slope));
    fprintf(f, "ms_per_item: %s, ", prof_n(o, au->fit.intercept));
    fprintf(f, "r2: %s, n: %d}\n", prof_n(o, au->fit.r2), au->fit.n);
    prof_str(o, 4, "model", cost_method_words(au->model_method));
}

static void bench_judge(const void *res, stability_t *st) {
    stability_figure(st, "audio pipeline ms per audio second",
                     ((const audio_result *)res)->ms_per_audio_s);
}

const calib_bench_t bench_audio = {
    .section = "audio_cpu",
    .size = sizeof(audio_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .judge = bench_judge,
};
