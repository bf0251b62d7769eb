/* video_bench: see video_bench.h. */
#include "video_bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cleanup.h"
#include "fileset.h"
#include "progress.h"
#include "schema.h"

#ifndef STALLSIM_HAVE_LIBAV
/* This build has no FFmpeg: every call says so (video_av.h). */
int video_av_available(void) {
    return 0;
}
const char *video_av_encoder(void) {
    return "";
}
int video_av_generate(const char *path, int w, int h, int frames, int gop, unsigned long seed,
                      char *err, size_t errlen) {
    (void)path, (void)w, (void)h, (void)frames, (void)gop, (void)seed;
    snprintf(err, errlen, "video: built without FFmpeg");
    return -1;
}
int video_av_time(const char *path, int max_frames, int reps, int seeks, unsigned long seed,
                  video_one *out, char *err, size_t errlen) {
    (void)path, (void)max_frames, (void)reps, (void)seeks, (void)seed, (void)out;
    snprintf(err, errlen, "video: built without FFmpeg");
    return -1;
}
#endif

video_plan video_plan_for(int quick, int reps) {
    video_plan p = {.nsizes = quick ? 2 : 3,
                    .w = {320, 640, 1280},
                    .h = {180, 360, 720},
                    .frames = quick ? 36 : 60,
                    .gop = 12,
                    .max_frames = quick ? 36 : 120,
                    .reps = reps,
                    .seeks = quick ? 16 : 32};
    return p;
}

/* The cost line over the videos' medians; with one size, through 0 (a
 * frame's decode grows with its pixels: a fixed cost alone would not carry
 * to another size). */
static void fit_videos(video_result *o) {
    double x[VIDEO_MAX], y[VIDEO_MAX], sxy = 0, sxx = 0, resize = 0, mpx = 0, key = 0;
    double seeks[VIDEO_MAX], held[VIDEO_MAX];
    for (int i = 0; i < o->nvideos; i++) {
        held[i] = o->v[i].decoded_per_seek - o->v[i].out_per_seek;
        x[i] = o->v[i].w * (double)o->v[i].h / 1e6, y[i] = o->v[i].ms_per_frame.median;
        sxy += x[i] * y[i], sxx += x[i] * x[i];
        resize += o->v[i].resize_ms_per_frame.median, mpx += x[i];
        key += o->v[i].keyframe_extra_ms / x[i];
        seeks[i] = o->v[i].seek_ms.median;
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= x[j] == x[i];
        o->resolutions += !seen;
    }
    if (o->resolutions >= 2) {
        cost_line c;
        fit_linear(x, y, o->nvideos, &o->fit);
        fit_cost_line(x, y, o->nvideos, &c);
        o->ms_per_frame = c.fixed, o->ms_per_mpx = c.per_x, o->method = c.method;
    } else {
        o->ms_per_frame = 0, o->ms_per_mpx = sxy / sxx, o->method = COST_THROUGH_ORIGIN;
    }
    o->resize_ms_per_mpx = resize / mpx;
    o->keyframe_ms_per_mpx = key / o->nvideos;
    o->seek_raw_ms = stats_summarize(seeks, o->nvideos).median;
    o->seek_ms = o->seek_raw_ms > 0 ? o->seek_raw_ms : 0;
    /* The packets a seek's decoder took past its frame: the reorder delay
     * (B-frames), a whole number of packets for a stream. */
    const double d = stats_summarize(held, o->nvideos).median;
    o->decode_delay = d > 0 ? (int)lround(d) : 0;
}

/* The user's videos; one that does not decode is skipped, said on stderr. */
static int time_user(const video_files *u, const video_plan *p, unsigned long seed, video_result *o,
                     char *err, size_t errlen) {
    snprintf(o->source, sizeof o->source, "--videos: %d of the %d video files", u->n, u->found);
    for (int i = 0; i < u->n && o->nvideos < VIDEO_MAX; i++) {
        char why[512];
        progress("video: timing %s", u->path[i]);
        if (video_av_time(u->path[i], p->max_frames, p->reps, p->seeks, seed, &o->v[o->nvideos],
                          why, sizeof why) == 0)
            o->nvideos++;
        else
            progress("video: skipping %s", why);
    }
    if (o->nvideos == 0) snprintf(err, errlen, "video: none of the --videos files decodes");
    return o->nvideos ? 0 : -1;
}

/* p's sizes encoded in a temporary folder (removed on a signal, and after),
 * then timed. */
