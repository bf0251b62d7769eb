/* The grid runner (grid_run.h): every configuration run once; with deliver,
 * each one's bytes reach the caller in configuration order whatever the
 * threads; the lowest invalid configuration is named, running out of
 * memory names none; grid_sets puts the layers
 * first, then the varied keys' values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "grid_run.h"
#include "options.h"

enum { N = 1000 };

typedef struct {
    int runs[N];       /* times each configuration ran (workers write their own) */
    int64_t delivered; /* the next configuration the caller expects */
    int out_of_order;
    int64_t bad_from; /* configurations from here fail with bad_rc; -1: none */
    int bad_rc;
    int64_t runtime_at; /* this one fails with EXIT_RUNTIME; -1: none */
} ctx_t;

static int run_one(void *arg, grid_worker_t *w, int64_t c, char **buf, size_t *len) {
    ctx_t *x = arg;
    assert_non_null(w->v);
    x->runs[c]++;
    if (c == x->runtime_at) return EXIT_RUNTIME;
    if (x->bad_from >= 0 && c >= x->bad_from) return x->bad_rc;
    if (buf) {
        char text[32];
        int n = snprintf(text, sizeof text, "%lld\n", (long long)c);
        *buf = malloc((size_t)n + 1);
        assert_non_null(*buf);
        memcpy(*buf, text, (size_t)n + 1);
        *len = (size_t)n;
    }
    return 0;
}

static int deliver(void *arg, int64_t c, const char *buf, size_t len) {
    ctx_t *x = arg;
    char want[32];
    snprintf(want, sizeof want, "%lld\n", (long long)c);
    if (c != x->delivered || len != strlen(want) || memcmp(buf, want, len) != 0)
        x->out_of_order = 1;
    x->delivered = c + 1;
    return 0;
}

static ctx_t *fresh(void) {
    ctx_t *x = calloc(1, sizeof *x);
    assert_non_null(x);
    x->bad_from = x->runtime_at = -1;
    return x;
}

static void test_in_order_any_threads(void **state) {
    (void)state;
    for (int threads = 1; threads <= 8; threads *= 2) {
        ctx_t *x = fresh();
        x->delivered = 10;
        grid_run_spec_t sp = {.first = 10,
                              .end = N,
                              .threads = threads,
                              .chunk = 1,
                              .run = run_one,
                              .deliver = deliver,
                              .ctx = x};
        int64_t bad;
        assert_int_equal(grid_run(&sp, &bad), 0);
        assert_int_equal(bad, -1);
        assert_int_equal(x->out_of_order, 0);
        assert_int_equal(x->delivered, N);
        for (int c = 0; c < N; c++)
            assert_int_equal(x->runs[c], c >= 10 ? 1 : 0);
        free(x);
    }
}

static void test_chunks_run_each_once(void **state) {
    (void)state;
    for (int threads = 1; threads <= 8; threads *= 2) {
        ctx_t *x = fresh();
        grid_run_spec_t sp = {
            .first = 0, .end = N, .threads = threads, .chunk = 64, .run = run_one, .ctx = x};
        int64_t bad;
        assert_int_equal(grid_run(&sp, &bad), 0);
        for (int c = 0; c < N; c++)
            assert_int_equal(x->runs[c], 1);
        free(x);
    }
}

static void test_failures(void **state) {
    (void)state;
    /* Invalid from 700 on: the lowest is named, whatever the threads. */
    for (int threads = 1; threads <= 4; threads *= 2) {
        ctx_t *x = fresh();
        x->bad_from = 700, x->bad_rc = EXIT_INPUT;
        grid_run_spec_t sp = {
            .first = 0, .end = N, .threads = threads, .chunk = 64, .run = run_one, .ctx = x};
        int64_t bad;
        assert_int_equal(grid_run(&sp, &bad), EXIT_INPUT);
        assert_int_equal(bad, 700); /* its chunk is claimed before any later one */
        free(x);
    }
    /* Out of memory: EXIT_RUNTIME, and no configuration named invalid. */
    ctx_t *x = fresh();
    x->runtime_at = 64;
    grid_run_spec_t sp = {
        .first = 0, .end = N, .threads = 2, .chunk = 64, .run = run_one, .ctx = x};
    int64_t bad;
    assert_int_equal(grid_run(&sp, &bad), EXIT_RUNTIME);
    assert_int_equal(bad, -1);
    free(x);
    /* Ordered: a failure stops the delivery before the failed configuration. */
    x = fresh();
    x->bad_from = 500, x->bad_rc = EXIT_INPUT;
    grid_run_spec_t so = {.first = 0,
                          .end = N,
                          .threads = 4,
                          .chunk = 1,
                          .run = run_one,
                          .deliver = deliver,
                          .ctx = x};
    assert_int_equal(grid_run(&so, &bad), EXIT_INPUT);
    assert_int_equal(bad, 500);
    assert_true(x->delivered <= 500);
    assert_int_equal(x->out_of_order, 0);
    free(x);
}

static void test_sets(void **state) {
    (void)state;
    static const char *const variants[] = {"dali", "coordl"};
    sweep_grid_t g;
    sweep_grid_init(&g);
    assert_int_equal(sweep_grid_add(&g, "server.cpus=8,16", variants, 2), 0);
    assert_int_equal(sweep_grid_add(&g, "variant=dali,coordl", variants, 2), 0);
    assert_int_equal(sweep_grid_add(&g, "server.cache_gb=1,2,3", variants, 2), 0);
    assign_list_t a = {0}, b = {0}, l = {0};
    assert_int_equal(assign_parse_set(&a, "epochs=2"), 0);
    assert_int_equal(assign_parse_set(&b, "seed=7"), 0);
    const assign_list_t *layers[2] = {&a, &b};
    /* Configuration 1*6 + 1*3 + 2 = 11: cpus 16, coordl (no key), cache 3. */
    assert_int_equal(grid_sets(&g, layers, 2, 11, &l), 0);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.v[0].key, "epochs");
    assert_string_equal(l.v[1].key, "seed");
    assert_string_equal(l.v[2].key, "server.cpus");
    assert_string_equal(l.v[2].value, "16");
    assert_string_equal(l.v[3].key, "server.cache_gb");
    assert_string_equal(l.v[3].value, "3");
    /* c < 0: the layers alone, the list emptied first. */
    assert_int_equal(grid_sets(&g, layers, 2, -1, &l), 0);
    assert_int_equal(l.n, 2);
    assign_list_free(&a), assign_list_free(&b), assign_list_free(&l);
    sweep_grid_free(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_any_threads),
        cmocka_unit_test(test_chunks_run_each_once),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_sets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
