/* out: the one way every command writes CSV and JSON. A record's fields are
 * described once (out_field_t) and written as CSV columns or JSON members,
 * so that a command's CSV and JSON of one record cannot drift; documents
 * are written through one JSON writer (out_json_t), which places the
 * separators, escapes every string and never writes a number JSON cannot
 * hold. `run` (epoch metrics, servers, cost, memory, spread, the
 * configuration), `measure`, `advise`, `compare` and `sweep`'s metadata
 * go through it; a field may be left out of one of the two formats (skip).
 *
 *   static const out_field_t f[] = {{"gpu_util", OUT_NUM, "%.6f"},
 *                                   {"bottleneck", OUT_NAME, NULL, bottleneck_names}};
 *   double v[] = {0.91, BN_PREP};
 *   out_csv_names(stdout, f, 2, "sim_");  -- ",sim_gpu_util,sim_bottleneck"
 *   out_csv_values(stdout, f, 2, v);      -- ",0.910000,prep"
 *
 *   out_json_t j;
 *   out_json_begin(&j, stdout);
 *   out_jobj(&j, NULL);                   -- {
 *   out_jstr(&j, "name", "a");            -- "name": "a"
 *   out_jbreak(&j, "\n ");                -- the next separator is ",\n " (not ", ")
 *   out_jobj(&j, "point");                -- ,\n "point": {
 *   out_jfields(&j, f, 2, v);             -- "gpu_util": 0.910000, "bottleneck": "prep"
 *   out_jend(&j), out_jend(&j);           -- }}
 *
 * A number that is not finite is written as null and counted in
 * j.nonfinite: the document stays JSON. A command whose figures must be
 * finite refuses them before it writes (valid.h), as `run` does. */
#ifndef STALLSIM_OUT_H
#define STALLSIM_OUT_H

#include <stddef.h>
#include <stdio.h>

typedef enum { OUT_NUM, OUT_BOOL, OUT_NAME } out_kind_t;

enum { OUT_SKIP_CSV = 1, OUT_SKIP_JSON = 2 };

typedef struct {
    const char *name; /* CSV column and JSON key */
    out_kind_t kind;
    const char *fmt;          /* a number's printf format (CSV and JSON; a bool's in CSV) */
    const char *const *names; /* OUT_NAME: the value v prints as names[(int)v] */
    int skip;                 /* OUT_SKIP_CSV, OUT_SKIP_JSON: not in that format */
    /* A text table's column (out_text_*): its heading (NULL: the name),
     * width and the value's printf format there. */
    const char *head;
    int width;
    const char *text_fmt;
} out_field_t;

/* ---- CSV ---- */

/* One value: a number in its format, a bool in its format, a name as it is. */
void out_value(FILE *f, const out_field_t *fd, double v);
/* ",PREFIXname" for each field in the CSV. */
void out_csv_names(FILE *f, const out_field_t *fd, int n, const char *prefix);
/* ",value" for each field in the CSV. */
void out_csv_values(FILE *f, const out_field_t *fd, int n, const double *v);
/* "," for each field in the CSV: a row without those figures. */
void out_csv_blank(FILE *f, const out_field_t *fd, int n);
/* One CSV field as RFC 4180 has it: quoted (quotes doubled) when it holds a
 * comma, a double quote, CR or LF; as it is otherwise. out_csv_quote
 * writes the same into buf (snprintf's contract: the full length returned). */
void out_csv_field(FILE *f, const char *s);
size_t out_csv_quote(char *buf, size_t n, const char *s);

/* ---- text tables ---- */

/* " %*s" of each field's heading, and of its value in its text format. */
void out_text_heads(FILE *f, const out_field_t *fd, int n);
void out_text_values(FILE *f, const out_field_t *fd, int n, const double *v);

/* ---- JSON ---- */

/* A quoted, escaped JSON string (bytes that are not UTF-8 as U+FFFD). */
void out_json_string(FILE *f, const char *s);

#define OUT_JSON_DEPTH 16

typedef struct {
    FILE *f;
    int depth;                   /* objects and arrays open */
    int count[OUT_JSON_DEPTH];   /* values written so far in each */
    char closer[OUT_JSON_DEPTH]; /* the bracket that closes each */
    const char *brk;             /* out_jbreak's whitespace, for the next separator */
    int nonfinite;               /* numbers written as null: they were not finite */
    int compact;                 /* "," and ":" with no space (a trace's many events) */
} out_json_t;

void out_json_begin(out_json_t *j, FILE *f);
/* The whitespace that follows the next separator (or stands alone before
 * the first value, or the closing bracket) in place of the default: ", "
 * between values (compact: ","), nothing before the first or the bracket. */
void out_jbreak(out_json_t *j, const char *ws);
/* Each value takes a key inside an object and NULL inside an array (or at
 * the top). out_jobj and out_jarr open what out_jend closes. */
void out_jobj(out_json_t *j, const char *key);
void out_jarr(out_json_t *j, const char *key);
void out_jend(out_json_t *j);
void out_jnum(out_json_t *j, const char *key, const char *fmt, double v);
void out_jint(out_json_t *j, const char *key, long long v);
void out_jbool(out_json_t *j, const char *key, int b);
void out_jstr(out_json_t *j, const char *key, const char *s);
void out_jnull(out_json_t *j, const char *key);
/* A number already written as text (a scenario key's value): as it is when
 * it is a finite number, else null. */
void out_jnumtext(out_json_t *j, const char *key, const char *text);
/* One field as a member of the open object (skipped: nothing). */
void out_jfield(out_json_t *j, const out_field_t *fd, double v);
/* The fields as members of the open object: a number in its format, a bool
 * as true/false, a name quoted. */
void out_jfields(out_json_t *j, const out_field_t *fd, int n, const double *v);
/* An object of the fields: {"name": value, ...}. */
void out_jrecord(out_json_t *j, const char *key, const out_field_t *fd, int n, const double *v);

#endif
