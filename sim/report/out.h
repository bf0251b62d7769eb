/* out: a record's fields described once, written as CSV columns or JSON
 * members, so that a command's CSV and JSON of one record cannot drift.
 * `run`'s epoch metrics (report.c), `measure`'s and `advise`'s points go
 * through it; a field may be left out of one of the two (skip).
 *
 *   static const out_field_t f[] = {{"gpu_util", OUT_NUM, "%.6f"},
 *                                   {"bottleneck", OUT_NAME, NULL, bottleneck_names}};
 *   double v[] = {0.91, BN_PREP};
 *   out_csv_names(stdout, f, 2, "sim_");  -- ",sim_gpu_util,sim_bottleneck"
 *   out_csv_values(stdout, f, 2, v);      -- ",0.910000,prep"
 *   out_json_members(stdout, f, 2, v);    -- "\"gpu_util\": 0.910000, \"bottleneck\": \"prep\"" */
#ifndef STALLSIM_OUT_H
#define STALLSIM_OUT_H

#include <stdio.h>

typedef enum { OUT_NUM, OUT_BOOL, OUT_NAME } out_kind_t;

enum { OUT_SKIP_CSV = 1, OUT_SKIP_JSON = 2 };

typedef struct {
    const char *name; /* CSV column and JSON key */
    out_kind_t kind;
    const char *fmt;          /* a number's printf format (CSV and JSON; a bool's in CSV) */
    const char *const *names; /* OUT_NAME: the value v prints as names[(int)v] */
    int skip;                 /* OUT_SKIP_CSV, OUT_SKIP_JSON: not in that format */
} out_field_t;

/* One value: a number in its format, a bool as true/false (JSON) or its
 * format (CSV), a name quoted in JSON. */
void out_value(FILE *f, const out_field_t *fd, double v, int json);
/* ",PREFIXname" for each field in the CSV. */
void out_csv_names(FILE *f, const out_field_t *fd, int n, const char *prefix);
/* ",value" for each field in the CSV. */
void out_csv_values(FILE *f, const out_field_t *fd, int n, const double *v);
/* "\"name\": value" for each field in JSON, separated by ", ". */
void out_json_members(FILE *f, const out_field_t *fd, int n, const double *v);

#endif
