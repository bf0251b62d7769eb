/* pipeline_image_eval: a validation image's prep, Resize(256),
 * CenterCrop(224) and Normalize after the JPEG decode: prep.eval_ms an item
 * on a core, which calibrate measures and which has no built-in value. */
#include "pipeline_kind.h"

extern const pipeline_ops_t pipeline_image_eval;

/* This pipeline's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    double eval_ms; /* resize, centre crop, normalise; 0 = not given */
} eval_opts_t;
SCN_KIND_OPTS_FITS(eval_opts_t);

static const eval_opts_t *eval_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_PIPELINE, pipeline_kind_index(&pipeline_image_eval));
}

static double eval_cpu_ms(const scenario_t *s, double bytes) {
    (void)bytes; /* the resize's output is 256 on the shorter side whatever the JPEG's size */
    return eval_opts(s)->eval_ms;
}

static const char *eval_missing(const scenario_t *s, const char **what) {
    *what = "CPU ms per item of resize 256, centre crop 224, normalise";
    return eval_opts(s)->eval_ms <= 0 ? "prep.eval_ms" : NULL;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"prep.eval_ms", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(eval_opts_t, eval_ms), "CPU time per item of the image_eval pipeline after decode (resize the shorter side to 256, centre crop 224, normalise; one core); calibrate measures it (0 = not given: a job with prep.pipeline image_eval is refused)"},
};
/* clang-format on */

const pipeline_ops_t pipeline_image_eval = {
    .name = "image_eval",
    .help = "decode + resize 256, centre crop 224, normalise: prep.eval_ms",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .jpeg = 1,
    .cpu_ms = eval_cpu_ms,
    .missing = eval_missing,
};
