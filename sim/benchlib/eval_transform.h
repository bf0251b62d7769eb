/* eval_transform: the CPU evaluation transform, torchvision's
 * Resize(256) + CenterCrop(224) + ToTensor + Normalize as a validation
 * loader runs it: the whole image is resized (shorter side to `side`,
 * bilinear without antialiasing, pixel centres aligned) into a uint8 HWC
 * buffer, then the centred crop is normalised into CHW float32.
 *
 * Use: int rw, rh; eval_resized_dims(w, h, 256, &rw, &rh);
 *      unsigned char *tmp = malloc(3 * rw * rh);  float *dst = ...3*224*224;
 *      eval_cpu(src, w, h, 256, 224, tmp, dst);
 */
#ifndef STALLSIM_EVAL_TRANSFORM_H
#define STALLSIM_EVAL_TRANSFORM_H

#define EVAL_RESIZE 256
#define EVAL_CROP   224

/* The resized size: the shorter side becomes `side`, the longer keeps the
 * aspect ratio (truncated, as torchvision's int(side * long / short)). */
void eval_resized_dims(int w, int h, int side, int *rw, int *rh);

/* src: HWC RGB uint8 of w x h; tmp: 3 x rw x rh bytes; dst: 3 x crop x crop
 * floats (CHW). crop <= side. */
void eval_cpu(const unsigned char *src, int w, int h, int side, int crop, unsigned char *tmp,
              float *dst);

#endif