static int time_generated(const video_plan *p, unsigned long seed, video_result *o, char *err,
                          size_t errlen) {
    const char *base = getenv("TMPDIR");
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/stallsim-video-XXXXXX", base && *base ? base : "/var/tmp");
    if (!mkdtemp(dir)) {
        snprintf(err, errlen, "video: cannot create a temporary folder in %.160s: %s",
                 base && *base ? base : "/var/tmp", strerror(errno));
        return -1;
    }
    int id = cleanup_add(dir, 1), rc = 0;
    snprintf(o->encoder, sizeof o->encoder, "%s", video_av_encoder());
    snprintf(o->source, sizeof o->source,
             "generated: %d videos of %d frames, a keyframe every %d, %s, panning over "
             "calibrate's photographs (seed %lu)",
             p->nsizes, p->frames, p->gop, o->encoder, seed);
    for (int i = 0; i < p->nsizes && i < VIDEO_MAX && rc == 0; i++) {
        snprintf(path, sizeof path, "%s/video_%dx%d.mp4", dir, p->w[i], p->h[i]);
        progress("video: encoding %d frames of %d x %d (%s)", p->frames, p->w[i], p->h[i],
                 o->encoder);
        rc = video_av_generate(path, p->w[i], p->h[i], p->frames, p->gop, seed, err, errlen);
        if (rc == 0)
            rc = video_av_time(path, p->max_frames, p->reps, p->seeks, seed, &o->v[i], err, errlen);
        o->nvideos += rc == 0;
    }
    fileset_remove_tree(dir);
    cleanup_drop(id);
    return rc;
}

int video_bench(const video_files *user, const video_plan *p, unsigned long seed, video_result *out,
                char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    out->reps = p->reps, out->seeks = p->seeks;
    if (!video_av_available()) {
        snprintf(out->reason, sizeof out->reason,
                 "stallsim was built without FFmpeg's libavcodec, libavformat and libswscale "
                 "(Debian: libavcodec-dev libavformat-dev libswscale-dev; scripts/setup.sh)");
        return 0;
    }
    out->found = user ? user->found : p->nsizes;
    if (user && time_user(user, p, seed, out, err, errlen) != 0) return -1;
    /* Test videos that cannot be written (a full disk, a file-size limit)
     * leave the figures unmeasured, said, as a host without a GPU does. */
    if (!user && time_generated(p, seed, out, out->reason, sizeof out->reason) != 0) {
        memset(out->v, 0, sizeof out->v);
        out->nvideos = 0;
        return 0;
    }
    fit_videos(out);
    out->measured = 1;
    progress("video: decode %.3f ms per frame + %.3f ms per megapixel (%s, %d size%s%s), a "
             "keyframe %.3f ms per megapixel more; seek %.3f ms; resize to 224 x 224 RGB %.3f ms "
             "per megapixel",
             out->ms_per_frame, out->ms_per_mpx, out->v[0].codec, out->resolutions,
             out->resolutions == 1 ? "" : "s", out->resolutions == 1 ? ": through 0" : "",
             out->keyframe_ms_per_mpx, out->seek_ms, out->resize_ms_per_mpx);
    if (out->seek_raw_ms < 0)
        progress("video: the seek's median was %.3f ms after the decode subtracted: noise, "
                 "written as 0",
                 out->seek_raw_ms);
    return 0;
}

static int keys_known(void) {
    return schema_find(SCOPE_SCENARIO, "prep.video_decode_ms_per_frame") >= 0;
}

/* calibrate's benchmark: without FFmpeg the profile says why, and a
 * scenario with prep.pipeline video must give the rates itself. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    video_plan p = video_plan_for(c->quick, c->reps);
    video_result *v = res;
    if (video_bench(c->videos, &p, c->seed, v, err, errlen) != 0) return -1;
    if (!v->measured)
        fprintf(stderr,
                "calibrate: video decode not measured: %s; a scenario with prep.pipeline video "
                "must give prep.video_* itself\n",
                v->reason);
    else if (!keys_known())
        progress("video: this build's schema has no prep.video_* keys (no video pipeline "
                 "kind): the figures go under measured: video only");
    return 0;
}

/* The keys, by name; one this build's schema lacks (no video pipeline kind
 * built in) is left out of scenario:, its figure kept under measured:. */
static void video_key(profile_keys *k, int rank, const char *key, double v) {
    if (schema_find(SCOPE_SCENARIO, key) >= 0) profile_key_num(k, rank, key, v);
}

static void bench_keys(const void *res, profile_keys *k) {
    const video_result *v = res;
    if (!v->measured) return;
    video_key(k, CALIB_KEY(1150, "prep.video_decode_ms_per_frame"), v->ms_per_frame);
    video_key(k, CALIB_KEY(1151, "prep.video_decode_ms_per_mpx"), v->ms_per_mpx);
    video_key(k, CALIB_KEY(1152, "prep.video_seek_ms"), v->seek_ms);
    video_key(k, CALIB_KEY(1153, "prep.video_transform_ms_per_mpx"), v->resize_ms_per_mpx);
    video_key(k, CALIB_KEY(1154, "prep.video_keyframe_ms_per_mpx"), v->keyframe_ms_per_mpx);
    video_key(k, CALIB_KEY(1155, "prep.video_decode_delay"), v->decode_delay);
}

