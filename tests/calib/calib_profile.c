/* calib_profile: the host profile is YAML that libyaml parses, with exactly
 * the `scenario:` keys the scenario loader expects and plain-decimal numbers.
 *
 *   calib_profile           runs the unit tests of the writer;
 *   calib_profile FILE      checks a profile written by `stallsim calibrate`
 *                           (exit 0 if valid, 1 with the reason otherwise);
 *   calib_profile --mkdata DIR N   writes N generated JPEGs under DIR (for
 *                           the command-line test's --data runs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "audio_bench.h"
#include "augment_bench.h"
#include "decode_bench.h"
#include "eval_bench.h"
#include "gpu_bench.h"
#include "gpu_decode_bench.h"
#include "handoff_bench.h"
#include "read_cpu_bench.h"
#include "jpeg_gen.h"
#include "membw.h"
#include "prep_traffic.h"
#include "profile.h"
#include "storage_bench.h"
#include "scenario.h"

extern const calib_bench_t bench_storage, bench_decode, bench_augment, bench_membw, bench_traffic,
    bench_eval, bench_audio, bench_nvjpeg, bench_gpu, bench_handoff, bench_read_cpu;

/* Each benchmark's result in r. */
static storage_result *storage_(calib_results *r) {
    return calib_result(r, &bench_storage);
}

static decode_result *decode_(calib_results *r) {
    return calib_result(r, &bench_decode);
}

static augment_result *augment_(calib_results *r) {
    return calib_result(r, &bench_augment);
}

static eval_result *eval_(calib_results *r) {
    return calib_result(r, &bench_eval);
}

static audio_result *audio_(calib_results *r) {
    return calib_result(r, &bench_audio);
}

static membw_result *membw_(calib_results *r) {
    return calib_result(r, &bench_membw);
}

static prep_traffic *traffic_(calib_results *r) {
    return calib_result(r, &bench_traffic);
}

static gpu_result *gpu_(calib_results *r) {
    return calib_result(r, &bench_gpu);
}

static nvjpeg_result *nvjpeg_(calib_results *r) {
    return calib_result(r, &bench_nvjpeg);
}

static handoff_result *handoff_(calib_results *r) {
    return calib_result(r, &bench_handoff);
}

static char problem[512];

static yaml_node_t *child(yaml_document_t *d, yaml_node_t *map, const char *key) {
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(d, p->key);
        if (k->type == YAML_SCALAR_NODE && strcmp((char *)k->data.scalar.value, key) == 0)
            return yaml_document_get_node(d, p->value);
    }
    return NULL;
}

/* The mapping has exactly these keys (optional ones may be missing). */
static int exact_keys(yaml_document_t *d, yaml_node_t *map, const char *where, const char **req,
                      const char **opt) {
    if (!map || map->type != YAML_MAPPING_NODE) {
        snprintf(problem, sizeof problem, "%s: not a mapping", where);
        return -1;
    }
    for (int i = 0; req[i]; i++)
        if (!child(d, map, req[i])) {
            snprintf(problem, sizeof problem, "%s: missing key %s", where, req[i]);
            return -1;
        }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = (char *)yaml_document_get_node(d, p->key)->data.scalar.value;
        int known = 0;
        for (int i = 0; req[i] && !known; i++)
            known = !strcmp(k, req[i]);
        for (int i = 0; opt && opt[i] && !known; i++)
            known = !strcmp(k, opt[i]);
        if (!known) {
            snprintf(problem, sizeof problem, "%s: unexpected key %s", where, k);
            return -1;
        }
    }
    return 0;
}

/* A plain decimal: digits, at most one point, optional minus; positive. */
/* A plain whole number, 0 allowed (a device with readahead off). */
static int whole_number(yaml_document_t *d, yaml_node_t *map, const char *where, const char *key) {
    yaml_node_t *n = child(d, map, key);
    const char *s = n && n->type == YAML_SCALAR_NODE ? (char *)n->data.scalar.value : "";
    if (!*s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
        strspn(s, "0123456789") != strlen(s)) {
        snprintf(problem, sizeof problem, "%s.%s: '%s' is not a whole number", where, key, s);
        return -1;
    }
    return 0;
}

