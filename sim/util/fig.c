/* fig: see fig.h. */
#include "fig.h"

#include <math.h>
#include <stdio.h>

const char *fig(char *b, size_t n, double v, int prec) {
    if (fabs(v) < 1e10 || !isfinite(v))
        snprintf(b, n, "%.*f", prec, v);
    else
        snprintf(b, n, "%.3g", v);
    return b;
}
