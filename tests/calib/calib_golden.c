/* calib_golden: the host profile's exact text for two fixed results (one
 * with a GPU and nvJPEG measured, one CPU-only with a single augment point
 * and an unknown host load), byte for byte against tests/calib/golden/. Every
 * emitted field gets its own value, so a key moved, renamed, dropped or fed
 * from the wrong field changes the text. A refactoring of the writer or of
 * the benchmarks leaves it unchanged; an intended change of the profile's
 * format regenerates it, in its own commit that says why:
 *   calib_golden DIR            compare (exit 1 with the first difference)
 *   calib_golden DIR --update   rewrite DIR/profile-{cpu,gpu}.yaml
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio_bench.h"
#include "augment_bench.h"
#include "decode_bench.h"
#include "eval_bench.h"
#include "gpu_bench.h"
#include "gpu_decode_bench.h"
#include "handoff_bench.h"
#include "membw.h"
#include "prep_traffic.h"
#include "profile.h"
#include "read_cpu_bench.h"
#include "storage_bench.h"
#include "video_bench.h"

extern const calib_bench_t bench_storage, bench_decode, bench_augment, bench_membw, bench_traffic,
    bench_eval, bench_audio, bench_nvjpeg, bench_gpu, bench_handoff, bench_read_cpu, bench_video;

static double next;

/* Distinct values in a fixed order: a field fed from another shows. */
static double v(void) {
    next += 1.0625;
    return next;
}

static stat_summary S(void) {
    double m = v();
    return (stat_summary){m, m * 0.875, m * 1.125, 5};
}

static void fill_method(calib_results *r, int gpu) {
    snprintf(r->hostname, sizeof r->hostname, "host \"quoted\" \\ name");
    snprintf(r->cpu_model, sizeof r->cpu_model, "CPU: model: with colons");
    snprintf(r->date, sizeof r->date, "2024-01-01T00:00:00Z");
    snprintf(r->jpeg_version, sizeof r->jpeg_version, "2.1.5");
    snprintf(r->gsl_version, sizeof r->gsl_version, "2.7.1");
    snprintf(r->yaml_version, sizeof r->yaml_version, "0.2.5");
    snprintf(r->data, sizeof r->data, "generated: 200 photograph-like JPEGs (seed 1) in /tmp/x");
    r->online_cores = 16, r->seed = 7, r->quick = gpu, r->reps = 5, r->threads = 16;
    r->files_found = 203, r->files_used = 200, r->files_bad = 3, r->files_non_jpeg = 4;
    r->total_mb = v(), r->mean_kb = v(), r->min_kb = v(), r->max_kb = v();
    r->mean_w = v(), r->mean_h = v(), r->wall_s = v();
    stability_t *st = &r->stability;
    st->load1 = v(), st->cores = 16, st->host_known = gpu;
    st->other_share = v(), st->steal_share = v();
    st->nwarnings = gpu ? 2 : 0;
    snprintf(st->warnings[0], sizeof st->warnings[0], "decode ms/item varied by 31%%");
    snprintf(st->warnings[1], sizeof st->warnings[1], "a \"quoted\" warning");
}

static void fill_storage(storage_result *s) {
    s->files = 200, s->reps = 5, s->total_mb = v(), s->mean_kb = v();
    for (int q = 0; q < STORAGE_NQD; q++) {
        storage_point *p[2] = {&s->warm[q], &s->cold[q]};
        for (int k = 0; k < 2; k++) {
            p[k]->qd = storage_qds[q];
            p[k]->mb_s = S(), p[k]->items_s = S();
            p[k]->p50_ms = v(), p[k]->p90_ms = v(), p[k]->p99_ms = v();
        }
        s->curve_ms[q] = v();
    }
    s->cold_method = "fadvise_dontneed", s->eviction_ok = 1, s->resident_after = v();
    s->qd_fit = (linear_fit){v() * 1e-3, v() * 1e-3, 0.96875, 4};
    s->request_fit = (linear_fit){v() * 1e-9, v() * 1e-3, 0.5, 200};
    s->fit_method = "qd_curve", s->read_mb_s = v(), s->latency_ms = v();
    s->queue_depth = 16, s->peak_mb_s = v();
    snprintf(s->dir, sizeof s->dir, "/data/train/n01440764");
    snprintf(s->device, sizeof s->device, "259:0 (nvme0n1)");
    s->read_ahead_kb = 128, s->seq_mb_s = 612.5, s->seq_mb = 64.25, s->seq_files = 3;
}

