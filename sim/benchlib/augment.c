/* augment: see augment.h. */
#include "augment.h"
#include <math.h>

void aug_draw_params(gsl_rng *rng, int width, int height, aug_params *p) {
    const double area = (double)width * height;
    const double log_lo = log(3.0 / 4.0), log_hi = log(4.0 / 3.0);
    for (int attempt = 0; attempt < 10; attempt++) {
        double target = area * (0.08 + 0.92 * gsl_rng_uniform(rng));
        double ratio = exp(log_lo + (log_hi - log_lo) * gsl_rng_uniform(rng));
        /* nearbyint rounds half to even, as Python's round() does. */
        int w = (int)nearbyint(sqrt(target * ratio));
        int h = (int)nearbyint(sqrt(target / ratio));
        if (w > 0 && w <= width && h > 0 && h <= height) {
            p->y = (int)gsl_rng_uniform_int(rng, (unsigned long)(height - h + 1));
            p->x = (int)gsl_rng_uniform_int(rng, (unsigned long)(width - w + 1));
            p->w = w;
            p->h = h;
            p->flip = gsl_rng_uniform(rng) < 0.5;
            return;
        }
    }
    double in_ratio = (double)width / height;
    int w = width, h = height;
    if (in_ratio < 3.0 / 4.0)
        h = (int)nearbyint(w / (3.0 / 4.0));
    else if (in_ratio > 4.0 / 3.0)
        w = (int)nearbyint(h * (4.0 / 3.0));
    if (h > height) h = height; /* guards rounding up past the edge */
    if (w > width) w = width;
    p->w = w;
    p->h = h;
    p->y = (height - h) / 2;
    p->x = (width - w) / 2;
    p->flip = gsl_rng_uniform(rng) < 0.5;
}

void augment_cpu(const unsigned char *src, int width, int height, const aug_params *p, int out_w,
                 int out_h, float *dst) {
    (void)height;
    int col0[AUG_MAX_OUT], col1[AUG_MAX_OUT];
    float colw[AUG_MAX_OUT];
    for (int ox = 0; ox < out_w; ox++) {
        float sx = aug_src_coord(p->flip ? out_w - 1 - ox : ox, p->w, out_w);
        int x0 = (int)sx;
        int x1 = x0 + 1 < p->w ? x0 + 1 : x0;
        col0[ox] = (p->x + x0) * 3;
        col1[ox] = (p->x + x1) * 3;
        colw[ox] = sx - (float)x0;
    }
    float scale[3], bias[3];
    for (int c = 0; c < 3; c++) {
        scale[c] = 1.0f / (255.0f * aug_std[c]);
        bias[c] = -aug_mean[c] / aug_std[c];
    }
    const long plane = (long)out_w * out_h;
    const long stride = (long)width * 3;
    for (int oy = 0; oy < out_h; oy++) {
        float sy = aug_src_coord(oy, p->h, out_h);
        int y0 = (int)sy;
        int y1 = y0 + 1 < p->h ? y0 + 1 : y0;
        float ay = sy - (float)y0;
        const unsigned char *r0 = src + (long)(p->y + y0) * stride;
        const unsigned char *r1 = src + (long)(p->y + y1) * stride;
        float *d0 = dst + (long)oy * out_w;
        float *d1 = d0 + plane, *d2 = d1 + plane;
        for (int ox = 0; ox < out_w; ox++) {
            const unsigned char *a = r0 + col0[ox], *b = r0 + col1[ox];
            const unsigned char *e = r1 + col0[ox], *f = r1 + col1[ox];
            float ax = colw[ox];
            float v[3];
            for (int c = 0; c < 3; c++) {
                float top = (1.0f - ax) * (float)a[c] + ax * (float)b[c];
                float bottom = (1.0f - ax) * (float)e[c] + ax * (float)f[c];
                v[c] = (1.0f - ay) * top + ay * bottom;
            }
            d0[ox] = v[0] * scale[0] + bias[0];
            d1[ox] = v[1] * scale[1] + bias[1];
            d2[ox] = v[2] * scale[2] + bias[2];
        }
    }
}
