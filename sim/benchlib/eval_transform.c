/* eval_transform: see eval_transform.h. */
#include "eval_transform.h"

#include <math.h>
#include <stdlib.h>

#include "augment_ref.h"

void eval_resized_dims(int w, int h, int side, int *rw, int *rh) {
    if (w <= h) {
        *rw = side;
        *rh = (int)((long)side * h / w);
    } else {
        *rh = side;
        *rw = (int)((long)side * w / h);
    }
}

/* One resized row's source columns and weights are computed once per image. */
static void resize(const unsigned char *src, int w, int h, unsigned char *dst, int rw, int rh) {
    int *c0 = malloc(sizeof *c0 * (size_t)rw * 2);
    float *cw = malloc(sizeof *cw * (size_t)rw);
    if (!c0 || !cw) {
        free(c0), free(cw);
        abort(); /* a few KB: calibrate cannot go on without them */
    }
    int *c1 = c0 + rw;
    for (int x = 0; x < rw; x++) {
        float sx = aug_src_coord(x, w, rw);
        int x0 = (int)sx;
        c0[x] = x0 * 3;
        c1[x] = (x0 + 1 < w ? x0 + 1 : x0) * 3;
        cw[x] = sx - (float)x0;
    }
    for (int y = 0; y < rh; y++) {
        float sy = aug_src_coord(y, h, rh);
        int y0 = (int)sy, y1 = y0 + 1 < h ? y0 + 1 : y0;
        float ay = sy - (float)y0;
        const unsigned char *r0 = src + (long)y0 * w * 3, *r1 = src + (long)y1 * w * 3;
        unsigned char *d = dst + (long)y * rw * 3;
        for (int x = 0; x < rw; x++) {
            float ax = cw[x];
            for (int c = 0; c < 3; c++) {
                float top = (1.0f - ax) * r0[c0[x] + c] + ax * r0[c1[x] + c];
                float bot = (1.0f - ax) * r1[c0[x] + c] + ax * r1[c1[x] + c];
                float v = (1.0f - ay) * top + ay * bot;
                d[x * 3 + c] = (unsigned char)lrintf(v); /* PIL rounds to the nearest */
            }
        }
    }
    free(c0), free(cw);
}

void eval_cpu(const unsigned char *src, int w, int h, int side, int crop, unsigned char *tmp,
              float *dst) {
    int rw, rh;
    eval_resized_dims(w, h, side, &rw, &rh);
    resize(src, w, h, tmp, rw, rh);
    /* torchvision's CenterCrop: int(round((size - crop) / 2)). */
    int top = (int)nearbyint((rh - crop) / 2.0), left = (int)nearbyint((rw - crop) / 2.0);
    float scale[3], bias[3];
    for (int c = 0; c < 3; c++) {
        scale[c] = 1.0f / (255.0f * aug_std[c]);
        bias[c] = -aug_mean[c] / aug_std[c];
    }
    const long plane = (long)crop * crop;
    for (int y = 0; y < crop; y++) {
        const unsigned char *row = tmp + ((long)(top + y) * rw + left) * 3;
        float *d0 = dst + (long)y * crop, *d1 = d0 + plane, *d2 = d1 + plane;
        for (int x = 0; x < crop; x++) {
            d0[x] = row[x * 3] * scale[0] + bias[0];
            d1[x] = row[x * 3 + 1] * scale[1] + bias[1];
            d2[x] = row[x * 3 + 2] * scale[2] + bias[2];
        }
    }
}
