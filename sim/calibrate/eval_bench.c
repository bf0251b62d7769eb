/* eval_bench: see eval_bench.h. */
#include "eval_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "clock.h"
#include "eval_transform.h"
#include "progress.h"

int eval_bench(const aug_image *imgs, int nimg, int items, int reps, eval_result *out, char *err,
               size_t errlen) {
    memset(out, 0, sizeof *out);
    if (nimg < 1 || items < 1 || reps < 1 || reps > 64) {
        snprintf(err, errlen, "eval: bad arguments");
        return -1;
    }
    size_t most = 0;
    for (int i = 0; i < nimg; i++) {
        int rw, rh;
        eval_resized_dims(imgs[i].w, imgs[i].h, EVAL_RESIZE, &rw, &rh);
        if ((size_t)rw * (size_t)rh * 3 > most) most = (size_t)rw * (size_t)rh * 3;
    }
    unsigned char *tmp = malloc(most);
    float *dst = malloc(sizeof *dst * 3 * EVAL_CROP * EVAL_CROP);
    if (!tmp || !dst) {
        free(tmp), free(dst);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double ms[64];
    for (int r = -1; r < reps; r++) { /* pass -1 warms the caches up */
        double t0 = clock_now();
        for (int i = 0; i < items; i++) {
            const aug_image *im = &imgs[i % nimg];
            eval_cpu(im->px, im->w, im->h, EVAL_RESIZE, EVAL_CROP, tmp, dst);
        }
        if (r >= 0) ms[r] = (clock_now() - t0) * 1e3 / items;
    }
    free(tmp), free(dst);
    out->items = items, out->reps = reps, out->images = nimg;
    out->ms_per_item = stats_summarize(ms, reps);
    progress("eval transform: %.3f ms/item (resize 256, centre crop 224, normalise)",
             out->ms_per_item.median);
    return 0;
}

/* calibrate's benchmark: on the first images, for prep.eval_ms. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    if (calib_images(c, err, errlen) != 0) return -1;
    return eval_bench(c->imgs, c->nimg, c->quick ? 40 : 400, c->reps, res, err, errlen);
}

static void bench_keys(const void *res, profile_keys *k) {
    profile_key_num(k, CALIB_KEY(800, "prep.eval_ms"),
                    ((const eval_result *)res)->ms_per_item.median);
}

static void bench_measured(const void *res, prof_t *o) {
    const eval_result *ev = res;
    prof_str(o, 4, "operation",
             "resize shorter side to 256 (bilinear, no antialias), centre crop 224, normalize, "
             "HWC u8 to CHW f32");
    prof_int(o, 4, "items_per_pass", ev->items);
    prof_int(o, 4, "images", ev->images);
    prof_int(o, 4, "repetitions", ev->reps);
    prof_stat(o, 4, "ms_per_item", ev->ms_per_item);
}

static void bench_judge(const void *res, stability_t *st) {
    stability_figure(st, "eval transform ms/item", ((const eval_result *)res)->ms_per_item);
}

const calib_bench_t bench_eval = {
    .section = "eval_cpu",
    .size = sizeof(eval_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .judge = bench_judge,
};
