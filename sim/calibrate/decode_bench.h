/* decode_bench: JPEG decode cost with TurboJPEG, from memory, per item
 * (calibrate's "decode" benchmark, bench_decode).
 *
 * On a set read by decode_load (jpeg_set.h), decode_bench decodes every
 * item `reps` times (tjDecompress2 to RGB, default flags: accurate integer
 * IDCT, fancy upsampling) and fits the prep
 * cost model  ms per item = decode_ms_per_mb * encoded MB + decode_ms_per_item
 * by least squares over the per-file median times (1 MB = 1e6 bytes).
 *
 * Use: jpeg_set s; decode_load(&files, &s, ...); decode_bench(&s, 5, &r, ...);
 *      decode_set_free(&s);
 */
#ifndef STALLSIM_DECODE_BENCH_H
#define STALLSIM_DECODE_BENCH_H

#include <stddef.h>
#include "fit.h"
#include "jpeg_set.h"
#include "stats.h"

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
