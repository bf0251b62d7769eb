/* The video pipeline (prep.pipeline: video, sim/kinds/pipeline_video.c)
 * against closed forms: one clip's CPU from its keyframe (random access:
 * a seek and x mod gop frames thrown away; sequential: neither), a
 * CPU-bound epoch on W cores at items x clip / W, an epoch bound by the
 * GPUs' decoder engines at items x F / (GPUs x engines x fps) (1-megapixel
 * frames), the engines per GPU from the GPU table, the keyframes a clip
 * decodes (random: 1 + floor((x mod gop + span - 1) / gop), their mean over
 * the items exact; sequential: span / gop; none under decode gpu) and a
 * one-core epoch of them by hand, and a clip's hand-over
 * bytes by loader.batch_dtype (float32 4x uint8) in the item's bytes,
 * /dev/shm and the copies' CPU; an image pipeline's stay prep.out_kb. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "gpu_rates.h"
#include "kinds.h"
#include "memory.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

/* 1000 clips of 8 frames of 640 x 480 (0.3072 MP) a decode of 5 ms/MP
 * (1.536 ms a frame), gop 250: 4 whole GOPs of items. 8 cores, a GPU far
 * faster than the loader, storage out of the way. */
static const char *base = "epochs: 2\ndataset: {items: 1000, item_kb: 200}\n"
                          "server: {cpus: 8, gpus: 1, cache_gb: 0, storage: {read_mb_s: 100000, "
                          "latency_ms: 0, queue_depth: 64}}\n"
                          "prep: {video_decode_ms_per_mpx: 5, video_seek_ms: 3, "
                          "video_transform_ms_per_mpx: 2}\n"
                          "jobs: [{gpus: 1, batch_per_gpu: 8, gpu_items_per_s: 1000000, "
                          "prep: {pipeline: video}}]\n";

static void build(const char *yaml, const char *const *sets) {
    if (tu_build(yaml, sets, &S, &T) != 0) fail_msg("the scenario does not build");
}

/* Item x's CPU seconds as the simulator charges it: the pipeline's mean
 * plus the item's own share. */
static double clip_s(uint32_t x) {
    const job_t *j = &S.jobs[0];
    return scenario_job_prep_s(&S, j, 2e5) + job_pipeline(j)->item_dev_ms(&S, x) / 1e3;
}

static void test_one_clip(void **state) {
    (void)state;
    const double frame = 5 * 0.3072, keep = 8 * 0.3072 * 2;
    build(base, NULL);
    /* random: seek 3 ms, then x mod 250 frames thrown away and 8 kept */
    const uint32_t xs[] = {0, 1, 249, 250, 377, 999};
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
        const double want = (3 + (double)(xs[k] % 250 + 8) * frame + keep) / 1e3;
        assert_true(fabs(clip_s(xs[k]) - want) < 1e-12);
    }
    /* the mean over whole GOPs: (gop - 1) / 2 frames thrown away */
    assert_true(fabs(scenario_job_prep_s(&S, &S.jobs[0], 2e5) -
                     (3 + (124.5 + 8) * frame + keep) / 1e3) < 1e-12);
    /* a stride: (F - 1) x stride + 1 frames decoded */
    const char *stride[] = {"prep.video_stride=3", "prep.video_access=sequential", NULL};
    build(base, stride);
    assert_true(fabs(clip_s(377) - ((7 * 3 + 1) * frame + keep) / 1e3) < 1e-12);
    const char *seq[] = {"prep.video_access=sequential", NULL};
    build(base, seq);
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++)
        assert_true(fabs(clip_s(xs[k]) - (8 * frame + keep) / 1e3) < 1e-12);
}

/* Epoch 2, simulator and model, within tol of want seconds. */
static void expect(const char *what, const char *const *sets, double want, double tol) {
    run_metrics_t m, s;
    if (tu_run(base, sets, &S, &T, &m, &s) != 0) fail_msg("%s: does not build", what);
    const epoch_metrics_t *em = metrics_at(&m, 0, 1), *es = metrics_at(&s, 0, 1);
    if (fabs(es->epoch_s - want) > tol * want || fabs(em->epoch_s - want) > tol * want)
        fail_msg("%s: sim %.4f s, model %.4f s, want %.4f s", what, es->epoch_s, em->epoch_s, want);
    metrics_free(&m), metrics_free(&s);
}