static void fill_decode(decode_result *d) {
    d->files = 200, d->reps = 5, d->mean_mb = v(), d->mean_mp = v();
    d->ms_per_item = S(), d->mb_s = S(), d->mp_s = S();
    d->fit = (linear_fit){v(), v(), 0.75, 200};
    d->fit_mp = (linear_fit){v(), v(), 0.625, 200};
    d->model_ms_per_mb = v(), d->model_ms_per_item = v(), d->model_method = COST_THROUGH_ORIGIN;
}

static void fill_augment(augment_result *a, int gpu) {
    a->items = 200, a->reps = 5, a->images = 32, a->max_threads = gpu ? 16 : 1;
    a->ms_per_item = S();
    a->npoints = gpu ? 9 : 1;
    for (int k = 0; k < a->npoints; k++) {
        a->curve[k].threads = k < 8 ? k + 1 : 16;
        a->curve[k].items_s = S();
        a->curve[k].speedup = k ? v() : 1;
    }
}

static void fill_membw(membw_result *m) {
    m->reps = 5, m->max_threads = 16, m->npoints = 3, m->array_mb = 64, m->llc_kb = v();
    for (int k = 0; k < m->npoints; k++)
        m->curve[k].threads = 1 << k, m->curve[k].gb_s = S();
    m->gb_s = v();
}

static void fill_pipelines(prep_traffic *t, eval_result *e, audio_result *au) {
    t->items = 200, t->jpeg_read_mb = v(), t->rgb_write_mb = v(), t->crop_read_mb = v();
    t->out_write_mb = v(), t->mb_per_item = v();
    e->items = 40, e->reps = 5, e->images = 32, e->ms_per_item = S();
    *au = (audio_result){.clips = 4,
                         .reps = 5,
                         .rate_in = 44100,
                         .rate_out = 16000,
                         .n_fft = 400,
                         .hop = 160,
                         .n_mels = 80};
    au->mean_mb = v(), au->fit = (linear_fit){v(), v(), 0.875, 4};
    au->model_ms_per_mb = v(), au->model_ms_per_item = v(), au->model_method = COST_FIT;
    au->ms_per_audio_s = S();
}

static void fill_handoff(handoff_result *h) {
    h->measured = 1, h->batch_mb = 38.535168, h->shm_free_mb = v(), h->reps = 5, h->npoints = 4;
    h->online_cores = 16;
    for (int k = 0; k < h->npoints; k++)
        h->pt[k].readers = 1 << k, h->pt[k].cpu_ms_per_mb = S(), h->pt[k].wall_ms_per_mb = S();
    h->write_ms_per_mb = S(), h->ms_per_mb = v(), h->ms_per_mb_per_reader = v();
}

static void fill_read_cpu(read_cpu_result *r) {
    r->reps = 5, r->measured = 1, r->cold_ok = 1, r->get_ok = 1, r->resident_after = 0;
    snprintf(r->dir, sizeof r->dir, "/var/tmp/stallsim-readcpu-XXXXXX");
    for (int k = 0; k < READ_CPU_NSIZES; k++) {
        r->size_kb[k] = 4 << (2 * k), r->files[k] = 32 + k;
        r->warm_us[k] = S(), r->cold_us[k] = S(), r->get_us[k] = S();
    }
    r->warm = (cost_line){v(), v(), COST_FIT};
    r->cold = (cost_line){v(), v(), COST_THROUGH_ORIGIN};
    r->get = (cost_line){v(), v(), COST_FIT};
}

static void fill_gpu(gpu_result *g, nvjpeg_result *nj, int gpu) {
    g->built = 1, g->available = gpu;
    snprintf(g->reason, sizeof g->reason, "%s", gpu ? "" : "no CUDA device: \"test\"");
    snprintf(g->device, sizeof g->device, "NVIDIA H100 80GB HBM3 (79 GB, sm_90)");
    g->batch = 64, g->reps = 5, g->launch_ms = S(), g->augment_ms = S(),
    g->max_abs_err = v() * 1e-7;
    g->h2d_bytes = (size_t)64 << 20, g->h2d_pinned_gb_s = S(), g->h2d_pageable_gb_s = S();
    g->sgemm_n = 2048, g->sgemm_tflops = S();
    nj->measured = gpu;
    snprintf(nj->reason, sizeof nj->reason, "%s", gpu ? "" : "built without nvJPEG");
    nj->items = 32, nj->reps = 5, nj->gpu_ms_per_mp = v(), nj->host_ms_per_mb = v();
    nj->device_ms = S(), nj->host_ms = S(), nj->mean_abs_diff = v();
}

