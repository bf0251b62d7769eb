/* profile: see profile.h. */
#include "profile.h"

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "atomic_file.h"
#include "scenario.h"
#include "schema.h"

const char *profile_num(double v, char *buf, size_t len) {
    if (!isfinite(v)) {
        snprintf(buf, len, "null"); /* never produced by a measurement; kept parseable */
        return buf;
    }
    if (v == 0.0) {
        snprintf(buf, len, "0");
        return buf;
    }
    int mag = (int)floor(log10(fabs(v)));
    int decimals = 5 - mag;
    if (decimals < 0) decimals = 0;
    if (decimals > 15) decimals = 15;
    snprintf(buf, len, "%.*f", decimals, v);
    if (strchr(buf, '.')) {
        char *end = buf + strlen(buf) - 1;
        while (*end == '0')
            *end-- = '\0';
        if (*end == '.') *end = '\0';
    }
    if (strcmp(buf, "-0") == 0) snprintf(buf, len, "0");
    return buf;
}

/* Shorthands so that the emitter below reads like the YAML it writes. */
typedef struct {
    FILE *f;
    char nb[64];
} out_t;

static const char *N(out_t *o, double v) {
    return profile_num(v, o->nb, sizeof o->nb);
}

static void str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void kv_num(out_t *o, int ind, const char *k, double v) {
    fprintf(o->f, "%*s%s: %s\n", ind, "", k, N(o, v));
}

static void kv_int(out_t *o, int ind, const char *k, long v) {
    fprintf(o->f, "%*s%s: %ld\n", ind, "", k, v);
}

static void kv_str(out_t *o, int ind, const char *k, const char *v) {
    fprintf(o->f, "%*s%s: ", ind, "", k);
    str(o->f, v);
    fputc('\n', o->f);
}

static void kv_bool(out_t *o, int ind, const char *k, int v) {
    fprintf(o->f, "%*s%s: %s\n", ind, "", k, v ? "true" : "false");
}

static void kv_stat(out_t *o, int ind, const char *k, stat_summary s) {
    fprintf(o->f, "%*s%s: {median: %s, ", ind, "", k, N(o, s.median));
    fprintf(o->f, "min: %s, ", N(o, s.min));
    fprintf(o->f, "max: %s, n: %d}\n", N(o, s.max), s.n);
}

static void storage_points(out_t *o, const char *k, const storage_point *p) {
    fprintf(o->f, "    %s:\n", k);
    for (int q = 0; q < STORAGE_NQD; q++) {
        fprintf(o->f, "      - queue_depth: %d\n", p[q].qd);
        kv_stat(o, 8, "mb_s", p[q].mb_s);
        kv_stat(o, 8, "items_s", p[q].items_s);
        fprintf(o->f, "        latency_ms: {p50: %s, ", N(o, p[q].p50_ms));
        fprintf(o->f, "p90: %s, ", N(o, p[q].p90_ms));
        fprintf(o->f, "p99: %s}\n", N(o, p[q].p99_ms));
    }
}

/* One measured scenario key, named by the schema row of its scenario_t
 * field (so a renamed key cannot leave profiles behind), written as nested
 * YAML under `scenario:`: the mapping headers that differ from the previous
 * key's, then the leaf. prev holds the previous key. */
static void scenario_key(out_t *o, char *prev, size_t offset, const char *value) {
    const char *name = schema_key_at(offset);
    if (!name) abort(); /* a field without a row: a programming error the tests catch */
    int depth = 0;
    const char *p = name, *q = prev;
    /* Skip the leading components both keys share. */
    for (;;) {
        const char *dp = strchr(p, '.'), *dq = strchr(q, '.');
        if (!dp || !dq || dp - p != dq - q || strncmp(p, q, (size_t)(dp - p)) != 0) break;
        p = dp + 1, q = dq + 1, depth++;
    }
    for (const char *dot; (dot = strchr(p, '.')); p = dot + 1, depth++)
        fprintf(o->f, "%*s%.*s:\n", 2 * (depth + 1), "", (int)(dot - p), p);
    fprintf(o->f, "%*s%s: %s\n", 2 * (depth + 1), "", p, value);
    snprintf(prev, SCN_STR, "%s", name);
}

static const char *I(out_t *o, long v) {
    snprintf(o->nb, sizeof o->nb, "%ld", v);
    return o->nb;
}

