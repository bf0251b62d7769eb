/* Scenario format: defaults, layering (host < file < --set < variant), job
 * keys, every error class returning EXIT_INPUT, suggestions. The exact
 * messages with positions are checked by cli.sh on tests/bad/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "schema.h"
#include "kinds.h"
#include "testutil.h"

static scenario_t S;
static topology_t T;

#define BASE "dataset: {items: 1000, item_kb: 10}\njobs: [{gpus: 1, gpu_items_per_s: 100}]\n"

static void test_defaults(void **state) {
    (void)state;
    assert_int_equal(tu_build(BASE, NULL, &S, &T), 0);
    assert_int_equal(S.seed, 1);
    assert_int_equal(S.epochs, 3);
    assert_int_equal(S.server.cpus, 24);
    assert_int_equal(S.server.storage.queue_depth, 32);
    assert_true(S.server.storage.read_mb_s == 525);
    assert_int_equal(S.loader.cache, cache_kind_find("lru"));
    assert_int_equal(S.jobs[0].batch_per_gpu, 256);
    assert_int_equal(S.jobs[0].prefetch_batches, 2);
    /* The default name is the file name without its extension. */
    assert_int_equal(strncmp(S.name, "stallsim-test-", 14), 0);
    assert_null(strchr(S.name, '.'));
    assert_string_equal(S.jobs[0].name, "job");
}

static void test_every_default_parses(void **state) {
    (void)state;
    /* A default that its own bounds reject would make every scenario fail. */
    for (int scope = 0; scope < 2; scope++) {
        int n;
        const key_def_t *k = schema_keys(scope, &n);
        scenario_t tmp;
        char why[256];
        for (int i = 0; i < n; i++)
            if (k[i].def) {
                void *base = scope == SCOPE_SCENARIO ? (void *)&tmp : (void *)&tmp.jobs[0];
                assert_int_equal(schema_store(&k[i], base, k[i].def, why, sizeof why), 0);
            }
    }
}

static void test_set_overrides_file(void **state) {
    (void)state;
    const char *sets[] = {"server.cpus=12", "server.storage.shared=true", "jobs.0.gpus=2",
                          "server.gpus=2",  "loader.cache=minio",         NULL};
    assert_int_equal(tu_build(BASE "server: {cpus: 4}\n", sets, &S, &T), 0);
    assert_int_equal(S.server.cpus, 12);
    assert_int_equal(S.server.storage.shared, 1);
    assert_int_equal(S.jobs[0].gpus, 2);
    assert_int_equal(S.loader.cache, cache_kind_find("minio"));
}

static void test_all_jobs_key(void **state) {
    (void)state;
    const char *sets[] = {"jobs.batch_per_gpu=64", NULL};
    const char *yaml = "dataset: {items: 1000, item_kb: 10}\n"
                       "jobs: [{gpus: 1, gpu_items_per_s: 100}, {gpus: 2, gpu_items_per_s: 50}]\n";
    assert_int_equal(tu_build(yaml, sets, &S, &T), 0);
    assert_int_equal(S.njobs, 2);
    assert_int_equal(S.jobs[0].batch_per_gpu, 64);
    assert_int_equal(S.jobs[1].batch_per_gpu, 64);
    assert_int_equal(T.ninst, 2);
}

static void test_job_count_expands(void **state) {
    (void)state;
    const char *yaml = "dataset: {items: 1000, item_kb: 10}\nserver: {cpus: 24, gpus: 8}\n"
                       "jobs: [{name: hp, count: 8, gpus: 1, gpu_items_per_s: 100}]\n";
    assert_int_equal(tu_build(yaml, NULL, &S, &T), 0);
    assert_int_equal(T.ninst, 8);
    assert_string_equal(T.inst[7].name, "hp#8");
    assert_true(T.inst[3].cpus == 3);
}

static void test_dotted_and_nested_agree(void **state) {
    (void)state;
    scenario_t a;
    assert_int_equal(tu_build(BASE "server: {storage: {latency_ms: 0.5}}\n", NULL, &a, &T), 0);
    assert_int_equal(tu_build(BASE "server.storage.latency_ms: 0.5\n", NULL, &S, &T), 0);
    assert_true(a.server.storage.latency_ms == S.server.storage.latency_ms);
}

