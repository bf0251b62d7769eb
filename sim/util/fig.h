/* fig: how a figure is printed and what it must be to be printed at all.
 *
 * fig() writes a figure for a text table, as `run`'s report and `measure`'s
 * table print them: `prec` decimals, or %.3g past 1e10 (a huge value would
 * be hundreds of digits across the table), and never "-0.0": a value that
 * rounds to zero at `prec` is written as +0. Print the returned string in a
 * %Ns field where the table had %N.Pf.
 *
 * A figure has a range (fig_range_t): a time or count is >= 0, a share
 * (utilisation, hit rate, stall share) in [0, 1], an epoch > 0, and every
 * figure finite. fig_ok says whether v lies in its range up to floating
 * noise (1e-9, relative to `scale` for times: an epoch's differences of
 * sums leave -1e-13 s stalls; 1e-5 for shares, the model's fluid sums'
 * error, 100 times below a share's printed 0.1 %); fig_clean moves such noise onto the range
 * (-1e-13 -> 0, 1 + 1e-12 -> 1, -0 -> +0) for printing. The report layer
 * (report_check_metrics) refuses a figure fig_ok rejects. */
#ifndef STALLSIM_FIG_H
#define STALLSIM_FIG_H

#include <stddef.h>

typedef enum {
    FIG_ANY,      /* finite */
    FIG_NONNEG,   /* a count or rate: >= 0 */
    FIG_TIME,     /* seconds: >= 0, noise relative to the epoch */
    FIG_POSITIVE, /* an epoch's time: > 0 */
    FIG_SHARE     /* a utilisation, hit rate or share: in [0, 1] */
} fig_range_t;

/* Writes v into b[n] and returns b. */
const char *fig(char *b, size_t n, double v, int prec);
/* v, or +0 where it prints as zero at prec decimals (no "-0.0"). */
double fig_zero(double v, int prec);
/* Whether v is finite and in range r (scale: the epoch's seconds, for FIG_TIME). */
int fig_ok(double v, fig_range_t r, double scale);
/* v with floating noise across the range's edges removed, and no -0. */
double fig_clean(double v, fig_range_t r, double scale);
/* The range in words, for a message: "a time >= 0 s", "a share in [0, 1]". */
const char *fig_range_text(fig_range_t r);

#endif
