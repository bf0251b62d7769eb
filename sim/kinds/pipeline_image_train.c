/* pipeline_image_train: a training image's prep, torchvision's
 * RandomResizedCrop(224), RandomHorizontalFlip and Normalize after the JPEG
 * decode: prep.augment_ms a item on a core (the one pipeline every job had
 * before pipelines), or prep.gpu_augment_ms of the GPU with prep.on_gpu
 * (DALI's mixed operators). */
#include "pipeline_kind.h"

static double train_cpu_ms(const scenario_t *s, double bytes) {
    (void)bytes; /* the crop's output is 224 x 224 whatever the JPEG's size */
    return s->prep.on_gpu ? 0 : s->prep.augment_ms;
}

const pipeline_ops_t pipeline_image_train = {
    .name = "image_train",
    .help = "decode + random-resized-crop 224, flip, normalise: prep.decode_*, prep.augment_ms",
    .jpeg = 1,
    .gpu_augment = 1,
    .cpu_ms = train_cpu_ms, /* no slope; prep.augment_ms has a built-in value */
};
