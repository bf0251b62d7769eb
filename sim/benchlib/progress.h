/* progress: one place for calibrate's progress and diagnostics on stderr, so
 * tests can silence it (progress_set_quiet) and output stays line-oriented. */
#ifndef STALLSIM_PROGRESS_H
#define STALLSIM_PROGRESS_H

void progress_set_quiet(int quiet);
/* printf-style; prefixed with "calibrate: ", newline added. */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