static void test_cpu_bound(void **state) {
    (void)state;
    const double frame = 5 * 0.3072e-3, keep = 8 * 0.3072 * 2e-3;
    const char *seq[] = {"prep.video_access=sequential", NULL};
    expect("sequential, 8 cores", seq, 1000 * (8 * frame + keep) / 8, 0.02);
    const char *seq2[] = {"prep.video_access=sequential", "server.cpus=2", NULL};
    expect("sequential, 2 cores", seq2, 1000 * (8 * frame + keep) / 2, 0.02);
    /* Random access, gop 250: the model takes the mean clip;
     * the simulator's clips spread from 8 to 257 frames, which idles
     * cores at the batches' edges: at least the mean's time, within 15 %. */
    run_metrics_t m, s;
    const char *rnd[] = {"server.cpus=2", NULL};
    assert_int_equal(tu_run(base, rnd, &S, &T, &m, &s), 0);
    const double want = 1000 * (3e-3 + (124.5 + 8) * frame + keep) / 2;
    const double em = metrics_at(&m, 0, 1)->epoch_s, es = metrics_at(&s, 0, 1)->epoch_s;
    assert_true(fabs(em - want) < 0.02 * want);
    assert_true(es > want * 0.99 && es < want * 1.15);
    assert_true(metrics_at(&m, 0, 1)->approximate);
    metrics_free(&m), metrics_free(&s);
}

/* Keyframes (prep.video_keyframe_ms_per_mpx, 20 ms/MP: 6.144 ms beyond a
 * frame's 1.536 at 0.3072 MP), gop 12, 8-frame clips: item x decodes
 * 1 + floor((x mod 12 + 7) / 12) of them, 2 where its clip crosses into
 * the next GOP (x mod 12 >= 5). */
static const char *const kf12[] = {"prep.video_keyframe_ms_per_mpx=20", "prep.video_gop=12",
                                   "dataset.items=1200", NULL};

static void test_keyframes_per_clip(void **state) {
    (void)state;
    const double frame = 5 * 0.3072, key = 20 * 0.3072, keep = 8 * 0.3072 * 2;
    build(base, kf12);
    for (uint32_t x = 0; x < 30; x++) {
        const double keys = x % 12 >= 5 ? 2 : 1;
        const double want = (3 + (double)(x % 12 + 8) * frame + keys * key + keep) / 1e3;
        if (fabs(clip_s(x) - want) > 1e-12)
            fail_msg("item %u: %.9f s, want %.9f", x, clip_s(x), want);
    }
    /* the mean over 100 whole GOPs: 1 + 7/12 keyframes a clip */
    const double mean = (3 + (5.5 + 8) * frame + (1 + 7.0 / 12) * key + keep) / 1e3;
    assert_true(fabs(scenario_job_prep_s(&S, &S.jobs[0], 2e5) - mean) < 1e-12);
    /* the closed form's mean is the items' own over any n, gop and span:
     * their deviations sum to 0 */
    static const char *const ns[] = {"dataset.items=1000", "dataset.items=7", "dataset.items=13"};
    static const char *const gops[] = {"prep.video_gop=1", "prep.video_gop=3", "prep.video_gop=12",
                                       "prep.video_gop=30"};
    static const char *const strides[] = {"prep.video_stride=1", "prep.video_stride=5"};
    for (size_t a = 0; a < 3; a++)
        for (size_t g = 0; g < 4; g++)
            for (size_t k = 0; k < 2; k++) {
                const char *sets[] = {"prep.video_keyframe_ms_per_mpx=20", ns[a], gops[g],
                                      strides[k], NULL};
                build(base, sets);
                double dev = 0;
                for (uint32_t x = 0; x < S.dataset.items; x++)
                    dev += job_pipeline(&S.jobs[0])->item_dev_ms(&S, x);
                if (fabs(dev) > 1e-9)
                    fail_msg("%s %s %s: deviations sum to %g ms", ns[a], gops[g], strides[k], dev);
            }
    /* read in order: span / gop keyframes a clip, every clip alike */
    const char *seq[] = {"prep.video_keyframe_ms_per_mpx=20", "prep.video_gop=12",
                         "prep.video_access=sequential", NULL};
    build(base, seq);
    for (uint32_t x = 0; x < 30; x++)
        assert_true(fabs(clip_s(x) - (8 * frame + 8.0 / 12 * key + keep) / 1e3) < 1e-12);
    /* decode gpu: the engines' time is per megapixel whatever the frame */
    const char *gpu[] = {"prep.video_keyframe_ms_per_mpx=20",
                         "prep.video_gop=12",
                         "prep.video_decode=gpu",
                         "prep.nvdec_fps=400",
                         "prep.nvdec_engines=1",
                         NULL};
    build(base, gpu);
    const double with = clip_s(5);
    gpu[0] = "prep.video_keyframe_ms_per_mpx=0";
    build(base, gpu);
    assert_true(clip_s(5) == with);
}

