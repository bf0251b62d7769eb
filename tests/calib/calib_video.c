/* calib_video: calibrate's video benchmark (video_bench.h) on tiny videos
 * it encodes itself: every figure positive (the seek >= 0) and finite, a
 * frame of 9x the pixels costs more to decode, the fit follows the videos;
 * the user's videos (--videos) with a file that does not decode skipped and
 * one size fitted through 0; the folder scan; test videos that cannot be
 * written leave it unmeasured with the reason; and the profile's keys, in
 * scenario: exactly where this build's schema has them. Skips (77) where
 * stallsim was built without FFmpeg. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "fileset.h"
#include "profile.h"
#include "schema.h"
#include "video_bench.h"

extern const calib_bench_t bench_video;

static char dir[256];

static video_plan tiny_plan(void) {
    video_plan p = {.nsizes = 2,
                    .w = {160, 480},
                    .h = {90, 270},
                    .frames = 24,
                    .gop = 12,
                    .max_frames = 24,
                    .reps = 3,
                    .seeks = 6};
    return p;
}

static int ok_num(double x, double lo) {
    return isfinite(x) && x >= lo;
}

/* Equal but for rounding (cmocka's assert_float_equal compares floats). */
static int close_to(double a, double b) {
    return fabs(a - b) <= 1e-9 * fabs(b) + 1e-12;
}

static void check_one(const video_one *v, int frames) {
    assert_true(v->codec[0] != '\0');
    assert_int_equal(v->frames, frames);
    assert_true(ok_num(v->ms_per_frame.min, 1e-6));
    assert_true(v->ms_per_frame.min <= v->ms_per_frame.median);
    assert_true(v->ms_per_frame.median <= v->ms_per_frame.max);
    assert_true(ok_num(v->resize_ms_per_frame.median, 1e-6));
    assert_true(isfinite(v->seek_ms.median));
    /* A seek decodes from the keyframe before its frame, up to it: one
     * frame at least, at most the keyframe interval plus the reorder. */
    assert_true(v->decoded_per_seek >= 1 && v->decoded_per_seek <= 12 + 4);
    /* The keyframe the seek lands on, and the next where the decoder's
     * reorder delay reaches it; the frames out through the target, from
     * that keyframe, within its GOP; the packets decoded as many or more. */
    assert_true(v->keyframes_per_seek >= 1 && v->keyframes_per_seek <= 2);
    assert_true(v->out_per_seek >= 1 && v->out_per_seek <= v->gop);
    assert_true(v->decoded_per_seek >= v->out_per_seek);
    /* A pass from the first keyframe holds one every gop frames. */
    assert_int_equal(v->keyframes, (frames + v->gop - 1) / v->gop);
    assert_true(ok_num(v->key_ms_per_frame.min, 1e-6));
    assert_true(v->key_ms_per_frame.min <= v->key_ms_per_frame.median);
    assert_true(v->key_ms_per_frame.median <= v->key_ms_per_frame.max);
    assert_true(close_to(v->keyframe_extra_ms,
                         fmax(0, v->key_ms_per_frame.median - v->ms_per_frame.median)));
}

/* The keyframe's excess per megapixel: the videos' mean. */
static void check_keyframe_fit(const video_result *r) {
    double sum = 0;
    for (int i = 0; i < r->nvideos; i++)
        sum += r->v[i].keyframe_extra_ms / (r->v[i].w * (double)r->v[i].h / 1e6);
    assert_true(close_to(r->keyframe_ms_per_mpx, sum / r->nvideos));
    /* the decoder's delay: the packets a seek took past its frame, never
     * fewer than 0, the videos' median (one or two here) to a whole packet */
    double held[2] = {0, 0};
    for (int i = 0; i < r->nvideos && i < 2; i++) {
        held[i] = r->v[i].decoded_per_seek - r->v[i].out_per_seek;
        assert_true(held[i] > -1e-9);
    }
    const double mid = r->nvideos == 1 ? held[0] : (held[0] + held[1]) / 2;
    assert_int_equal(r->decode_delay, (int)lround(mid));
}

static void test_generated(void **state) {
    (void)state;
    video_plan p = tiny_plan();
    static video_result r;
    char err[512] = "";
    assert_int_equal(video_bench(NULL, &p, 3, &r, err, sizeof err), 0);
    assert_true(r.measured);
    assert_int_equal(r.nvideos, 2);
    assert_int_equal(r.resolutions, 2);
    for (int i = 0; i < 2; i++) {
        check_one(&r.v[i], 24);
        assert_int_equal(r.v[i].w, p.w[i]);
        assert_int_equal(r.v[i].h, p.h[i]);
        assert_int_equal(r.v[i].gop, 12);
    }
    assert_true(r.v[1].ms_per_frame.median > r.v[0].ms_per_frame.median);
    /* An intra-coded frame of 480 x 270 decodes far slower than one
     * predicted from it (H.264 ~25x, MPEG-4 ~8x at 640 x 360 here). */
    assert_true(r.v[1].key_ms_per_frame.median > 2 * r.v[1].ms_per_frame.median);
    check_keyframe_fit(&r);
    assert_true(ok_num(r.ms_per_mpx, 1e-6));
    assert_true(ok_num(r.ms_per_frame, 0));
    assert_true(ok_num(r.seek_ms, 0));
    assert_true(ok_num(r.resize_ms_per_mpx, 1e-6));
    /* Two points: the cost line passes through both (when the free fit is
     * the model). */
    if (r.method == COST_FIT)
        for (int i = 0; i < 2; i++) {
            double mpx = r.v[i].w * (double)r.v[i].h / 1e6;
            assert_true(close_to(r.ms_per_frame + r.ms_per_mpx * mpx, r.v[i].ms_per_frame.median));
        }
}