static int positive_number(yaml_document_t *d, yaml_node_t *map, const char *where, const char *key,
                           int integer) {
    yaml_node_t *n = child(d, map, key);
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) {
        snprintf(problem, sizeof problem, "%s.%s: not a plain scalar", where, key);
        return -1;
    }
    const char *s = (char *)n->data.scalar.value;
    int dots = 0, digits = 0;
    for (const char *c = s; *c; c++) {
        if (*c == '.')
            dots++;
        else if (isdigit((unsigned char)*c))
            digits++;
        else {
            snprintf(problem, sizeof problem, "%s.%s: '%s' is not a plain decimal", where, key, s);
            return -1;
        }
    }
    if (!digits || dots > (integer ? 0 : 1) || atof(s) <= 0.0) {
        snprintf(problem, sizeof problem, "%s.%s: '%s' is not a positive %s", where, key, s,
                 integer ? "integer" : "number");
        return -1;
    }
    return 0;
}

/* A cost line per MB and per item (calibrate's bounded fit): each a plain
 * non-negative decimal (the fit holds them >= 0; a mean leaves ms/MB at 0),
 * not both 0. */
static int cost_pair(yaml_document_t *d, yaml_node_t *map, const char *per_mb,
                     const char *per_item) {
    const char *keys[2] = {per_mb, per_item};
    double sum = 0.0;
    for (int i = 0; i < 2; i++) {
        yaml_node_t *n = child(d, map, keys[i]);
        int plain =
            n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        const char *s = plain ? (char *)n->data.scalar.value : "";
        if (!plain || !isdigit((unsigned char)s[0]) || strspn(s, "0123456789.") != strlen(s)) {
            snprintf(problem, sizeof problem, "prep.%s: '%s' is not a non-negative plain decimal",
                     keys[i], s);
            return -1;
        }
        sum += atof(s);
    }
    if (sum <= 0.0) {
        snprintf(problem, sizeof problem, "prep.%s and prep.%s are both 0", per_mb, per_item);
        return -1;
    }
    return 0;
}

