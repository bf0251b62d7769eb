/* compare_out: what `stallsim compare` found (cmp_t, filled by compare.c)
 * written as text, JSON or one HTML page. Every number is finite (JSON,
 * through out.h's writer, has null where one could not be), and the same inputs give the same
 * bytes. */
#ifndef STALLSIM_COMPARE_OUT_H
#define STALLSIM_COMPARE_OUT_H

#include <stdio.h>

#include "compare.h"
#include "report.h"

typedef struct {
    long long meas_iters;
    int complete;
    double meas_s, pred_s, err;   /* epoch time; err = (pred - meas) / meas */
    double meas_stall, meas_gpu;  /* the waits, the steps (s) */
    double pred_stall, pred_gpu;  /* T - T_gpu, T_gpu */
    double pred_prep, pred_fetch; /* the predicted split (s) */
} cmp_row_t;

typedef struct {
    const char *measured_path, *scenario_path, *variant, *job, *source;
    int n, worst;
    long long pred_iters; /* batches an epoch in the scenario */
    cmp_row_t row[MEASURED_MAX_EPOCHS];
    double meas_total, pred_total, total_err;
    /* Per iteration (ms): measured by watch's passes (has_split), predicted
     * from the last compared epoch. */
    int has_split;
    double batch, m_t, m_prep, m_gpu, p_t, p_prep, p_gpu;
    /* The input that most likely explains the worst epoch: "batches",
     * "step", "stall", "prep" or "fetch", its measured and predicted value. */
    const char *input;
    double in_meas, in_pred;
} cmp_t;

/* 0, or EXIT_RUNTIME when stdout could not take it. */
int compare_write(FILE *out, report_format_t fmt, const measured_t *m, const cmp_t *c);

#endif
