/* sweep_grid: see sweep_grid.h. */
#include "sweep_grid.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema.h"
#include "text.h"

/* Per axis: a range may not expand past this (a typo like 0:1e9:1 must not eat the memory). */
#define MAX_AXIS_VALUES 10000000

/* The command and option an error names (set by each entry point; parsing is single-threaded). */
static _Thread_local const char *fail_cmd = "sweep", *fail_opt = "--vary";

void sweep_grid_init(sweep_grid_t *g) {
    memset(g, 0, sizeof *g);
    g->size = 1;
    g->cmd = "sweep";
}

void sweep_grid_free(sweep_grid_t *g) {
    const char *cmd = g->cmd;
    for (int a = 0; a < g->naxes; a++) {
        for (int v = 0; v < g->axes[a].nvalues; v++)
            free(g->axes[a].values[v]);
        free(g->axes[a].values);
    }
    sweep_grid_init(g);
    g->cmd = cmd;
}

void sweep_grid_point(const sweep_grid_t *g, int64_t c, int *idx) {
    for (int a = g->naxes - 1; a >= 0; a--) {
        if (g->axes[a].tied_to >= 0) continue;
        idx[a] = (int)(c % g->axes[a].nvalues);
        c /= g->axes[a].nvalues;
    }
    for (int a = 0; a < g->naxes; a++)
        if (g->axes[a].tied_to >= 0) idx[a] = idx[g->axes[a].tied_to];
}

/* The schema row of a key as --set accepts it (jobs.N.key and jobs.key included), or NULL. */
static const key_def_t *find_key(const char *key) {
    int n;
    if (strncmp(key, "jobs.", 5) != 0) {
        int row = schema_find(SCOPE_SCENARIO, key);
        return row < 0 ? NULL : &schema_keys(SCOPE_SCENARIO, &n)[row];
    }
    const char *rest = key + 5;
    char *end;
    long idx = strtol(rest, &end, 10);
    const char *jkey = end == rest ? rest : (*end == '.' ? end + 1 : NULL);
    if (!jkey ||
        (end != rest && (idx < 0 || idx >= SCN_MAX_JOBS || !isdigit((unsigned char)*rest))))
        return NULL;
    int row = schema_find(SCOPE_JOB, jkey);
    return row < 0 ? NULL : &schema_keys(SCOPE_JOB, &n)[row];
}

/* jobs.00.X and jobs.0.X are one key: the job index loses its leading zeros
 * (in place; the key only gets shorter). Other keys are left as they are. */
static void canonical_key(char *key) {
    if (strncmp(key, "jobs.", 5) != 0 || !isdigit((unsigned char)key[5])) return;
    char *end;
    long idx = strtol(key + 5, &end, 10);
    if (*end != '.' || idx < 0 || idx >= SCN_MAX_JOBS) return;
    char digits[24];
    int n = snprintf(digits, sizeof digits, "%ld", idx);
    if (n <= 0 || n > end - (key + 5)) return;
    memmove(key + 5 + n, end, strlen(end) + 1);
    memcpy(key + 5, digits, (size_t)n);
}

/* The job key X of jobs.N.X or jobs.X (*all = 1 for the latter); NULL for other keys. */
static const char *job_part(const char *key, int *all) {
    if (strncmp(key, "jobs.", 5) != 0) return NULL;
    const char *rest = key + 5;
    *all = !isdigit((unsigned char)*rest);
    if (*all) return rest;
    while (isdigit((unsigned char)*rest))
        rest++;
    return *rest == '.' ? rest + 1 : NULL;
}

/* Two canonical keys that set the same value: equal, or jobs.X and jobs.N.X. */
static int keys_overlap(const char *a, const char *b) {
    if (strcmp(a, b) == 0) return 1;
    int alla = 0, allb = 0;
    const char *ja = job_part(a, &alla), *jb = job_part(b, &allb);
    return ja && jb && (alla || allb) && strcmp(ja, jb) == 0;
}

