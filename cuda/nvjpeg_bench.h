/* nvjpeg_bench: nvJPEG's decode, timed by stage, for `stallsim calibrate`'s
 * prep.decode gpu figures. The hybrid backend (DALI's "mixed" decoder on
 * images of ImageNet's size) through the decoupled API: per image, the host
 * phase (nvjpegDecodeJpegHost: parsing and the Huffman stage, on the CPU,
 * wall clock) and the device phase (the transfer and nvjpegDecodeJpegDevice:
 * dequantisation, IDCT, colour conversion to interleaved RGB, CUDA events on
 * one stream), each image `reps` times after one untimed pass.
 *
 * Built only where the CUDA toolkit has nvJPEG (nvjpeg.h and libnvjpeg at
 * configure time), as its own module (libstallsim_nvjpeg.so) that
 * gpu_loader.c opens on demand; gpu.h's gpu_nvjpeg is the entry point.
 */
#ifndef STALLSIM_NVJPEG_BENCH_H
#define STALLSIM_NVJPEG_BENCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* n JPEGs in host memory. host_ms[i * reps + r] and device_ms[...] are image
 * i's times in repetition r; mp[i] its megapixels. ref_rgb: item 0 decoded
 * on the CPU (3 x w x h bytes, HWC), against which the GPU's RGB of item 0
 * is compared: *mean_abs_diff (IDCTs differ by a level or two). 0, or -1
 * with the reason in err. */
int gpu_nvjpeg(const unsigned char *const *jpegs, const size_t *sizes, int n, int reps,
               const unsigned char *ref_rgb, double *host_ms, double *device_ms, double *mp,
               double *mean_abs_diff, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
