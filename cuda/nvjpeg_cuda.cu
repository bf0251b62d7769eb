/* nvjpeg_cuda: see nvjpeg_bench.h. Compiled only where the CUDA toolkit
 * has nvJPEG (cuda/CMakeLists.txt). */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>
#include <nvjpeg.h>

#include "nvjpeg_bench.h"

namespace {

/* Every handle the decoupled decode needs, released in one place. */
struct decoder {
    nvjpegHandle_t h = nullptr;
    nvjpegJpegDecoder_t dec = nullptr;
    nvjpegJpegState_t state = nullptr;
    nvjpegBufferPinned_t pinned = nullptr;
    nvjpegBufferDevice_t device = nullptr;
    nvjpegJpegStream_t stream = nullptr;
    nvjpegDecodeParams_t params = nullptr;
    cudaStream_t cs = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    unsigned char *out = nullptr;
    size_t out_cap = 0;

    ~decoder() {
        if (out) cudaFree(out);
        if (e0) cudaEventDestroy(e0);
        if (e1) cudaEventDestroy(e1);
        if (cs) cudaStreamDestroy(cs);
        if (params) nvjpegDecodeParamsDestroy(params);
        if (stream) nvjpegJpegStreamDestroy(stream);
        if (state) nvjpegJpegStateDestroy(state);
        if (pinned) nvjpegBufferPinnedDestroy(pinned);
        if (device) nvjpegBufferDeviceDestroy(device);
        if (dec) nvjpegDecoderDestroy(dec);
        if (h) nvjpegDestroy(h);
    }
};

int nv_fail(nvjpegStatus_t s, const char *what, char *err, size_t errlen) {
    if (s == NVJPEG_STATUS_SUCCESS) return 0;
    /* nvjpegStatus_t's values (nvjpeg.h); the library has no string for them. */
    static const char *const names[] = {"success",
                                        "not initialized",
                                        "invalid parameter",
                                        "bad JPEG",
                                        "JPEG not supported",
                                        "allocator failure",
                                        "execution failed (no usable GPU or driver?)",
                                        "arch mismatch",
                                        "internal error",
                                        "implementation not supported",
                                        "incomplete bitstream"};
    const int i = (int)s;
    snprintf(err, errlen, "nvJPEG: %s failed: %s (status %d)", what,
             i >= 0 && i < (int)(sizeof names / sizeof names[0]) ? names[i] : "unknown", i);
    return -1;
}

int cu_fail(cudaError_t e, const char *what, char *err, size_t errlen) {
    if (e == cudaSuccess) return 0;
    snprintf(err, errlen, "CUDA: %s: %s", what, cudaGetErrorString(e));
    return -1;
}

int setup(decoder &d, char *err, size_t errlen) {
    if (nv_fail(nvjpegCreateEx(NVJPEG_BACKEND_HYBRID, nullptr, nullptr, 0, &d.h), "nvjpegCreateEx",
                err, errlen) ||
        nv_fail(nvjpegDecoderCreate(d.h, NVJPEG_BACKEND_HYBRID, &d.dec), "nvjpegDecoderCreate", err,
                errlen) ||
        nv_fail(nvjpegDecoderStateCreate(d.h, d.dec, &d.state), "nvjpegDecoderStateCreate", err,
                errlen) ||
        nv_fail(nvjpegBufferPinnedCreate(d.h, nullptr, &d.pinned), "nvjpegBufferPinnedCreate", err,
                errlen) ||
        nv_fail(nvjpegBufferDeviceCreate(d.h, nullptr, &d.device), "nvjpegBufferDeviceCreate", err,
                errlen) ||
        nv_fail(nvjpegStateAttachPinnedBuffer(d.state, d.pinned), "attach pinned buffer", err,
                errlen) ||
        nv_fail(nvjpegStateAttachDeviceBuffer(d.state, d.device), "attach device buffer", err,
                errlen) ||
        nv_fail(nvjpegJpegStreamCreate(d.h, &d.stream), "nvjpegJpegStreamCreate", err, errlen) ||
        nv_fail(nvjpegDecodeParamsCreate(d.h, &d.params), "nvjpegDecodeParamsCreate", err,
                errlen) ||
        nv_fail(nvjpegDecodeParamsSetOutputFormat(d.params, NVJPEG_OUTPUT_RGBI),
                "set output format", err, errlen))
        return -1;
    if (cu_fail(cudaStreamCreateWithFlags(&d.cs, cudaStreamNonBlocking), "stream", err, errlen) ||
        cu_fail(cudaEventCreate(&d.e0), "event", err, errlen) ||
        cu_fail(cudaEventCreate(&d.e1), "event", err, errlen))
        return -1;
    return 0;
}

/* One image: parse, host phase (timed on the CPU), device phase (timed with
 * events). The RGB stays in d.out (3 x w x h, pitch 3 x w). */
int decode_one(decoder &d, const unsigned char *jpeg, size_t size, double *host_ms,
               double *device_ms, unsigned *w, unsigned *h, char *err, size_t errlen) {
    if (nv_fail(nvjpegJpegStreamParse(d.h, jpeg, size, 0, 0, d.stream), "parse", err, errlen) ||
        nv_fail(nvjpegJpegStreamGetFrameDimensions(d.stream, w, h), "frame dimensions", err,
                errlen))
        return -1;
    size_t need = (size_t)3 * *w * *h;
    if (need > d.out_cap) {
        if (d.out) cudaFree(d.out);
        d.out = nullptr, d.out_cap = 0;
        if (cu_fail(cudaMalloc(&d.out, need), "cudaMalloc", err, errlen)) return -1;
        d.out_cap = need;
    }
    nvjpegImage_t img;
    memset(&img, 0, sizeof img);
    img.channel[0] = d.out;
    img.pitch[0] = (size_t)3 * *w;
    auto t0 = std::chrono::steady_clock::now();
    if (nv_fail(nvjpegDecodeJpegHost(d.h, d.dec, d.state, d.params, d.stream), "host phase", err,
                errlen))
        return -1;
    auto t1 = std::chrono::steady_clock::now();
    *host_ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    float ms = 0;
    if (cu_fail(cudaEventRecord(d.e0, d.cs), "event record", err, errlen) ||
        nv_fail(nvjpegDecodeJpegTransferToDevice(d.h, d.dec, d.state, d.stream, d.cs),
                "transfer to device", err, errlen) ||
        nv_fail(nvjpegDecodeJpegDevice(d.h, d.dec, d.state, &img, d.cs), "device phase", err,
                errlen) ||
        cu_fail(cudaEventRecord(d.e1, d.cs), "event record", err, errlen) ||
        cu_fail(cudaEventSynchronize(d.e1), "synchronize", err, errlen) ||
        cu_fail(cudaEventElapsedTime(&ms, d.e0, d.e1), "elapsed time", err, errlen))
        return -1;
    *device_ms = ms;
    return 0;
}

} // namespace

