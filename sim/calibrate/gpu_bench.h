/* gpu_bench: the GPU part of a calibration, or the plain reason it has none
 * (calibrate's "gpu" benchmark, bench_gpu).
 *
 * With a usable GPU (cuda/gpu.h): the batched augment kernel on `batch`
 * items (its output checked against augment_ref on the first items), host to
 * device copy GB/s from pinned and pageable memory, cuBLAS SGEMM TFLOP/s,
 * each `reps` times. Without one: available = 0 and reason says why.
 *
 * Use: gpu_result g; gpu_bench(imgs, nimg, 256, 5, seed, quick, &g);
 */
#ifndef STALLSIM_GPU_BENCH_H
#define STALLSIM_GPU_BENCH_H

#include <stddef.h>
#include "augment_ref.h"
#include "stats.h"

typedef struct {
    int built;     /* compiled with CUDA */
    int available; /* a GPU was found and measured */
    char reason[256];
    char device[256];
    int batch, reps;
    stat_summary launch_ms;  /* one batched launch */
    stat_summary augment_ms; /* per item within a launch */
    double max_abs_err;      /* kernel vs augment_ref on the checked items */
    int checked_items;
    size_t h2d_bytes;
    stat_summary h2d_pinned_gb_s, h2d_pageable_gb_s;
    int sgemm_n;
    stat_summary sgemm_tflops;
} gpu_result;

/* 0: measured; 1: no GPU (reason set); -1: a GPU failed mid-way (reason set). */
int gpu_bench(const aug_image *imgs, int nimg, int batch, int reps, unsigned long seed, int quick,
              gpu_result *out);

#endif
