/* report: prints the results of `stallsim run` as an aligned text table, a
 * tidy CSV or JSON (results to stdout, nothing else). Each variant carries its
 * effective scenario, the model's metrics and, when simulated, the
 * simulator's; the report computes nothing but comparisons (relative
 * differences, speed-ups over the first variant). */
#ifndef STALLSIM_REPORT_H
#define STALLSIM_REPORT_H

#include <stdio.h>

#include "fig.h"
#include "out.h"
#include "run.h"

typedef enum { FORMAT_TEXT, FORMAT_CSV, FORMAT_JSON, FORMAT_HTML } report_format_t;

/* The --format row (a report_format_t at `offset`) for a command's options table. */
#define REPORT_FORMAT_OPTION(offset_)                                                              \
    {                                                                                              \
        .name = "--format", .type = OPT_FN, .arg = "FMT", .offset = (offset_),                     \
        .fn = report_format_parse, .help = "text (default), csv, json or html (one page)"          \
    }
int report_format_parse(void *format, const char *cmd, const char *value);

/* Writes the runs in fmt after report_valid_runs has passed every figure
 * (0), or writes nothing and returns EXIT_RUNTIME after its message; cmd
 * names the command in it. */
int report_write(FILE *out, report_format_t fmt, const char *path, const variant_run_t *v, int nv,
                 const char *cmd);

/* Sum over epochs of the slowest instance's epoch time: what a user waits for. */
double report_total_s(const run_metrics_t *r);

/* CSV header and one row; shared with sweeps so both stay in step. The
 * variant and job are quoted as fields (out_csv_field); extra_values goes
 * out as it is. */
void report_csv_header(FILE *out, const char *extra_columns);
/* model: the model's row a sim row is compared with (vs_model,
 * model_differs: gap.h), NULL for a model row. Figures print cleaned of
 * floating noise (fig_clean); report_check_metrics has passed them. */
void report_csv_row(FILE *out, const char *extra_values, const char *variant, const char *job,
                    int epoch, const char *source, const epoch_metrics_t *m,
                    const epoch_metrics_t *model);
/* 1 when a figure of the row is outside its range (fig.h), with its column
 * name, value and range; 0 when every one may be printed. */
int report_check_metrics(const epoch_metrics_t *m, const epoch_metrics_t *model, const char **name,
                         double *value, fig_range_t *range);
/* The same for a server's figures (counts and bytes: FIG_NONNEG each). */
int report_check_server(const server_metrics_t *m, const char **name, double *value);

/* The text table of epoch rows as `run` prints it; `measure` prints its
 * rows through it with a wider source column and finer figures (its
 * epochs are short). The header line starts with an empty line. */
typedef struct {
    int source_width;  /* the source column: 6 (model, sim, sample), 8 (measured) */
    int fine;          /* more decimals: epoch_s 3, stalls 2, read_GB 4 (else 1) */
    int variant_width; /* the variant column (report_variant_width); 0: 10 */
} report_table_t;
extern const report_table_t report_run_table;
void report_text_header(FILE *out, const report_table_t *t);
/* The variant column's width in every text table: the longest name, at
 * least 10, so a long name shifts the columns of every row alike. */
int report_variant_width(const variant_run_t *v, int nv);
void report_text_row(FILE *out, const report_table_t *t, const char *variant, const char *job,
                     int epoch, const char *src, const epoch_metrics_t *m,
                     const epoch_metrics_t *ref);

/* JSON pieces shared with `stallsim measure` and `sweep`, written through
 * the out module's writer as the value of key (NULL in an array): one
 * epoch's metrics as an object, and the effective configuration, every
 * scenario key by its dotted name and "jobs": [ {job keys}, ... ]. */
void report_json_metrics(out_json_t *j, const char *key, const epoch_metrics_t *m,
                         const epoch_metrics_t *model);
void report_json_config(out_json_t *j, const char *key, const scenario_t *s);

#endif
