/* self_check: a scenario that stallsim writes (init, import) is built as
 * `stallsim check` builds it, every variant, before it is written: a
 * writer never hands out a file that check would refuse.
 *
 *   rc = self_check(text, len, "import", "this workload makes a scenario check refuses");   0, or
 * EXIT_INPUT after the errors
 */
#ifndef STALLSIM_SELF_CHECK_H
#define STALLSIM_SELF_CHECK_H

#include <stddef.h>

/* The text as `stallsim check` takes it (no memory budget: that is the
 * running machine's). 0, or an exit code after its errors on stderr, which
 * name "(stallsim CMD's output)", then "stallsim CMD: WHY" (what to change). */
int self_check(const char *text, size_t len, const char *cmd, const char *why);

#endif
