/* decode_bench: JPEG decode cost with TurboJPEG, from memory, per item.
 *
 * decode_load reads every listed file and decodes it once; files that cannot
 * be read, are not JPEG, are corrupt or truncated (any libjpeg-turbo error or
 * warning) are counted, reported on stderr and left out of everything after.
 * decode_bench then decodes every item `reps` times (tjDecompress2 to RGB,
 * default flags: accurate integer IDCT, fancy upsampling) and fits the prep
 * cost model  ms per item = decode_ms_per_mb * encoded MB + decode_ms_per_item
 * by least squares over the per-file median times (1 MB = 1e6 bytes).
 *
 * Use: jpeg_set s; decode_load(&files, &s, ...); decode_bench(&s, 5, &r, ...);
 *      decode_set_free(&s);
 */
#ifndef STALLSIM_DECODE_BENCH_H
#define STALLSIM_DECODE_BENCH_H

#include <stddef.h>
#include "fileset.h"
#include "fit.h"
#include "stats.h"

typedef struct {
    const char *path; /* borrowed from the file_list */
    unsigned char *jpeg;
    long size;
    int w, h;
} jpeg_item;

typedef struct {
    jpeg_item *v;
    int n;
    int bad; /* files left out */
} jpeg_set;

int decode_load(const file_list *fl, jpeg_set *out, char *err, size_t errlen);
void decode_set_free(jpeg_set *s);

/* A reusable decoder for a loader thread: one TurboJPEG handle and an RGB
 * buffer that grows to the largest image seen. */
typedef struct {
    void *tj; /* tjhandle */
    unsigned char *rgb;
    size_t cap;
} jpeg_decoder;

int decoder_init(jpeg_decoder *d);
void decoder_free(jpeg_decoder *d);
/* Reads only the header (is it a JPEG, how large); same returns as decoder_run. */
int decoder_header(jpeg_decoder *d, const unsigned char *jpeg, long size, int *w, int *h, char *why,
                   size_t whylen);
/* Decodes jpeg[0, size) to RGB in d->rgb (3 * w * h bytes). Returns 0, or -1
 * with the reason in why (the handle is renewed after a failure, since
 * TurboJPEG 2.1 keeps a stale state; on a renewal failure d->tj is NULL). */
int decoder_run(jpeg_decoder *d, const unsigned char *jpeg, long size, int *w, int *h, char *why,
                size_t whylen);

/* Decodes one item to a malloc'd RGB buffer of 3 * w * h bytes. */
int decode_rgb(const jpeg_item *it, unsigned char **rgb, char *err, size_t errlen);

typedef struct {
    int files, reps;
    double mean_mb, mean_mp;  /* mean encoded MB and megapixels per item */
    stat_summary ms_per_item; /* per repetition: pass time / items */
    stat_summary mb_s, mp_s;  /* per repetition: encoded MB/s, megapixels/s */
    linear_fit fit;           /* ms = slope * MB + intercept, per-file medians */
    linear_fit fit_mp;        /* ms = slope * megapixels + intercept, same samples */
    /* The cost model for the profile: the least-squares line with both
     * coefficients >= 0 (fit_cost_line: the free fit, the line through 0 or
     * the plain mean, as model_method says). */
    double model_ms_per_mb, model_ms_per_item;
    cost_method model_method;
} decode_result;

int decode_bench(const jpeg_set *s, int reps, decode_result *out, char *err, size_t errlen);

/* Fits ms = a * MB + b to samples; exposed for tests of the cost model. */
int decode_fit(const double *mb, const double *ms, int n, linear_fit *out);

/* The decode cost model from samples: ms = a * MB + b with a, b >= 0
 * (fit_cost_line); fills model_* of out. Returns 0, or -1 with no sample. */
int decode_model(const double *mb, const double *ms, int n, decode_result *out);

#endif