/* One core: an epoch is every clip's CPU one after another, 1200 x the
 * mean clip by hand; the model that charged one keyframe a clip (its excess
 * in the seek, once) would be 7/12 x 6.144 ms a clip, 9 %, short. */
static void test_keyframes_epoch(void **state) {
    (void)state;
    const double frame = 5 * 0.3072e-3, key = 20 * 0.3072e-3, keep = 8 * 0.3072 * 2e-3;
    const char *one[] = {"prep.video_keyframe_ms_per_mpx=20", "prep.video_gop=12",
                         "dataset.items=1200", "server.cpus=1", NULL};
    const double clip = 3e-3 + (5.5 + 8) * frame + (1 + 7.0 / 12) * key + keep;
    const double old = 3e-3 + (5.5 + 8) * frame + key + keep;
    assert_true(1200 * (clip - old) > 0.05 * 1200 * clip);
    expect("random, gop 12, one core", one, 1200 * clip, 0.01);
    const char *seq[] = {"prep.video_keyframe_ms_per_mpx=20",
                         "prep.video_gop=12",
                         "dataset.items=1200",
                         "server.cpus=1",
                         "prep.video_access=sequential",
                         NULL};
    expect("sequential, gop 12, one core", seq, 1200 * (8 * frame + 8.0 / 12 * key + keep), 0.01);
    /* H.264's reorder delay: 2 packets past a clip's last frame, decoded,
     * so a clip reaches the next keyframe from 3 of 12 positions more */
    const char *delay[] = {"prep.video_keyframe_ms_per_mpx=20",
                           "prep.video_gop=12",
                           "dataset.items=1200",
                           "server.cpus=1",
                           "prep.video_decode_delay=2",
                           NULL};
    const double late = 3e-3 + (5.5 + 10) * frame + (1 + 9.0 / 12) * key + keep;
    assert_true(1200 * (late - clip) > 0.05 * 1200 * clip);
    expect("random, gop 12, delay 2", delay, 1200 * late, 0.01);
    /* read in order the held packets are the next clip's */
    const char *seq2[] = {"prep.video_keyframe_ms_per_mpx=20",
                          "prep.video_gop=12",
                          "dataset.items=1200",
                          "server.cpus=1",
                          "prep.video_access=sequential",
                          "prep.video_decode_delay=2",
                          NULL};
    expect("sequential, delay 2", seq2, 1200 * (8 * frame + 8.0 / 12 * key + keep), 0.01);
}

/* 1000 x 1000 frames (1 MP), 2 GPUs: the engines bind far before 8 cores
 * demuxing. */
static void test_nvdec_bound(void **state) {
    (void)state;
    const char *e5[] = {"prep.video_decode=gpu", "prep.video_access=sequential",
                        "prep.video_width=1000", "prep.video_height=1000",
                        "prep.nvdec_fps=400",    "prep.video_demux_ms_per_frame=0.01",
                        "server.gpus=2",         "jobs.0.gpus=2",
                        "jobs.0.gpu=a100-80gb",  NULL};
    /* a100: 5 engines a GPU; 8 frames a clip at 400 frames/s */
    expect("2 a100s", e5, 1000.0 * 8 / (2 * 5 * 400), 0.02);
    const char *e1[] = {"prep.video_decode=gpu",   "prep.video_access=sequential",
                        "prep.video_width=1000",   "prep.video_height=1000",
                        "prep.nvdec_fps=400",      "prep.nvdec_engines=1",
                        "prep.nvdec_session_ms=5", NULL};
    expect("1 engine, a 5 ms session", e1, 1000.0 * (8.0 / 400 + 5e-3), 0.02);
    /* random access: the frames before each clip's first go through the engine too */
    const char *rnd[] = {"prep.video_decode=gpu",
                         "prep.video_width=1000",
                         "prep.video_height=1000",
                         "prep.nvdec_fps=400",
                         "prep.nvdec_engines=2",
                         "prep.video_gop=10",
                         NULL};
    expect("random, gop 10", rnd, 1000.0 * (4.5 + 8) / (2 * 400), 0.03);
    /* the GPU table's counts, each cited in gpu_rates.c */
    assert_int_equal(gpu_nvdec_engines("a100-80gb"), 5);
    assert_int_equal(gpu_nvdec_engines("H100-SXM"), 7);
    assert_int_equal(gpu_nvdec_engines("h200"), 7);
    assert_int_equal(gpu_nvdec_engines("v100"), 1);
    assert_int_equal(gpu_nvdec_engines("l4"), 0);
    /* no count for the job's GPU and none given: refused */
    const char *none[] = {"prep.video_decode=gpu", "prep.nvdec_fps=400", NULL};
    assert_int_not_equal(tu_build(base, none, &S, &T), 0);
}

