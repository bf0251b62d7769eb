/* stats: see stats.h. */
#include "stats.h"
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double sorted_percentile(const double *s, int n, double p) {
    if (n <= 0) return 0.0;
    if (p <= 0.0) return s[0];
    if (p >= 100.0) return s[n - 1];
    double rank = p / 100.0 * (n - 1);
    int lo = (int)rank;
    double frac = rank - lo;
    if (lo + 1 >= n) return s[n - 1];
    return s[lo] + frac * (s[lo + 1] - s[lo]);
}

static double *sorted_copy(const double *x, int n) {
    double *s = malloc(sizeof *s * (size_t)(n > 0 ? n : 1));
    if (!s) abort(); /* a few KB: failing here means the process is already lost */
    if (n > 0) memcpy(s, x, sizeof *s * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return s;
}

stat_summary stats_summarize(const double *x, int n) {
    stat_summary r = {0.0, 0.0, 0.0, n};
    if (n <= 0) return r;
    double *s = sorted_copy(x, n);
    r.median = sorted_percentile(s, n, 50.0);
    r.min = s[0];
    r.max = s[n - 1];
    free(s);
    return r;
}

double stats_percentile(const double *x, int n, double p) {
    if (n <= 0) return 0.0;
    double *s = sorted_copy(x, n);
    double v = sorted_percentile(s, n, p);
    free(s);
    return v;
}
