/* gpu_none: the GPU entry points of a build without CUDA (see gpu.h). They
 * measure nothing and say why, so a profile never carries an invented GPU
 * figure. */
#include "gpu.h"
#include <stdio.h>

static int no_cuda(char *err, size_t errlen) {
    if (err && errlen)
        snprintf(err, errlen, "built without CUDA (nvcc/CUDAToolkit not found at configure time)");
    return -1;
}

int gpu_built(void) {
    return 0;
}

int gpu_probe(char *name, size_t namelen, char *err, size_t errlen) {
    if (name && namelen) name[0] = '\0';
    return no_cuda(err, errlen);
}

int gpu_augment(const aug_image *imgs, const aug_params *params, int n, int out_w, int out_h,
                float *out, int reps, double *launch_ms, char *err, size_t errlen) {
    (void)imgs, (void)params, (void)n, (void)out_w, (void)out_h, (void)out, (void)reps;
    (void)launch_ms;
    return no_cuda(err, errlen);
}

int gpu_h2d(size_t bytes, int pinned, int reps, double *gb_s, char *err, size_t errlen) {
    (void)bytes, (void)pinned, (void)reps, (void)gb_s;
    return no_cuda(err, errlen);
}

int gpu_sgemm(int n, int reps, double *tflops, char *err, size_t errlen) {
    (void)n, (void)reps, (void)tflops;
    return no_cuda(err, errlen);
}
