/* pipeline_video: an item is a clip of prep.video_frames frames, every
 * prep.video_stride-th frame of a video encoded with a keyframe every
 * prep.video_gop frames, decoded at prep.video_width x prep.video_height.
 *
 * A decoder starts from a keyframe: under prep.video_access random a clip
 * seeks (prep.video_seek_ms: the demuxer's seek and the decoder's flush)
 * to the keyframe at or before its first frame and decodes the frames from
 * there, throwing away those before the first; under sequential the clips
 * are read in order through each video, with no seek and nothing thrown
 * away. A clip decodes span = (F - 1) x stride + 1 frames past that and,
 * under random access, the decoder's delay (prep.video_decode_delay: the
 * packets it takes in past a frame before giving it out) more.
 * Item x's first frame sits x mod gop frames past its keyframe (every frame
 * of a video starts an item, as lerobot's datasets index them), so the
 * frames thrown away average (gop - 1) / 2 over a data set of whole GOPs.
 *
 * prep.video_decode cpu: a core decodes each frame in
 * video_decode_ms_per_frame + video_decode_ms_per_mpx x megapixels, each
 * keyframe among them video_keyframe_ms_per_mpx x megapixels more (an
 * H.264 keyframe of 640 x 360 decodes in ~5.8 ms, another frame in ~0.23:
 * a clip crossing into the next GOP pays a second one), and transforms each
 * kept frame in video_transform_ms_per_mpx x megapixels.
 * gpu: the GPU's hardware video decoders (NVDEC, engines per GPU from the
 * GPU table, gpu_nvdec_engines, or prep.nvdec_engines) decode it, one clip
 * on one engine for prep.nvdec_session_ms plus each frame's megapixels over
 * prep.nvdec_fps (frames a second at 1 megapixel), their scaler resizing
 * it; a core only demuxes (prep.video_demux_ms_per_frame) and seeks. The
 * engines are a server of their own (pipeline_kind.h: engines, engine_s).
 *
 * A clip hands over video_frames x height x width x 3 values of
 * loader.batch_dtype (out_bytes); under gpu decode its frames stay on the
 * GPU (gpu_item_bytes) and the host hands over its packets (its bytes read). */
#include <math.h>

#include "gpu_rates.h"
#include "pipeline_kind.h"

extern const pipeline_ops_t pipeline_video;

typedef enum { ACCESS_RANDOM, ACCESS_SEQUENTIAL } access_t;
typedef enum { DTYPE_FLOAT32, DTYPE_UINT8 } dtype_t;

/* This pipeline's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    int64_t frames, stride, width, height, gop;
    int64_t decode_delay;                          /* packets in before a frame comes out */
    int64_t out_width, out_height;                 /* 0: the decoded frames' */
    int access;                                    /* access_t */
    double decode_ms_per_frame, decode_ms_per_mpx; /* 0 and 0 = not given */
    double seek_ms, transform_ms_per_mpx, keyframe_ms_per_mpx;
    int decode;                /* decode_place_t */
    double demux_ms_per_frame; /* decode gpu: the CPU's part a frame */
    double nvdec_fps;          /* decode gpu: frames/s of one engine at 1 MP; 0 = not given */
    double nvdec_session_ms;   /* decode gpu: an engine's start per clip */
    int64_t nvdec_engines;     /* 0 = the GPU table's count for jobs.N.gpu */
    int batch_dtype;           /* dtype_t: loader.batch_dtype */
} video_opts_t;
SCN_KIND_OPTS_FITS(video_opts_t);

static const video_opts_t *vo(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_PIPELINE, pipeline_kind_index(&pipeline_video));
}

static double mpx(const video_opts_t *o) {
    return (double)o->width * (double)o->height / 1e6;
}

static double span(const video_opts_t *o) {
    return (double)(o->frames - 1) * (double)o->stride + 1;
}

/* Frames a clip decodes from its first on: under random access the
 * decoder takes prep.video_decode_delay packets past its last frame
 * before it gives that frame out (H.264's B-frames reordered: 2 with
 * libx264's defaults, measured by the probe and calibrate), and decodes
 * them; read in order those are the next clip's. */
static double tail(const video_opts_t *o) {
    return span(o) + (o->access == ACCESS_RANDOM ? (double)o->decode_delay : 0);
}

/* Frames item x decodes and throws away before its first. */
static double lead_in(const video_opts_t *o, uint32_t x) {
    return o->access == ACCESS_RANDOM ? (double)(x % (uint64_t)o->gop) : 0;
}

