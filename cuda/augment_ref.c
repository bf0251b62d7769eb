/* augment_ref: see augment_ref.h. Kept free of any optimization on purpose:
 * it is the yardstick the fast CPU and GPU versions are tested against. */
#include "augment_ref.h"

const float aug_mean[3] = {0.485f, 0.456f, 0.406f};
const float aug_std[3] = {0.229f, 0.224f, 0.225f};

float aug_src_coord(int o, int crop_len, int out_len) {
    float s = ((float)o + 0.5f) * (float)crop_len / (float)out_len - 0.5f;
    if (s < 0.0f) s = 0.0f;
    if (s > (float)(crop_len - 1)) s = (float)(crop_len - 1);
    return s;
}

static float pixel(const unsigned char *src, int width, int x, int y, int c) {
    return (float)src[((long)y * width + x) * 3 + c];
}

void augment_ref(const unsigned char *src, int width, int height, const aug_params *p, int out_w,
                 int out_h, float *dst) {
    (void)height; /* the crop is inside the image by contract */
    for (int c = 0; c < 3; c++) {
        for (int oy = 0; oy < out_h; oy++) {
            for (int ox = 0; ox < out_w; ox++) {
                int sxo = p->flip ? out_w - 1 - ox : ox;
                float sx = aug_src_coord(sxo, p->w, out_w);
                float sy = aug_src_coord(oy, p->h, out_h);
                int x0 = (int)sx, y0 = (int)sy;
                int x1 = x0 + 1 < p->w ? x0 + 1 : x0;
                int y1 = y0 + 1 < p->h ? y0 + 1 : y0;
                float ax = sx - (float)x0, ay = sy - (float)y0;
                float p00 = pixel(src, width, p->x + x0, p->y + y0, c);
                float p01 = pixel(src, width, p->x + x1, p->y + y0, c);
                float p10 = pixel(src, width, p->x + x0, p->y + y1, c);
                float p11 = pixel(src, width, p->x + x1, p->y + y1, c);
                float top = (1.0f - ax) * p00 + ax * p01;
                float bottom = (1.0f - ax) * p10 + ax * p11;
                float v = (1.0f - ay) * top + ay * bottom;
                dst[((long)c * out_h + oy) * out_w + ox] = (v / 255.0f - aug_mean[c]) / aug_std[c];
            }
        }
    }
}
