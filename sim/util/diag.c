/* diag: see diag.h. */
#include "diag.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* While diag_drop_repeats(1) is in force, whether this exact message was
 * printed before, remembering it if not. Each variant is validated on its
 * own, so an error in the shared part of a scenario (or a --set) would
 * otherwise be printed once per variant. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t seen[256];
static int dropping, nseen, next;
static _Thread_local int muted;

void diag_mute(int on) {
    muted = on;
}

void diag_drop_repeats(int on) {
    pthread_mutex_lock(&lock);
    dropping = on;
    nseen = next = 0;
    pthread_mutex_unlock(&lock);
}

static int seen_before(src_pos_t pos, const char *kind, const char *msg) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    const char *parts[3] = {pos.file ? pos.file : "", kind, msg};
    for (int p = 0; p < 3; p++) {
        for (const char *c = parts[p]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    h ^= (uint64_t)(unsigned)pos.line << 32 ^ (uint64_t)(unsigned)pos.col;
    pthread_mutex_lock(&lock);
    int found = 0;
    for (int i = 0; dropping && i < nseen && !found; i++)
        found = seen[i] == h;
    if (dropping && !found) {
        seen[next] = h;
        next = (next + 1) % 256;
        nseen += nseen < 256;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

/* Messages quote what the user wrote; a control character or a stray byte
 * in it is shown as \xHH, never sent to the terminal as it is. */
static void vreport(src_pos_t pos, const char *kind, const char *fmt, va_list ap) {
    if (muted) return;
    char small[1024], *msg = small;
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    if (len < 0) small[0] = 0;
    if (len >= (int)sizeof small && (msg = malloc((size_t)len + 1)) != NULL)
        vsnprintf(msg, (size_t)len + 1, fmt, again);
    va_end(again);
    if (!seen_before(pos, kind, msg ? msg : small)) {
        if (pos.file && pos.line > 0) {
            text_put_escaped(stderr, pos.file);
            fprintf(stderr, ":%d:%d: %s: ", pos.line, pos.col > 0 ? pos.col : 1, kind);
        } else if (pos.file) {
            text_put_escaped(stderr, pos.file);
            fprintf(stderr, ": %s: ", kind);
        } else {
            fprintf(stderr, "stallsim: %s: ", kind);
        }
        text_put_escaped(stderr, msg ? msg : small);
        fputc('\n', stderr);
    }
    if (msg != small) free(msg);
}

void diag_error(src_pos_t pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(pos, "error", fmt, ap);
    va_end(ap);
}

void diag_warning(src_pos_t pos, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vreport(pos, "warning", fmt, ap);
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
