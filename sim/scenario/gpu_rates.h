/* gpu_rates: published per-GPU training rates, each with its source.
 *
 * One data file, scenarios/gpus/rates.yaml (its header says what a row
 * holds and which rows are wanted), is embedded in the program at build
 * time and parsed on first use. A job that names `gpu` and `model` and gives
 * no rate of its own takes the row's items/s (scenario.c); the report says
 * the rate is published and cites the row. A row that lacks a field (a
 * source above all) refuses the whole table, naming the row's line: a
 * figure is never used without its source.
 *
 *   const gpu_rate_t *r = gpu_rate_find(gpu_rates_builtin(&n, &rc), n, "v100", "resnet50");
 *
 * Names match ignoring case, '-', '_' and spaces (ResNet-50 = resnet50). */
#ifndef STALLSIM_GPU_RATES_H
#define STALLSIM_GPU_RATES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diag.h"

typedef struct gpu_rate {
    const char *gpu, *model;
    double items_per_s; /* per GPU, fed instantly */
    int64_t batch;      /* the per-GPU batch it was measured at */
    const char *precision, *source, *table, *date, *url;
    const char *setup, *note; /* "" when not given */
    src_pos_t pos;            /* the row in its file */
} gpu_rate_t;

/* Parses a table from len bytes at text; name stands for the file in
 * messages. 0 with *rows and *n (gpu_rates_free frees them), or EXIT_INPUT
 * after printing every bad row, or EXIT_RUNTIME without memory. */
int gpu_rates_parse(const char *name, const char *text, size_t len, gpu_rate_t **rows, int *n);
void gpu_rates_free(gpu_rate_t *rows, int n);

/* The built-in table, parsed once (thread-safe). NULL with *rc set
 * (EXIT_INPUT: the errors were printed, once) when it does not load. */
const gpu_rate_t *gpu_rates_builtin(int *n, int *rc);

/* The row of (gpu, model), or NULL. */
const gpu_rate_t *gpu_rate_find(const gpu_rate_t *rows, int n, const char *gpu, const char *model);

/* The distinct GPU names of the table, comma-separated, in table order; with
 * gpu not NULL, the models of that GPU instead. */
void gpu_rates_names(const gpu_rate_t *rows, int n, const char *gpu, char *buf, size_t size);

/* Whether two names match (case, '-', '_' and spaces ignored). */
int gpu_rates_name_eq(const char *a, const char *b);

/* One line citing row r: "v100 resnet50: 700 items/s per GPU at batch 512
 * (mixed); SOURCE; TABLE; DATE; URL". */
void gpu_rate_cite(const gpu_rate_t *r, char *buf, size_t size);

/* The table as text or (markdown) a Markdown table: `stallsim help gpus`. */
void gpu_rates_print(FILE *out, const gpu_rate_t *rows, int n, int markdown);

/* The hardware video decoder engines (NVDEC) of GPU `gpu` (the table's
 * names: v100, a100-80gb, h100-sxm, h200, ...), as NVIDIA publishes them,
 * each cited where it is listed (gpu_rates.c); 0 where the count is not
 * known (a video pipeline decoding on the GPU then needs prep.nvdec_engines). */
int gpu_nvdec_engines(const char *gpu);

#endif
