/* prep_traffic: see prep_traffic.h. */
#include "prep_traffic.h"

#include <gsl/gsl_rng.h>
#include <string.h>

#include "augment.h"

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
