/* augment_ref: the plain-C reference of stallsim's training augment.
 *
 * The augment is torchvision's RandomResizedCrop + RandomHorizontalFlip +
 * ToTensor + Normalize with the crop already chosen: an aug_params names the
 * crop rectangle and the flip, so the same parameters can be fed to this
 * reference, the optimized CPU code (sim/benchlib/augment.c) and the CUDA
 * kernel (cuda/gpu_cuda.cu), and their outputs compared.
 *
 * Use: augment_ref(src, width, height, &params, 224, 224, dst) with src an
 * HWC RGB uint8 image and dst room for 3*out_w*out_h floats (CHW).
 * This is the definition of the operation: simple, slow, obviously correct.
 */
#ifndef STALLSIM_AUGMENT_REF_H
#define STALLSIM_AUGMENT_REF_H

#ifdef __cplusplus
extern "C" {
#endif

#define AUG_OUT     224 /* output side used by the benchmarks */
#define AUG_MAX_OUT 1024

/* A decoded image: HWC, RGB, uint8, rows packed (stride = 3 * w). */
typedef struct {
    const unsigned char *px;
    int w, h;
} aug_image;

/* The crop rectangle in source pixels (inside the image) and the flip. */
typedef struct {
    int x, y, w, h;
    int flip;
} aug_params;

/* ImageNet mean and standard deviation on the [0,1] scale, R, G, B. */
extern const float aug_mean[3];
extern const float aug_std[3];

/* Source coordinate (relative to the crop, clamped to [0, crop_len - 1]) that
 * output index o samples: pixel centres are aligned (align_corners=False). */
float aug_src_coord(int o, int crop_len, int out_len);

void augment_ref(const unsigned char *src, int width, int height, const aug_params *p, int out_w,
                 int out_h, float *dst);

#ifdef __cplusplus
}
#endif

#endif
