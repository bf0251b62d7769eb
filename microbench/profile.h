/* profile: the host profile that `stallsim calibrate` writes (YAML).
 *
 * `scenario:` holds exactly the keys the scenario loader reads (server.cpus,
 * server.mem_gbps,
 * server.storage.{read_mb_s,latency_ms,queue_depth} for the fixed kind,
 * server.storage.{latency_qd1_ms,latency_qd4_ms,latency_qd16_ms,
 * latency_qd32_ms,peak_mb_s} for the ssd kind (a scenario uses its kind's:
 * the others are defaults it ignores), prep.{decode_ms_per_mb,
 * decode_ms_per_item,augment_ms[,gpu_augment_ms],mem_mb_per_item, ...}); everything else, how it
 * was measured and every figure with its spread, goes under `measured:`.
 * Numbers are plain decimals (no exponent, no tags); 1 MB = 1e6 bytes.
 *
 * Use: fill a calib_results, then profile_write(path, &r, err, n): it writes
 * a temporary file beside path, checks that libyaml parses it, and commits
 * it with atomic_file (fsync, rename over path, left unchanged on failure)
 * (so a reader never sees half a profile). path NULL writes to stdout.
 */
#ifndef STALLSIM_PROFILE_H
#define STALLSIM_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include "augment_bench.h"
#include "decode_bench.h"
#include "gpu_bench.h"
#include "membw.h"
#include "pipeline_bench.h"
#include "prep_traffic.h"
#include "stability.h"
#include "storage_bench.h"

typedef struct {
    char hostname[256], cpu_model[256], date[64];
    int online_cores;
    char jpeg_version[64], gsl_version[64], yaml_version[64];
    char data[4200]; /* "generated" or the --data directory */
    unsigned long seed;
    int quick, threads, reps;
    int files_found, files_used, files_bad, files_non_jpeg;
    double total_mb, mean_kb, min_kb, max_kb, mean_w, mean_h;
    double wall_s;
    storage_result storage;
    decode_result decode;
    augment_result augment;
    eval_result eval;   /* the image_eval pipeline's transform */
    audio_result audio; /* the audio pipeline */
    membw_result membw; /* memory bandwidth: server.mem_gbps */
    prep_traffic traffic; /* image_train's buffer traffic: prep.mem_mb_per_item */
    gpu_result gpu;
    nvjpeg_result nvjpeg;  /* prep.decode gpu's rates, where nvJPEG ran */
    stability_t stability; /* the host's load and each figure's spread */
} calib_results;

int profile_emit(FILE *f, const calib_results *r);
int profile_write(const char *path, const calib_results *r, char *err, size_t errlen);

/* Writes v as a plain decimal with about 6 significant digits into buf. */
const char *profile_num(double v, char *buf, size_t len);

#endif
