/* benches: the registry of calibration benchmarks (bench.h), in the order
 * they run and their sections are written, and the blocks of their results. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

extern const calib_bench_t bench_storage, bench_decode, bench_augment, bench_membw, bench_traffic,
    bench_eval, bench_audio, bench_nvjpeg, bench_gpu, bench_handoff, bench_read_cpu, bench_video;

const calib_bench_t *const calib_benches[] = {
    &bench_storage,  &bench_decode, &bench_augment, &bench_membw, &bench_traffic,
    &bench_eval,     &bench_audio,  &bench_nvjpeg,  &bench_gpu,   &bench_handoff,
    &bench_read_cpu, &bench_video,  NULL,
};

static size_t block_offset(const calib_bench_t *b) {
    size_t off = 0;
    for (int i = 0; calib_benches[i]; i++) {
        size_t size = (calib_benches[i]->size + 15) & ~(size_t)15;
        if (off + size > CALIB_RESULTS_BYTES) abort(); /* raise CALIB_RESULTS_BYTES */
        if (calib_benches[i] == b) return off;
        off += size;
    }
    abort(); /* not in the registry */
}

void *calib_result(calib_results *r, const calib_bench_t *b) {
    return r->results + block_offset(b);
}

const void *calib_result_const(const calib_results *r, const calib_bench_t *b) {
    return r->results + block_offset(b);
}

int calib_images(calib_ctx *c, char *err, size_t errlen) {
    if (c->imgs) return 0;
    int n = c->set->n < 32 ? c->set->n : 32;
    c->imgs = calloc((size_t)n, sizeof *c->imgs);
    if (!c->imgs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        unsigned char *px;
        if (decode_rgb(&c->set->v[i], &px, err, errlen) != 0) return -1;
        c->imgs[i] = (aug_image){px, c->set->v[i].w, c->set->v[i].h};
        c->nimg = i + 1;
    }
    return 0;
}

void calib_ctx_free(calib_ctx *c) {
    for (int i = 0; c->imgs && i < c->nimg; i++)
        free((void *)c->imgs[i].px);
    free(c->imgs);
    c->imgs = NULL, c->nimg = 0;
}
