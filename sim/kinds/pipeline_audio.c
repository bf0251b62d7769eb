/* pipeline_audio: a clip's prep, torchaudio's WAV decode, resample from
 * 44.1 to 16 kHz and log-mel spectrogram: prep.audio_ms_per_mb of a core per
 * MB of WAV plus prep.audio_ms_per_item, which calibrate fits and which
 * have no built-in value. Nothing of it runs on the GPU. */
#include "pipeline_kind.h"

static double audio_cpu_ms(const scenario_t *s, double bytes) {
    return s->prep.audio_ms_per_mb * bytes / 1e6 + s->prep.audio_ms_per_item;
}

static double audio_slope(const scenario_t *s) {
    return s->prep.audio_ms_per_mb;
}

static const char *audio_missing(const scenario_t *s, const char **what) {
    *what = "CPU ms per MB of WAV: decode, resample, log-mel spectrogram";
    return s->prep.audio_ms_per_mb <= 0 ? "prep.audio_ms_per_mb" : NULL;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"prep.audio_ms_per_mb", KT_REAL, "ms/MB", "0", 0, 1e9, 0, NULL, SCN_FIELD(prep.audio_ms_per_mb), "CPU time per MB of WAV of the audio pipeline (decode 16-bit PCM, resample 44.1 to 16 kHz, log-mel spectrogram; one core); calibrate measures it (0 = not given: a job with prep.pipeline audio is refused)"},
    {"prep.audio_ms_per_item", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, SCN_FIELD(prep.audio_ms_per_item), "fixed CPU time per clip of the audio pipeline (one core), the intercept of calibrate's fit"},
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
