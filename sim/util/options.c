/* options: see options.h. */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "text.h"

int options_error(const char *cmd, const char *fmt, const char *arg) {
    char shown[1024]; /* the argument as typed, control characters as \xHH */
    text_escape(shown, sizeof shown, arg);
    fprintf(stderr, "stallsim %s: ", cmd);
    fprintf(stderr, fmt, shown);
    fprintf(stderr, "\n(stallsim %s --help for usage)\n", cmd);
    return EXIT_INPUT;
}

/* The row named by `a` (a flag, an alias, or either with "=value"), and
 * where its inline value starts. */
static const option_t *find(const command_t *c, const char *a, const char **inline_val) {
    *inline_val = NULL;
    for (int t = 0; c->tables[t]; t++)
        for (const option_t *o = c->tables[t]; o->name; o++) {
            const char *names[] = {o->name, o->alias};
            for (int k = 0; k < 2; k++) {
                size_t n = names[k] ? strlen(names[k]) : 0;
                if (!n || strncmp(a, names[k], n) != 0) continue;
                if (a[n] == 0) return o;
                if (a[n] == '=' && o->type != OPT_FLAG) {
                    *inline_val = a + n + 1;
                    return o;
                }
            }
        }
    return NULL;
}

static int store(const command_t *c, const option_t *o, void *opts, const char *val) {
    char *base = opts;
    switch (o->type) {
    case OPT_FLAG:
        *(int *)(base + o->offset) = 1;
        return 0;
    case OPT_STR:
        *(const char **)(base + o->offset) = val;
        return 0;
    case OPT_LIST: {
        int *n = (int *)(base + o->count_offset);
        if (*n >= o->max) {
            char what[96];
            snprintf(what, sizeof what, "%s given more than %ld times", o->name, o->max);
            return options_error(c->name, "%s", what);
        }
        ((const char **)(base + o->offset))[(*n)++] = val;
        return 0;
    }
    case OPT_INT: {
        char *end;
        errno = 0;
        long v = strtol(val, &end, 10);
        if (errno || end == val || *end || v < o->min || v > o->max) {
            char what[256];
            snprintf(what, sizeof what, "%s: expected an integer in [%ld, %ld], got '%.100s'",
                     o->name, o->min, o->max, val);
            return options_error(c->name, "%s", what);
        }
        *(int *)(base + o->offset) = (int)v;
        return 0;
    }
    case OPT_REAL: {
        char *end;
        double v = strtod(val, &end);
        if (end == val || *end || !isfinite(v) || v < o->real_min ||
            (o->real_min_open && v == o->real_min)) {
            char fmt[256];
            snprintf(fmt, sizeof fmt, "%s: expected a number of %s %s %g, got '%%s'", o->name,
                     o->unit, o->real_min_open ? ">" : ">=", o->real_min);
            return options_error(c->name, fmt, val);
        }
        *(double *)(base + o->offset) = v;
        return 0;
    }
    case OPT_FN:
        return o->fn(base + o->offset, c->name, val);
    }
    return EXIT_INPUT;
}

int options_parse(const command_t *c, int argc, char **argv, void *opts) {
    int positional_seen = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            options_usage(stdout, c);
            return 1;
        }
        const option_t *o = a[0] == '-' && a[1] ? find(c, a, &val) : NULL;
        if (!o && a[0] == '-' && a[1]) return options_error(c->name, "unknown option '%s'", a);
        if (!o) {
            if (!c->positional || positional_seen)
                return options_error(c->name, "unexpected argument '%s'", a);
            *(const char **)((char *)opts + c->positional_offset) = a;
            positional_seen = 1;
            continue;
        }
        if (o->type != OPT_FLAG && !val) {
            if (i + 1 >= argc) return options_error(c->name, "option %s needs a value", a);
            val = argv[++i];
        }
        if (o->deprecated) fprintf(stderr, "stallsim %s: note: %s\n", c->name, o->deprecated);
        int rc = store(c, o, opts, val);
        if (rc) return rc;
    }
    return 0;
}

void options_usage(FILE *out, const command_t *c) {
    fprintf(out, "usage: stallsim %s %s\n", c->name, c->synopsis);
    if (c->about) fprintf(out, "\n%s\n", c->about);
    fputc('\n', out);
    for (int t = 0; c->tables[t]; t++)
        for (const option_t *o = c->tables[t]; o->name; o++) {
            if (o->deprecated) continue; /* parsed, not advertised */
            char head[64];
            snprintf(head, sizeof head, "%s%s%s%s%s", o->alias ? o->alias : "",
                     o->alias ? ", " : "", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
            fprintf(out, "  %-19s", head);
            if (strlen(head) > 19) fprintf(out, "\n  %-19s", "");
            for (const char *h = o->help; *h;) {
                const char *nl = strchr(h, '\n');
                int len = nl ? (int)(nl - h) : (int)strlen(h);
                fprintf(out, " %.*s\n", len, h);
                h += len;
                if (*h == '\n') {
                    h++;
                    fprintf(out, "  %-19s", "");
                }
            }
        }
    fprintf(out, "  %-19s %s\n", "-h, --help", "this text");
    if (c->footer) fprintf(out, "\n%s", c->footer);
}