/* Returns 0 if path is a valid host profile; sets problem otherwise. */
static int check_profile(const char *path, int expect_gpu) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(problem, sizeof problem, "cannot open %s", path);
        return -1;
    }
    yaml_parser_t p;
    yaml_document_t d;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    int rc = -1;
    if (!yaml_parser_load(&p, &d)) {
        snprintf(problem, sizeof problem, "%s: YAML error: %s (line %zu)", path, p.problem,
                 p.problem_mark.line + 1);
        yaml_parser_delete(&p);
        fclose(f);
        return -1;
    }
    yaml_node_t *root = yaml_document_get_root_node(&d);
    static const char *top[] = {"profile_version", "scenario", "measured", NULL};
    static const char *scen[] = {"server", "prep", NULL};
    static const char *scen_opt[] = {"loader", NULL}; /* where calibrate measured the hand-off */
    static const char *loader[] = {"handoff_ms_per_mb", "handoff_ms_per_mb_per_reader", NULL};
    static const char *server[] = {
        "cpus", "mem_gbps", "cache_cpu_us_per_read", "cache_cpu_us_per_mb", "storage", NULL};
    /* A remote hit's CPU, where the GET over 127.0.0.1 was measured. */
    static const char *server_opt[] = {"network", NULL};
    static const char *network[] = {"cpu_us_per_read", "cpu_us_per_mb", NULL};
    static const char *storage[] = {"read_mb_s",
                                    "latency_ms",
                                    "queue_depth",
                                    "latency_qd1_ms",
                                    "latency_qd4_ms",
                                    "latency_qd16_ms",
                                    "latency_qd32_ms",
                                    "peak_mb_s",
                                    "cpu_us_per_read",
                                    "cpu_us_per_mb",
                                    NULL};
    /* The device's readahead, where the files lie on a block device. */
    static const char *storage_opt[] = {"read_ahead_kb", NULL};
    static const char *prep[] = {
        "decode_ms_per_mb", "decode_ms_per_item", "augment_ms",      "eval_ms",
        "audio_ms_per_mb",  "audio_ms_per_item",  "mem_mb_per_item", NULL};
    /* The video keys, where the build has FFmpeg and the video pipeline kind. */
    static const char *prep_opt[] = {"gpu_augment_ms",
                                     "scaling",
                                     "huffman_ms_per_mb",
                                     "gpu_decode_ms_per_mp",
                                     "video_decode_ms_per_frame",
                                     "video_decode_ms_per_mpx",
                                     "video_seek_ms",
                                     "video_transform_ms_per_mpx",
                                     "video_keyframe_ms_per_mpx",
                                     "video_decode_delay",
                                     NULL};
    /* The sections above must be there; a benchmark added to the registry
     * brings its own. */
    const char *sections[64] = {0};
    for (int i = 0; calib_benches[i] && i < 63; i++)
        sections[i] = calib_benches[i]->section;
    static const char *measured[] = {
        "host",     "method",    "storage", "decode",           "augment_cpu",  "gpu", "stability",
        "eval_cpu", "audio_cpu", "nvjpeg",  "memory_bandwidth", "prep_traffic", NULL};
    yaml_node_t *sc = child(&d, root, "scenario");
    yaml_node_t *sv = child(&d, sc, "server");
    yaml_node_t *st = child(&d, sv, "storage");
    yaml_node_t *pr = child(&d, sc, "prep");
    if (exact_keys(&d, root, "top level", top, NULL) ||
        exact_keys(&d, sc, "scenario", scen, scen_opt) ||
        exact_keys(&d, sv, "scenario.server", server, server_opt) ||
        (child(&d, sv, "network") &&
         (exact_keys(&d, child(&d, sv, "network"), "scenario.server.network", network, NULL) ||
          cost_pair(&d, child(&d, sv, "network"), "cpu_us_per_mb", "cpu_us_per_read"))) ||
        exact_keys(&d, st, "scenario.server.storage", storage, storage_opt) ||
        (child(&d, st, "read_ahead_kb") && whole_number(&d, st, "storage", "read_ahead_kb")) ||
        exact_keys(&d, pr, "scenario.prep", prep, prep_opt) ||
        (child(&d, sc, "loader") &&
         (exact_keys(&d, child(&d, sc, "loader"), "scenario.loader", loader, NULL) ||
          positive_number(&d, child(&d, sc, "loader"), "loader", "handoff_ms_per_mb", 0))) ||
        exact_keys(&d, child(&d, root, "measured"), "measured", measured, sections) ||
        positive_number(&d, root, "", "profile_version", 1) ||
        positive_number(&d, sv, "server", "cpus", 1) ||
        positive_number(&d, st, "storage", "read_mb_s", 0) ||
        positive_number(&d, st, "storage", "latency_ms", 0) ||
        positive_number(&d, st, "storage", "queue_depth", 1) ||
        positive_number(&d, st, "storage", "peak_mb_s", 0) ||
        cost_pair(&d, pr, "decode_ms_per_mb", "decode_ms_per_item") ||
        positive_number(&d, pr, "prep", "augment_ms", 0) ||
        positive_number(&d, pr, "prep", "eval_ms", 0) ||
        cost_pair(&d, pr, "audio_ms_per_mb", "audio_ms_per_item") ||
        positive_number(&d, sv, "server", "mem_gbps", 0) ||
        cost_pair(&d, sv, "cache_cpu_us_per_mb", "cache_cpu_us_per_read") ||
        cost_pair(&d, st, "cpu_us_per_mb", "cpu_us_per_read") ||
        positive_number(&d, pr, "prep", "mem_mb_per_item", 0))
        goto out;
    /* Plausible, not merely positive: a host's memory moves 0.5 GB/s to
     * 10 TB/s; an item's prep reads and writes at least its float output
     * (0.6 MB) and less than 1 GB. */
    double gbps = atof((char *)child(&d, sv, "mem_gbps")->data.scalar.value);
    double mb = atof((char *)child(&d, pr, "mem_mb_per_item")->data.scalar.value);
    if (gbps < 0.5 || gbps > 10000 || mb < 0.6 || mb > 1000) {
        snprintf(problem, sizeof problem,
                 "server.mem_gbps %g or prep.mem_mb_per_item %g is implausible", gbps, mb);
        goto out;
    }
    /* The ssd kind's curve: latencies left after the transfers, possibly 0
     * (a depth at the best rate), never negative. */
    static const char *curve[] = {"latency_qd1_ms", "latency_qd4_ms", "latency_qd16_ms",
                                  "latency_qd32_ms"};
    for (int i = 0; i < 4; i++) {
        yaml_node_t *n = child(&d, st, curve[i]);
        if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
            !isdigit(n->data.scalar.value[0]) ||
            strspn((char *)n->data.scalar.value, "0123456789.") !=
                strlen((char *)n->data.scalar.value)) {
            snprintf(problem, sizeof problem, "storage.%s: not a non-negative plain decimal",
                     curve[i]);
            goto out;
        }
    }
    /* The contention term may be 0 (none measured), never negative. */
    yaml_node_t *per = child(&d, child(&d, sc, "loader"), "handoff_ms_per_mb_per_reader");
    if (child(&d, sc, "loader") &&
        (!per || per->type != YAML_SCALAR_NODE || !isdigit(per->data.scalar.value[0]) ||
         strspn((char *)per->data.scalar.value, "0123456789.") !=
             strlen((char *)per->data.scalar.value))) {
        snprintf(problem, sizeof problem,
                 "loader.handoff_ms_per_mb_per_reader: not a non-negative plain decimal");
        goto out;
    }
    if (expect_gpu >= 0 && (child(&d, pr, "gpu_augment_ms") != NULL) != expect_gpu) {
        snprintf(problem, sizeof problem, "prep.gpu_augment_ms %s",
                 expect_gpu ? "missing with a GPU" : "present without a GPU");
        goto out;
    }
    rc = 0;
