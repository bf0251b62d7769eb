/* augment_bench: CPU augment cost per item and its scaling over threads.
 *
 * `items` crop/flip parameter sets are drawn once (seeded GSL mt19937, item k
 * on image k mod nimg); each pass runs them all through augment_cpu to
 * AUG_OUT x AUG_OUT with t threads (pthreads, shared work counter, one output
 * buffer per thread). Thread counts: every t in 1..max_threads up to 8, then
 * powers of two and max_threads itself.
 *
 * Use: augment_bench(imgs, nimg, 256, ncores, 5, seed, &res, err, errlen).
 */
#ifndef STALLSIM_AUGMENT_BENCH_H
#define STALLSIM_AUGMENT_BENCH_H

#include <stddef.h>
#include "augment_ref.h"
#include "stats.h"

#define AUG_MAX_CURVE 32

typedef struct {
    int threads;
    stat_summary items_s; /* per pass */
    double speedup;       /* median items/s over that of 1 thread */
} augment_point;

typedef struct {
    int items, reps, images, max_threads;
    stat_summary ms_per_item; /* single thread, per pass: pass time / items */
    augment_point curve[AUG_MAX_CURVE];
    int npoints;
} augment_result;

int augment_bench(const aug_image *imgs, int nimg, int items, int max_threads, int reps,
                  unsigned long seed, augment_result *out, char *err, size_t errlen);

#endif
