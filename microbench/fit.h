/* fit: ordinary least-squares line y = slope * x + intercept (GSL's
 * gsl_fit_linear), used for the storage model (time vs bytes or vs 1/queue
 * depth) and the decode cost model (ms vs encoded MB).
 *
 * Use: linear_fit f; if (fit_linear(x, y, n, &f) == 0) use f.slope, f.intercept.
 */
#ifndef STALLSIM_FIT_H
#define STALLSIM_FIT_H

typedef struct {
    double slope, intercept;
    double r2; /* coefficient of determination; 1 for a perfect fit */
    int n;
} linear_fit;

/* Returns 0, or -1 when fewer than 2 points or all x equal (no line). */
int fit_linear(const double *x, const double *y, int n, linear_fit *out);

#endif