/* measured: two videos (a fit); else not measured, with the reason. */
static void fill_video(video_result *o, int measured) {
    o->measured = measured, o->reps = 5, o->seeks = 16;
    snprintf(o->reason, sizeof o->reason, "%s", measured ? "" : "built without FFmpeg: \"test\"");
    snprintf(o->source, sizeof o->source, "generated: 2 videos of 36 frames");
    o->nvideos = measured ? 2 : 0, o->resolutions = o->nvideos;
    for (int i = 0; i < o->nvideos; i++) {
        video_one *x = &o->v[i];
        snprintf(x->name, sizeof x->name, "video_%d.mp4", i);
        snprintf(x->codec, sizeof x->codec, "h264");
        x->w = 320 << i, x->h = 180 << i, x->frames = 36, x->gop = 12;
        x->ms_per_frame = S(), x->resize_ms_per_frame = S(), x->seek_ms = S();
        x->decoded_per_seek = v();
    }
    o->fit = (linear_fit){v(), v(), v(), 2};
    o->ms_per_frame = v(), o->ms_per_mpx = v(), o->method = COST_FIT;
    o->seek_raw_ms = v(), o->seek_ms = o->seek_raw_ms, o->resize_ms_per_mpx = v();
    for (int i = 0; i < o->nvideos; i++) {
        video_one *x = &o->v[i];
        x->keyframes = 3, x->key_ms_per_frame = S(), x->keyframe_extra_ms = v();
        x->keyframes_per_seek = v(), x->out_per_seek = v();
    }
    o->keyframe_ms_per_mpx = v();
}

static void fill(calib_results *r, int gpu) {
    memset(r, 0, sizeof *r);
    next = 0;
    fill_method(r, gpu);
    fill_storage(calib_result(r, &bench_storage));
    fill_decode(calib_result(r, &bench_decode));
    fill_augment(calib_result(r, &bench_augment), gpu);
    fill_membw(calib_result(r, &bench_membw));
    fill_pipelines(calib_result(r, &bench_traffic), calib_result(r, &bench_eval),
                   calib_result(r, &bench_audio));
    fill_gpu(calib_result(r, &bench_gpu), calib_result(r, &bench_nvjpeg), gpu);
    fill_handoff(calib_result(r, &bench_handoff));
    fill_read_cpu(calib_result(r, &bench_read_cpu));
    fill_video(calib_result(r, &bench_video), gpu);
}

/* 0 when DIR/NAME holds exactly the profile of r (or was rewritten). */
static int check(const char *dir, const char *name, const calib_results *r, int update) {
    char path[4096], *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m || profile_emit(m, r) != 0 || fclose(m) != 0) {
        fprintf(stderr, "calib_golden: cannot emit the profile\n");
        return 1;
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = 1;
    FILE *f = fopen(path, update ? "wb" : "rb");
    if (f && update) {
        rc = fwrite(text, 1, len, f) != len;
    } else if (f) {
        char line[8192];
        size_t at = 0;
        int n = 0;
        rc = 0;
        while (!rc && fgets(line, sizeof line, f)) {
            size_t l = strlen(line);
            n++;
            if (at + l > len || memcmp(text + at, line, l) != 0) {
                fprintf(stderr, "calib_golden: %s:%d differs:\n  want %s  got  %.*s\n", path, n,
                        line, (int)strcspn(text + at, "\n") + 1, at < len ? text + at : "(end)\n");
                rc = 1;
            }
            at += l;
        }
        if (!rc && at != len) {
            fprintf(stderr, "calib_golden: %s: the profile goes on past line %d\n", path, n);
            rc = 1;
        }
    } else {
        fprintf(stderr, "calib_golden: cannot open %s\n", path);
    }
    if (f) fclose(f);
    free(text);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: calib_golden DIR [--update]\n");
        return 2;
    }
    int update = argc > 2 && !strcmp(argv[2], "--update");
    static calib_results r;
    fill(&r, 1);
    int bad = check(argv[1], "profile-gpu.yaml", &r, update);
    fill(&r, 0);
    bad |= check(argv[1], "profile-cpu.yaml", &r, update);
    if (!bad)
        printf("calib_golden: %s\n", update ? "rewritten" : "both profiles as in the golden files");
    return bad;
}