int profile_emit(FILE *f, const calib_results *r) {
    out_t o = {.f = f};
    const storage_result *s = &r->storage;
    const decode_result *d = &r->decode;
    const augment_result *a = &r->augment;
    const gpu_result *g = &r->gpu;
    fprintf(f, "# stallsim host profile: written by `stallsim calibrate` on %s at %s\n",
            r->hostname, r->date);
    fprintf(f, "profile_version: 1\n");
    fprintf(f, "scenario:\n");
    char prev[SCN_STR] = "";
#define KEY(field, text) scenario_key(&o, prev, offsetof(scenario_t, field), text)
    KEY(server.cpus, I(&o, a->max_threads));
    KEY(server.mem_gbps, N(&o, r->membw.gb_s));
    KEY(server.storage.read_mb_s, N(&o, s->read_mb_s));
    KEY(server.storage.latency_ms, N(&o, s->latency_ms));
    KEY(server.storage.queue_depth, I(&o, s->queue_depth));
    /* server.storage.kind: ssd's keys: the cold curve itself. */
    _Static_assert(STORAGE_NQD == 4, "the ssd kind's curve is at calibrate's four depths");
    KEY(server.storage.ssd.latency_qd1_ms, N(&o, s->curve_ms[0]));
    KEY(server.storage.ssd.latency_qd4_ms, N(&o, s->curve_ms[1]));
    KEY(server.storage.ssd.latency_qd16_ms, N(&o, s->curve_ms[2]));
    KEY(server.storage.ssd.latency_qd32_ms, N(&o, s->curve_ms[3]));
    KEY(server.storage.ssd.peak_mb_s, N(&o, s->peak_mb_s));
    KEY(prep.decode_ms_per_mb, N(&o, d->model_ms_per_mb));
    KEY(prep.decode_ms_per_item, N(&o, d->model_ms_per_item));
    KEY(prep.augment_ms, N(&o, a->ms_per_item.median));
    if (g->available) KEY(prep.gpu_augment_ms, N(&o, g->augment_ms.median));
    if (r->nvjpeg.measured) {
        KEY(prep.huffman_ms_per_mb, N(&o, r->nvjpeg.host_ms_per_mb));
        KEY(prep.gpu_decode_ms_per_mp, N(&o, r->nvjpeg.gpu_ms_per_mp));
    }
    KEY(prep.eval_ms, N(&o, r->eval.ms_per_item.median));
    KEY(prep.audio_ms_per_mb, N(&o, r->audio.model_ms_per_mb));
    KEY(prep.audio_ms_per_item, N(&o, r->audio.model_ms_per_item));
    KEY(prep.mem_mb_per_item, N(&o, r->traffic.mb_per_item));
    /* The augment's measured speed-up over threads (the curve below, under
     * measured:), for every prep core: a host's curve needs two points. */
    char curve[SCN_STR * 2] = "\"";
    size_t used = 1;
    for (int k = 0; k < a->npoints && a->npoints >= 2; k++) {
        char pt[48];
        int len = snprintf(pt, sizeof pt, "%s%d:%s", k ? ", " : "", a->curve[k].threads,
                           N(&o, a->curve[k].speedup));
        if (len < 0 || used + (size_t)len + 2 > sizeof curve) break; /* 13 points fit */
        memcpy(curve + used, pt, (size_t)len + 1);
        used += (size_t)len;
    }
    if (used > 1) {
        memcpy(curve + used, "\"", 2);
        KEY(prep.scaling, curve);
    }
#undef KEY

    fprintf(f, "measured:\n  host:\n");
    kv_str(&o, 4, "hostname", r->hostname);
    kv_str(&o, 4, "cpu_model", r->cpu_model);
    kv_int(&o, 4, "online_cores", r->online_cores);
    kv_str(&o, 4, "date", r->date);
    kv_str(&o, 4, "libjpeg_turbo", r->jpeg_version);
    kv_str(&o, 4, "gsl", r->gsl_version);
    kv_str(&o, 4, "libyaml", r->yaml_version);

    const stability_t *st = &r->stability;
    fprintf(f, "  stability:\n");
    kv_num(&o, 4, "load_avg_1m_at_start", st->load1);
    kv_int(&o, 4, "online_cores", st->cores);
    if (st->host_known) {
        kv_num(&o, 4, "other_processes_cpu_share", st->other_share);
        kv_num(&o, 4, "steal_share", st->steal_share);
    }
    fprintf(f, "    max_spread: %s\n", N(&o, STABILITY_MAX_SPREAD));
    fprintf(f, "    warnings: [");
    for (int i = 0; i < st->nwarnings; i++) {
        fputs(i ? ", " : "", f);
        str(f, st->warnings[i]);
    }
    fprintf(f, "]\n");

    fprintf(f, "  method:\n");
    kv_str(&o, 4, "data", r->data);
    kv_int(&o, 4, "seed", (long)r->seed);
    kv_bool(&o, 4, "quick", r->quick);
    kv_int(&o, 4, "repetitions", r->reps);
    kv_int(&o, 4, "threads", r->threads);
    kv_int(&o, 4, "files_found", r->files_found);
    kv_int(&o, 4, "files_used", r->files_used);
    kv_int(&o, 4, "files_bad", r->files_bad);
    kv_int(&o, 4, "files_not_jpeg", r->files_non_jpeg);
    kv_num(&o, 4, "total_mb", r->total_mb);
    kv_num(&o, 4, "mean_kb", r->mean_kb);
    kv_num(&o, 4, "min_kb", r->min_kb);
    kv_num(&o, 4, "max_kb", r->max_kb);
    kv_num(&o, 4, "mean_width_px", r->mean_w);
    kv_num(&o, 4, "mean_height_px", r->mean_h);
    kv_str(&o, 4, "cold_read_method", s->cold_method ? s->cold_method : "none");
    kv_bool(&o, 4, "eviction_worked", s->eviction_ok);
    kv_num(&o, 4, "worst_resident_fraction_after_eviction", s->resident_after);
    kv_str(&o, 4, "figures", "median of the repetitions, with min and max");
    kv_num(&o, 4, "wall_s", r->wall_s);

    fprintf(f, "  storage:\n");
    kv_str(&o, 4, "model",
           "time per item at queue depth q = latency_ms/q + mean_size/read_mb_s (cold)");
    kv_str(&o, 4, "fit_method", s->fit_method ? s->fit_method : "none");
    kv_str(&o, 4, "ssd_model",
           "server.storage.kind: ssd: peak_mb_s = the mean cold MB/s of the plateau (the depths "
           "around the best whose medians reach its slowest repetition); latency at queue depth "
           "q = the one with which that device (latency, then the bytes on one FIFO channel), q "
           "reads of these files in flight, moves the cold items/s measured at q (at most the "
           "plateau's)");
    fprintf(f, "    qd_curve_fit: {latency_ms: %s, ", N(&o, s->qd_fit.slope * 1e3));
    fprintf(f, "size_over_bandwidth_ms: %s, ", N(&o, s->qd_fit.intercept * 1e3));
    fprintf(f, "r2: %s}\n", N(&o, s->qd_fit.r2));
    fprintf(f, "    per_request_fit: {ms_per_mb: %s, ", N(&o, s->request_fit.slope * 1e9));
    fprintf(f, "latency_ms: %s, ", N(&o, s->request_fit.intercept * 1e3));
    fprintf(f, "r2: %s, n: %d}\n", N(&o, s->request_fit.r2), s->request_fit.n);
    storage_points(&o, "warm", s->warm);
    storage_points(&o, "cold", s->cold);

    fprintf(f, "  decode:\n");
    kv_str(&o, 4, "api", "TurboJPEG tjDecompress2 to RGB, default flags, from memory");
    kv_int(&o, 4, "files", d->files);
    kv_int(&o, 4, "repetitions", d->reps);
    kv_num(&o, 4, "mean_mb", d->mean_mb);
    kv_num(&o, 4, "mean_megapixels", d->mean_mp);
    kv_stat(&o, 4, "ms_per_item", d->ms_per_item);
    kv_stat(&o, 4, "mb_s", d->mb_s);
    kv_stat(&o, 4, "megapixels_s", d->mp_s);
    fprintf(f, "    fit: {ms_per_mb: %s, ", N(&o, d->fit.slope));
    fprintf(f, "ms_per_item: %s, ", N(&o, d->fit.intercept));
    fprintf(f, "r2: %s, n: %d}\n", N(&o, d->fit.r2), d->fit.n);
    fprintf(f, "    fit_megapixels: {ms_per_megapixel: %s, ", N(&o, d->fit_mp.slope));
    fprintf(f, "ms_per_item: %s, ", N(&o, d->fit_mp.intercept));
    fprintf(f, "r2: %s}\n", N(&o, d->fit_mp.r2));
    kv_str(&o, 4, "model", cost_method_words(d->model_method));

    fprintf(f, "  augment_cpu:\n");
    kv_str(&o, 4, "operation",
           "random-resized-crop (bilinear) to 224x224, flip, normalize, HWC u8 to CHW f32");
    kv_int(&o, 4, "items_per_pass", a->items);
    kv_int(&o, 4, "images", a->images);
    kv_int(&o, 4, "repetitions", a->reps);
    kv_stat(&o, 4, "ms_per_item", a->ms_per_item);
    fprintf(f, "    scaling:\n");
    for (int k = 0; k < a->npoints; k++) {
        fprintf(f, "      - threads: %d\n", a->curve[k].threads);
        kv_stat(&o, 8, "items_s", a->curve[k].items_s);
        kv_num(&o, 8, "speedup", a->curve[k].speedup);
    }

    const membw_result *bw = &r->membw;
    fprintf(f, "  memory_bandwidth:\n");
    kv_str(&o, 4, "kernel",
           "STREAM-like triad a[i] = b[i] + q * c[i] on doubles, each thread its own slice; "
           "24 bytes counted per element (b, c read, a written; not the write-allocate read); "
           "1 GB = 1e9 bytes");
    kv_num(&o, 4, "array_mb", bw->array_mb);
    kv_num(&o, 4, "last_level_cache_kb", bw->llc_kb);
    kv_int(&o, 4, "repetitions", bw->reps);
    kv_str(&o, 4, "mem_gbps", "the median of the most threads (server.mem_gbps)");
    fprintf(f, "    scaling:\n");
    for (int k = 0; k < bw->npoints; k++) {
        fprintf(f, "      - threads: %d\n", bw->curve[k].threads);
        kv_stat(&o, 8, "gb_s", bw->curve[k].gb_s);
    }

    const prep_traffic *pt = &r->traffic;
    fprintf(f, "  prep_traffic:\n");
    kv_str(&o, 4, "method",
           "a count of the image_train pipeline's buffer bytes per item (JPEG read by decode, "
           "RGB written by decode, the rows the random-resized crop samples read, CHW float "
           "output written), not a hardware counter: libjpeg's own buffers and write-allocate "
           "reads are left out, and caches may hold part of it (prep.mem_mb_per_item)");
    kv_int(&o, 4, "items", pt->items);
    kv_num(&o, 4, "jpeg_read_mb", pt->jpeg_read_mb);
    kv_num(&o, 4, "rgb_write_mb", pt->rgb_write_mb);
    kv_num(&o, 4, "crop_read_mb", pt->crop_read_mb);
    kv_num(&o, 4, "output_write_mb", pt->out_write_mb);
    kv_num(&o, 4, "mb_per_item", pt->mb_per_item);

    const eval_result *ev = &r->eval;
    fprintf(f, "  eval_cpu:\n");
    kv_str(&o, 4, "operation",
           "resize shorter side to 256 (bilinear, no antialias), centre crop 224, normalize, "
           "HWC u8 to CHW f32");
    kv_int(&o, 4, "items_per_pass", ev->items);
    kv_int(&o, 4, "images", ev->images);
    kv_int(&o, 4, "repetitions", ev->reps);
    kv_stat(&o, 4, "ms_per_item", ev->ms_per_item);

    const audio_result *au = &r->audio;
    fprintf(f, "  audio_cpu:\n");
    kv_str(&o, 4, "operation",
           "WAV 16-bit PCM decode, windowed-sinc resample, log-mel (Hann, GSL real FFT, HTK mel)");
    kv_int(&o, 4, "rate_in_hz", au->rate_in);
    kv_int(&o, 4, "rate_out_hz", au->rate_out);
    kv_int(&o, 4, "n_fft", au->n_fft);
    kv_int(&o, 4, "hop", au->hop);
    kv_int(&o, 4, "n_mels", au->n_mels);
    kv_int(&o, 4, "clips", au->clips);
    kv_str(&o, 4, "clip_seconds", "1 .. clips, generated (chirp with harmonics and noise)");
    kv_int(&o, 4, "repetitions", au->reps);
    kv_num(&o, 4, "mean_mb", au->mean_mb);
    kv_stat(&o, 4, "ms_per_audio_second", au->ms_per_audio_s);
    fprintf(f, "    fit: {ms_per_mb: %s, ", N(&o, au->fit.slope));
    fprintf(f, "ms_per_item: %s, ", N(&o, au->fit.intercept));
    fprintf(f, "r2: %s, n: %d}\n", N(&o, au->fit.r2), au->fit.n);
    kv_str(&o, 4, "model", cost_method_words(au->model_method));

    const nvjpeg_result *nj = &r->nvjpeg;
    fprintf(f, "  nvjpeg:\n");
    kv_bool(&o, 4, "measured", nj->measured);
    if (!nj->measured) {
        kv_str(&o, 4, "reason", nj->reason);
    } else {
        kv_str(&o, 4, "method",
               "hybrid backend, decoupled API: host phase (Huffman, CPU wall clock) and device "
               "phase (transfer + decode to RGBI, CUDA events), per image");
        kv_int(&o, 4, "items", nj->items);
        kv_int(&o, 4, "repetitions", nj->reps);
        kv_stat(&o, 4, "device_ms_per_image", nj->device_ms);
        kv_stat(&o, 4, "host_ms_per_image", nj->host_ms);
        kv_num(&o, 4, "gpu_ms_per_megapixel", nj->gpu_ms_per_mp);
        kv_num(&o, 4, "host_ms_per_mb", nj->host_ms_per_mb);
        kv_num(&o, 4, "rgb_mean_abs_diff_vs_turbojpeg", nj->mean_abs_diff);
    }

    fprintf(f, "  gpu:\n");
    kv_bool(&o, 4, "built_with_cuda", g->built);
    kv_bool(&o, 4, "available", g->available);
    if (!g->available) {
        kv_str(&o, 4, "reason", g->reason);
    } else {
        kv_str(&o, 4, "device", g->device);
        kv_int(&o, 4, "batch", g->batch);
        kv_int(&o, 4, "repetitions", g->reps);
        kv_stat(&o, 4, "augment_launch_ms", g->launch_ms);
        kv_stat(&o, 4, "augment_ms_per_item", g->augment_ms);
        kv_num(&o, 4, "augment_max_abs_error_vs_reference", g->max_abs_err);
        kv_int(&o, 4, "h2d_bytes", (long)g->h2d_bytes);
        kv_stat(&o, 4, "h2d_pinned_gb_s", g->h2d_pinned_gb_s);
        kv_stat(&o, 4, "h2d_pageable_gb_s", g->h2d_pageable_gb_s);
        kv_int(&o, 4, "sgemm_n", g->sgemm_n);
        kv_stat(&o, 4, "sgemm_tflops", g->sgemm_tflops);
    }
    return ferror(f) ? -1 : 0;
}