extern "C" int gpu_nvjpeg(const unsigned char *const *jpegs, const size_t *sizes, int n, int reps,
                          const unsigned char *ref_rgb, double *host_ms, double *device_ms,
                          double *mp, double *mean_abs_diff, char *err, size_t errlen) {
    if (n < 1 || reps < 1) {
        snprintf(err, errlen, "nvJPEG: bad arguments");
        return -1;
    }
    decoder d;
    if (setup(d, err, errlen)) return -1;
    unsigned w = 0, h = 0;
    double hm, dm;
    for (int i = 0; i < n; i++) /* untimed: allocations and first-use costs */
        if (decode_one(d, jpegs[i], sizes[i], &hm, &dm, &w, &h, err, errlen)) return -1;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < n; i++) {
            if (decode_one(d, jpegs[i], sizes[i], &host_ms[(size_t)i * reps + r],
                           &device_ms[(size_t)i * reps + r], &w, &h, err, errlen))
                return -1;
            mp[i] = (double)w * h / 1e6;
        }
    /* Item 0 once more, copied back and compared with the CPU's decode. */
    if (decode_one(d, jpegs[0], sizes[0], &hm, &dm, &w, &h, err, errlen)) return -1;
    size_t bytes = (size_t)3 * w * h;
    unsigned char *back = (unsigned char *)malloc(bytes);
    if (!back) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (cu_fail(cudaMemcpy(back, d.out, bytes, cudaMemcpyDeviceToHost), "copy back", err, errlen)) {
        free(back);
        return -1;
    }
    double sum = 0;
    for (size_t k = 0; k < bytes; k++)
        sum += abs((int)back[k] - (int)ref_rgb[k]);
    *mean_abs_diff = sum / (double)bytes;
    free(back);
    return 0;
}