static int fail(const char *arg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const char *arg, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char msg[2048]; /* the values quoted in it as typed, control characters as \xHH */
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "stallsim %s: %s ", fail_cmd, fail_opt);
    text_put_escaped(stderr, arg);
    fputs(": ", stderr);
    text_put_escaped(stderr, msg);
    fputc('\n', stderr);
    return EXIT_INPUT;
}

static int push_value(sweep_axis_t *ax, const char *text, int *cap) {
    if (ax->nvalues == *cap) {
        int nc = *cap ? *cap * 2 : 8;
        char **v = realloc(ax->values, (size_t)nc * sizeof *v);
        if (!v) return EXIT_RUNTIME;
        ax->values = v, *cap = nc;
    }
    ax->values[ax->nvalues] = strdup(text);
    if (!ax->values[ax->nvalues]) return EXIT_RUNTIME;
    ax->nvalues++;
    return 0;
}

/* Checks one value against the key's row and appends its canonical text. */
static int add_checked(sweep_axis_t *ax, const key_def_t *k, void *scratch, const char *arg,
                       const char *text, int *cap) {
    char why[256], canon[SCN_PATH];
    if (strpbrk(text, "\"\r\n"))
        return fail(arg, "value '%s': %s", text,
                    "quotes and line breaks cannot go in a CSV column");
    if (schema_store(k, scratch, text, why, sizeof why))
        return fail(arg, "value '%s': %s", text, why);
    schema_format(k, scratch, canon, sizeof canon);
    return push_value(ax, canon, cap);
}

static int parse_num(const char *t, double *out) {
    char *end;
    *out = strtod(t, &end);
    return end != t && *end == 0 && isfinite(*out) ? 0 : -1;
}

/* a:b:step, end included: value i is a + i*step (no accumulated rounding). */
static int add_range(sweep_axis_t *ax, const key_def_t *k, void *scratch, const char *arg,
                     char *item, int *cap) {
    char *c1 = strchr(item, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    double a, b, step;
    if (!c2 || strchr(c2 + 1, ':'))
        return fail(arg, "'%s': expected a range as start:end:step", item);
    *c1 = *c2 = 0;
    int bad = parse_num(item, &a) || parse_num(c1 + 1, &b) || parse_num(c2 + 1, &step);
    *c1 = *c2 = ':';
    if (bad) return fail(arg, "range '%s': expected three numbers start:end:step", item);
    if (step == 0 || (b - a) / step < 0)
        return fail(arg, "range '%s': %s", item,
                    "the step must be non-zero and lead from start to end");
    if (k->type == KT_INT && (a != floor(a) || step != floor(step)))
        return fail(arg, "range '%s': %s", item, "an integer key needs an integer start and step");
    double span = (b - a) / step;
    if (span >= MAX_AXIS_VALUES)
        return fail(arg, "range '%s': %s", item, "more than 10^7 values on one axis");
    /* The end counts when it is within rounding of a step boundary (0:1:0.1 has 11 values). */
    int n = (int)floor(span + 1e-9) + 1;
    for (int i = 0; i < n; i++) {
        char text[64];
        snprintf(text, sizeof text, "%.17g", a + (double)i * step);
        int rc = add_checked(ax, k, scratch, arg, text, cap);
        if (rc) return rc;
    }
    return 0;
}

static int add_variant(sweep_axis_t *ax, const char *arg, const char *name,
                       const char *const *variants, int nv, int *cap) {
    for (int i = 0; i < nv; i++)
        if (strcmp(variants[i], name) == 0) return push_value(ax, name, cap);
    char have[SCN_STR * 8] = "";
    size_t used = 0;
    for (int i = 0; i < nv && used < sizeof have; i++)
        used +=
            (size_t)snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "", variants[i]);
    return fail(arg, "no variant named '%s'; the scenario has: %s", name, nv ? have : "none");
}

/* How many values a list will expand to, from the ranges' arithmetic alone
 * (an item that is not a good range counts 1: its own check says why): the
 * grid's size is refused before 10^7 values per axis are made (790 MB and
 * 9 s to refuse a 10^14-point grid). */
