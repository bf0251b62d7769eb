/* pipeline_kind: see pipeline_kind.h. The costs every pipeline kind shares (the JPEG
 * decode as prep.decode places it, the GPU's share) and the questions the
 * engine, the model and the loaders ask of a job's pipeline. */
#include "pipeline_kind.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "diag.h"
#include "kinds.h"

const pipeline_ops_t *job_pipeline(const job_t *j) {
    return pipeline_kind(j->prep.pipeline);
}

int pipeline_gpu_decodes(const scenario_t *s, const job_t *j) {
    return s->prep.decode == DECODE_GPU && job_pipeline(j)->jpeg;
}

/* A JPEG's decode on the CPU, ms: all of it, or under prep.decode: gpu the
 * hybrid path's Huffman stage for the images the hardware decoder leaves. */
static double decode_ms(const scenario_t *s, double bytes) {
    if (s->prep.decode == DECODE_GPU)
        return (1 - scenario_hw_decode_share(s)) *
               (s->prep.huffman_ms_per_mb * bytes / 1e6 + s->prep.huffman_ms_per_item);
    return s->prep.decode_ms_per_mb * bytes / 1e6 + s->prep.decode_ms_per_item;
}

static double decode_ms_per_mb(const scenario_t *s) {
    return s->prep.decode == DECODE_GPU
               ? (1 - scenario_hw_decode_share(s)) * s->prep.huffman_ms_per_mb
               : s->prep.decode_ms_per_mb;
}

double scenario_job_prep_s(const scenario_t *s, const job_t *j, double bytes) {
    const pipeline_ops_t *p = job_pipeline(j);
    if (!p->jpeg) return p->cpu_ms(s, bytes) / 1e3;
    return (decode_ms(s, bytes) + p->cpu_ms(s, bytes)) / 1e3;
}

static double slope_ms_per_mb(const pipeline_ops_t *p, const scenario_t *s) {
    return p->cpu_ms_per_mb ? p->cpu_ms_per_mb(s) : 0;
}

double scenario_job_prep_per_byte(const scenario_t *s, const job_t *j) {
    const pipeline_ops_t *p = job_pipeline(j);
    if (!p->jpeg) return slope_ms_per_mb(p, s) / 1e9;
    return (decode_ms_per_mb(s) + slope_ms_per_mb(p, s)) / 1e9;
}

int pipeline_engines(const scenario_t *s, const job_t *j) {
    const pipeline_ops_t *p = job_pipeline(j);
    return p->engines ? p->engines(s, j) : 0;
}

double pipeline_engine_s(const scenario_t *s, const job_t *j, uint32_t x) {
    return pipeline_engines(s, j) > 0 ? job_pipeline(j)->engine_s(s, x) : 0;
}

int pipeline_model_exact(const scenario_t *s, const job_t *j) {
    const pipeline_ops_t *p = job_pipeline(j);
    if (p->item_dev_ms && p->item_dev_ms(s, 0) != 0) return 0;
    return pipeline_engines(s, j) <= 0 || p->engine_s(s, 0) == p->engine_mean_s(s);
}

/* The engines of every GPU of the job, each clip holding one. */
double pipeline_engine_items_s(const scenario_t *s, const job_t *j) {
    const int e = pipeline_engines(s, j);
    if (e <= 0) return INFINITY;
    const double t = job_pipeline(j)->engine_mean_s(s);
    return t > 0 ? (double)j->gpus * e / t : INFINITY;
}

double pipeline_own_out_bytes(const scenario_t *s, const job_t *j) {
    const pipeline_ops_t *p = job_pipeline(j);
    return p && p->out_bytes ? p->out_bytes(s) : -1;
}

double scenario_job_gpu_input_bytes(const scenario_t *s, const job_t *j) {
    const pipeline_ops_t *p = job_pipeline(j);
    double b = (double)j->batch_per_gpu;
    /* Items decoded on the GPU stay there for every batch staged. */
    const double own = p->gpu_item_bytes ? p->gpu_item_bytes(s) : 0;
    if (own > 0) return (double)scenario_staged_batches(s, j) * b * own;
    const int gpu = pipeline_gpu_decodes(s, j);
    double batches = gpu ? (double)scenario_staged_batches(s, j) : 1;
    double decoded = gpu ? b * s->dataset.megapixels * 1e6 * 3 : 0;
    return batches * b * scenario_job_out_item_bytes(s, j) + decoded;
}

static double train_s(const job_t *j, double items) {
    return j->compute_s_per_batch > 0 ? j->compute_s_per_batch * items / (double)j->batch_per_gpu
                                      : items / j->gpu_items_per_s;
}

/* The hardware decoder's share of a batch runs on its engine beside the
 * SMs, a batch ahead (DALI's mixed stage runs ahead of the loop): the
 * iteration waits on it only by what it takes beyond the SMs' work, and
 * that wait is the GPU's own prep too (DS-Analyzer's T_gpu, on synthetic
 * data, decodes nothing). */