/* libyaml must accept what we wrote before it replaces a good profile. */
static int yaml_parses(const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    yaml_parser_t p;
    yaml_event_t ev;
    int rc = -1, done = 0;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    while (!done) {
        if (!yaml_parser_parse(&p, &ev)) {
            snprintf(err, errlen, "internal error: profile is not valid YAML: %s",
                     p.problem ? p.problem : "?");
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        if (done) rc = 0;
    }
    yaml_parser_delete(&p);
    fclose(f);
    return rc;
}

int profile_write(const char *path, const calib_results *r, char *err, size_t errlen) {
    if (!path) {
        if (profile_emit(stdout, r) != 0 || fflush(stdout) != 0) {
            snprintf(err, errlen, "writing the profile to stdout: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    atomic_file_t af;
    if (atomic_open(&af, path, err, errlen) != 0) return -1;
    if (profile_emit(af.f, r) != 0 || fflush(af.f) != 0) {
        snprintf(err, errlen, "writing %s: %s (left unchanged)", path, strerror(errno));
        atomic_abort(&af);
        return -1;
    }
    if (yaml_parses(af.tmp, err, errlen) != 0) {
        atomic_abort(&af);
        return -1;
    }
    if (atomic_commit(&af, err, errlen) != 0) return -1;
    return 0;
}
