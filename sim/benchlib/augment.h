/* augment: the CPU training augment (RandomResizedCrop to out_w x out_h with
 * bilinear sampling, horizontal flip, ImageNet normalisation, HWC uint8 to
 * CHW float32), split in two steps as a data loader would run them:
 *
 *   aug_draw_params(rng, w, h, &p)  draws the crop and flip (torchvision's
 *                                   RandomResizedCrop.get_params, scale
 *                                   0.08-1, ratio 3/4-4/3 log-uniform, 10
 *                                   tries then a centre crop; flip p = 0.5);
 *   augment_cpu(src, w, h, &p, ow, oh, dst)  does the pixel work.
 *
 * augment_cpu computes the same values as augment_ref (cuda/augment_ref.c)
 * to within 1e-5; it is faster because the per-column and per-row sampling
 * coordinates are computed once per item instead of once per output value,
 * and the three channels are gathered from one HWC pixel at a time.
 */
#ifndef STALLSIM_AUGMENT_H
#define STALLSIM_AUGMENT_H

#include <gsl/gsl_rng.h>
#include "augment_ref.h"

void aug_draw_params(gsl_rng *rng, int width, int height, aug_params *p);

/* out_w, out_h in 1..AUG_MAX_OUT; dst holds 3 * out_w * out_h floats. */
void augment_cpu(const unsigned char *src, int width, int height, const aug_params *p, int out_w,
                 int out_h, float *dst);

#endif
