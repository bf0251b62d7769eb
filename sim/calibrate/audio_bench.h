/* audio_bench: the cost of the audio pipeline, one core (calibrate's
 * "audio" benchmark, bench_audio, for prep.audio_ms_per_mb and
 * prep.audio_ms_per_item): audio_prep's whole pipeline (WAV decode,
 * 44.1 -> 16 kHz, log-mel 400/160/80) on generated mono 16-bit clips of
 * 1..`clips` seconds; the median time of each clip over the passes, fitted
 * ms = ms_per_mb x WAV MB + ms_per_item (through 0 when the free fit's
 * intercept or slope is negative).
 *
 * Use: audio_result a; audio_bench(8, 5, seed, &a, err, n);
 */
#ifndef STALLSIM_AUDIO_BENCH_H
#define STALLSIM_AUDIO_BENCH_H

#include <stddef.h>

#include "fit.h"
#include "stats.h"

typedef struct {
    int clips, reps, rate_in, rate_out, n_fft, hop, n_mels;
    double mean_mb;
    linear_fit fit;
    double model_ms_per_mb, model_ms_per_item; /* fit_cost_line's, >= 0 */
    cost_method model_method;
    stat_summary ms_per_audio_s; /* per pass: all clips' time over their seconds */
} audio_result;

int audio_bench(int clips, int reps, unsigned long seed, audio_result *out, char *err,
                size_t errlen);

#endif
