/* eval_bench: the cost of the image_eval pipeline's transform, one core
 * (calibrate's "eval" benchmark, bench_eval, for prep.eval_ms):
 * eval_transform (resize 256, centre crop 224, normalise) on calibrate's
 * decoded images, `items` per pass after one warm-up pass, median over passes.
 *
 * Use: eval_result e; eval_bench(imgs, nimg, 200, 5, &e, err, n);
 */
#ifndef STALLSIM_EVAL_BENCH_H
#define STALLSIM_EVAL_BENCH_H

#include <stddef.h>

#include "augment_ref.h"
#include "stats.h"

typedef struct {
    int items, reps, images;
    stat_summary ms_per_item;
} eval_result;

int eval_bench(const aug_image *imgs, int nimg, int items, int reps, eval_result *out, char *err,
               size_t errlen);

#endif
