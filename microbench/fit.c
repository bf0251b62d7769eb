/* fit: see fit.h. */
#include "fit.h"
#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>

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
