/* pipeline_bench: the cost of the named prep pipelines other than the
 * training augment (augment_bench), one core, for the host profile's
 * prep.eval_ms and prep.audio_ms_per_mb / audio_ms_per_item:
 *
 *   eval_bench: eval_transform (resize 256, centre crop 224, normalise) on
 *     calibrate's decoded images, `items` per pass, median over passes;
 *   audio_bench: audio_prep's whole pipeline (WAV decode, 44.1 -> 16 kHz,
 *     log-mel 400/160/80) on generated mono 16-bit clips of 1..`clips`
 *     seconds; the median time of each clip over the passes, fitted
 *     ms = ms_per_mb x WAV MB + ms_per_item (through 0 when the free fit's
 *     intercept or slope is negative).
 *
 * Use: eval_bench(imgs, nimg, 200, 5, &e, err, n); audio_bench(8, 5, seed, &a, err, n).
 */
#ifndef STALLSIM_PIPELINE_BENCH_H
#define STALLSIM_PIPELINE_BENCH_H

#include <stddef.h>

#include "augment_ref.h"
#include "fit.h"
#include "stats.h"

typedef struct {
    int items, reps, images;
    stat_summary ms_per_item;
} eval_result;

typedef struct {
    int clips, reps, rate_in, rate_out, n_fft, hop, n_mels;
    double mean_mb;
    linear_fit fit;
    double model_ms_per_mb, model_ms_per_item; /* fit_cost_line's, >= 0 */
    cost_method model_method;
    stat_summary ms_per_audio_s; /* per pass: all clips' time over their seconds */
} audio_result;

int eval_bench(const aug_image *imgs, int nimg, int items, int reps, eval_result *out, char *err,
               size_t errlen);
int audio_bench(int clips, int reps, unsigned long seed, audio_result *out, char *err,
                size_t errlen);

#endif
