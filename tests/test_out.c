/* The output module (out.h) held to handmade documents: the JSON writer's
 * separators and breaks, its compact form, a number that is not finite
 * written as null (never "nan", which no JSON reader takes), scenario
 * numbers as text checked the same way, and one field table written as CSV
 * columns, JSON members and text columns alike. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "out.h"

static const char *const bn[] = {"gpu", "prep"};
static const out_field_t fields[] = {
    {"util", OUT_NUM, "%.3f", NULL, 0, NULL, 7, "%.1f"},
    {"ok", OUT_BOOL, "%d", NULL, 0, "fine", 5, "%.0f"},
    {"bn", OUT_NAME, NULL, bn, OUT_SKIP_CSV, NULL, 0, NULL},
    {"csv_only", OUT_NUM, "%.0f", NULL, OUT_SKIP_JSON, NULL, 0, NULL},
};

typedef struct {
    char *buf;
    size_t len;
    FILE *f;
} mem_t;

static void mem_open(mem_t *m) {
    m->buf = NULL, m->len = 0;
    m->f = open_memstream(&m->buf, &m->len);
    assert_non_null(m->f);
}

/* Closes the stream and checks what it holds. */
static void mem_is(mem_t *m, const char *want) {
    assert_int_equal(fclose(m->f), 0);
    assert_string_equal(m->buf, want);
    free(m->buf);
}

static void json_separators_and_breaks(void **state) {
    (void)state;
    mem_t m;
    mem_open(&m);
    out_json_t j;
    out_json_begin(&j, m.f);
    out_jobj(&j, NULL);
    out_jint(&j, "a", 1);
    out_jstr(&j, "s", "q\"\\\n");
    out_jbreak(&j, "\n ");
    out_jarr(&j, "list");
    for (int i = 0; i < 2; i++) {
        out_jbreak(&j, "\n  ");
        out_jbool(&j, NULL, i);
    }
    out_jbreak(&j, "\n ");
    out_jend(&j);
    out_jarr(&j, "empty");
    out_jend(&j);
    out_jnull(&j, "none");
    out_jend(&j);
    mem_is(&m, "{\"a\": 1, \"s\": \"q\\\"\\\\\\u000a\",\n \"list\": [\n  false,\n  true\n ], "
               "\"empty\": [], \"none\": null}");
}

static void json_compact(void **state) {
    (void)state;
    mem_t m;
    mem_open(&m);
    out_json_t j;
    out_json_begin(&j, m.f);
    j.compact = 1;
    out_jobj(&j, NULL);
    out_jstr(&j, "ph", "X");
    out_jobj(&j, "args");
    out_jnum(&j, "ts", "%.3f", 1.5);
    out_jint(&j, "n", 2);
    out_jend(&j);
    out_jend(&j);
    mem_is(&m, "{\"ph\":\"X\",\"args\":{\"ts\":1.500,\"n\":2}}");
}

/* Old code printed these with their format: "nan", "inf", "-inf". */
static void json_nonfinite_is_null(void **state) {
    (void)state;
    mem_t m;
    mem_open(&m);
    out_json_t j;
    out_json_begin(&j, m.f);
    out_jarr(&j, NULL);
    out_jnum(&j, NULL, "%.9g", NAN);
    out_jnum(&j, NULL, "%.9g", INFINITY);
    out_jnum(&j, NULL, "%.9g", -INFINITY);
    out_jnum(&j, NULL, "%.9g", 2.5);
    const double v[] = {NAN, 1, 0, 7};
    out_jobj(&j, NULL);
    out_jfields(&j, fields, 4, v);
    out_jend(&j);
    out_jend(&j);
    mem_is(&m, "[null, null, null, 2.5, {\"util\": null, \"ok\": true, \"bn\": \"gpu\"}]");
    assert_int_equal(j.nonfinite, 4);
}

static void json_number_text(void **state) {
    (void)state;
    mem_t m;
    mem_open(&m);
    out_json_t j;
    out_json_begin(&j, m.f);
    out_jarr(&j, NULL);
    const char *text[] = {"12", "-3.5", "1e+20", "inf", "nan", "0x10", "", "1 "};
    for (int i = 0; i < 8; i++)
        out_jnumtext(&j, NULL, text[i]);
    out_jend(&j);
    mem_is(&m, "[12, -3.5, 1e+20, null, null, null, null, null]");
    assert_int_equal(j.nonfinite, 5);
}

static void fields_in_every_format(void **state) {
    (void)state;
    const double v[] = {0.25, 1, 1, 9};
    mem_t m;
    mem_open(&m);
    out_csv_names(m.f, fields, 4, "sim_");
    fputc('|', m.f);
    out_csv_values(m.f, fields, 4, v);
    fputc('|', m.f);
    out_csv_blank(m.f, fields, 4);
    fputc('|', m.f);
    out_text_heads(m.f, fields, 2);
    fputc('|', m.f);
    out_text_values(m.f, fields, 2, v);
    mem_is(&m, ",sim_util,sim_ok,sim_csv_only|,0.250,1,9|,,,|    util  fine|     0.2     1");
    mem_open(&m);
    out_json_t j;
    out_json_begin(&j, m.f);
    out_jrecord(&j, NULL, fields, 4, v);
    mem_is(&m, "{\"util\": 0.250, \"ok\": true, \"bn\": \"prep\"}");
}

static void csv_quoting(void **state) {
    (void)state;
    mem_t m;
    mem_open(&m);
    out_csv_field(m.f, "plain");
    fputc('|', m.f);
    out_csv_field(m.f, "a,\"b\"");
    mem_is(&m, "plain|\"a,\"\"b\"\"\"");
    char buf[8];
    assert_int_equal(out_csv_quote(buf, sizeof buf, "x,y"), 5);
    assert_string_equal(buf, "\"x,y\"");
    assert_int_equal(out_csv_quote(buf, 4, "x,y"), 5); /* cut, the full length told */
    assert_string_equal(buf, "\"x,");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_separators_and_breaks), cmocka_unit_test(json_compact),
        cmocka_unit_test(json_nonfinite_is_null),     cmocka_unit_test(json_number_text),
        cmocka_unit_test(fields_in_every_format),     cmocka_unit_test(csv_quoting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
