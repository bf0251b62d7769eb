/* fit: see fit.h. */
#include "fit.h"
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <math.h>

int fit_linear(const double *x, const double *y, int n, linear_fit *out) {
    out->slope = out->intercept = out->r2 = 0.0;
    out->n = n;
    if (n < 2) return -1;
    int distinct = 0;
    for (int i = 1; i < n && !distinct; i++)
        distinct = x[i] != x[0];
    if (!distinct) return -1;
    double c0, c1, cov00, cov01, cov11, sumsq;
    if (gsl_fit_linear(x, 1, y, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq) !=
        GSL_SUCCESS)
        return -1;
    double mean = 0.0, tss = 0.0;
    for (int i = 0; i < n; i++)
        mean += y[i];
    mean /= n;
    for (int i = 0; i < n; i++)
        tss += (y[i] - mean) * (y[i] - mean);
    out->intercept = c0;
    out->slope = c1;
    out->r2 = tss > 0.0 ? 1.0 - sumsq / tss : 1.0;
    return 0;
}

static double sq_error(const double *x, const double *y, int n, double per_x, double fixed) {
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        double e = y[i] - (per_x * x[i] + fixed);
        s += e * e;
    }
    return s;
}

/* With two coefficients the bounded optimum, when the free one is out of
 * bounds, lies on an edge: per_x = 0 (the mean) or fixed = 0 (through 0),
 * each clipped at 0. The better of the two is the bounded least squares. */
int fit_cost_line(const double *x, const double *y, int n, cost_line *out) {
    *out = (cost_line){0.0, 0.0, COST_MEAN_NO_LINE};
    if (n < 1) return -1;
    double mean = 0.0, sxy = 0.0, sxx = 0.0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) return -1;
        mean += y[i];
        sxy += x[i] * y[i];
        sxx += x[i] * x[i];
    }
    mean = fmax(mean / n, 0.0);
    linear_fit f;
    if (fit_linear(x, y, n, &f) != 0) {
        out->fixed = mean;
        return 0;
    }
    if (f.slope >= 0.0 && f.intercept >= 0.0) {
        *out = (cost_line){f.slope, f.intercept, COST_FIT};
        return 0;
    }
    double through = sxx > 0.0 ? fmax(sxy / sxx, 0.0) : 0.0;
    if (sq_error(x, y, n, through, 0.0) < sq_error(x, y, n, 0.0, mean))
        *out = (cost_line){through, 0.0, COST_THROUGH_ORIGIN};
    else
        *out = (cost_line){0.0, mean, COST_MEAN};
    return 0;
}

const char *cost_method_words(cost_method m) {
    switch (m) {
    case COST_FIT:
        return "fit";
    case COST_THROUGH_ORIGIN:
        return "line through 0 (the free fit had a negative coefficient; held >= 0)";
    case COST_MEAN:
        return "plain mean per item (the free fit had a negative coefficient; held >= 0, the "
               "cost does not grow with size here)";
    case COST_MEAN_NO_LINE:
        return "plain mean per item (no line to fit: every sample has the same size)";
    }
    return "?";
}
