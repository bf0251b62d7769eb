/* bench: a calibration benchmark behind a table of operations, the registry
 * `stallsim calibrate` walks (benches.c), and the results it fills.
 *
 * A benchmark is one file that exports `const calib_bench_t bench_<name>`:
 *   run       measures, on the data set and settings of ctx, into its
 *             result (a zeroed block of .size bytes); 0, or -1 with the
 *             reason in err (calibrate stops, exit 1). A part this host
 *             cannot run (no GPU) is not a failure: the result says why;
 *   keys      the scenario keys it supplies (profile_out.h), each with its
 *             rank: the place under `scenario:` (the order since profile
 *             version 1: 100 server.cpus, 200 server.mem_gbps, 300
 *             server.storage.*, 400 decode, 500 augment_ms, 600
 *             gpu_augment_ms, 700 nvJPEG's, 800 eval_ms, 900 audio, 1000
 *             mem_mb_per_item, 1100 prep.scaling, 1150 video; a new one
 *             takes its own);
 *   measured  the body of its section `measured: <section>:`, at indent 4;
 *   method    (optional) lines it adds under `measured: method:`;
 *   judge     (optional) its figures' spread (stability_figure).
 * Then: one line in benches.c (the order in which they run and in which
 * their sections are written), one in sim/calibrate/CMakeLists.txt, a test.
 * calibrate and the profile writer know no benchmark by name.
 *
 * Use: calib_results *r = calloc(1, sizeof *r);
 *      for (i...) b = calib_benches[i]; b->run(&ctx, calib_result(r, b), err, n);
 */
#ifndef STALLSIM_BENCH_H
#define STALLSIM_BENCH_H

#include <stddef.h>

#include "augment_ref.h"
#include "jpeg_set.h"
#include "profile_out.h"
#include "scenario.h"
#include "stability.h"
#include "video_files.h"

/* A key for profile_key*: its rank and its name (a schema row's). */
#define CALIB_KEY(rank, key) (rank), (key)

/* What a benchmark measures on: calibrate's sampled, decodable JPEGs and
 * its settings. */
typedef struct {
    const jpeg_set *set;
    int quick, reps, threads; /* threads: the most for a scaling curve */
    unsigned long seed;
    aug_image *imgs; /* the first images decoded, on first use (calib_images) */
    int nimg;
    const video_files *videos; /* --videos' files, or NULL: generate */
} calib_ctx;

/* The first (up to 32) images of the set as RGB, decoded on the first call
 * and kept until calib_ctx_free. 0, or -1 with the reason in err. */
int calib_images(calib_ctx *c, char *err, size_t errlen);
void calib_ctx_free(calib_ctx *c);

typedef struct {
    const char *section; /* its mapping under measured:, e.g. "storage" */
    size_t size;         /* of its result */
    int (*run)(calib_ctx *c, void *res, char *err, size_t errlen);
    void (*keys)(const void *res, profile_keys *k);
    void (*measured)(const void *res, prof_t *o);
    void (*method)(const void *res, prof_t *o);
    void (*judge)(const void *res, stability_t *st);
} calib_bench_t;

/* The registry, NULL-terminated. */
extern const calib_bench_t *const calib_benches[];

enum { CALIB_RESULTS_BYTES = 32768 };

/* Everything calibrate measured: the host, how, and each benchmark's result
 * in a block of its own (calib_result). */
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
    stability_t stability; /* the host's load and each figure's spread */
    _Alignas(16) unsigned char results[CALIB_RESULTS_BYTES];
} calib_results;

/* b's result in r; b must be in the registry, and the blocks must fit
 * CALIB_RESULTS_BYTES (else abort: the registry test catches both). */
void *calib_result(calib_results *r, const calib_bench_t *b);
const void *calib_result_const(const calib_results *r, const calib_bench_t *b);

#endif
