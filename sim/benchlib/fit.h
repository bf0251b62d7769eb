/* fit: least-squares lines for calibrate's cost models.
 *
 * fit_linear is the free ordinary least-squares line y = slope * x + intercept
 * (GSL's gsl_fit_linear), reported as measured (r2 and all). fit_cost_line is
 * what a cost model is built from: the same least squares with both
 * coefficients held >= 0, since a time per MB or per item below zero is not a
 * cost but noise (a busy host, few or similar files). It takes the free line
 * when both are >= 0, else the better (lower squared error) of the line
 * through 0 and the plain mean; with no line to fit (fewer than 2 points, or
 * every x equal) it is the plain mean. Its method says which, in words for
 * the profile and the progress line (cost_method_words).
 *
 * Use: linear_fit f; if (fit_linear(x, y, n, &f) == 0) use f.slope, f.intercept.
 *      cost_line c; if (fit_cost_line(x, y, n, &c) == 0) use c.per_x, c.fixed, c.method.
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

typedef enum {
    COST_FIT,            /* the free least-squares line: both coefficients >= 0 */
    COST_THROUGH_ORIGIN, /* the free line had a negative coefficient; through 0 fits best */
    COST_MEAN,           /* the free line had a negative coefficient; the mean fits best */
    COST_MEAN_NO_LINE,   /* no line to fit (one point, or one x): the mean */
} cost_method;

typedef struct {
    double per_x, fixed; /* y = per_x * x + fixed; both >= 0 when every y is */
    cost_method method;
} cost_line;

/* Returns 0, or -1 when n < 1 or a sample is not finite (out is zeroed). */
int fit_cost_line(const double *x, const double *y, int n, cost_line *out);

/* The method in words, for the profile's `model:` and calibrate's stderr. */
const char *cost_method_words(cost_method m);

#endif
