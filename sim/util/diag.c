/* diag: see diag.h. */
#include "diag.h"

#include <stdio.h>
#include <string.h>

static void vreport(src_pos_t pos, const char *kind, const char *fmt, va_list ap) {
    if (pos.file && pos.line > 0)
        fprintf(stderr, "%s:%d:%d: %s: ", pos.file, pos.line, pos.col > 0 ? pos.col : 1, kind);
    else if (pos.file)
        fprintf(stderr, "%s: %s: ", pos.file, kind);
    else
        fprintf(stderr, "stallsim: %s: ", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void diag_error(src_pos_t pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(pos, "error", fmt, ap);
    va_end(ap);
}

void diag_note(src_pos_t pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(pos, "note", fmt, ap);
    va_end(ap);
}

int diag_edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 64; /* keys are short; anything longer is no suggestion */
    int row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}