/* An epoch of the pytorch loader whose CPU is the copy into the batch:
 * 1 ms/MB of a clip of 8 x 100 x 100 x 3 values (0.96 MB as float32). */
static double torch_epoch(const char *dtype) {
    char d[64];
    snprintf(d, sizeof d, "loader.batch_dtype=%s", dtype);
    const char *sets[] = {d,
                          "prep.video_width=100",
                          "prep.video_height=100",
                          "prep.video_access=sequential",
                          "prep.video_decode_ms_per_mpx=0.001",
                          "prep.video_transform_ms_per_mpx=0",
                          "loader.kind=pytorch",
                          "loader.num_workers=4",
                          "loader.collate_ms_per_item=0",
                          "loader.copy_ms_per_mb=1",
                          "loader.worker_start_ms=0",
                          "loader.share_ms_per_item=0",
                          "loader.transfer_ms_per_item=0",
                          "loader.step_ms=0",
                          "server.cpus=4",
                          NULL};
    run_metrics_t m, s;
    assert_int_equal(tu_run(base, sets, &S, &T, &m, &s), 0);
    const double e = metrics_at(&s, 0, 1)->epoch_s, em = metrics_at(&m, 0, 1)->epoch_s;
    assert_true(fabs(e - em) < 0.03 * em);
    metrics_free(&m), metrics_free(&s);
    return e;
}

static void test_handover(void **state) {
    (void)state;
    const char *u8[] = {"loader.batch_dtype=uint8", "loader.kind=pytorch", "loader.num_workers=2",
                        NULL};
    const char *f32[] = {"loader.batch_dtype=float32", "loader.kind=pytorch",
                         "loader.num_workers=2", NULL};
    build(base, u8);
    const double b8 = scenario_job_out_item_bytes(&S, &S.jobs[0]);
    const double shm8 = memory_shm_process(&S, &S.jobs[0]);
    assert_true(fabs(b8 - 8.0 * 480 * 640 * 3) < 1e-6);
    build(base, f32);
    const double b32 = scenario_job_out_item_bytes(&S, &S.jobs[0]);
    const double shm32 = memory_shm_process(&S, &S.jobs[0]);
    assert_true(fabs(b32 - 4 * b8) < 1e-6);
    assert_true(shm8 > 0 && fabs(shm32 / shm8 - 4) < 0.01);
    /* the copies' CPU: 1000 x 0.96 MB x 1 ms/MB on 4 cores, a quarter of it in uint8 */
    const double e32 = torch_epoch("float32"), e8 = torch_epoch("uint8");
    assert_true(fabs(e32 - 1000 * 0.96e-3 / 4) < 0.05 * e32);
    assert_true(fabs(e32 / e8 - 4) < 0.2);
    /* an image pipeline hands over prep.out_kb, and refuses the dtype */
    const char *img = "dataset: {items: 100, item_kb: 100}\n"
                      "server: {cpus: 2, gpus: 1}\n"
                      "jobs: [{gpus: 1, batch_per_gpu: 8, gpu_items_per_s: 1000}]\n";
    build(img, NULL);
    assert_true(fabs(scenario_job_out_item_bytes(&S, &S.jobs[0]) - 602112) < 1e-6);
    const char *img_u8[] = {"loader.batch_dtype=uint8", NULL};
    assert_int_not_equal(tu_build(img, img_u8, &S, &T), 0);
}

/* Under GPU decode the clips' frames wait on the GPU for every staged batch. */
static void test_gpu_memory(void **state) {
    (void)state;
    const char *gpu[] = {"prep.video_decode=gpu",     "prep.nvdec_fps=400",
                         "prep.nvdec_engines=1",      "loader.batch_dtype=uint8",
                         "jobs.0.prefetch_batches=3", NULL};
    build(base, gpu);
    const double want = 3 * 8 * (8.0 * 480 * 640 * 3);
    assert_true(fabs(scenario_job_gpu_input_bytes(&S, &S.jobs[0]) - want) < 1e-3);
    /* and the host hands over the clip's packets, not its frames: 200 KB */
    assert_true(fabs(scenario_job_out_item_bytes(&S, &S.jobs[0]) - 200e3) < 1e-6);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_clip),        cmocka_unit_test(test_cpu_bound),
        cmocka_unit_test(test_nvdec_bound),     cmocka_unit_test(test_handover),
        cmocka_unit_test(test_gpu_memory),      cmocka_unit_test(test_keyframes_per_clip),
        cmocka_unit_test(test_keyframes_epoch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