/* Their mean over the data set's n items: x mod gop summed exactly. */
static double lead_in_mean(const scenario_t *s) {
    const video_opts_t *o = vo(s);
    const double n = (double)s->dataset.items, g = (double)o->gop;
    if (o->access != ACCESS_RANDOM || !(n > 0)) return 0;
    const double q = floor(n / g), r = n - q * g;
    return (q * g * (g - 1) / 2 + r * (r - 1) / 2) / n;
}

/* Keyframes item x decodes: under random access the seek lands on one and
 * every gop-th frame after it is another, so the lead_in + tail frames from
 * it hold 1 + floor((lead_in + tail - 1) / gop); read in order, a clip's
 * share of a keyframe every gop frames. */
static double keyframes(const video_opts_t *o, uint32_t x) {
    if (o->access != ACCESS_RANDOM) return span(o) / (double)o->gop;
    return 1 + floor((lead_in(o, x) + tail(o) - 1) / (double)o->gop);
}

/* Sum over r = 0 .. m - 1 (m <= g) of floor((r + c) / g), c = a g + b with
 * 0 <= b < g: a for each r, and 1 more for each r >= g - b. */
static double floor_sum(double m, double a, double b, double g) {
    return m * a + fmax(0, m - (g - b));
}

/* Their mean over the data set's n items, summed over x mod gop exactly. */
static double keyframes_mean(const scenario_t *s) {
    const video_opts_t *o = vo(s);
    const double n = (double)s->dataset.items, g = (double)o->gop;
    if (o->access != ACCESS_RANDOM || !(n > 0)) return keyframes(o, 0);
    const double q = floor(n / g), r = n - q * g, c = tail(o) - 1;
    const double a = floor(c / g), b = c - a * g;
    return 1 + (q * floor_sum(g, a, b, g) + floor_sum(r, a, b, g)) / n;
}

/* CPU ms of a frame decoded (or, on the GPU path, demuxed). */
static double frame_ms(const video_opts_t *o) {
    return o->decode == DECODE_GPU ? o->demux_ms_per_frame
                                   : o->decode_ms_per_frame + o->decode_ms_per_mpx * mpx(o);
}

/* CPU ms of a keyframe decoded beyond another frame (the engines' time
 * under decode gpu is per megapixel whatever the frame). */
static double keyframe_ms(const video_opts_t *o) {
    return o->decode == DECODE_GPU ? 0 : o->keyframe_ms_per_mpx * mpx(o);
}

static double video_cpu_ms(const scenario_t *s, double bytes) {
    (void)bytes; /* a clip's cost is its frames', whatever its encoded size */
    const video_opts_t *o = vo(s);
    const double seek = o->access == ACCESS_RANDOM ? o->seek_ms : 0;
    const double keep = o->decode == DECODE_GPU ? 0 : (double)o->frames * mpx(o);
    return seek + (lead_in_mean(s) + tail(o)) * frame_ms(o) + keyframes_mean(s) * keyframe_ms(o) +
           keep * o->transform_ms_per_mpx;
}

static double video_dev_ms(const scenario_t *s, uint32_t x) {
    const video_opts_t *o = vo(s);
    return (lead_in(o, x) - lead_in_mean(s)) * frame_ms(o) +
           (keyframes(o, x) - keyframes_mean(s)) * keyframe_ms(o);
}

static int video_engines(const scenario_t *s, const job_t *j) {
    const video_opts_t *o = vo(s);
    if (o->decode != DECODE_GPU) return 0;
    if (o->nvdec_engines > 0) return (int)o->nvdec_engines;
    const int n = gpu_nvdec_engines(j->gpu);
    return n > 0 ? n : -1;
}

static double engine_s_at(const video_opts_t *o, double lead) {
    return o->nvdec_session_ms / 1e3 + (lead + tail(o)) * mpx(o) / o->nvdec_fps;
}

static double video_engine_s(const scenario_t *s, uint32_t x) {
    return engine_s_at(vo(s), lead_in(vo(s), x));
}

static double video_engine_mean_s(const scenario_t *s) {
    return engine_s_at(vo(s), lead_in_mean(s));
}

