/* pipeline_audio: a clip's prep, torchaudio's WAV decode, resample from
 * 44.1 to 16 kHz and log-mel spectrogram: prep.audio_ms_per_mb of a core per
 * MB of WAV plus prep.audio_ms_per_item, which calibrate fits and which
 * have no built-in value. Nothing of it runs on the GPU. */
#include "pipeline_kind.h"

extern const pipeline_ops_t pipeline_audio;

/* This pipeline's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    double audio_ms_per_mb;   /* per MB of WAV; 0 = not given */
    double audio_ms_per_item; /* fixed per clip */
} audio_opts_t;
SCN_KIND_OPTS_FITS(audio_opts_t);

static const audio_opts_t *audio_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_PIPELINE, pipeline_kind_index(&pipeline_audio));
}

static double audio_cpu_ms(const scenario_t *s, double bytes) {
    return audio_opts(s)->audio_ms_per_mb * bytes / 1e6 + audio_opts(s)->audio_ms_per_item;
}

static double audio_slope(const scenario_t *s) {
    return audio_opts(s)->audio_ms_per_mb;
}

static const char *audio_missing(const scenario_t *s, const char **what) {
    *what = "CPU ms per MB of WAV: decode, resample, log-mel spectrogram";
    return audio_opts(s)->audio_ms_per_mb <= 0 ? "prep.audio_ms_per_mb" : NULL;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"prep.audio_ms_per_mb", KT_REAL, "ms/MB", "0", 0, 1e9, 0, NULL, KIND_FIELD(audio_opts_t, audio_ms_per_mb), "CPU time per MB of WAV of the audio pipeline (decode 16-bit PCM, resample 44.1 to 16 kHz, log-mel spectrogram; one core); calibrate measures it (0 = not given: a job with prep.pipeline audio is refused)"},
    {"prep.audio_ms_per_item", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(audio_opts_t, audio_ms_per_item), "fixed CPU time per clip of the audio pipeline (one core), the intercept of calibrate's fit"},
};
/* clang-format on */

const pipeline_ops_t pipeline_audio = {
    .name = "audio",
    .help = "WAV decode, resample, log-mel: prep.audio_*",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .cpu_ms = audio_cpu_ms,
    .cpu_ms_per_mb = audio_slope,
    .missing = audio_missing,
};
