/* video_bench: the CPU cost of decoding video (calibrate's "video"
 * benchmark, bench_video, for prep.video_decode_ms_per_frame,
 * prep.video_decode_ms_per_mpx, prep.video_seek_ms,
 * prep.video_transform_ms_per_mpx and prep.video_keyframe_ms_per_mpx):
 * FFmpeg's decoder on one core
 * (video_av.h) over the user's videos (calibrate --videos DIR) or, without
 * them, over videos it encodes itself from calibrate's photographs (H.264
 * with libx264 where libavcodec has it, else MPEG-4) at two or three sizes.
 * Per video: the demux + decode ms per frame that is not a keyframe and
 * per keyframe apart, the resize of each frame to 224 x 224 RGB, and the
 * seek (to the keyframe before a random frame, the decoder flushed) with
 * the keyframes and other frames it decoded subtracted; then
 *   ms per frame = per_frame + per_mpx x megapixels
 * fitted over the videos' other frames (fit_cost_line; with one size only,
 * through 0), a keyframe's excess over another frame per megapixel their
 * mean, the seek the median of the videos' medians, the resize the videos'
 * time over their megapixels. Without FFmpeg at build time nothing is measured
 * and the result says why.
 *
 * Use: video_plan p = video_plan_for(quick, reps);
 *      video_result r; video_bench(NULL, &p, seed, &r, err, n);
 */
#ifndef STALLSIM_VIDEO_BENCH_H
#define STALLSIM_VIDEO_BENCH_H

#include <stddef.h>

#include "fit.h"
#include "video_av.h"
#include "video_files.h"

enum { VIDEO_MAX = 8, VIDEO_MAX_SIZES = 4 };

/* What is generated and how often each video is timed. */
typedef struct {
    int nsizes, w[VIDEO_MAX_SIZES], h[VIDEO_MAX_SIZES];
    int frames, gop; /* generated videos' length and keyframe interval */
    int max_frames;  /* frames timed per video (from its first keyframe) */
    int reps, seeks;
} video_plan;

typedef struct {
    int measured;
    char reason[256]; /* why not, where not measured */
    char source[320]; /* "generated ..." or the --videos folder */
    char encoder[24]; /* generated: libx264 or mpeg4 */
    int found, nvideos, resolutions, reps, seeks;
    video_one v[VIDEO_MAX];
    linear_fit fit; /* free fit of the videos' medians; r2 0 with one size */
    double ms_per_frame, ms_per_mpx;
    cost_method method;
    double seek_raw_ms, seek_ms; /* seek_ms: seek_raw_ms held >= 0 */
    double resize_ms_per_mpx;
    double keyframe_ms_per_mpx; /* the videos' mean keyframe_extra_ms over their megapixels */
    int decode_delay;           /* the median over the videos of a seek's packets past its frame */
} video_result;

/* quick: 320x180 and 640x360, 36 frames; else also 1280x720, 60 frames;
 * a keyframe every 12 frames. */
video_plan video_plan_for(int quick, int reps);

/* Times user's videos (NULL: generates p's). 0; or -1 with the reason in
 * err when none of user's videos decodes (one that does not is skipped,
 * said on stderr). Without FFmpeg, or where the generated videos cannot be
 * written or timed: 0 with out->measured 0 and the reason in out->reason. */
int video_bench(const video_files *user, const video_plan *p, unsigned long seed, video_result *out,
                char *err, size_t errlen);

#endif