out:
    yaml_document_delete(&d);
    yaml_parser_delete(&p);
    fclose(f);
    return rc;
}

static void fill(calib_results *r, int gpu) {
    memset(r, 0, sizeof *r);
    snprintf(r->hostname, sizeof r->hostname, "host \"quoted\" \\ name");
    snprintf(r->cpu_model, sizeof r->cpu_model, "CPU: model: with colons");
    snprintf(r->date, sizeof r->date, "2024-01-01T00:00:00Z");
    snprintf(r->data, sizeof r->data, "generated");
    storage_(r)->read_mb_s = 1234.5678901;
    storage_(r)->latency_ms = 0.0001234;
    storage_(r)->queue_depth = 16;
    storage_(r)->peak_mb_s = 1300.25;
    const double curve[] = {0, 0.25, 1.125, 2.5}; /* qd 1 at the best rate: 0 */
    for (int q = 0; q < STORAGE_NQD; q++)
        storage_(r)->curve_ms[q] = curve[q];
    for (int q = 0; q < STORAGE_NQD; q++)
        storage_(r)->cold[q].qd = storage_(r)->warm[q].qd = storage_qds[q];
    decode_(r)->fit.slope = decode_(r)->model_ms_per_mb = 7.5;
    decode_(r)->fit.intercept = decode_(r)->model_ms_per_item = 0.04;
    augment_(r)->ms_per_item.median = 0.25;
    eval_(r)->ms_per_item.median = 0.5;
    audio_(r)->model_ms_per_mb = 3.25, audio_(r)->model_ms_per_item = 0.125;
    membw_(r)->gb_s = 12.5, membw_(r)->npoints = 1, membw_(r)->curve[0].threads = 2;
    traffic_(r)->mb_per_item = 1.75;
    handoff_(r)->measured = 1, handoff_(r)->ms_per_mb = 0.125,
    handoff_(r)->ms_per_mb_per_reader = 0; /* no contention: 0 */
    read_cpu_result *rc = calib_result(r, &bench_read_cpu);
    rc->warm = (cost_line){75, 6.5, COST_FIT}, rc->cold = (cost_line){600, 0, COST_MEAN};
    rc->measured = 1, rc->cold_ok = 1;
    augment_(r)->max_threads = 2;
    augment_(r)->npoints = 2;
    augment_(r)->curve[0].threads = 1, augment_(r)->curve[0].speedup = 1;
    augment_(r)->curve[1].threads = 2, augment_(r)->curve[1].speedup = 1.75;
    gpu_(r)->available = gpu;
    gpu_(r)->augment_ms.median = 0.002;
    snprintf(gpu_(r)->reason, sizeof gpu_(r)->reason, "no GPU: test");
}