static void test_variants_override_set(void **state) {
    (void)state;
    char path[] = "/tmp/stallsim-var-XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    FILE *f = fdopen(fd, "w");
    fputs(BASE "variants:\n  a: {}\n  b: {loader.cache: minio, server.cpus: 3}\n", f);
    fclose(f);
    scenario_doc_t doc;
    assign_list_t sets = {0};
    assert_int_equal(scenario_doc_load(&doc, path), 0);
    assert_int_equal(doc.nvariants, 2);
    assert_int_equal(assign_parse_set(&sets, "server.cpus=7"), 0);
    assert_int_equal(scenario_build(&doc, &sets, 0, &S), 0);
    assert_int_equal(S.server.cpus, 7);
    assert_string_equal(S.variant, "a");
    assert_int_equal(scenario_build(&doc, &sets, 1, &S), 0);
    assert_int_equal(S.server.cpus, 3);
    assert_int_equal(S.loader.cache, cache_kind_find("minio"));
    scenario_doc_free(&doc);
    assign_list_free(&sets);
    unlink(path);
}

static void test_host_profile_is_a_default(void **state) {
    (void)state;
    char host[] = "/tmp/stallsim-host-XXXXXX.yaml";
    int fd = mkstemps(host, 5);
    FILE *f = fdopen(fd, "w");
    fputs("profile_version: 1\nscenario:\n  server: {cpus: 6, storage: {read_mb_s: 99}}\n"
          "  prep: {decode_ms_per_mb: 7.5}\nmeasured: {anything: [1, 2]}\n",
          f);
    fclose(f);
    char yaml[512];
    snprintf(yaml, sizeof yaml, BASE "host: %s\nserver: {cpus: 10}\n", host);
    assert_int_equal(tu_build(yaml, NULL, &S, &T), 0);
    assert_int_equal(S.server.cpus, 10); /* the scenario wins */
    assert_true(S.server.storage.read_mb_s == 99);
    assert_true(S.prep.decode_ms_per_mb == 7.5);
    unlink(host);
}

static void expect_input_error(const char *yaml, const char *const *sets) {
    /* stderr carries the message; here only the exit code matters. */
    assert_int_equal(tu_build(yaml, sets, &S, &T), EXIT_INPUT);
}

static void test_error_classes(void **state) {
    (void)state;
    expect_input_error(BASE "server: {cpu: 4}\n", NULL);                 /* unknown key */
    expect_input_error(BASE "server: {cpus: four}\n", NULL);             /* wrong type */
    expect_input_error(BASE "server: {cpus: 0}\n", NULL);                /* out of bounds */
    expect_input_error(BASE "server: {cpus: 2.5}\n", NULL);              /* not an integer */
    expect_input_error(BASE "prep: {augment_ms: -1}\n", NULL);           /* negative */
    expect_input_error(BASE "prep: {augment_ms: .inf}\n", NULL);         /* infinite */
    expect_input_error("jobs: [{gpus: 1, gpu_items_per_s: 1}]\n", NULL); /* missing required */
    expect_input_error("dataset: {items: 1000, item_kb: 10}\n", NULL);   /* no jobs */
    expect_input_error(BASE "epochs: [1]\n", NULL);           /* list where a value goes */
    expect_input_error(BASE "dataset: {items: 1000\n", NULL); /* malformed */
    expect_input_error(BASE "loader: {cache: lfu}\n", NULL);  /* bad choice */
    expect_input_error(BASE "seed: 1\nseed: 2\n", NULL);      /* duplicate */
    const char *bad_set[] = {"server.cpus=x", NULL};
    expect_input_error(BASE, bad_set);
    const char *bad_set2[] = {"nokey=1", NULL};
    expect_input_error(BASE, bad_set2);
    const char *bad_set3[] = {"jobs.99.gpus=1", NULL};
    expect_input_error(BASE, bad_set3);
    /* Cross-key rules. */
    expect_input_error("dataset: {items: 10, item_kb: 1}\njobs: [{gpus: 9, gpu_items_per_s: 1}]\n",
                       NULL);
    expect_input_error("dataset: {items: 10, item_kb: 1}\njobs: [{gpus: 1}]\n", NULL);
    expect_input_error(BASE "loader: {dist_cache: partitioned}\n", NULL);
    expect_input_error("dataset: {items: 10, item_kb: 1}\nserver: {cpus: 2}\n"
                       "jobs: [{count: 3, gpus: 1, gpu_items_per_s: 1}]\n",
                       NULL);
}