static void video_row(prof_t *o, const video_one *x) {
    FILE *f = o->f;
    fprintf(f, "      - {name: ");
    prof_quoted(f, x->name);
    fprintf(f, ", codec: ");
    prof_quoted(f, x->codec);
    fprintf(f, ", width: %d, height: %d, frames: %d, gop: %d, ", x->w, x->h, x->frames, x->gop);
    fprintf(f, "keyframes: %d, ", x->keyframes);
    fprintf(f, "decode_ms_per_frame: %s, ", prof_n(o, x->ms_per_frame.median));
    fprintf(f, "decode_ms_per_frame_min: %s, ", prof_n(o, x->ms_per_frame.min));
    fprintf(f, "decode_ms_per_frame_max: %s, ", prof_n(o, x->ms_per_frame.max));
    fprintf(f, "keyframe_decode_ms: %s, ", prof_n(o, x->key_ms_per_frame.median));
    fprintf(f, "keyframe_decode_ms_min: %s, ", prof_n(o, x->key_ms_per_frame.min));
    fprintf(f, "keyframe_decode_ms_max: %s, ", prof_n(o, x->key_ms_per_frame.max));
    fprintf(f, "keyframe_extra_ms: %s, ", prof_n(o, x->keyframe_extra_ms));
    fprintf(f, "resize_ms_per_frame: %s, ", prof_n(o, x->resize_ms_per_frame.median));
    fprintf(f, "seek_ms: %s, ", prof_n(o, x->seek_ms.median));
    fprintf(f, "seek_ms_min: %s, ", prof_n(o, x->seek_ms.min));
    fprintf(f, "seek_ms_max: %s, ", prof_n(o, x->seek_ms.max));
    fprintf(f, "frames_decoded_per_seek: %s, ", prof_n(o, x->decoded_per_seek));
    fprintf(f, "keyframes_decoded_per_seek: %s, ", prof_n(o, x->keyframes_per_seek));
    fprintf(f, "frames_out_per_seek: %s}\n", prof_n(o, x->out_per_seek));
}

static void bench_measured(const void *res, prof_t *o) {
    const video_result *v = res;
    FILE *f = o->f;
    prof_bool(o, 4, "measured", v->measured);
    if (!v->measured) {
        prof_str(o, 4, "reason", v->reason);
        return;
    }
    prof_str(o, 4, "operation",
             "FFmpeg demux + decode on one core (decoder threads 1), each keyframe's timed apart "
             "(decode_ms_per_frame: the other frames'), libswscale bilinear resize to 224 x 224 "
             "RGB24; seek: av_seek_frame to the keyframe before a random frame, "
             "avcodec_flush_buffers, demux + decode until it is out, less the keyframes and the "
             "other frames decoded x the video's ms for each");
    prof_str(o, 4, "videos_source", v->source);
    prof_int(o, 4, "repetitions", v->reps);
    prof_int(o, 4, "seeks_per_video", v->seeks);
    fprintf(f, "    videos:\n");
    for (int i = 0; i < v->nvideos; i++)
        video_row(o, &v->v[i]);
    fprintf(f, "    fit: {ms_per_frame: %s, ", prof_n(o, v->fit.intercept));
    fprintf(f, "ms_per_mpx: %s, ", prof_n(o, v->fit.slope));
    fprintf(f, "r2: %s, n: %d}\n", prof_n(o, v->fit.r2), v->fit.n);
    prof_str(o, 4, "model",
             v->resolutions >= 2 ? cost_method_words(v->method)
                                 : "one frame size: ms per megapixel through 0");
    prof_num(o, 4, "decode_ms_per_frame", v->ms_per_frame);
    prof_num(o, 4, "decode_ms_per_mpx", v->ms_per_mpx);
    prof_num(o, 4, "seek_ms", v->seek_ms);
    prof_num(o, 4, "seek_ms_before_held_at_0", v->seek_raw_ms);
    prof_num(o, 4, "transform_ms_per_mpx", v->resize_ms_per_mpx);
    prof_num(o, 4, "keyframe_ms_per_mpx", v->keyframe_ms_per_mpx);
    prof_int(o, 4, "decode_delay", v->decode_delay);
    prof_bool(o, 4, "keys_in_scenario", keys_known());
    if (!keys_known())
        prof_str(o, 4, "keys_note",
                 "this build has no prep.video_* keys (no video pipeline kind): the figures are "
                 "here only");
}

static void bench_judge(const void *res, stability_t *st) {
    const video_result *v = res;
    if (v->measured && v->nvideos)
        stability_figure(st, "video decode ms per frame", v->v[v->nvideos - 1].ms_per_frame);
}

const calib_bench_t bench_video = {
    .section = "video",
    .size = sizeof(video_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .judge = bench_judge,
};