static void test_writer_output_checks(void **state) {
    (void)state;
    static calib_results r;
    char path[] = "/tmp/calib-profile-XXXXXX", err[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    for (int gpu = 0; gpu <= 1; gpu++) {
        fill(&r, gpu);
        assert_int_equal(profile_write(path, &r, err, sizeof err), 0);
        int rc = check_profile(path, gpu);
        if (rc) fprintf(stderr, "%s\n", problem);
        assert_int_equal(rc, 0);
        char tmp[300];
        snprintf(tmp, sizeof tmp, "%s.tmp", path);
        assert_int_equal(access(tmp, F_OK), -1); /* renamed away */
    }
    /* And the checker rejects what it should: a missing key. */
    FILE *f = fopen(path, "w");
    fputs("profile_version: 1\nscenario:\n  server: {cpus: 2}\n  prep: {}\nmeasured: {}\n", f);
    fclose(f);
    assert_int_equal(check_profile(path, -1), -1);
    unlink(path);
}

/* The measured augment curve reaches a scenario that names the profile as
 * its host: prep.scaling, parsed into the points the simulator uses. */
static void test_curve_reaches_scenario(void **state) {
    (void)state;
    static calib_results r;
    static scenario_t s;
    char dir[] = "/tmp/calib-curve-XXXXXX", path[300], scn[300], err[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/host.yaml", dir);
    snprintf(scn, sizeof scn, "%s/s.yaml", dir);
    fill(&r, 0);
    augment_(&r)->npoints = 3, augment_(&r)->max_threads = 4;
    augment_(&r)->curve[2].threads = 4, augment_(&r)->curve[2].speedup = 2.5;
    assert_int_equal(profile_write(path, &r, err, sizeof err), 0);
    FILE *f = fopen(scn, "w");
    assert_non_null(f);
    fputs("host: host.yaml\ndataset: {items: 100, item_kb: 10}\njobs: [{gpus: 1, "
          "gpu_items_per_s: 100}]\n",
          f);
    fclose(f);
    scenario_doc_t doc = {0};
    assert_int_equal(scenario_doc_load(&doc, scn), 0);
    assert_int_equal(scenario_build(&doc, NULL, -1, &s), 0);
    assert_int_equal(s.prep.scaling_n, 3);
    assert_true(s.prep.scaling_threads[2] == 4 && s.prep.scaling_speedup[1] == 1.75);
    /* 3 cores: within the curve. 6: past it, at its last marginal gain
     * (0.375 a core) 3.25, but the measured bandwidth and traffic bound it:
     * 12.5 GB/s x 0.365 ms (7.5 ms/MB x 10 KB + 0.04 + 0.25) / 1.75 MB. */
    assert_true(s.server.mem_gbps == 12.5 && s.prep.mem_mb_per_item == 1.75);
    int ex = 0;
    prep_cores_why_t w;
    assert_true(fabs(scenario_prep_cores(&s, 3, &ex) - 2.125) < 1e-12 && ex == 0);
    double bound = 12.5 * 0.365 / 1.75;
    assert_true(fabs(scenario_prep_cores_why(&s, 6, &w) - bound) < 1e-12);
    assert_true(w.extrapolated && w.mem_bound);
    assert_true(fabs(scenario_prep_cores(&s, 4.25, &ex) - 2.59375) < 1e-12 && ex == 1);
    scenario_doc_free(&doc);
    /* nvJPEG measured: its rates reach a scenario that decodes on the GPU;
     * unmeasured (above), such a scenario is refused. */
    f = fopen(scn, "w");
    fputs("host: host.yaml\ndataset: {items: 100, item_kb: 10, megapixels: 0.25}\n"
          "prep: {decode: gpu}\njobs: [{gpus: 1, gpu_items_per_s: 100}]\n",
          f);
    fclose(f);
    assert_int_equal(scenario_doc_load(&doc, scn), 0);
    assert_int_equal(scenario_build(&doc, NULL, -1, &s), EXIT_INPUT);
    scenario_doc_free(&doc);
    nvjpeg_(&r)->measured = 1, nvjpeg_(&r)->host_ms_per_mb = 4.5,
    nvjpeg_(&r)->gpu_ms_per_mp = 0.125;
    assert_int_equal(profile_write(path, &r, err, sizeof err), 0);
    assert_int_equal(scenario_doc_load(&doc, scn), 0);
    assert_int_equal(scenario_build(&doc, NULL, -1, &s), 0);
    assert_true(s.prep.huffman_ms_per_mb == 4.5 && s.prep.gpu_decode_ms_per_mp == 0.125);
    scenario_doc_free(&doc);
    nvjpeg_(&r)->measured = 0;
    f = fopen(scn, "w");
    fputs("host: host.yaml\ndataset: {items: 100, item_kb: 10}\njobs: [{gpus: 1, "
          "gpu_items_per_s: 100}]\n",
          f);
    fclose(f);
    /* One thread measured: no curve is written (linear). */
    augment_(&r)->npoints = 1;
    assert_int_equal(profile_write(path, &r, err, sizeof err), 0);
    assert_int_equal(scenario_doc_load(&doc, scn), 0);
    assert_int_equal(scenario_build(&doc, NULL, -1, &s), 0);
    assert_int_equal(s.prep.scaling_n, 0);
    scenario_doc_free(&doc);
    unlink(path), unlink(scn), rmdir(dir);
}

static void test_numbers_are_plain_decimals(void **state) {
    (void)state;
    char b[64];
    assert_string_equal(profile_num(2.5, b, sizeof b), "2.5");
    assert_string_equal(profile_num(0, b, sizeof b), "0");
    assert_string_equal(profile_num(1234567.891, b, sizeof b), "1234568");
    assert_string_equal(profile_num(0.000123456789, b, sizeof b), "0.000123457");
    assert_string_equal(profile_num(-3.25, b, sizeof b), "-3.25");
    assert_string_equal(profile_num(100, b, sizeof b), "100");
    assert_null(strchr(profile_num(1e-30, b, sizeof b), 'e'));
}

static void test_unwritable_path_fails(void **state) {
    (void)state;
    static calib_results r;
    char err[256];
    fill(&r, 0);
    assert_int_equal(profile_write("/nonexistent-dir/p.yaml", &r, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent-dir/p.yaml"));
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--mkdata")) {
        char err[256];
        if (jpeg_gen_dataset(argv[2], atoi(argv[3]), 77, 2, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        return 0;
    }
    if (argc >= 2) {
        /* --gpu / --no-gpu: whether prep.gpu_augment_ms must be there. */
        int expect = argc >= 3 ? !strcmp(argv[2], "--gpu") : -1;
        if (check_profile(argv[1], expect) != 0) {
            fprintf(stderr, "invalid profile: %s\n", problem);
            return 1;
        }
        printf("%s: valid host profile\n", argv[1]);
        return 0;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_output_checks),
        cmocka_unit_test(test_curve_reaches_scenario),
        cmocka_unit_test(test_numbers_are_plain_decimals),
        cmocka_unit_test(test_unwritable_path_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
