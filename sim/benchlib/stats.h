/* stats: summaries of repeated measurements (median, min, max) and
 * percentiles of latency samples. Every figure calibrate reports goes through
 * here so that "median of n repetitions with its spread" means one thing.
 *
 * Use: stat_summary s = stats_summarize(samples, n);
 *      double p99 = stats_percentile(samples, n, 99.0);
 * Inputs are not modified (a sorted copy is made).
 */
#ifndef STALLSIM_STATS_H
#define STALLSIM_STATS_H

typedef struct {
    double median, min, max;
    int n;
} stat_summary;

/* n == 0 gives all fields 0. */
stat_summary stats_summarize(const double *x, int n);

/* p in [0,100]; linear interpolation between closest ranks (numpy's default). */
double stats_percentile(const double *x, int n, double p);

#endif