static void test_user_videos(void **state) {
    (void)state;
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/a_clip.mp4", dir);
    assert_int_equal(video_av_generate(path, 192, 108, 24, 8, 5, err, sizeof err), 0);
    snprintf(path, sizeof path, "%s/b_broken.mkv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a video", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    video_files vf;
    assert_int_equal(video_files_scan(dir, 8, &vf, err, sizeof err), 0);
    assert_int_equal(vf.n, 2); /* the .mp4 and the .mkv, not the .txt */
    video_plan p = tiny_plan();
    static video_result r;
    assert_int_equal(video_bench(&vf, &p, 3, &r, err, sizeof err), 0);
    video_files_free(&vf);
    assert_int_equal(r.nvideos, 1); /* the broken one skipped */
    check_one(&r.v[0], 24);
    assert_int_equal(r.v[0].gop, 8);
    assert_int_equal(r.resolutions, 1);
    assert_int_equal(r.method, COST_THROUGH_ORIGIN);
    assert_true(r.ms_per_frame == 0);
    assert_true(close_to(r.ms_per_mpx * 192 * 108 / 1e6, r.v[0].ms_per_frame.median));
    check_keyframe_fit(&r);
}

static void test_scan_empty(void **state) {
    (void)state;
    char sub[300], err[512] = "";
    snprintf(sub, sizeof sub, "%s/empty", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    video_files vf;
    assert_int_equal(video_files_scan(sub, 8, &vf, err, sizeof err), -1);
    assert_non_null(strstr(err, "no video file"));
    snprintf(sub, sizeof sub, "%s/missing", dir);
    assert_int_equal(video_files_scan(sub, 8, &vf, err, sizeof err), -1);
    assert_non_null(strstr(err, "missing"));
}

/* Test videos that cannot be written leave the figures unmeasured, said
 * (calibrate goes on, as without a GPU), never a figure of nothing. */
static void test_unwritable(void **state) {
    (void)state;
    char gone[300], err[512] = "", *old = getenv("TMPDIR");
    char keep[300];
    snprintf(keep, sizeof keep, "%s", old ? old : "");
    snprintf(gone, sizeof gone, "%s/not-there/deeper", dir);
    setenv("TMPDIR", gone, 1);
    video_plan p = tiny_plan();
    static video_result r;
    int rc = video_bench(NULL, &p, 3, &r, err, sizeof err);
    if (old)
        setenv("TMPDIR", keep, 1);
    else
        unsetenv("TMPDIR");
    assert_int_equal(rc, 0);
    assert_false(r.measured);
    assert_int_equal(r.nvideos, 0);
    assert_non_null(strstr(r.reason, "temporary folder"));
}

/* The five keys are in scenario: exactly where the schema has their rows;
 * the figures are under measured: video: either way. */
static void test_profile_keys(void **state) {
    (void)state;
    static calib_results r;
    video_result *v = calib_result(&r, &bench_video);
    v->measured = 1, v->nvideos = 1, v->ms_per_frame = 0.25, v->ms_per_mpx = 7.5;
    v->seek_ms = 1.5, v->resize_ms_per_mpx = 2.5, v->keyframe_ms_per_mpx = 12.5;
    snprintf(v->v[0].name, sizeof v->v[0].name, "x.mp4");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    assert_int_equal(profile_emit(m, &r), 0);
    fclose(m);
    const char *measured = strstr(text, "\nmeasured:\n");
    assert_non_null(measured);
    const char *key = strstr(text, "    video_decode_ms_per_mpx: 7.5\n");
    int known = schema_find(SCOPE_SCENARIO, "prep.video_decode_ms_per_mpx") >= 0;
    assert_int_equal(key != NULL && key < measured, known);
    assert_non_null(strstr(measured, "\n  video:\n    measured: true\n"));
    assert_non_null(strstr(measured, "    decode_ms_per_mpx: 7.5\n"));
    assert_non_null(strstr(measured, "    seek_ms: 1.5\n"));
    assert_non_null(strstr(measured, "    transform_ms_per_mpx: 2.5\n"));
    assert_non_null(strstr(measured, "    keyframe_ms_per_mpx: 12.5\n"));
    key = strstr(text, "    video_keyframe_ms_per_mpx: 12.5\n");
    assert_int_equal(key != NULL && key < measured, known);
    free(text);
}

int main(void) {
    if (!video_av_available()) {
        printf("calib_video: skipped: stallsim was built without FFmpeg's libavcodec, "
               "libavformat and libswscale (Debian: libavcodec-dev libavformat-dev "
               "libswscale-dev)\n");
        return 77;
    }
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/calib-video-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generated),    cmocka_unit_test(test_user_videos),
        cmocka_unit_test(test_scan_empty),   cmocka_unit_test(test_unwritable),
        cmocka_unit_test(test_profile_keys),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fileset_remove_tree(dir);
    return rc;
}
