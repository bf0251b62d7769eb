/* options: one table per command drives both the parsing of its flags and
 * the usage text `COMMAND --help` and `stallsim help COMMAND` print, so the
 * two cannot drift (fio's options.c does the same for job options).
 *
 * A command fills an options struct; each row names a flag, its alias, its
 * argument, its help and where its value goes (an offset into the struct).
 * Rows shared by several commands (--set, --variant, ...) live in one table
 * the commands list beside their own. Flags take `--flag VALUE` or
 * `--flag=VALUE`; errors are "stallsim CMD: ..." on stderr and exit 2. */
#ifndef STALLSIM_OPTIONS_H
#define STALLSIM_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    OPT_FLAG, /* int at offset set to 1 */
    OPT_STR,  /* const char * at offset (the last one given wins) */
    OPT_LIST, /* const char *[max] at offset, its count an int at count_offset */
    OPT_INT,  /* int at offset, in [min, max] */
    OPT_REAL, /* double at offset, finite, >= real_min (> it with real_min_open) */
    OPT_FN    /* fn(field at offset, cmd, value) stores it; 0, or EXIT_INPUT after a message */
} opt_type_t;

typedef struct {
    const char *name;  /* "--vary"; NULL ends a table */
    const char *alias; /* "-o", or NULL */
    opt_type_t type;
    const char *arg; /* what the value is, for the usage text ("key=value"); NULL for flags */
    size_t offset;
    size_t count_offset; /* OPT_LIST */
    long min, max;       /* OPT_INT bounds; OPT_LIST capacity in max */
    /* OPT_REAL: the least value and the unit its error names ("expected a
     * number of GB >= 0"). */
    double real_min;
    int real_min_open;
    const char *unit;
    int (*fn)(void *field, const char *cmd, const char *value);
    const char *help;       /* lines after the first are indented under it */
    const char *deprecated; /* NULL, or the note printed when it is used */
} option_t;

typedef struct {
    const char *name;              /* "sweep" */
    const char *synopsis;          /* what follows `stallsim sweep` in the usage line */
    const char *about;             /* a paragraph after the usage line; may be NULL */
    const option_t *const *tables; /* NULL-terminated */
    /* The positional argument (a const char * at positional_offset), if any. */
    const char *positional;
    size_t positional_offset;
    const char *footer; /* after the options; may be NULL */
} command_t;

/* Parses argv[1..argc) into opts. Returns 0, 1 when --help was printed (the
 * caller exits 0), or EXIT_INPUT after an error on stderr. A missing
 * positional is the caller's to report (some commands read stdin). */
int options_parse(const command_t *c, int argc, char **argv, void *opts);
void options_usage(FILE *out, const command_t *c);
/* "stallsim CMD: <fmt with %s = arg>\n(stallsim CMD --help for usage)"; EXIT_INPUT. */
int options_error(const char *cmd, const char *fmt, const char *arg);

#endif
