/* gpu_cuda: the CUDA side of gpu.h: the batched augment kernel, copy and
 * SGEMM benchmarks on device 0.
 *
 * The kernel computes exactly what augment_ref.c defines, in the same float
 * operations and order (this file is compiled with --fmad=false so that no
 * multiply-add is fused), so tests can compare it with the reference to 1e-5.
 */
#include "gpu.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            snprintf(err, errlen, "%s: %s", #call, cudaGetErrorString(e_));                        \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

struct item_desc {
    size_t offset; /* byte offset of the image in the packed device buffer */
    int w, h;
    aug_params p;
};

/* Same arithmetic as aug_src_coord in augment_ref.c. */
__device__ static float src_coord(int o, int crop_len, int out_len) {
    float s = ((float)o + 0.5f) * (float)crop_len / (float)out_len - 0.5f;
    if (s < 0.0f) s = 0.0f;
    if (s > (float)(crop_len - 1)) s = (float)(crop_len - 1);
    return s;
}

__constant__ float c_mean[3];
__constant__ float c_std[3];

/* One thread per output pixel, all three channels; blockIdx.z is the item. */
__global__ void augment_kernel(const unsigned char *pixels, const item_desc *items, int out_w,
                               int out_h, float *out) {
    int ox = blockIdx.x * blockDim.x + threadIdx.x;
    int oy = blockIdx.y * blockDim.y + threadIdx.y;
    if (ox >= out_w || oy >= out_h) return;
    item_desc d = items[blockIdx.z];
    const unsigned char *src = pixels + d.offset;
    int sxo = d.p.flip ? out_w - 1 - ox : ox;
    float sx = src_coord(sxo, d.p.w, out_w);
    float sy = src_coord(oy, d.p.h, out_h);
    int x0 = (int)sx, y0 = (int)sy;
    int x1 = x0 + 1 < d.p.w ? x0 + 1 : x0;
    int y1 = y0 + 1 < d.p.h ? y0 + 1 : y0;
    float ax = sx - (float)x0, ay = sy - (float)y0;
    const unsigned char *r0 = src + ((size_t)(d.p.y + y0) * d.w) * 3;
    const unsigned char *r1 = src + ((size_t)(d.p.y + y1) * d.w) * 3;
    int c0 = (d.p.x + x0) * 3, c1 = (d.p.x + x1) * 3;
    float *o = out + (size_t)blockIdx.z * 3 * out_h * out_w;
    for (int c = 0; c < 3; c++) {
        float p00 = (float)r0[c0 + c], p01 = (float)r0[c1 + c];
        float p10 = (float)r1[c0 + c], p11 = (float)r1[c1 + c];
        float top = (1.0f - ax) * p00 + ax * p01;
        float bottom = (1.0f - ax) * p10 + ax * p11;
        float v = (1.0f - ay) * top + ay * bottom;
        o[((size_t)c * out_h + oy) * out_w + ox] = (v / 255.0f - c_mean[c]) / c_std[c];
    }
}

extern "C" int gpu_built(void) {
    return 1;
}

extern "C" int gpu_probe(char *name, size_t namelen, char *err, size_t errlen) {
    int count = 0;
    cudaDeviceProp prop;
    if (name && namelen) name[0] = '\0';
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "no usable GPU: cudaGetDeviceCount: %s", cudaGetErrorString(e));
        return -1;
    }
    if (count == 0) {
        snprintf(err, errlen, "no GPU: cudaGetDeviceCount found 0 devices");
        return -1;
    }
    CK(cudaSetDevice(0));
    CK(cudaGetDeviceProperties(&prop, 0));
    snprintf(name, namelen, "%s (compute %d.%d, %.1f GB)", prop.name, prop.major, prop.minor,
             (double)prop.totalGlobalMem / 1e9);
    return 0;
fail:
    return -1;
}