/* Bytes of a clip's frames as decoded and resized, by loader.batch_dtype. */
static double frames_bytes(const scenario_t *s) {
    const video_opts_t *o = vo(s);
    const double size = o->batch_dtype == DTYPE_UINT8 ? 1 : 4;
    const double w = (double)(o->out_width > 0 ? o->out_width : o->width);
    const double h = (double)(o->out_height > 0 ? o->out_height : o->height);
    return (double)o->frames * h * w * 3 * size;
}

/* What a clip hands over on the host: its frames, or under decode gpu its
 * packets as read (the frames are made on the GPU and stay there). */
static double video_out_bytes(const scenario_t *s) {
    return vo(s)->decode == DECODE_GPU ? s->dataset.item_kb * 1e3 : frames_bytes(s);
}

static double video_gpu_item_bytes(const scenario_t *s) {
    return vo(s)->decode == DECODE_GPU ? frames_bytes(s) : 0;
}

static const char *video_missing(const scenario_t *s, const char **what) {
    const video_opts_t *o = vo(s);
    if (o->decode == DECODE_GPU) {
        *what = "frames a second one hardware decoder engine decodes at 1 megapixel";
        return o->nvdec_fps > 0 ? NULL : "prep.nvdec_fps";
    }
    *what = "CPU ms to decode one frame (with prep.video_decode_ms_per_frame)";
    return o->decode_ms_per_mpx > 0 || o->decode_ms_per_frame > 0 ? NULL
                                                                  : "prep.video_decode_ms_per_mpx";
}

static const char *access_name(int i) {
    static const char *const names[] = {"random", "sequential"};
    return i >= 0 && i < 2 ? names[i] : NULL;
}

static const char *dtype_name(int i) {
    static const char *const names[] = {"float32", "uint8"};
    return i >= 0 && i < 2 ? names[i] : NULL;
}

