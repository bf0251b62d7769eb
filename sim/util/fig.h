/* fig: a figure for a text table, as `run`'s report and `measure`'s table
 * print them: `prec` decimals, or %.3g past 1e10 (a 1e-300 rate gives a
 * 1e+303 s epoch, which in %f is 300 digits across the table). Print the
 * returned string in a %Ns field where the table had %N.Pf. */
#ifndef STALLSIM_FIG_H
#define STALLSIM_FIG_H

#include <stddef.h>

/* Writes v into b[n] and returns b. */
const char *fig(char *b, size_t n, double v, int prec);

#endif
