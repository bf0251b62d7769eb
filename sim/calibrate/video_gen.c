/* video_gen: video_av_generate and video_av_encoder (video_av.h), with
 * libavcodec's encoder and libavformat's muxer. Built only with FFmpeg. */
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jpeg_gen.h"
#include "video_av.h"

int video_av_available(void) {
    return 1;
}

const char *video_av_encoder(void) {
    return avcodec_find_encoder_by_name("libx264") ? "libx264" : "mpeg4";
}

static void av_reason(char *err, size_t errlen, const char *what, int rc) {
    char e[AV_ERROR_MAX_STRING_SIZE] = "";
    av_strerror(rc, e, sizeof e);
    snprintf(err, errlen, "video: %s: %s", what, e);
}

/* A canvas a quarter larger than the frame each way, tiled with generated
 * photographs at their own size, for the frames to pan across. */
typedef struct {
    unsigned char *rgb;
    int w, h;
} canvas;

static int canvas_fill(canvas *c, int w, int h, unsigned long seed) {
    c->w = w + w / 4 + 2, c->h = h + h / 4 + 2;
    c->rgb = calloc((size_t)c->w * (size_t)c->h, 3);
    if (!c->rgb) return -1;
    int idx = 0;
    for (int y0 = 0; y0 < c->h;) {
        int row_h = 0;
        for (int x0 = 0; x0 < c->w;) {
            unsigned char *px;
            int pw, ph;
            if (jpeg_gen_pixels(seed, idx++, &px, &pw, &ph) != 0) return -1;
            int cw = pw < c->w - x0 ? pw : c->w - x0, ch = ph < c->h - y0 ? ph : c->h - y0;
            for (int y = 0; y < ch; y++)
                memcpy(c->rgb + ((size_t)(y0 + y) * c->w + x0) * 3, px + (size_t)y * pw * 3,
                       (size_t)cw * 3);
            free(px);
            x0 += pw, row_h = ph > row_h ? ph : row_h;
        }
        y0 += row_h;
    }
    return 0;
}

/* Sends f (NULL: the end) and writes every packet the encoder gives back. */
static int write_packets(AVFormatContext *fmt, AVCodecContext *enc, AVStream *st, AVFrame *f) {
    int rc = avcodec_send_frame(enc, f);
    AVPacket *p = av_packet_alloc();
    if (!p) return AVERROR(ENOMEM);
    while (rc >= 0) {
        rc = avcodec_receive_packet(enc, p);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) {
            rc = 0;
            break;
        }
        if (rc < 0) break;
        av_packet_rescale_ts(p, enc->time_base, st->time_base);
        p->stream_index = st->index;
        rc = av_interleaved_write_frame(fmt, p);
    }
    av_packet_free(&p);
    return rc;
}

/* The encoder: a keyframe every gop frames exactly (no scene-cut ones), a
 * photograph's quality (x264 CRF 23 at its veryfast preset; MPEG-4 q 4). */
static AVCodecContext *open_encoder(AVFormatContext *fmt, int w, int h, int gop, int *rc) {
    const AVCodec *codec = avcodec_find_encoder_by_name(video_av_encoder());
    AVCodecContext *enc = codec ? avcodec_alloc_context3(codec) : NULL;
    if (!enc) {
        *rc = AVERROR_ENCODER_NOT_FOUND;
        return NULL;
    }
    enc->width = w, enc->height = h, enc->pix_fmt = AV_PIX_FMT_YUV420P;
    enc->time_base = (AVRational){1, 25}, enc->framerate = (AVRational){25, 1};
    enc->gop_size = gop, enc->keyint_min = gop;
    if (strcmp(codec->name, "libx264") == 0) {
        av_opt_set(enc->priv_data, "preset", "veryfast", 0);
        av_opt_set(enc->priv_data, "crf", "23", 0);
        av_opt_set(enc->priv_data, "x264-params", "scenecut=0", 0);
    } else {
        enc->flags |= AV_CODEC_FLAG_QSCALE;
        enc->global_quality = FF_QP2LAMBDA * 4;
    }
    if (fmt->oformat->flags & AVFMT_GLOBALHEADER) enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    *rc = avcodec_open2(enc, codec, NULL);
    if (*rc < 0) avcodec_free_context(&enc);
    return enc;
}