static double count_values(const char *list, char sep, int ranges) {
    double n = 0;
    for (const char *item = list; item; item = strchr(item, sep), item = item ? item + 1 : NULL) {
        const char *c1 = strchr(item, ':'), *end = strchr(item, sep);
        double a, b, step, span;
        char *e1, *e2, *e3;
        n += 1;
        if (!ranges || !c1 || (end && c1 > end)) continue;
        a = strtod(item, &e1);
        if (e1 != c1) continue;
        b = strtod(c1 + 1, &e2);
        if (*e2 != ':') continue;
        step = strtod(e2 + 1, &e3);
        span = (b - a) / step;
        if (e3 != e2 + 1 && (*e3 == 0 || *e3 == sep) && isfinite(span) && span > 0)
            n += floor(fmin(span, 1e18) + 1e-9);
    }
    return n;
}

int sweep_grid_add(sweep_grid_t *g, const char *arg, const char *const *variants, int nvariants) {
    fail_cmd = g->cmd, fail_opt = "--vary";
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1])
        return fail(arg, "expected key=v1,v2,... or key=start:end:step");
    if (g->naxes == SWEEP_MAX_AXES) return fail(arg, "more than %d axes", SWEEP_MAX_AXES);
    sweep_axis_t *ax = &g->axes[g->naxes];
    memset(ax, 0, sizeof *ax);
    if ((size_t)(eq - arg) >= sizeof ax->key) return fail(arg, "key too long");
    memcpy(ax->key, arg, (size_t)(eq - arg));
    ax->key[eq - arg] = 0;
    canonical_key(ax->key);
    ax->tied_to = -1;
    /* One value per key: with two axes on it, the later would win and the
     * earlier's column would show values that never ran. */
    for (int a = 0; a < g->naxes; a++)
        if (strcmp(g->axes[a].key, ax->key) == 0)
            return fail(arg, "key '%s' is already varied", ax->key);
        else if (keys_overlap(g->axes[a].key, ax->key))
            return fail(arg,
                        "key '%s' overlaps --vary %s (jobs.KEY sets every job, jobs.N.KEY one): "
                        "the rows would show values that did not run; vary one of them",
                        ax->key, g->axes[a].key);

    const key_def_t *k = NULL;
    ax->is_variant = strcmp(ax->key, "variant") == 0;
    if (ax->is_variant) {
        snprintf(ax->column, sizeof ax->column, "variant");
    } else if (!(k = find_key(ax->key)) && strncmp(ax->key, "jobs.", 5) == 0 &&
               isdigit((unsigned char)ax->key[5]) &&
               strtol(ax->key + 5, NULL, 10) >= SCN_MAX_JOBS) {
        return fail(arg, "key '%s': expected jobs.N.KEY with N in [0, %d) or jobs.KEY", ax->key,
                    SCN_MAX_JOBS);
    } else if (!k) {
        char buf[SCN_STR * 2];
        const char *near = schema_suggest(ax->key, buf, sizeof buf);
        return near ? fail(arg, "unknown key '%s'; did you mean '%s'?", ax->key, near)
                    : fail(arg, "unknown key '%s' (stallsim help keys lists them all)", ax->key);
    } else {
        /* The column is the key as the user typed it; units live in the key reference. */
        memcpy(ax->column, ax->key,
               sizeof ax->column < sizeof ax->key ? sizeof ax->column : sizeof ax->key);
        ax->column[sizeof ax->column - 1] = 0;
    }

    char *list = strdup(eq + 1);
    void *scratch =
        calloc(1, sizeof(scenario_t)); /* scenario_t holds job_t: big enough for either */
    int rc = list && scratch ? 0 : EXIT_RUNTIME, cap = 0;
    /* A value that holds commas itself (prep.scaling's points) cannot go in
     * a comma list: a list with a ';' in it is split at ';' alone. */
    const char sep = list && strchr(list, ';') ? ';' : ',';
    if (!rc && (double)g->size *
                       count_values(list, sep,
                                    !ax->is_variant && (k->type == KT_INT || k->type == KT_REAL)) >
                   (double)SWEEP_MAX_CONFIGS)
        rc = fail(arg, "the grid would have more than 10^8 configurations");
    for (char *item = list, *next; !rc && item; item = next) {
        next = strchr(item, sep);
        if (next) *next++ = 0;
        if (!item[0])
            rc = fail(arg, "an empty value in the list");
        else if (ax->is_variant)
            rc = add_variant(ax, arg, item, variants, nvariants, &cap);
        else if (strchr(item, ':') && (k->type == KT_INT || k->type == KT_REAL))
            rc = add_range(ax, k, scratch, arg, item, &cap);
        else
            rc = add_checked(ax, k, scratch, arg, item, &cap);
    }
    free(list);
    free(scratch);
    if (rc == EXIT_RUNTIME)
        fprintf(stderr, "stallsim %s: --vary %s: out of memory for its values\n", fail_cmd,
                ax->key);
    if (!rc && (double)g->size * ax->nvalues > (double)SWEEP_MAX_CONFIGS)
        rc = fail(arg, "the grid would have more than 10^8 configurations");
    if (rc) {
        for (int v = 0; v < ax->nvalues; v++)
            free(ax->values[v]);
        free(ax->values);
        memset(ax, 0, sizeof *ax);
        return rc;
    }
    g->size *= ax->nvalues;
    g->naxes++;
    return 0;
}

