/* progress: see progress.h. */
#include "progress.h"
#include <stdarg.h>
#include <stdio.h>

static int quiet;

void progress_set_quiet(int q) {
    quiet = q;
}

void progress(const char *fmt, ...) {
    if (quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("calibrate: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
