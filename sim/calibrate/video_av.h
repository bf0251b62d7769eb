/* video_av: FFmpeg (libavcodec, libavformat, libswscale) behind calibrate's
 * video benchmark (video_bench.h): writing a test video and timing one
 * video's decode, resize and seek on one core. Compiled only where
 * pkg-config finds the libraries (STALLSIM_HAVE_LIBAV); video_av_available
 * says whether this build has them, and every other call fails without.
 *
 * Use: video_av_generate("/tmp/x/a.mp4", 640, 360, 36, 12, seed, enc, ...);
 *      video_one v; video_av_time("/tmp/x/a.mp4", 36, 5, 8, seed, &v, ...);
 */
#ifndef STALLSIM_VIDEO_AV_H
#define STALLSIM_VIDEO_AV_H

#include <stddef.h>

#include "stats.h"

/* One video's figures (all times on one core, the decoder single-threaded). */
typedef struct {
    char name[96];  /* the file's name, without its folder */
    char codec[24]; /* the decoder's name, e.g. h264 */
    int w, h;       /* coded frame size, px */
    int frames;     /* decoded per pass, from the first keyframe */
    int keyframes;  /* among them */
    int gop;        /* frames between the first two keyframes; 0: only one among them */
    /* Per pass: the demux and decode time of the frames that are not
     * keyframes over them (the pass's time less the keyframes'); where
     * every frame, or none, is one, over all. */
    stat_summary ms_per_frame;
    /* Per pass: each keyframe's own demux and decode time over them (as
     * ms_per_frame where every frame, or none, is one). */
    stat_summary key_ms_per_frame;
    double keyframe_extra_ms; /* key_ms_per_frame's median beyond ms_per_frame's, >= 0 */
    /* Per pass: libswscale's resize of each decoded frame to 224 x 224
     * RGB24 (bilinear), over the frames. */
    stat_summary resize_ms_per_frame;
    /* Per seek: av_seek_frame back to the keyframe before a random frame,
     * avcodec_flush_buffers, then demux and decode up to that frame (each
     * frame resized as in the passes, the resize not timed), less the
     * keyframes decoded x this video's median key_ms_per_frame and the
     * other frames x its median ms_per_frame: the seek itself. */
    stat_summary seek_ms;
    double decoded_per_seek;   /* mean packets decoded until a seek's frame is out */
    double keyframes_per_seek; /* mean keyframes among them */
    double out_per_seek;       /* mean frames out through it (less: the reorder delay) */
} video_one;

/* 1 where this build has libavcodec, libavformat and libswscale. */
int video_av_available(void);

/* The encoder generated videos use: "libx264" where this libavcodec has it,
 * else "mpeg4"; "" without libavcodec. */
const char *video_av_encoder(void);

/* Writes `frames` frames of w x h (even) at 25 fps, a keyframe every `gop`
 * frames and no other, to path (its extension names the container): a
 * window panning across a mosaic of calibrate's generated photographs
 * (jpeg_gen) at their own resolution, so the detail per pixel is a
 * photograph's at every size. 0, or -1 with the reason in err. */
int video_av_generate(const char *path, int w, int h, int frames, int gop, unsigned long seed,
                      char *err, size_t errlen);

/* Times path: up to max_frames frames from its first keyframe decoded
 * `reps` times after a warm-up pass, then `seeks` seeks to random frames
 * among them (seeded). 0, or -1 with the reason in err (the file cannot be
 * opened, has no video stream or no decoder). */
int video_av_time(const char *path, int max_frames, int reps, int seeks, unsigned long seed,
                  video_one *out, char *err, size_t errlen);

#endif