/* The axis of a key as typed (canonical), or -1. */
int sweep_grid_axis(const sweep_grid_t *g, const char *typed) {
    char key[SCN_STR];
    snprintf(key, sizeof key, "%s", typed);
    canonical_key(key);
    for (int a = 0; a < g->naxes; a++)
        if (strcmp(g->axes[a].key, key) == 0) return a;
    return -1;
}

/* Why `key` of a --tie is no axis: an unknown key, or one not varied. */
static int not_an_axis(const char *arg, const char *key) {
    char buf[SCN_STR * 2];
    if (strcmp(key, "variant") != 0 && !find_key(key)) {
        const char *near = schema_suggest(key, buf, sizeof buf);
        return near ? fail(arg, "unknown key '%s'; did you mean '%s'?", key, near)
                    : fail(arg, "unknown key '%s' (stallsim help keys lists them all)", key);
    }
    return fail(arg, "key '%s' is not varied: a tie pairs two --vary axes (add --vary %s=...)", key,
                key);
}

int sweep_grid_tie(sweep_grid_t *g, const char *arg) {
    fail_cmd = g->cmd, fail_opt = "--tie";
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || !eq[1] || strchr(eq + 1, '='))
        return fail(arg, "expected KEY=KEY2 (two varied keys that move together)");
    char a_key[SCN_STR], b_key[SCN_STR];
    if ((size_t)(eq - arg) >= sizeof a_key || strlen(eq + 1) >= sizeof b_key)
        return fail(arg, "key too long");
    memcpy(a_key, arg, (size_t)(eq - arg));
    a_key[eq - arg] = 0;
    snprintf(b_key, sizeof b_key, "%s", eq + 1);
    int a = sweep_grid_axis(g, a_key), b = sweep_grid_axis(g, b_key);
    if (a < 0) return not_an_axis(arg, a_key);
    if (b < 0) return not_an_axis(arg, b_key);
    if (a == b) return fail(arg, "a key cannot be tied to itself");
    if (g->axes[b].tied_to >= 0)
        return fail(arg, "key '%s' is tied already (to '%s')", g->axes[b].key,
                    g->axes[g->axes[b].tied_to].key);
    for (int x = 0; x < g->naxes; x++)
        if (g->axes[x].tied_to == b)
            return fail(arg, "key '%s' leads a tie already (with '%s'); tie '%s' to it instead",
                        g->axes[b].key, g->axes[x].key, g->axes[x].key);
    if (g->axes[a].tied_to >= 0) a = g->axes[a].tied_to; /* a chain ties to its leader */
    if (g->axes[a].nvalues != g->axes[b].nvalues)
        return fail(arg, "'%s' has %d values and '%s' %d: tied keys need as many values each",
                    g->axes[a].key, g->axes[a].nvalues, g->axes[b].key, g->axes[b].nvalues);
    g->axes[b].tied_to = a;
    g->size /= g->axes[b].nvalues;
    return 0;
}

