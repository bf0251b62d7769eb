/* jpeg_gen: a deterministic, photograph-like JPEG data set, for calibrating
 * a host that has no data set of its own at hand.
 *
 * Each image is a function of (seed, index) only: a two-colour gradient with
 * a vignette, a dozen soft-edged shapes with their own shading, multi-scale
 * value noise (texture) and fine grain, sized like ImageNet's (280-520 x
 * 240-460 px), encoded with TurboJPEG at quality 95, 4:2:0 (about 115 KB on
 * average). Neither flat colour (too cheap to decode) nor white noise (too
 * expensive): the decode cost per byte is that of real photographs.
 *
 * Use: jpeg_gen_image(seed, i, &buf, &size, &w, &h, err, n) then tjFree(buf);
 *      or jpeg_gen_dataset(dir, count, seed, threads, err, n) to write an
 *      ImageFolder tree dir/class_NN/img_NNNNNN.jpg.
 */
#ifndef STALLSIM_JPEG_GEN_H
#define STALLSIM_JPEG_GEN_H

#include <stddef.h>

#define JPEG_GEN_MIN_W   280
#define JPEG_GEN_MAX_W   520
#define JPEG_GEN_MIN_H   240
#define JPEG_GEN_MAX_H   460
#define JPEG_GEN_QUALITY 95

/* Renders image `index` of the set `seed` as RGB (malloc'd, 3*w*h bytes). */
int jpeg_gen_pixels(unsigned long seed, int index, unsigned char **rgb, int *w, int *h);

/* The same image encoded; *jpeg is to be released with tjFree. */
int jpeg_gen_image(unsigned long seed, int index, unsigned char **jpeg, unsigned long *size, int *w,
                   int *h, char *err, size_t errlen);

/* Writes count images under dir (which must exist) with up to `threads`
 * threads; the bytes do not depend on the thread count. */
int jpeg_gen_dataset(const char *dir, int count, unsigned long seed, int threads, char *err,
                     size_t errlen);

#endif
