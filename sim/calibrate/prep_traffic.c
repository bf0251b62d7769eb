/* prep_traffic: see prep_traffic.h. */
#include "prep_traffic.h"

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <string.h>

#include "augment.h"
#include "bench.h"
#include "progress.h"

/* The bytes of the decoded image that augment_cpu reads for crop p to an
 * out x out output: the rows its bilinear taps sample, each across the span
 * of columns they sample (a row is read as whole cache lines). */
static double crop_read_bytes(const aug_params *p, int out) {
    int lo = p->w, hi = -1;
    for (int o = 0; o < out; o++) {
        int x0 = (int)aug_src_coord(o, p->w, out), x1 = x0 + 1 < p->w ? x0 + 1 : x0;
        if (x0 < lo) lo = x0;
        if (x1 > hi) hi = x1;
    }
    long rows = 0;
    int last = -1;
    for (int o = 0; o < out; o++) { /* rows rise with o: count each once */
        int y0 = (int)aug_src_coord(o, p->h, out), y1 = y0 + 1 < p->h ? y0 + 1 : y0;
        rows += (y0 > last) + (y1 > y0 && y1 > last);
        last = y1;
    }
    return (double)rows * (double)(hi - lo + 1) * 3;
}

int prep_traffic_count(const jpeg_set *set, unsigned long seed, prep_traffic *out) {
    memset(out, 0, sizeof *out);
    gsl_rng *rng = set->n > 0 ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    if (!rng) return -1;
    gsl_rng_set(rng, seed);
    double jpeg = 0, rgb = 0, crop = 0;
    for (int i = 0; i < set->n; i++) {
        const jpeg_item *it = &set->v[i];
        aug_params p;
        aug_draw_params(rng, it->w, it->h, &p);
        jpeg += (double)it->size;
        rgb += 3.0 * it->w * it->h;
        crop += crop_read_bytes(&p, AUG_OUT);
    }
    gsl_rng_free(rng);
    const double n = set->n;
    out->items = set->n;
    out->jpeg_read_mb = jpeg / n / 1e6;
    out->rgb_write_mb = rgb / n / 1e6;
    out->crop_read_mb = crop / n / 1e6;
    out->out_write_mb = 3.0 * AUG_OUT * AUG_OUT * sizeof(float) / 1e6;
    out->mb_per_item =
        out->jpeg_read_mb + out->rgb_write_mb + out->crop_read_mb + out->out_write_mb;
    return 0;
}

/* calibrate's benchmark: the traffic over every sampled file (counted, not
 * timed). */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    prep_traffic *t = res;
    if (prep_traffic_count(c->set, c->seed, t) != 0) {
        snprintf(err, errlen, "prep traffic: out of memory");
        return -1;
    }
    progress("prep traffic: %.3f MB per item (buffer bytes read + written: JPEG %.3f, RGB %.3f, "
             "crop rows %.3f, output %.3f)",
             t->mb_per_item, t->jpeg_read_mb, t->rgb_write_mb, t->crop_read_mb, t->out_write_mb);
    return 0;
}

static void bench_keys(const void *res, profile_keys *k) {
    profile_key_num(k, CALIB_KEY(1000, "prep.mem_mb_per_item"),
                    ((const prep_traffic *)res)->mb_per_item);
}

static void bench_measured(const void *res, prof_t *o) {
    const prep_traffic *pt = res;
    prof_str(o, 4, "method",
             "a count of the image_train pipeline's buffer bytes per item (JPEG read by decode, "
             "RGB written by decode, the rows the random-resized crop samples read, CHW float "
             "output written), not a hardware counter: libjpeg's own buffers and write-allocate "
             "reads are left out, and caches may hold part of it (prep.mem_mb_per_item)");
    prof_int(o, 4, "items", pt->items);
    prof_num(o, 4, "jpeg_read_mb", pt->jpeg_read_mb);
    prof_num(o, 4, "rgb_write_mb", pt->rgb_write_mb);
    prof_num(o, 4, "crop_read_mb", pt->crop_read_mb);
    prof_num(o, 4, "output_write_mb", pt->out_write_mb);
    prof_num(o, 4, "mb_per_item", pt->mb_per_item);
}

const calib_bench_t bench_traffic = {
    .section = "prep_traffic",
    .size = sizeof(prep_traffic),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
};
