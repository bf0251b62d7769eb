/* video_time: video_av_time (video_av.h): one video's decode, resize and
 * seek, timed on one core with libavformat, libavcodec and libswscale; each
 * keyframe's decode timed apart from the other frames' (an H.264 keyframe
 * costs some 25 times another frame: a mean over all would hide it in
 * every frame). Built only with FFmpeg. */
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "video_av.h"

enum { VT_MAX_FRAMES = 1024, VT_MAX_REPS = 64, VT_MAX_SEEKS = 64, VT_SIDE = 224 };

typedef struct {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    struct SwsContext *sws;
    uint8_t *rgb;
    int si;
    int64_t pts[VT_MAX_FRAMES]; /* the packets' presentation times, sorted */
    int n;                      /* packets (frames) decoded per pass */
} vfile;

static void vfile_close(vfile *v) {
    av_packet_free(&v->pkt);
    av_frame_free(&v->frame);
    avcodec_free_context(&v->dec);
    avformat_close_input(&v->fmt);
    sws_freeContext(v->sws);
    av_free(v->rgb);
}

/* The file, its best video stream and a single-threaded decoder for it. */
static int vfile_open(const char *path, vfile *v, char *err, size_t errlen) {
    const AVCodec *codec = NULL;
    const char *what = "cannot open";
    int rc = avformat_open_input(&v->fmt, path, NULL, NULL);
    if (rc >= 0) rc = avformat_find_stream_info(v->fmt, NULL), what = "no stream information";
    if (rc >= 0) {
        rc = av_find_best_stream(v->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
        what = "no video stream with a decoder";
    }
    if (rc >= 0) {
        v->si = rc, what = "decoder";
        v->dec = avcodec_alloc_context3(codec);
        v->pkt = av_packet_alloc(), v->frame = av_frame_alloc();
        v->rgb = av_malloc(VT_SIDE * VT_SIDE * 3);
        rc = v->dec && v->pkt && v->frame && v->rgb ? 0 : AVERROR(ENOMEM);
    }
    if (rc >= 0) rc = avcodec_parameters_to_context(v->dec, v->fmt->streams[v->si]->codecpar);
    if (rc >= 0) {
        v->dec->pkt_timebase = v->fmt->streams[v->si]->time_base;
        v->dec->thread_count = 1; /* one core's cost: the simulator counts cores */
        rc = avcodec_open2(v->dec, codec, NULL);
    }
    if (rc < 0) {
        char e[AV_ERROR_MAX_STRING_SIZE] = "";
        av_strerror(rc, e, sizeof e);
        snprintf(err, errlen, "video: %s: %s: %s", path, what, e);
    }
    return rc < 0 ? -1 : 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The first pass, untimed (it warms the page cache and the decoder): the
 * video packets from the first keyframe, up to max; their times and the
 * distance between the first two keyframes. */
static int vfile_scan(vfile *v, int max, int *gop) {
    int started = 0, keys = 0;
    *gop = 0;
    while (v->n < max && av_read_frame(v->fmt, v->pkt) >= 0) {
        int key = v->pkt->flags & AV_PKT_FLAG_KEY;
        if (v->pkt->stream_index == v->si && (started || key) && v->pkt->pts != AV_NOPTS_VALUE) {
            started = 1;
            if (key && ++keys == 2) *gop = v->n;
            v->pts[v->n++] = v->pkt->pts;
        }
        av_packet_unref(v->pkt);
    }
    qsort(v->pts, (size_t)v->n, sizeof v->pts[0], cmp_i64);
    return v->n >= 2 ? 0 : -1;
}

/* What one decode_from did: the packets sent to the decoder, the
 * keyframes (AV_PKT_FLAG_KEY) among them and their own time (each one's
 * demux, send and drain, its resizes left out), the frames out of the
 * decoder, and the resizes. */
typedef struct {
    int sent, keys, out;
    double key_s, resize_s;
} vpass;

/* Receives every frame the decoder has ready and resizes each, timing that
 * apart. The last frame's time, in *last (AV_NOPTS_VALUE when none). */
static int drain(vfile *v, vpass *p, int64_t *last) {
    for (;;) {
        int rc = avcodec_receive_frame(v->dec, v->frame);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return 0;
        if (rc < 0) return rc;
        p->out++;
        *last = v->frame->best_effort_timestamp;
        double t0 = clock_now();
        v->sws = sws_getCachedContext(v->sws, v->frame->width, v->frame->height, v->frame->format,
                                      VT_SIDE, VT_SIDE, AV_PIX_FMT_RGB24, SWS_BILINEAR, NULL, NULL,
                                      NULL);
        if (!v->sws) return AVERROR(EINVAL);
        uint8_t *dst[1] = {v->rgb};
        int stride[1] = {VT_SIDE * 3};
        sws_scale(v->sws, (const uint8_t *const *)v->frame->data, v->frame->linesize, 0,
                  v->frame->height, dst, stride);
        p->resize_s += clock_now() - t0;
        av_frame_unref(v->frame);
    }
}

/* Demuxes one packet and, for the video stream, decodes it (a keyframe's
 * time summed apart). 1 when a packet was read, else 0. */
static int decode_one(vfile *v, vpass *p, int64_t *last, int *rc) {
    double t0 = clock_now(), r0 = p->resize_s;
    if (av_read_frame(v->fmt, v->pkt) < 0) return 0;
    if (v->pkt->stream_index == v->si) {
        int key = v->pkt->flags & AV_PKT_FLAG_KEY;
        *rc = avcodec_send_packet(v->dec, v->pkt);
        p->sent++;
        if (*rc >= 0) *rc = drain(v, p, last);
        if (key) p->keys++, p->key_s += clock_now() - t0 - (p->resize_s - r0);
    }
    av_packet_unref(v->pkt);
    return 1;
}

/* Seeks to the keyframe at or before `target`, then demuxes and decodes
 * until the frame at target is out (stop_at_target) or n packets are sent
 * (then drains), each frame resized. Returns the wall time less the
 * resizes; *p: what it decoded. */
static double decode_from(vfile *v, int64_t target, int stop_at_target, vpass *p, int *rc) {
    int64_t last = AV_NOPTS_VALUE;
    double t0 = clock_now();
    *p = (vpass){0};
    *rc = av_seek_frame(v->fmt, v->si, target, AVSEEK_FLAG_BACKWARD);
    avcodec_flush_buffers(v->dec);
    /* A seek past the frames scanned (a frame without a time) stops there. */
    int most = stop_at_target ? v->n + 16 : v->n;
    while (*rc >= 0 && p->sent < most &&
           (!stop_at_target || last == AV_NOPTS_VALUE || last < target))
        if (!decode_one(v, p, &last, rc)) break;
    if (*rc >= 0 && (!stop_at_target || last == AV_NOPTS_VALUE || last < target)) {
        *rc = avcodec_send_packet(v->dec, NULL);
        if (*rc >= 0) *rc = drain(v, p, &last);
    }
    double dt = clock_now() - t0 - p->resize_s;
    if (*rc >= 0 && p->out == 0) *rc = AVERROR_INVALIDDATA;
    return dt;
}

/* A pass's ms per frame that is not a keyframe (the pass's time less the
 * keyframes', the seek to its start and the final drain among it, as in a
 * mean over all) and per keyframe; both the mean over all where every
 * frame, or none, is a keyframe. */
static void pass_means(double dt, const vpass *p, double *other_ms, double *key_ms) {
    if (p->keys > 0 && p->keys < p->sent) {
        *key_ms = p->key_s * 1e3 / p->keys;
        *other_ms = (dt - p->key_s) * 1e3 / (p->sent - p->keys);
    } else {
        *key_ms = *other_ms = dt * 1e3 / p->sent;
    }
}

/* `reps` timed passes over the n frames (after one warm-up), then `seeks`
 * seeks to seeded random frames. */
static int time_passes(vfile *v, int reps, int seeks, unsigned long seed, video_one *o) {
    double dec[VT_MAX_REPS], key[VT_MAX_REPS], rsz[VT_MAX_REPS], sk[VT_MAX_SEEKS];
    int rc = 0;
    vpass p;
    for (int r = -1; r < reps && rc >= 0; r++) {
        double dt = decode_from(v, v->pts[0], 0, &p, &rc);
        if (r >= 0 && rc >= 0)
            pass_means(dt, &p, &dec[r], &key[r]), rsz[r] = p.resize_s * 1e3 / p.sent;
    }
    if (rc < 0) return rc;
    o->frames = v->n, o->keyframes = p.keys;
    o->ms_per_frame = stats_summarize(dec, reps);
    o->key_ms_per_frame = stats_summarize(key, reps);
    o->keyframe_extra_ms = fmax(0, o->key_ms_per_frame.median - o->ms_per_frame.median);
    o->resize_ms_per_frame = stats_summarize(rsz, reps);
    unsigned long long x = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    double total = 0, out = 0, keys = 0;
    for (int s = 0; s < seeks && rc >= 0; s++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int j = (int)((x >> 33) % (unsigned long long)v->n);
        /* resized as in the passes (same caches), not timed; every packet
         * decoded subtracted, those the decoder needs past the target
         * before it gives it out (its reorder delay: out_per_seek) too */
        double dt = decode_from(v, v->pts[j], 1, &p, &rc);
        sk[s] = dt * 1e3 - (p.sent - p.keys) * o->ms_per_frame.median -
                p.keys * o->key_ms_per_frame.median;
        total += p.sent, out += p.out, keys += p.keys;
    }
    if (rc < 0) return rc;
    o->seek_ms = stats_summarize(sk, seeks);
    o->decoded_per_seek = seeks ? total / seeks : 0;
    o->out_per_seek = seeks ? out / seeks : 0;
    o->keyframes_per_seek = seeks ? keys / seeks : 0;
    return 0;
}

int video_av_time(const char *path, int max_frames, int reps, int seeks, unsigned long seed,
                  video_one *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (max_frames < 2 || max_frames > VT_MAX_FRAMES || reps < 1 || reps > VT_MAX_REPS ||
        seeks < 1 || seeks > VT_MAX_SEEKS) {
        snprintf(err, errlen, "video: bad arguments");
        return -1;
    }
    av_log_set_level(AV_LOG_ERROR); /* not x264's statistics on calibrate's stderr */
    vfile *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errlen, "video: out of memory");
        return -1;
    }
    int rc = vfile_open(path, v, err, errlen);
    const char *base = strrchr(path, '/');
    snprintf(out->name, sizeof out->name, "%s", base ? base + 1 : path);
    if (rc == 0 && vfile_scan(v, max_frames, &out->gop) != 0) {
        snprintf(err, errlen, "video: %s: fewer than 2 frames with times after a keyframe", path);
        rc = -1;
    }
    if (rc == 0) {
        snprintf(out->codec, sizeof out->codec, "%s", v->dec->codec->name);
        out->w = v->dec->width, out->h = v->dec->height;
        int av = time_passes(v, reps, seeks, seed, out);
        if (av < 0) {
            char e[AV_ERROR_MAX_STRING_SIZE] = "";
            av_strerror(av, e, sizeof e);
            snprintf(err, errlen, "video: %s: decoding: %s", path, e);
            rc = -1;
        }
    }
    vfile_close(v);
    free(v);
    return rc;
}
