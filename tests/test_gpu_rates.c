/* test_gpu_rates: the published rate table refuses a row that lacks its
 * source, its batch or its precision (naming the row's line), duplicates,
 * unknown fields and impossible rates; names match across case and
 * punctuation; and the built-in table loads with every row sourced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "gpu_rates.h"

#define ROW(gpu, model, extra)                                                                     \
    "  - gpu: " gpu "\n    model: " model "\n    items_per_s: 700\n    batch: 512\n"               \
    "    precision: mixed\n" extra
#define SRC                                                                                        \
    "    source: \"A paper\"\n    table: \"Fig 5\"\n    date: \"2021\"\n"                          \
    "    url: \"https://example.org/p\"\n"

static int parse(const char *text, gpu_rate_t **rows, int *n) {
    return gpu_rates_parse("t.yaml", text, strlen(text), rows, n);
}

static void test_good_table(void **st) {
    (void)st;
    gpu_rate_t *rows;
    int n;
    const char *t =
        "rates:\n" ROW("v100", "resnet50", SRC) ROW("a100-80gb", "resnet50", SRC "    note: n\n");
    assert_int_equal(parse(t, &rows, &n), 0);
    assert_int_equal(n, 2);
    assert_string_equal(rows[1].gpu, "a100-80gb");
    assert_int_equal(rows[0].batch, 512);
    assert_true(rows[0].items_per_s == 700);
    assert_string_equal(rows[0].note, "");
    assert_string_equal(rows[1].note, "n");
    assert_int_equal(rows[1].pos.line, 11);
    assert_ptr_equal(gpu_rate_find(rows, n, "A100_80GB", "ResNet-50"), &rows[1]);
    assert_null(gpu_rate_find(rows, n, "h100", "resnet50"));
    char buf[256];
    gpu_rates_names(rows, n, NULL, buf, sizeof buf);
    assert_string_equal(buf, "v100, a100-80gb");
    gpu_rates_names(rows, n, "v100", buf, sizeof buf);
    assert_string_equal(buf, "resnet50");
    gpu_rates_free(rows, n);
}

/* Each required field left out, or empty, refuses the table. */
static void test_row_without_source_refused(void **st) {
    (void)st;
    const char *fields[] = {"source", "table", "date", "url"};
    for (int i = 0; i < 4; i++) {
        char src[512] = "", line[128];
        for (int j = 0; j < 4; j++) {
            snprintf(line, sizeof line, "    %s: \"%s\"\n", fields[j], i == j ? "" : "x");
            if (i != j || j % 2) strcat(src, line); /* left out, or given empty */
        }
        char t[1024];
        snprintf(t, sizeof t, "rates:\n" ROW("v100", "resnet50", "%s"), src);
        gpu_rate_t *rows = NULL;
        int n = 7;
        assert_int_equal(parse(t, &rows, &n), EXIT_INPUT);
        assert_null(rows);
        assert_int_equal(n, 0);
    }
}

static void test_bad_rows_refused(void **st) {
    (void)st;
    const char *bad[] = {
        "rates:\n" ROW("v100", "resnet50", SRC) ROW("V100", "ResNet50", SRC), /* duplicate */
        "rates:\n" ROW("v100", "resnet50", SRC "    sorce: x\n"),             /* unknown field */
        "rates:\n  - {gpu: v100, model: m, items_per_s: -1, batch: 1, precision: p, source: s, "
        "table: t, date: d, url: u}\n",
        "rates:\n  - {gpu: v100, model: m, items_per_s: 1, batch: 0, precision: p, source: s, "
        "table: t, date: d, url: u}\n",
        "rates:\n  - {gpu: v100, model: m, items_per_s: 1, batch: 8, source: s, "
        "table: t, date: d, url: u}\n", /* no precision */
        "rates:\n  - {gpu: v100, model: m, items_per_s: nan, batch: 8, precision: p, source: s, "
        "table: t, date: d, url: u}\n",
        "rows: []\n",
        "rates: [1, 2]\n",
        "rates: {a: 1}\n",
        "rates:\n  - {gpu: [v100]}\n",
        "rates: [\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        gpu_rate_t *rows = NULL;
        int n;
        assert_int_equal(parse(bad[i], &rows, &n), EXIT_INPUT);
        assert_null(rows);
    }
}

static void test_builtin_sourced(void **st) {
    (void)st;
    int n, rc;
    const gpu_rate_t *rows = gpu_rates_builtin(&n, &rc);
    assert_non_null(rows);
    assert_int_equal(rc, 0);
    assert_true(n > 0);
    for (int i = 0; i < n; i++) {
        assert_true(rows[i].items_per_s > 0 && rows[i].batch >= 1);
        assert_true(rows[i].source[0] && rows[i].table[0] && rows[i].date[0] && rows[i].url[0]);
        assert_true(rows[i].precision[0]);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_table),
        cmocka_unit_test(test_row_without_source_refused),
        cmocka_unit_test(test_bad_rows_refused),
        cmocka_unit_test(test_builtin_sourced),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