int sweep_grid_check_sets(const sweep_grid_t *g, const assign_list_t *sets) {
    fail_cmd = g->cmd, fail_opt = "--vary";
    for (size_t i = 0; sets && i < sets->n; i++) {
        const assign_t *s = &sets->v[i];
        char key[SCN_STR];
        snprintf(key, sizeof key, "%s", s->key);
        canonical_key(key);
        for (int a = 0; a < g->naxes; a++) {
            const sweep_axis_t *ax = &g->axes[a];
            if (ax->is_variant || !keys_overlap(ax->key, key)) continue;
            const char *opt = s->pos.file ? s->pos.file : "--set";
            if (strcmp(opt, "--set") == 0)
                return fail(ax->key,
                            "key '%s' is also set by --set %s=%s: one of the two would not run "
                            "as the rows say; drop one",
                            ax->key, s->key, s->value);
            return fail(ax->key,
                        "key '%s' is also set by %s %s: one of the two would not run as the "
                        "rows say; drop one",
                        ax->key, opt, s->value);
        }
    }
    return 0;
}

const option_t sweep_grid_options[] = {
    {.name = "--vary",
     .type = OPT_LIST,
     .arg = "key=values",
     .offset = offsetof(sweep_grid_cmd_t, g.vary),
     .count_offset = offsetof(sweep_grid_cmd_t, g.nvary),
     .max = SWEEP_MAX_AXES,
     .help = "a grid axis: a comma list (server.cpus=8,16,24), a range with its\n"
             "end included (server.cache_gb=0:400:50), or both mixed; any key\n"
             "--set takes, and `variant` (--vary variant=dali,coordl). Values that\n"
             "hold commas go in a ';' list: prep.scaling='1:1,2:1.9;1:1,2:2'.\n"
             "The first --vary changes slowest. Repeatable."},
    {.name = "--tie",
     .type = OPT_LIST,
     .arg = "KEY=KEY2",
     .offset = offsetof(sweep_grid_cmd_t, g.tie),
     .count_offset = offsetof(sweep_grid_cmd_t, g.ntie),
     .max = SWEEP_MAX_AXES,
     .help = "KEY2's --vary axis moves with KEY's (value i with value i; both need\n"
             "as many values): --tie loader.num_workers=server.storage.queue_depth.\n"
             "Repeatable."},
    {0},
};

/* Whether --vary arg's key is the second of a --tie (its axis adds nothing to the size). */
static int tied(const sweep_grid_args_t *args, const char *arg) {
    size_t n = strcspn(arg, "=");
    for (int t = 0; t < args->ntie; t++) {
        const char *eq = strchr(args->tie[t], '=');
        if (eq && strlen(eq + 1) == n && !strncmp(eq + 1, arg, n)) return 1;
    }
    return 0;
}

/* The grid's size from every axis's arithmetic, before any is expanded. */
static int size_check(const sweep_grid_t *g, const sweep_grid_args_t *args) {
    double size = 1;
    for (int i = 0; i < args->nvary; i++) {
        const char *eq = strchr(args->vary[i], '=');
        if (!eq || tied(args, args->vary[i])) continue;
        size *= count_values(eq + 1, strchr(eq + 1, ';') ? ';' : ',', 1);
        if (size > (double)SWEEP_MAX_CONFIGS) {
            fail_cmd = g->cmd, fail_opt = "--vary";
            return fail(args->vary[i], "the grid would have more than 10^8 configurations");
        }
    }
    return 0;
}

int sweep_grid_build(sweep_grid_t *g, const sweep_grid_args_t *args, const char *const *variants,
                     int nvariants, const assign_list_t *sets) {
    int rc = size_check(g, args);
    for (int i = 0; i < args->nvary && !rc; i++)
        rc = sweep_grid_add(g, args->vary[i], variants, nvariants);
    for (int i = 0; i < args->ntie && !rc; i++)
        rc = sweep_grid_tie(g, args->tie[i]);
    return rc ? rc : sweep_grid_check_sets(g, sets);
}
