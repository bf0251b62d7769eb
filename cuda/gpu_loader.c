/* gpu_loader: the gpu.h entry points as the stallsim program sees them.
 *
 * The CUDA kernels live in a separate shared module (libstallsim_gpu.so,
 * built from gpu_cuda.cu when CUDA is found) that is dlopen'ed on the first
 * GPU call. Linking cudart and cuBLAS into the program itself would make
 * every `stallsim run` map them at start-up (~90 ms and ~175 MB of RSS here)
 * for a feature only `calibrate` uses. Without CUDA, or when the module or
 * its libraries cannot be loaded, every entry point fails and says why, so a
 * profile never carries an invented GPU figure. The module is looked for in
 * STALLSIM_GPU_MODULE (the environment), then beside an installed program
 * (BIN/../lib/stallsim/, as `cmake --install` puts it), then in the build
 * tree it was built in. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

typedef struct {
    int (*probe)(char *, size_t, char *, size_t);
    int (*augment)(const aug_image *, const aug_params *, int, int, int, float *, int, double *,
                   char *, size_t);
    int (*h2d)(size_t, int, int, double *, char *, size_t);
    int (*sgemm)(int, int, double *, char *, size_t);
} gpu_api;

static gpu_api api;
static int state; /* 0 not tried, 1 loaded, -1 failed (reason in why) */
static char why[512];

static int fail(char *err, size_t errlen) {
    if (err && errlen) snprintf(err, errlen, "%s", why);
    return -1;
}

#ifdef STALLSIM_GPU_MODULE
/* BIN/../lib/stallsim/libstallsim_gpu.so next to the running program, when
 * that file exists; NULL otherwise. */
static const char *installed_module(char *buf, size_t n) {
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return NULL;
    exe[len] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = 0; /* the program's folder */
    snprintf(buf, n, "%s/../lib/stallsim/libstallsim_gpu.so", exe);
    return access(buf, R_OK) == 0 ? buf : NULL;
}
#endif

static int load(char *err, size_t errlen) {
    if (state == 1) return 0;
    if (state == -1) return fail(err, errlen);
    state = -1;
#ifndef STALLSIM_GPU_MODULE
    snprintf(why, sizeof why, "built without CUDA (nvcc/CUDAToolkit not found at configure time)");
    return fail(err, errlen);
#else
    const char *path = getenv("STALLSIM_GPU_MODULE");
    char installed[PATH_MAX + 64];
    if (!path || !path[0]) path = installed_module(installed, sizeof installed);
    if (!path) path = STALLSIM_GPU_MODULE;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, sizeof why, "cannot load the CUDA module: %s", dlerror());
        return fail(err, errlen);
    }
    /* POSIX guarantees a data pointer from dlsym converts to a function pointer. */
    *(void **)&api.probe = dlsym(h, "gpu_probe");
    *(void **)&api.augment = dlsym(h, "gpu_augment");
    *(void **)&api.h2d = dlsym(h, "gpu_h2d");
    *(void **)&api.sgemm = dlsym(h, "gpu_sgemm");
    if (!api.probe || !api.augment || !api.h2d || !api.sgemm) {
        snprintf(why, sizeof why, "the CUDA module %.400s lacks the gpu.h entry points", path);
        return fail(err, errlen);
    }
    state = 1;
    return 0;
#endif
}

int gpu_built(void) {
#ifdef STALLSIM_GPU_MODULE
    return 1;
#else
    return 0;
#endif
}

int gpu_probe(char *name, size_t namelen, char *err, size_t errlen) {
    if (name && namelen) name[0] = '\0';
    return load(err, errlen) ? -1 : api.probe(name, namelen, err, errlen);
}

int gpu_augment(const aug_image *imgs, const aug_params *params, int n, int out_w, int out_h,
                float *out, int reps, double *launch_ms, char *err, size_t errlen) {
    return load(err, errlen)
               ? -1
               : api.augment(imgs, params, n, out_w, out_h, out, reps, launch_ms, err, errlen);
}

int gpu_h2d(size_t bytes, int pinned, int reps, double *gb_s, char *err, size_t errlen) {
    return load(err, errlen) ? -1 : api.h2d(bytes, pinned, reps, gb_s, err, errlen);
}

int gpu_sgemm(int n, int reps, double *tflops, char *err, size_t errlen) {
    return load(err, errlen) ? -1 : api.sgemm(n, reps, tflops, err, errlen);
}

int gpu_nvjpeg_built(void) {
#ifdef STALLSIM_NVJPEG_MODULE
    return 1;
#else
    return 0;
#endif
}

/* nvJPEG has its own module: a toolkit without nvJPEG still measures the
 * rest of the GPU. */
typedef int (*nvjpeg_fn)(const unsigned char *const *, const size_t *, int, int,
                         const unsigned char *, double *, double *, double *, double *, char *,
                         size_t);

int gpu_nvjpeg(const unsigned char *const *jpegs, const size_t *sizes, int n, int reps,
               const unsigned char *ref_rgb, double *host_ms, double *device_ms, double *mp,
               double *mean_abs_diff, char *err, size_t errlen) {
#ifndef STALLSIM_NVJPEG_MODULE
    (void)jpegs, (void)sizes, (void)n, (void)reps, (void)ref_rgb, (void)host_ms, (void)device_ms,
        (void)mp, (void)mean_abs_diff;
    snprintf(err, errlen,
             "built without nvJPEG (the CUDA toolkit at configure time had no nvjpeg.h and "
             "libnvjpeg)");
    return -1;
#else
    static nvjpeg_fn fn;
    if (!fn) {
        const char *path = getenv("STALLSIM_NVJPEG_MODULE");
        char installed[PATH_MAX + 64];
        if ((!path || !path[0]) && installed_module(installed, sizeof installed)) {
            /* beside the installed CUDA module */
            char *slash = strrchr(installed, '/');
            snprintf(slash + 1, sizeof installed - (size_t)(slash + 1 - installed),
                     "libstallsim_nvjpeg.so");
            if (access(installed, R_OK) == 0) path = installed;
        }
        if (!path || !path[0]) path = STALLSIM_NVJPEG_MODULE;
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            snprintf(err, errlen, "cannot load the nvJPEG module: %s", dlerror());
            return -1;
        }
        *(void **)&fn = dlsym(h, "gpu_nvjpeg");
        if (!fn) {
            snprintf(err, errlen, "the nvJPEG module %.400s lacks gpu_nvjpeg", path);
            return -1;
        }
    }
    return fn(jpegs, sizes, n, reps, ref_rgb, host_ms, device_ms, mp, mean_abs_diff, err, errlen);
#endif
}
