/* gpu: the GPU measurements of `stallsim calibrate`, behind a plain C API.
 *
 * With CUDA (gpu_cuda.cu) these run real work on device 0: the batched
 * augment kernel, host-to-device copies, cuBLAS SGEMM. Built without CUDA
 * every entry point (gpu_loader.c) fails with the reason "built without CUDA".
 *
 * Every function returns 0 on success, or -1 with a human-readable reason in
 * err (errlen bytes). Call gpu_probe first: the others assume a usable GPU.
 */
#ifndef STALLSIM_GPU_H
#define STALLSIM_GPU_H

#include <stddef.h>
#include "augment_ref.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if this build has CUDA kernels compiled in. */
int gpu_built(void);

/* Finds a usable device; writes its name (and memory, compute capability). */
int gpu_probe(char *name, size_t namelen, char *err, size_t errlen);

/* Uploads n images once, then runs the augment as one kernel launch per
 * batch, reps times; launch_ms[i] is the device time of launch i (events).
 * With out non-NULL, copies the batch result (n * 3 * out_h * out_w floats,
 * item-major, CHW within an item) back after the last launch. reps >= 1. */
int gpu_augment(const aug_image *imgs, const aug_params *params, int n, int out_w, int out_h,
                float *out, int reps, double *launch_ms, char *err, size_t errlen);

/* Host-to-device copy of bytes, pinned (cudaMallocHost) or pageable (malloc)
 * source, reps times; gb_s[i] in 1e9 bytes per second. */
int gpu_h2d(size_t bytes, int pinned, int reps, double *gb_s, char *err, size_t errlen);

/* 1 if this build has the nvJPEG module (cuda/nvjpeg_cuda.cu). */
int gpu_nvjpeg_built(void);

/* nvJPEG's decode timed by stage (nvjpeg_bench.h); fails with the reason
 * ("built without nvJPEG", no GPU) where it cannot run. */
int gpu_nvjpeg(const unsigned char *const *jpegs, const size_t *sizes, int n, int reps,
               const unsigned char *ref_rgb, double *host_ms, double *device_ms, double *mp,
               double *mean_abs_diff, char *err, size_t errlen);

/* cuBLAS SGEMM of n x n matrices, reps times; tflops[i] = 2n^3 / time / 1e12. */
int gpu_sgemm(int n, int reps, double *tflops, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
