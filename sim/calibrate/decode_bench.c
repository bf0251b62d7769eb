/* decode_bench: see decode_bench.h. */
#include "decode_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include "bench.h"
#include "clock.h"
#include "progress.h"

int decode_fit(const double *mb, const double *ms, int n, linear_fit *out) {
    return fit_linear(mb, ms, n, out);
}

int decode_model(const double *mb, const double *ms, int n, decode_result *out) {
    cost_line c;
    int rc = fit_cost_line(mb, ms, n, &c);
    out->model_ms_per_mb = c.per_x;
    out->model_ms_per_item = c.fixed;
    out->model_method = c.method;
    return rc;
}

int decode_bench(const jpeg_set *s, int reps, decode_result *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    int n = s->n;
    if (n < 1 || reps < 1) {
        snprintf(err, errlen, "nothing to decode");
        return -1;
    }
    size_t maxpx = 0;
    double tot_mb = 0.0, tot_mp = 0.0;
    for (int i = 0; i < n; i++) {
        size_t px = (size_t)s->v[i].w * s->v[i].h;
        if (px > maxpx) maxpx = px;
        tot_mb += s->v[i].size / 1e6;
        tot_mp += px / 1e6;
    }
    tjhandle tj = tjInitDecompress();
    unsigned char *rgb = malloc(maxpx * 3);
    double *t = malloc(sizeof *t * (size_t)n * (size_t)reps); /* t[i * reps + r], ms */
    double *rep_ms = malloc(sizeof *rep_ms * (size_t)reps * 3);
    double *x = malloc(sizeof *x * (size_t)n * 3);
    int rc = -1;
    if (!tj || !rgb || !t || !rep_ms || !x) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int r = 0; r < reps; r++) {
        double pass = 0.0;
        for (int i = 0; i < n; i++) {
            double t0 = clock_now();
            if (jpeg_item_decode(tj, &s->v[i], rgb) != 0) {
                snprintf(err, errlen, "%s: %s", s->v[i].path, tjGetErrorStr2(tj));
                goto done;
            }
            double ms = (clock_now() - t0) * 1e3;
            t[i * reps + r] = ms;
            pass += ms;
        }
        rep_ms[r] = pass / n;
        rep_ms[reps + r] = tot_mb / (pass / 1e3);
        rep_ms[2 * reps + r] = tot_mp / (pass / 1e3);
        progress("decode: pass %d/%d: %.3f ms/item, %.1f MB/s, %.1f Mpx/s", r + 1, reps, rep_ms[r],
                 rep_ms[reps + r], rep_ms[2 * reps + r]);
    }
    double *mb = x, *mp = x + n, *med = x + 2 * n;
    for (int i = 0; i < n; i++) {
        mb[i] = s->v[i].size / 1e6;
        mp[i] = (double)s->v[i].w * s->v[i].h / 1e6;
        med[i] = stats_summarize(&t[i * reps], reps).median;
    }
    out->files = n;
    out->reps = reps;
    out->mean_mb = tot_mb / n;
    out->mean_mp = tot_mp / n;
    out->ms_per_item = stats_summarize(rep_ms, reps);
    out->mb_s = stats_summarize(rep_ms + reps, reps);
    out->mp_s = stats_summarize(rep_ms + 2 * reps, reps);
    /* The free fit is reported as measured (it fails when every file has
     * one size); the model is the bounded one, which falls back to the mean. */
    decode_fit(mb, med, n, &out->fit);
    fit_linear(mp, med, n, &out->fit_mp);
    decode_model(mb, med, n, out);
    rc = 0;
done:
    if (tj) tjDestroy(tj);
    free(rgb);
    free(t);
    free(rep_ms);
    free(x);
    return rc;
}

/* calibrate's benchmark: the set's decode, for prep.decode_ms_per_mb/_per_item. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    decode_result *r = res;
    char why[512];
    if (decode_bench(c->set, c->reps, r, why, sizeof why) != 0) {
        snprintf(err, errlen, "decode: %s", why);
        return -1;
    }
    progress("decode model: %.3f ms/MB * size + %.3f ms (free fit r2 %.3f; %s)", r->model_ms_per_mb,
             r->model_ms_per_item, r->fit.r2, cost_method_words(r->model_method));
    return 0;
}

static void bench_keys(const void *res, profile_keys *k) {
    const decode_result *d = res;
    profile_key_num(k, CALIB_KEY(400, "prep.decode_ms_per_mb"), d->model_ms_per_mb);
    profile_key_num(k, CALIB_KEY(401, "prep.decode_ms_per_item"), d->model_ms_per_item);
}

static void bench_measured(const void *res, prof_t *o) {
    const decode_result *d = res;
    FILE *f = o->f;
    prof_str(o, 4, "api", "TurboJPEG tjDecompress2 to RGB, default flags, from memory");
    prof_int(o, 4, "files", d->files);
    prof_int(o, 4, "repetitions", d->reps);
    prof_num(o, 4, "mean_mb", d->mean_mb);
    prof_num(o, 4, "mean_megapixels", d->mean_mp);
    prof_stat(o, 4, "ms_per_item", d->ms_per_item);
    prof_stat(o, 4, "mb_s", d->mb_s);
    prof_stat(o, 4, "megapixels_s", d->mp_s);
    fprintf(f, "    fit: {ms_per_mb: %s, ", prof_n(o, d->fit.slope));
    fprintf(f, "ms_per_item: %s, ", prof_n(o, d->fit.intercept));
    fprintf(f, "r2: %s, n: %d}\n", prof_n(o, d->fit.r2), d->fit.n);
    fprintf(f, "    fit_megapixels: {ms_per_megapixel: %s, ", prof_n(o, d->fit_mp.slope));
    fprintf(f, "ms_per_item: %s, ", prof_n(o, d->fit_mp.intercept));
    fprintf(f, "r2: %s}\n", prof_n(o, d->fit_mp.r2));
    prof_str(o, 4, "model", cost_method_words(d->model_method));
}

static void bench_judge(const void *res, stability_t *st) {
    stability_figure(st, "decode ms/item", ((const decode_result *)res)->ms_per_item);
}

const calib_bench_t bench_decode = {
    .section = "decode",
    .size = sizeof(decode_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .judge = bench_judge,
};