extern "C" int gpu_augment(const aug_image *imgs, const aug_params *params, int n, int out_w,
                           int out_h, float *out, int reps, double *launch_ms, char *err,
                           size_t errlen) {
    int rc = -1;
    unsigned char *d_pixels = NULL;
    item_desc *d_items = NULL;
    float *d_out = NULL;
    item_desc *items = NULL;
    cudaEvent_t ev0 = NULL, ev1 = NULL;
    size_t total = 0;
    size_t out_floats = (size_t)n * 3 * out_h * out_w;
    dim3 block(32, 8, 1);
    dim3 grid((out_w + 31) / 32, (out_h + 7) / 8, n);

    if (n <= 0 || n > 65535 || reps < 1 || out_w < 1 || out_h < 1 || out_w > AUG_MAX_OUT ||
        out_h > AUG_MAX_OUT) {
        snprintf(err, errlen, "gpu_augment: bad arguments (n=%d reps=%d out=%dx%d)", n, reps, out_w,
                 out_h);
        return -1;
    }
    items = (item_desc *)malloc(sizeof *items * n);
    if (!items) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        items[i].offset = total;
        items[i].w = imgs[i].w;
        items[i].h = imgs[i].h;
        items[i].p = params[i];
        total += (size_t)imgs[i].w * imgs[i].h * 3;
    }
    CK(cudaMemcpyToSymbol(c_mean, aug_mean, sizeof(float) * 3));
    CK(cudaMemcpyToSymbol(c_std, aug_std, sizeof(float) * 3));
    CK(cudaMalloc((void **)&d_pixels, total));
    CK(cudaMalloc((void **)&d_items, sizeof *items * n));
    CK(cudaMalloc((void **)&d_out, out_floats * sizeof(float)));
    for (int i = 0; i < n; i++)
        CK(cudaMemcpy(d_pixels + items[i].offset, imgs[i].px, (size_t)imgs[i].w * imgs[i].h * 3,
                      cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_items, items, sizeof *items * n, cudaMemcpyHostToDevice));
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));
    for (int r = 0; r < reps; r++) {
        float ms = 0.0f;
        CK(cudaEventRecord(ev0));
        augment_kernel<<<grid, block>>>(d_pixels, d_items, out_w, out_h, d_out);
        CK(cudaGetLastError());
        CK(cudaEventRecord(ev1));
        CK(cudaEventSynchronize(ev1));
        CK(cudaEventElapsedTime(&ms, ev0, ev1));
        if (launch_ms) launch_ms[r] = ms;
    }
    if (out) CK(cudaMemcpy(out, d_out, out_floats * sizeof(float), cudaMemcpyDeviceToHost));
    rc = 0;
fail:
    if (ev0) cudaEventDestroy(ev0);
    if (ev1) cudaEventDestroy(ev1);
    cudaFree(d_pixels);
    cudaFree(d_items);
    cudaFree(d_out);
    free(items);
    return rc;
}

extern "C" int gpu_h2d(size_t bytes, int pinned, int reps, double *gb_s, char *err, size_t errlen) {
    int rc = -1;
    unsigned char *host = NULL, *dev = NULL;
    cudaEvent_t ev0 = NULL, ev1 = NULL;
    if (pinned)
        CK(cudaMallocHost((void **)&host, bytes));
    else if (!(host = (unsigned char *)malloc(bytes))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(host, 0x5a, bytes); /* touch every page so the copy is not of unmapped memory */
    CK(cudaMalloc((void **)&dev, bytes));
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));
    CK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice)); /* warm-up */
    for (int r = 0; r < reps; r++) {
        float ms = 0.0f;
        CK(cudaEventRecord(ev0));
        CK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
        CK(cudaEventRecord(ev1));
        CK(cudaEventSynchronize(ev1));
        CK(cudaEventElapsedTime(&ms, ev0, ev1));
        gb_s[r] = (double)bytes / (ms / 1e3) / 1e9;
    }
    rc = 0;
fail:
    if (ev0) cudaEventDestroy(ev0);
    if (ev1) cudaEventDestroy(ev1);
    cudaFree(dev);
    if (pinned)
        cudaFreeHost(host);
    else
        free(host);
    return rc;
}

extern "C" int gpu_sgemm(int n, int reps, double *tflops, char *err, size_t errlen) {
    int rc = -1;
    float *a = NULL, *b = NULL, *c = NULL, *h = NULL;
    cublasHandle_t handle = NULL;
    cublasStatus_t st;
    cudaEvent_t ev0 = NULL, ev1 = NULL;
    const float alpha = 1.0f, beta = 0.0f;
    size_t elems = (size_t)n * n;
    if (!(h = (float *)malloc(elems * sizeof(float)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < elems; i++)
        h[i] = (float)((i * 7919u) % 1000u) / 1000.0f;
    CK(cudaMalloc((void **)&a, elems * sizeof(float)));
    CK(cudaMalloc((void **)&b, elems * sizeof(float)));
    CK(cudaMalloc((void **)&c, elems * sizeof(float)));
    CK(cudaMemcpy(a, h, elems * sizeof(float), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, h, elems * sizeof(float), cudaMemcpyHostToDevice));
    if ((st = cublasCreate(&handle)) != CUBLAS_STATUS_SUCCESS) {
        snprintf(err, errlen, "cublasCreate failed (status %d)", (int)st);
        goto fail;
    }
    CK(cudaEventCreate(&ev0));
    CK(cudaEventCreate(&ev1));
    for (int r = -1; r < reps; r++) { /* r = -1 is an untimed warm-up */
        float ms = 0.0f;
        CK(cudaEventRecord(ev0));
        st =
            cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, n, b, n, &beta, c, n);
        if (st != CUBLAS_STATUS_SUCCESS) {
            snprintf(err, errlen, "cublasSgemm failed (status %d)", (int)st);
            goto fail;
        }
        CK(cudaEventRecord(ev1));
        CK(cudaEventSynchronize(ev1));
        CK(cudaEventElapsedTime(&ms, ev0, ev1));
        if (r >= 0) tflops[r] = 2.0 * n * (double)n * n / (ms / 1e3) / 1e12;
    }
    rc = 0;
fail:
    if (ev0) cudaEventDestroy(ev0);
    if (ev1) cudaEventDestroy(ev1);
    if (handle) cublasDestroy(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    free(h);
    return rc;
}
