/* fig: see fig.h. */
#include "fig.h"

#include <math.h>
#include <stdio.h>

#define FIG_NOISE 1e-9
/* A share is busy / span, each a sum of the model's fluid slices: an exactly
 * storage-bound epoch comes out at 1 + 7e-7 (NC2: GPUs fed 1e12 items/s),
 * far above the doubles' rounding but 100 times below the 0.1 % a share is
 * printed to. Past it a share is a fault (NC1's 1.35 was one). */
#define FIG_SHARE_NOISE 1e-5

double fig_zero(double v, int prec) {
    /* -0.04 at one decimal prints "-0.0": a zero, so +0. */
    return fabs(v) < 0.5 * pow(10, -prec) ? 0.0 : v;
}

const char *fig(char *b, size_t n, double v, int prec) {
    v = fig_zero(v, prec);
    if (fabs(v) < 1e10 || !isfinite(v))
        snprintf(b, n, "%.*f", prec, v);
    else
        snprintf(b, n, "%.3g", v);
    return b;
}

static double tolerance(fig_range_t r, double scale) {
    if (r == FIG_SHARE) return FIG_SHARE_NOISE;
    return r == FIG_TIME && fabs(scale) > 1 ? FIG_NOISE * fabs(scale) : FIG_NOISE;
}

double fig_clean(double v, fig_range_t r, double scale) {
    double tol = tolerance(r, scale);
    if (r != FIG_ANY && v < 0 && v >= -tol) v = 0;
    /* A stall of 7e-15 s is the same noise on the other side. */
    if (r == FIG_TIME && fabs(v) <= tol) v = 0;
    if (r == FIG_SHARE && v > 1 && v <= 1 + tol) v = 1;
    return v + 0.0; /* -0 + 0 is +0 */
}

int fig_ok(double v, fig_range_t r, double scale) {
    if (!isfinite(v)) return 0;
    v = fig_clean(v, r, scale);
    switch (r) {
    case FIG_ANY:
        return 1;
    case FIG_NONNEG:
    case FIG_TIME:
        return v >= 0;
    case FIG_POSITIVE:
        return v > 0;
    case FIG_SHARE:
        return v >= 0 && v <= 1;
    }
    return 0;
}

const char *fig_range_text(fig_range_t r) {
    static const char *const text[] = {"a finite number", "a finite number >= 0", "a time >= 0 s",
                                       "a time > 0 s", "a share in [0, 1]"};
    return text[r];
}
