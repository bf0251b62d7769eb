/* diag: see diag.h. */
#include "diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* Messages quote what the user wrote; a control character or a stray byte
 * in it is shown as \xHH, never sent to the terminal as it is. */
static void vreport(src_pos_t pos, const char *kind, const char *fmt, va_list ap) {
    if (pos.file && pos.line > 0) {
        text_put_escaped(stderr, pos.file);
        fprintf(stderr, ":%d:%d: %s: ", pos.line, pos.col > 0 ? pos.col : 1, kind);
    } else if (pos.file) {
        text_put_escaped(stderr, pos.file);
        fprintf(stderr, ": %s: ", kind);
    } else {
        fprintf(stderr, "stallsim: %s: ", kind);
    }
    char small[1024], *msg = small;
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    if (len < 0) small[0] = 0;
    if (len >= (int)sizeof small && (msg = malloc((size_t)len + 1)) != NULL)
        vsnprintf(msg, (size_t)len + 1, fmt, again);
    va_end(again);
    text_put_escaped(stderr, msg ? msg : small);
    if (msg != small) free(msg);
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
