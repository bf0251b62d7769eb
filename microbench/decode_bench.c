/* decode_bench: see decode_bench.h. */
#include "decode_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <errno.h>

#include "clock.h"
#include "progress.h"

#define MAX_BAD_LINES 20
#define MAX_PIXELS    (256 << 20)

/* Decodes into rgb (room for 3*w*h); also the validity test of decode_load. */
static int decode_into(tjhandle tj, const jpeg_item *it, unsigned char *rgb) {
    return tjDecompress2(tj, it->jpeg, (unsigned long)it->size, rgb, it->w, 0, it->h, TJPF_RGB, 0);
}

static void report_bad(int *bad, const char *path, const char *why) {
    if (*bad < MAX_BAD_LINES) fprintf(stderr, "calibrate: skipping %s: %s\n", path, why);
    (*bad)++;
}

/* After an error TurboJPEG 2.1 leaves the handle mid-header, and later
 * calls fail with the stale message: start each file after a bad one afresh. */
static tjhandle renew(tjhandle tj) {
    tjDestroy(tj);
    return tjInitDecompress();
}

int decoder_init(jpeg_decoder *d) {
    memset(d, 0, sizeof *d);
    d->tj = tjInitDecompress();
    return d->tj ? 0 : -1;
}

void decoder_free(jpeg_decoder *d) {
    if (d->tj) tjDestroy(d->tj);
    free(d->rgb);
    memset(d, 0, sizeof *d);
}

int decoder_header(jpeg_decoder *d, const unsigned char *jpeg, long size, int *w, int *h, char *why,
                   size_t whylen) {
    int subsamp, colorspace;
    if (size <= 0) {
        snprintf(why, whylen, "empty file");
        return -1;
    }
    if (tjDecompressHeader3(d->tj, jpeg, (unsigned long)size, w, h, &subsamp, &colorspace) != 0) {
        snprintf(why, whylen, "%s", tjGetErrorStr2(d->tj));
        d->tj = renew(d->tj);
        return -1;
    }
    /* A header may claim up to 65535 x 65535 pixels (12 GB of RGB): refuse
     * what no training set holds before allocating it. */
    if ((double)*w * *h > MAX_PIXELS) {
        snprintf(why, whylen, "%d x %d pixels is over the %d-megapixel limit", *w, *h,
                 MAX_PIXELS >> 20);
        return -1;
    }
    return 0;
}

int decoder_run(jpeg_decoder *d, const unsigned char *jpeg, long size, int *w, int *h, char *why,
                size_t whylen) {
    if (decoder_header(d, jpeg, size, w, h, why, whylen) != 0) return -1;
    size_t need = (size_t)*w * (size_t)*h * 3;
    if (need > d->cap) {
        unsigned char *b = realloc(d->rgb, need);
        if (!b) {
            snprintf(why, whylen, "image too large to decode");
            return -1;
        }
        d->rgb = b;
        d->cap = need;
    }
    /* Warnings (e.g. a truncated file) make tjDecompress2 fail too: such a
     * file would not decode cleanly in a training loader either. */
    if (tjDecompress2(d->tj, jpeg, (unsigned long)size, d->rgb, *w, 0, *h, TJPF_RGB, 0) != 0) {
        snprintf(why, whylen, "%s", tjGetErrorStr2(d->tj));
        d->tj = renew(d->tj);
        return -1;
    }
    return 0;
}

int decode_load(const file_list *fl, jpeg_set *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->v = calloc((size_t)(fl->n > 0 ? fl->n : 1), sizeof *out->v);
    jpeg_decoder dec;
    int dok = decoder_init(&dec) == 0;
    if (!out->v || !dok) {
        snprintf(err, errlen, "cannot set up the decoder: %s",
                 dok ? "out of memory" : tjGetErrorStr2(NULL));
        free(out->v);
        out->v = NULL;
        decoder_free(&dec);
        return -1;
    }
    int bad = 0;
    for (int i = 0; i < fl->n && dec.tj; i++) {
        jpeg_item it = {.path = fl->v[i].path};
        char why[256];
        if (fileset_read(it.path, &it.jpeg, &it.size) != 0) {
            report_bad(&bad, it.path, errno == EINVAL ? "not a regular file" : strerror(errno));
            continue;
        }
        int ok = decoder_run(&dec, it.jpeg, it.size, &it.w, &it.h, why, sizeof why) == 0;
        /* Bytes past what the pixels could need (a tail of padding or other
         * data after the image) would count as decoded MB and put a rate
         * per MB into the profile that no real JPEG has. A megabyte of
         * slack keeps small images with large EXIF or ICC blocks. */
        if (ok && (double)it.size > 3.0 * it.w * it.h + (1 << 20)) {
            snprintf(why, sizeof why,
                     "%ld bytes for %d x %d pixels, more than their raw RGB: data after the image",
                     it.size, it.w, it.h);
            ok = 0;
        }
        if (!ok) {
            report_bad(&bad, it.path, why);
            free(it.jpeg);
        } else {
            out->v[out->n++] = it;
        }
    }
    if (!dec.tj) {
        snprintf(err, errlen, "tjInitDecompress: %s", tjGetErrorStr2(NULL));
        decode_set_free(out);
        decoder_free(&dec);
        return -1;
    }
    if (bad > MAX_BAD_LINES)
        fprintf(stderr, "calibrate: ... and %d more bad files\n", bad - MAX_BAD_LINES);
    out->bad = bad;
    decoder_free(&dec);
    return 0;
}

void decode_set_free(jpeg_set *s) {
    for (int i = 0; i < s->n; i++)
        free(s->v[i].jpeg);
    free(s->v);
    memset(s, 0, sizeof *s);
}

int decode_rgb(const jpeg_item *it, unsigned char **rgb, char *err, size_t errlen) {
    tjhandle tj = tjInitDecompress();
    if (!tj) {
        snprintf(err, errlen, "tjInitDecompress: %s", tjGetErrorStr2(NULL));
        return -1;
    }
    unsigned char *buf = malloc((size_t)it->w * it->h * 3);
    int rc = buf ? decode_into(tj, it, buf) : -1;
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", it->path, buf ? tjGetErrorStr2(tj) : "out of memory");
        free(buf);
    } else {
        *rgb = buf;
    }
    tjDestroy(tj);
    return rc;
}

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
            if (decode_into(tj, &s->v[i], rgb) != 0) {
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