static void test_suggestions(void **state) {
    (void)state;
    char buf[128];
    assert_string_equal(schema_suggest("server.cpu", buf, sizeof buf), "server.cpus");
    assert_string_equal(schema_suggest("dataset.item_kbs", buf, sizeof buf), "dataset.item_kb");
    assert_string_equal(schema_suggest("jobs.2.gppus", buf, sizeof buf), "jobs.2.gpus");
    assert_null(schema_suggest("completely.unrelated.thing", buf, sizeof buf));
}

static void test_reference_lists_every_key(void **state) {
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    schema_print_reference(f, 1);
    fclose(f);
    for (int scope = 0; scope < 2; scope++) {
        int n;
        const key_def_t *k = schema_keys(scope, &n);
        for (int i = 0; i < n; i++) {
            char needle[160];
            snprintf(needle, sizeof needle, "`%s%s`", scope ? "jobs[]." : "", k[i].name);
            assert_non_null(strstr(text, needle));
        }
    }
    free(text);
}

/* Every kind's own rows are in the key table, once, and the kind keys'
 * choices are the registries', each listed in the key's help with its own. */
static void test_kind_rows_spliced(void **state) {
    (void)state;
    int n;
    const key_def_t *rows = schema_keys(SCOPE_SCENARIO, &n);
    static scenario_t base; /* only its layout: where each kind's block is */
    for (int i = 0; i < n; i++) {
        assert_int_not_equal(rows[i].type, KT_SPLICE);
        assert_true(rows[i].offset + rows[i].size <= sizeof base);
        for (int j = i + 1; j < n; j++) {
            assert_string_not_equal(rows[i].name, rows[j].name);
            /* No two keys share a byte: each kind's rows in its own block. */
            assert_true(rows[i].offset + rows[i].size <= rows[j].offset ||
                        rows[j].offset + rows[j].size <= rows[i].offset);
        }
    }
    const kind_family_t fams[] = {FAMILY_CACHE, FAMILY_STORAGE, FAMILY_LOADER};
    const char *const choice_key[] = {"loader.cache", "server.storage.kind", "loader.kind"};
    for (int f = 0; f < 3; f++) {
        const key_def_t *k = &rows[schema_find(SCOPE_SCENARIO, choice_key[f])];
        int i = 0;
        for (; kind_name(fams[f], i); i++) {
            assert_string_equal(k->choice(i), kind_name(fams[f], i));
            char listed[512];
            snprintf(listed, sizeof listed, "%s (%s)", kind_name(fams[f], i),
                     kind_help(fams[f], i));
            assert_non_null(strstr(k->help, listed));
            int nk;
            const key_def_t *own = kind_keys(fams[f], i, &nk);
            for (int j = 0; j < nk; j++) {
                int row = schema_find(SCOPE_SCENARIO, own[j].name);
                assert_true(row >= 0);
                /* A kind's own field lies in its block of the scenario. */
                size_t at = own[j].offset & KIND_OWN
                                ? (size_t)((const unsigned char *)&base.opts[fams[f]][i] -
                                           (const unsigned char *)&base) +
                                      (own[j].offset & ~KIND_OWN)
                                : own[j].offset;
                assert_int_equal(rows[row].offset, at);
            }
        }
        assert_true(i >= 1);
        assert_null(k->choice(i));
    }
    /* The tier's policy key names every policy: usable ones and refused ones. */
    const char *tier = rows[schema_find(SCOPE_SCENARIO, "server.tier.cache")].help;
    for (int i = 0; kind_name(FAMILY_CACHE, i); i++)
        assert_non_null(strstr(tier, kind_name(FAMILY_CACHE, i)));
    /* storage_fixed owns the three device keys. */
    assert_true(schema_find(SCOPE_SCENARIO, "server.storage.queue_depth") >= 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_default_parses),
        cmocka_unit_test(test_set_overrides_file),
        cmocka_unit_test(test_all_jobs_key),
        cmocka_unit_test(test_job_count_expands),
        cmocka_unit_test(test_dotted_and_nested_agree),
        cmocka_unit_test(test_variants_override_set),
        cmocka_unit_test(test_host_profile_is_a_default),
        cmocka_unit_test(test_error_classes),
        cmocka_unit_test(test_suggestions),
        cmocka_unit_test(test_reference_lists_every_key),
        cmocka_unit_test(test_kind_rows_spliced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