/* Frame i: the window at (i/frames) of the way across the canvas. */
static int encode_all(AVFormatContext *fmt, AVCodecContext *enc, AVStream *st, const canvas *c,
                      int frames) {
    AVFrame *f = av_frame_alloc();
    struct SwsContext *sws =
        sws_getContext(enc->width, enc->height, AV_PIX_FMT_RGB24, enc->width, enc->height,
                       AV_PIX_FMT_YUV420P, SWS_BILINEAR, NULL, NULL, NULL);
    int rc = f && sws ? 0 : AVERROR(ENOMEM);
    if (rc == 0) {
        f->format = enc->pix_fmt, f->width = enc->width, f->height = enc->height;
        rc = av_frame_get_buffer(f, 0);
    }
    for (int i = 0; i < frames && rc >= 0; i++) {
        rc = av_frame_make_writable(f);
        int x = (c->w - enc->width) * i / frames, y = (c->h - enc->height) * i / frames;
        const uint8_t *src[1] = {c->rgb + ((size_t)y * c->w + x) * 3};
        const int stride[1] = {c->w * 3};
        if (rc >= 0) sws_scale(sws, src, stride, 0, enc->height, f->data, f->linesize);
        f->pts = i;
        f->pict_type = i % enc->gop_size == 0 ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
        if (rc >= 0) rc = write_packets(fmt, enc, st, f);
    }
    if (rc >= 0) rc = write_packets(fmt, enc, st, NULL);
    sws_freeContext(sws);
    av_frame_free(&f);
    return rc;
}

int video_av_generate(const char *path, int w, int h, int frames, int gop, unsigned long seed,
                      char *err, size_t errlen) {
    if (w < 16 || h < 16 || w % 2 || h % 2 || frames < 2 || gop < 1) {
        snprintf(err, errlen, "video: bad size %d x %d, %d frames, gop %d", w, h, frames, gop);
        return -1;
    }
    av_log_set_level(AV_LOG_ERROR); /* not x264's statistics on calibrate's stderr */
    canvas c = {0};
    AVFormatContext *fmt = NULL;
    AVCodecContext *enc = NULL;
    int rc = avformat_alloc_output_context2(&fmt, NULL, NULL, path);
    const char *what = "choosing the container";
    if (rc >= 0 && canvas_fill(&c, w, h, seed) != 0) rc = AVERROR(ENOMEM), what = "photographs";
    if (rc >= 0) enc = open_encoder(fmt, w, h, gop, &rc), what = video_av_encoder();
    AVStream *st = rc >= 0 ? avformat_new_stream(fmt, NULL) : NULL;
    if (rc >= 0 && !st) rc = AVERROR(ENOMEM);
    if (rc >= 0) {
        st->time_base = enc->time_base;
        rc = avcodec_parameters_from_context(st->codecpar, enc);
    }
    if (rc >= 0) rc = avio_open(&fmt->pb, path, AVIO_FLAG_WRITE), what = path;
    if (rc >= 0) rc = avformat_write_header(fmt, NULL), what = "writing the header";
    if (rc >= 0) rc = encode_all(fmt, enc, st, &c, frames), what = "encoding";
    if (rc >= 0) rc = av_write_trailer(fmt), what = "writing the trailer";
    if (rc < 0) av_reason(err, errlen, what, rc);
    if (fmt && fmt->pb) avio_closep(&fmt->pb);
    avcodec_free_context(&enc);
    avformat_free_context(fmt);
    free(c.rgb);
    return rc < 0 ? -1 : 0;
}