double scenario_job_gpu_prep_s(const scenario_t *s, const job_t *j, double items) {
    double t = 0, engine = 0;
    if (pipeline_gpu_decodes(s, j)) {
        const double h = scenario_hw_decode_share(s), mp = items * s->dataset.megapixels;
        /* nvJPEG's hybrid GPU stages run on the GPU that trains, before its step. */
        t += (1 - h) * mp * s->prep.gpu_decode_ms_per_mp / 1e3;
        if (h > 0) engine = h * mp / s->prep.hw_decode_mp_s;
    }
    if (s->prep.on_gpu && job_pipeline(j)->gpu_augment) t += items * s->prep.gpu_augment_ms / 1e3;
    const double sm = train_s(j, items) + t;
    return engine > sm ? t + engine - sm : t;
}

double scenario_job_compute_s(const scenario_t *s, const job_t *j, double items) {
    return train_s(j, items) + scenario_job_gpu_prep_s(s, j, items);
}

/* loader.batch_dtype says what a pipeline of frames hands over: given
 * where no job has one, it would change nothing, silently. */
static int dtype_check(const scenario_t *s) {
    const int row = schema_find(SCOPE_SCENARIO, "loader.batch_dtype");
    if (row < 0 || !s->explicit_key[row]) return 0;
    for (int j = 0; j < s->njobs; j++)
        if (job_pipeline(&s->jobs[j])->out_bytes) return 0;
    diag_error(s->origin[row], "loader.batch_dtype sets the dtype of a video pipeline's frames; "
                               "no job's prep.pipeline hands over frames: an image or audio item "
                               "hands over prep.out_kb, set that instead");
    return 1;
}

/* Each job's pipeline has its costs given (no built-in rate for the
 * pipelines calibrate measures beside the training augment) and runs where
 * it can. */
int pipeline_check(const scenario_t *s) {
    int errors = 0;
    for (int j = 0; j < s->njobs; j++) {
        const job_t *jb = &s->jobs[j];
        const pipeline_ops_t *p = job_pipeline(jb);
        const char *what = NULL, *miss = p->missing ? p->missing(s, &what) : NULL;
        if (miss) {
            diag_error(scenario_job_pos(s, j, "prep.pipeline"),
                       "job '%s': prep.pipeline %s needs %s (%s): calibrate measures it into the "
                       "host profile, or set it; it has no built-in value",
                       jb->name, p->name, miss, what);
            errors++;
        }
        if (pipeline_engines(s, jb) < 0) {
            char which[SCN_STR + 64] = "the job names no GPU";
            if (jb->gpu[0])
                snprintf(which, sizeof which,
                         "the GPU table has no count of them for jobs.%d.gpu '%s'", j, jb->gpu);
            diag_error(scenario_job_pos(s, j, jb->gpu[0] ? "gpu" : "prep.pipeline"),
                       "job '%s': prep.pipeline %s decodes on the GPU's hardware decoder engines, "
                       "and %s: give prep.nvdec_engines (NVIDIA publishes the NVDEC count of each "
                       "GPU) or a jobs.%d.gpu the table knows (stallsim help gpus)",
                       jb->name, p->name, which, j);
            errors++;
        }
        if (p->out_bytes && jb->prep.out_kb > 0) {
            diag_error(scenario_job_pos(s, j, "prep.out_kb"),
                       "job '%s': prep.out_kb = %g KB means nothing under prep.pipeline %s: its "
                       "item hands over its frames (prep.video_frames x height x width x 3 "
                       "values of loader.batch_dtype, %.1f KB): leave it out",
                       jb->name, jb->prep.out_kb, p->name, p->out_bytes(s) / 1e3);
            errors++;
        }
        if (s->prep.on_gpu && !p->gpu_augment) {
            diag_error(scenario_job_pos(s, j, "prep.pipeline"),
                       "job '%s': prep.on_gpu moves the training augment to the GPU (its cost "
                       "prep.gpu_augment_ms); prep.pipeline %s has no GPU cost: leave on_gpu "
                       "false",
                       jb->name, p->name);
            errors++;
        }
    }
    return errors + dtype_check(s);
}

static int owns(const pipeline_ops_t *p, const char *name) {
    for (int k = 0; k < p->nkeys; k++)
        if (!strcmp(p->keys[k].name, name)) return 1;
    return 0;
}

int pipeline_key_used(const scenario_t *s, const char *name) {
    int owned = 0;
    for (int i = 0; pipeline_kind(i); i++)
        owned |= owns(pipeline_kind(i), name);
    if (!owned) return 1;
    for (int j = 0; j < s->njobs; j++)
        if (owns(job_pipeline(&s->jobs[j]), name)) return 1;
    return 0;
}
