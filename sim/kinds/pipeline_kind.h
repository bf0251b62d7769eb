/* pipeline_kind: what a prep pipeline kind is to stallsim (`jobs.N.prep.pipeline`):
 * the CPU one item costs between its read and the GPU, and what of it the
 * GPU may take. Each kind is one file (pipeline_<name>.c) exporting one
 * pipeline_ops_t that owns its schema rows (its costs, which calibrate
 * measures), its check and its CPU per item; kinds.c lists them.
 *
 * An image pipeline (jpeg) decodes first, as prep.decode places it: on the
 * CPU (prep.decode_ms_*) or on the training GPU (nvJPEG: its Huffman stage
 * on the CPU, prep.huffman_ms_*, or the hardware decoder); its cpu_ms is
 * then the transform after the decode. Another pipeline's cpu_ms is all of
 * its item's CPU.
 *
 *   double s = scenario_job_prep_s(s, job, bytes); -- one item's CPU seconds */
#ifndef STALLSIM_PIPELINE_KIND_H
#define STALLSIM_PIPELINE_KIND_H

#include "scenario.h"
#include "schema.h"

typedef struct pipeline_ops {
    const char *name;
    const char *help; /* what it does and which keys cost it */
    const key_def_t *keys;
    int nkeys;
    int jpeg;        /* its items are JPEG images, decoded as prep.decode says */
    int gpu_augment; /* prep.on_gpu moves its transform to the GPU (prep.gpu_augment_ms) */
    /* CPU ms of an item of `bytes`: beyond the decode for a jpeg pipeline. */
    double (*cpu_ms)(const scenario_t *s, double bytes);
    /* cpu_ms's slope in the item's size, ms a MB (NULL: none). */
    double (*cpu_ms_per_mb)(const scenario_t *s);
    /* The key of its own that must be given and is not, and what it is
     * (*what); NULL when none is missing (NULL op: it has none to give). */
    const char *(*missing)(const scenario_t *s, const char **what);
    /* Optional (NULL: none; every item costs cpu_ms): item x's CPU ms beyond
     * cpu_ms's mean, which is the mean over the data set's items (a clip's
     * frames decoded from the keyframe before its first: pipeline_video.c).
     * The simulator adds it item by item; the model takes the mean. */
    double (*item_dev_ms)(const scenario_t *s, uint32_t x);
    /* Optional: a stage on the GPU's hardware decoder engines after the CPU
     * (a server of its own: an item waits for a free engine of its rank's
     * GPU). engines: per GPU of job j, 0 where the pipeline uses none, -1
     * where it needs them and none is known; engine_s: seconds item x holds
     * one; engine_mean_s: their mean over the items. */
    int (*engines)(const scenario_t *s, const job_t *j);
    double (*engine_s)(const scenario_t *s, uint32_t x);
    double (*engine_mean_s)(const scenario_t *s);
    /* Optional: bytes one prepared item hands over to the training process
     * and stages (NULL: prep.out_kb), and bytes of decoded frames an item
     * keeps on the GPU while its batch waits there (NULL or 0: none). */
    double (*out_bytes)(const scenario_t *s);
    double (*gpu_item_bytes)(const scenario_t *s);
} pipeline_ops_t;

/* The pipeline kind at index i of `prep.pipeline`'s choices, or NULL. */
const pipeline_ops_t *pipeline_kind(int i);
/* The index of a pipeline kind of the list (its ops table): where its own
 * options block is (scenario_kind_opts). */
int pipeline_kind_index(const pipeline_ops_t *ops);
/* Job j's pipeline. */
const pipeline_ops_t *job_pipeline(const job_t *j);
/* 1 when job j's images decode on its GPU (prep.decode: gpu, a jpeg pipeline). */
int pipeline_gpu_decodes(const scenario_t *s, const job_t *j);
/* Every job's pipeline checked: its own keys given, prep.on_gpu only where
 * it has a GPU transform. The number of errors. */
int pipeline_check(const scenario_t *s);
/* Job j's decoder engines per GPU (0: its pipeline uses none), the seconds
 * item x holds one (the simulator's) and their mean (the model's). */
int pipeline_engines(const scenario_t *s, const job_t *j);
double pipeline_engine_s(const scenario_t *s, const job_t *j, uint32_t x);
/* 0 where job j's items differ in CPU or engine time beyond their bytes
 * (a video clip's frames from its keyframe): the model takes their mean,
 * the simulator each, and their spread idles cores a mean does not. */
int pipeline_model_exact(const scenario_t *s, const job_t *j);
/* Items a second job j's decoder engines give, all its GPUs together
 * (INFINITY where its pipeline uses none). */
double pipeline_engine_items_s(const scenario_t *s, const job_t *j);
/* Bytes one item job j prepared hands over and stages where its pipeline
 * says (a video clip's frames by loader.batch_dtype), else -1 (prep.out_kb):
 * what scenario_job_out_item_bytes asks (registered into the schema). */
double pipeline_own_out_bytes(const scenario_t *s, const job_t *j);
/* 0 when `name` is a pipeline's key that no job's pipeline owns. */
int pipeline_key_used(const scenario_t *s, const char *name);

/* Job j's pipeline: per-item CPU seconds for an item of `bytes`, and its
 * seconds per byte alone. */
double scenario_job_prep_s(const scenario_t *s, const job_t *j, double bytes);
double scenario_job_prep_per_byte(const scenario_t *s, const job_t *j);
/* Bytes of prepared input job j keeps on each GPU beside its model: the
 * batches its loader stages there (the prefetch depth under GPU decode,
 * whose outputs stay on the GPU; the batch in use otherwise) and, under GPU
 * decode, one batch of decoded full-size images (RGB, dataset.megapixels);
 * its own training memory apart. */
double scenario_job_gpu_input_bytes(const scenario_t *s, const job_t *j);
/* Seconds one GPU computes on a batch of `items` items (augment on GPU included). */
double scenario_job_compute_s(const scenario_t *s, const job_t *j, double items);
/* Of that, the seconds the GPU spends on prep (nvJPEG's stages under
 * prep.decode gpu, the augment under prep.on_gpu): DS-Analyzer's T_gpu is
 * measured with synthetic data already on the GPU, so they are prep stall. */
double scenario_job_gpu_prep_s(const scenario_t *s, const job_t *j, double items);

#endif
