/* gpu_decode_bench: nvJPEG's decode (cuda/nvjpeg_bench.h) on calibrate's
 * JPEGs (calibrate's "nvjpeg" benchmark, bench_nvjpeg, for prep.decode gpu's
 * prep.gpu_decode_ms_per_mp and prep.huffman_ms_per_mb): the GPU's
 * time per decoded megapixel (device phase; the sum of the images' median
 * times over the sum of their megapixels) and the CPU's host phase (the
 * Huffman stage) per encoded MB the same way; its RGB of the first image
 * against TurboJPEG's.
 *
 * Use: nvjpeg_result nj; if (gpu_decode_bench(&set, 128, 5, &nj) == 0) nj.gpu_ms_per_mp;
 */
#ifndef STALLSIM_GPU_DECODE_BENCH_H
#define STALLSIM_GPU_DECODE_BENCH_H

#include "jpeg_set.h"
#include "stats.h"

typedef struct {
    int measured;
    char reason[256];
    int items, reps;
    double gpu_ms_per_mp, host_ms_per_mb;
    stat_summary device_ms, host_ms; /* per image, the medians' spread over the images */
    double mean_abs_diff;            /* RGB levels, first image, vs TurboJPEG */
} nvjpeg_result;

/* 0: measured; 1: not (no GPU, built without nvJPEG: reason set). */
int gpu_decode_bench(const jpeg_set *set, int max_items, int reps, nvjpeg_result *out);

#endif
