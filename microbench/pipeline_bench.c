/* pipeline_bench: see pipeline_bench.h. */
#include "pipeline_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio_prep.h"
#include "clock.h"
#include "eval_transform.h"
#include "progress.h"

int eval_bench(const aug_image *imgs, int nimg, int items, int reps, eval_result *out, char *err,
               size_t errlen) {
    memset(out, 0, sizeof *out);
    if (nimg < 1 || items < 1 || reps < 1 || reps > 64) {
        snprintf(err, errlen, "eval: bad arguments");
        return -1;
    }
    size_t most = 0;
    for (int i = 0; i < nimg; i++) {
        int rw, rh;
        eval_resized_dims(imgs[i].w, imgs[i].h, EVAL_RESIZE, &rw, &rh);
        if ((size_t)rw * (size_t)rh * 3 > most) most = (size_t)rw * (size_t)rh * 3;
    }
    unsigned char *tmp = malloc(most);
    float *dst = malloc(sizeof *dst * 3 * EVAL_CROP * EVAL_CROP);
    if (!tmp || !dst) {
        free(tmp), free(dst);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double ms[64];
    for (int r = -1; r < reps; r++) { /* pass -1 warms the caches up */
        double t0 = clock_now();
        for (int i = 0; i < items; i++) {
            const aug_image *im = &imgs[i % nimg];
            eval_cpu(im->px, im->w, im->h, EVAL_RESIZE, EVAL_CROP, tmp, dst);
        }
        if (r >= 0) ms[r] = (clock_now() - t0) * 1e3 / items;
    }
    free(tmp), free(dst);
    out->items = items, out->reps = reps, out->images = nimg;
    out->ms_per_item = stats_summarize(ms, reps);
    progress("eval transform: %.3f ms/item (resize 256, centre crop 224, normalise)",
             out->ms_per_item.median);
    return 0;
}

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