static const char *place_name(int i) {
    static const char *const names[] = {"cpu", "gpu"};
    return i >= 0 && i < DECODE__COUNT ? names[i] : NULL;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"prep.video_frames", KT_INT, "frames", "8", 1, 100000, 0, NULL, KIND_FIELD(video_opts_t, frames), "video: frames of one clip (an item), F"},
    {"prep.video_stride", KT_INT, "frames", "1", 1, 100000, 0, NULL, KIND_FIELD(video_opts_t, stride), "video: frames from one of a clip's frames to the next (every one decoded: a clip decodes (F - 1) x stride + 1 frames)"},
    {"prep.video_width", KT_INT, "px", "640", 1, 65536, 0, NULL, KIND_FIELD(video_opts_t, width), "video: width of the decoded frames"},
    {"prep.video_height", KT_INT, "px", "480", 1, 65536, 0, NULL, KIND_FIELD(video_opts_t, height), "video: height of the decoded frames"},
    {"prep.video_out_width", KT_INT, "px", "0", 0, 65536, 0, NULL, KIND_FIELD(video_opts_t, out_width), "video: width of the frames an item hands over, after its resize (0 = the decoded width): the hand-over bytes (loader.batch_dtype)"},
    {"prep.video_out_height", KT_INT, "px", "0", 0, 65536, 0, NULL, KIND_FIELD(video_opts_t, out_height), "video: height of the frames an item hands over, after its resize (0 = the decoded height)"},
    {"prep.video_gop", KT_INT, "frames", "250", 1, 1000000, 0, NULL, KIND_FIELD(video_opts_t, gop), "video: frames from one keyframe to the next (the encoder's keyint, -g: libx264's default 250; lerobot encodes with 2)"},
    {"prep.video_access", KT_ENUM, "", "random", 0, 0, 0, access_name, KIND_FIELD(video_opts_t, access), "video: random (each clip seeks to the keyframe at or before its first frame, prep.video_seek_ms, and decodes from there: item x's first frame is x mod video_gop frames past it, (gop - 1) / 2 thrown away on average) or sequential (clips read in order through each video: no seek, nothing thrown away)"},
    {"prep.video_decode_ms_per_frame", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(video_opts_t, decode_ms_per_frame), "video, decode cpu: CPU time to decode one frame, its fixed part (one core); calibrate measures it"},
    {"prep.video_decode_ms_per_mpx", KT_REAL, "ms/MP", "0", 0, 1e9, 0, NULL, KIND_FIELD(video_opts_t, decode_ms_per_mpx), "video, decode cpu: CPU time to decode one frame per megapixel (one core): a frame costs video_decode_ms_per_frame + this x width x height / 1e6 (a keyframe prep.video_keyframe_ms_per_mpx more); calibrate measures it (0 with video_decode_ms_per_frame 0 = not given: the job is refused)"},
    {"prep.video_seek_ms", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(video_opts_t, seek_ms), "video, access random: CPU time of one seek (the demuxer's seek and the decoder's flush), once a clip; calibrate measures it (0 = free)"},
    {"prep.video_transform_ms_per_mpx", KT_REAL, "ms/MP", "0", 0, 1e9, 0, NULL, KIND_FIELD(video_opts_t, transform_ms_per_mpx), "video, decode cpu: CPU time per megapixel of each of a clip's F kept frames to resize and augment it (one core; 0 = none); under decode gpu the decoder's scaler does it"},
    {"prep.video_keyframe_ms_per_mpx", KT_REAL, "ms/MP", "0", 0, 1e9, 0, NULL, KIND_FIELD(video_opts_t, keyframe_ms_per_mpx), "video, decode cpu: CPU time per megapixel to decode a keyframe beyond another frame (one core): a clip decodes the keyframe its seek lands on and every gop-th frame after, 1 + floor((lead-in + span - 1) / video_gop) of them under random access, span / video_gop read in order; calibrate measures it (0 = a keyframe costs what another frame does)"},
    {"prep.video_decode_delay", KT_INT, "frames", "0", 0, 1000, 0, NULL, KIND_FIELD(video_opts_t, decode_delay), "video, access random: packets the decoder takes in past a frame before it gives that frame out (reordered B-frames: 2 for libx264's defaults, 0 without B-frames), decoded by each clip past its last frame and counted in its keyframes; the probe and calibrate measure it at their seeks (0 = none)"},
    {"prep.video_decode", KT_ENUM, "", "cpu", 0, 0, 0, place_name, KIND_FIELD(video_opts_t, decode), "video: cpu (a core decodes every frame) or gpu (the GPU's hardware video decoder engines, NVDEC: one clip on one engine, the engines of each rank's GPU a server of their own; the frames stay on the GPU; a core only demuxes, prep.video_demux_ms_per_frame, and seeks)"},
    {"prep.video_demux_ms_per_frame", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(video_opts_t, demux_ms_per_frame), "video, decode gpu: CPU time to demux one frame's packet for the hardware decoder (one core; 0 = free)"},
    {"prep.nvdec_fps", KT_REAL, "frames/s", "0", 0, 1e9, 0, NULL, KIND_FIELD(video_opts_t, nvdec_fps), "video, decode gpu: frames a second one hardware decoder engine decodes at 1 megapixel, scaled by the frames' megapixels (0 = not given: the job is refused; NVIDIA publishes it per codec and GPU in its NVDEC application note)"},
    {"prep.nvdec_session_ms", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(video_opts_t, nvdec_session_ms), "video, decode gpu: an engine's time to start one clip's decode session (0 = free)"},
    {"prep.nvdec_engines", KT_INT, "engines", "0", 0, 64, 0, NULL, KIND_FIELD(video_opts_t, nvdec_engines), "video, decode gpu: hardware decoder engines of each GPU (0 = the GPU table's published count for jobs.N.gpu: v100 1, a100 5, h100 and h200 7)"},
    {"loader.batch_dtype", KT_ENUM, "", "float32", 0, 0, 0, dtype_name, KIND_FIELD(video_opts_t, batch_dtype), "video: the dtype of the frames an item hands to the training process: float32 (4 bytes a value, ToTensor's) or uint8 (1 byte: the frames as decoded, normalised on the GPU; lerobot's uint8 transport): an item is video_frames x video_out_height x video_out_width x 3 values (the decoded size where those are 0), in /dev/shm, the staged batches, the GPU's memory and the hand-over's CPU (the pytorch loader's copy_ms_per_mb and receive_ms_per_mb; under decode gpu the frames stay on the GPU and the host hands over the clip's packets, dataset.item_kb); an image or audio pipeline hands over prep.out_kb (set that instead)"},
};
/* clang-format on */

const pipeline_ops_t pipeline_video = {
    .name = "video",
    .help = "clips of frames decoded from their keyframe on a core or the GPU's decoder engines: "
            "prep.video_*, prep.nvdec_*",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .cpu_ms = video_cpu_ms,
    .missing = video_missing,
    .item_dev_ms = video_dev_ms,
    .engines = video_engines,
    .engine_s = video_engine_s,
    .engine_mean_s = video_engine_mean_s,
    .out_bytes = video_out_bytes,
    .gpu_item_bytes = video_gpu_item_bytes,
};
