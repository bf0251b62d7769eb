/* diag: positions in input files and the error messages that cite them.
 *
 * Every user-facing input error is printed as `file:line:col: error: ...` on
 * stderr and makes the command exit 2. A src_pos_t names where a value came
 * from (a YAML node, a --set argument) so checks made long after parsing can
 * still point at the line the user has to fix. */
#ifndef STALLSIM_DIAG_H
#define STALLSIM_DIAG_H

#include <stdarg.h>

typedef struct {
    const char *file; /* static or owned by the scenario document; NULL = built-in default */
    int line;         /* 1-based; 0 = no line (command line, whole file) */
    int col;          /* 1-based */
} src_pos_t;

/* Exit codes shared by every command. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_INPUT = 2 };

/* Prints "file:line:col: error: <fmt>" to stderr. */
void diag_error(src_pos_t pos, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "file:line:col: note: <fmt>" to stderr. */
void diag_note(src_pos_t pos, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* With on = 1, a message identical in position and text to one printed
 * since is dropped (a command validating several variants calls this around
 * them, so an error they share prints once); 0 prints every message again. */
void diag_drop_repeats(int on);

/* Prints "file:line:col: warning: <fmt>" to stderr. */
void diag_warning(src_pos_t pos, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* With on = 1, this thread's messages are not printed (the advice's search
 * builds configurations the user never wrote: their errors are its to
 * weigh, not the user's to read); 0 prints them again. */
void diag_mute(int on);

/* Edit distance, used to suggest the nearest valid key or choice. */
int diag_edit_distance(const char *a, const char *b);

#endif
