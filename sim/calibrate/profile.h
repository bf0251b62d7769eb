/* profile: the host profile that `stallsim calibrate` writes (YAML).
 *
 * `scenario:` holds exactly the keys the scenario loader reads, each
 * supplied by the benchmark that measured it (bench.h: server.cpus,
 * server.mem_gbps, server.storage.{read_mb_s,latency_ms,queue_depth} for
 * the fixed kind and {latency_qd1_ms,...,latency_qd32_ms,peak_mb_s} for the
 * ssd kind (a scenario uses its kind's: the others are defaults it
 * ignores), prep.{decode_ms_per_mb,decode_ms_per_item,augment_ms,
 * [gpu_augment_ms,] eval_ms,audio_*,mem_mb_per_item,scaling, ...});
 * everything else, how it was measured and every figure with its spread,
 * goes under `measured:`. Numbers are plain decimals (no exponent, no
 * tags); 1 MB = 1e6 bytes.
 *
 * Use: fill a calib_results (bench.h), then profile_write(path, &r, err,
 * n): it writes a temporary file beside path, checks that libyaml parses
 * it, and commits it with atomic_file (fsync, rename over path, left
 * unchanged on failure), so a reader never sees half a profile. path NULL
 * writes to stdout.
 */
#ifndef STALLSIM_PROFILE_H
#define STALLSIM_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#include "bench.h"

/* The profile: a header, the benchmarks' scenario keys in rank order,
 * measured.host, .stability and .method, then each benchmark's section in
 * the registry's order (bench.h). */
int profile_emit(FILE *f, const calib_results *r);
int profile_write(const char *path, const calib_results *r, char *err, size_t errlen);

#endif
