/* compare_load: the measured profile (python/stallsim/watch.py writes it)
 * read through one key table, measured_keys: a key not in it, a value of
 * the wrong type or range, a missing required key, a gap in the epochs or
 * an epoch whose parts do not add up is an error naming file:line:col and
 * the key, and the file is refused whole (exit 2). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "scenario.h"

typedef enum { MK_INT, MK_REAL, MK_BOOL, MK_STR } mk_type_t;

typedef struct {
    const char *name; /* after "epochs.N." for a per-epoch key */
    int per_epoch, required;
    mk_type_t type;
    double min, max; /* a number's range (max 0: none) */
    int min_open;
    size_t offset, size; /* into measured_t, or measured_epoch_t per epoch; size: a string's */
    const char *help;
} mkey_t;

/* The longest time a profile may give: the simulator's bound on a run
 * (about 300 years). 1e308 s printed 309 digits, inf% and -nan%. */
#define MEASURED_MAX_S 1e10

#define M(f)  offsetof(measured_t, f)
#define E(f)  offsetof(measured_epoch_t, f)
#define SZ(f) sizeof(((measured_t *)0)->f)

/* Every key of a measured profile: the one table the loader, the checks and
 * `stallsim help measured` read. */
static const mkey_t measured_keys[] = {
    {"measured_version", 0, 1, MK_INT, 1, 1, 0, M(version), 0, "the format's version: 1"},
    {"run.tool", 0, 0, MK_STR, 0, 0, 0, M(tool), SZ(tool), "what wrote it (stallsim.watch)"},
    {"run.host", 0, 0, MK_STR, 0, 0, 0, M(host), SZ(host), "the host it ran on"},
    {"run.date", 0, 0, MK_STR, 0, 0, 0, M(date), SZ(date), "when (UTC, ISO 8601)"},
    {"run.rank", 0, 0, MK_INT, 0, 1e6, 0, M(rank), 0, "the rank that measured (0 = the first)"},
    {"run.world_size", 0, 0, MK_INT, 1, 1e6, 0, M(world_size), 0, "ranks in the run"},
    {"run.batch", 0, 0, MK_INT, 0, 1e9, 0, M(batch), 0,
     "items in a batch on this rank (0 = not known)"},
    {"iterations", 1, 1, MK_INT, 0, 1e15, 0, E(iterations), 0, "batches this rank took"},
    {"items", 1, 0, MK_REAL, 0, 1e15, 0, E(items), 0, "items in them (iterations x batch)"},
    {"epoch_s", 1, 1, MK_REAL, 0, MEASURED_MAX_S, 1, E(epoch_s), 0,
     "seconds from iter(loader) to the end of the last step (= wait_s + step_s)"},
    {"wait_s", 1, 1, MK_REAL, 0, MEASURED_MAX_S, 0, E(wait_s), 0,
     "seconds in next() waiting for batches: the stall as the loop saw it"},
    {"step_s", 1, 1, MK_REAL, 0, MEASURED_MAX_S, 0, E(step_s), 0,
     "seconds between getting a batch and asking for the next: the steps"},
    {"wait_p50_ms", 1, 0, MK_REAL, 0, 1e3 * MEASURED_MAX_S, 0, E(wait_p50_ms), 0,
     "median wait for a batch"},
    {"wait_p90_ms", 1, 0, MK_REAL, 0, 1e3 * MEASURED_MAX_S, 0, E(wait_p90_ms), 0,
     "90th percentile wait"},
    {"wait_p99_ms", 1, 0, MK_REAL, 0, 1e3 * MEASURED_MAX_S, 0, E(wait_p99_ms), 0,
     "99th percentile wait"},
    {"complete", 1, 0, MK_BOOL, 0, 0, 0, E(complete), 0,
     "false when the loop left the epoch early (a break)"},
    {"differential.iterations", 0, 0, MK_INT, 1, 1e15, 0, M(diff_iterations), 0,
     "iterations of each of watch's three differential passes"},
    {"differential.t_ms", 0, 0, MK_REAL, 0, 1e3 * MEASURED_MAX_S, 1, M(t_ms), 0,
     "an iteration as given (T), milliseconds"},
    {"differential.t_prep_ms", 0, 0, MK_REAL, 0, 1e3 * MEASURED_MAX_S, 1, M(t_prep_ms), 0,
     "an iteration with the same items in memory (T_prep)"},
    {"differential.t_gpu_ms", 0, 0, MK_REAL, 0, 1e3 * MEASURED_MAX_S, 1, M(t_gpu_ms), 0,
     "an iteration on a batch held on the device (T_gpu)"},
    {"differential.t_prep_method", 0, 0, MK_STR, 0, 0, 0, M(t_prep_method), SZ(t_prep_method),
     "how T_prep's items were served from memory"},
};
#define NKEYS ((int)(sizeof measured_keys / sizeof measured_keys[0]))
/* eseen's stride: a flag per row, then whether the epoch was seen at all. */
#define ES (NKEYS + 1)

static const char *type_text(const mkey_t *k) {
    switch (k->type) {
    case MK_INT:
        return "a whole number";
    case MK_REAL:
        return "a number";
    case MK_BOOL:
        return "true or false";
    default:
        return "a string";
    }
}

/* The value into its field: 0, or 1 after the error. */
static int store(const mkey_t *k, const assign_t *a, void *base) {
    const char *v = a->value;
    char *end = NULL;
    errno = 0;
    double x = 0;
    if (!a->is_scalar) {
        diag_error(a->pos, "key '%s': expected %s, got a list or mapping", a->key, type_text(k));
        return 1;
    }
    if (k->type == MK_STR) {
        if (strlen(v) >= k->size) {
            diag_error(a->pos, "key '%s': expected a string of at most %zu bytes", a->key,
                       k->size - 1);
            return 1;
        }
        memcpy((char *)base + k->offset, v, strlen(v) + 1);
        return 0;
    }
    if (k->type == MK_BOOL) {
        int t = !strcmp(v, "true"), f = !strcmp(v, "false");
        if (!t && !f) {
            diag_error(a->pos, "key '%s': expected true or false, got '%s'", a->key, v);
            return 1;
        }
        *(int *)((char *)base + k->offset) = t;
        return 0;
    }
    x = k->type == MK_INT ? (double)strtoll(v, &end, 10) : strtod(v, &end);
    int whole = end != v && *end == 0 && errno == 0 && isfinite(x);
    int low = k->min_open ? x <= k->min : x < k->min;
    if (!whole || low || (k->max > 0 && x > k->max)) {
        char range[96];
        if (k->max > 0 && k->max == k->min)
            snprintf(range, sizeof range, " equal to %g", k->min);
        else if (k->max > 0)
            snprintf(range, sizeof range, " in %s%g, %g]", k->min_open ? "(" : "[", k->min, k->max);
        else
            snprintf(range, sizeof range, " %s %g", k->min_open ? ">" : ">=", k->min);
        diag_error(a->pos, "key '%s': expected %s%s (finite), got '%s'", a->key, type_text(k),
                   range, v);
        return 1;
    }
    if (k->type == MK_INT)
        *(long long *)((char *)base + k->offset) = (long long)x;
    else
        *(double *)((char *)base + k->offset) = x;
    return 0;
}

/* The nearest key of the table to a misspelt one (its per-epoch rows as
 * the user would have written them). */
static void unknown_key(const assign_t *a, const char *name, int per_epoch) {
    const char *best = NULL;
    int bd = 1 << 30;
    for (int i = 0; i < NKEYS; i++) {
        if (measured_keys[i].per_epoch != per_epoch) continue;
        int d = diag_edit_distance(name, measured_keys[i].name);
        if (d < bd) bd = d, best = measured_keys[i].name;
    }
    if (best && bd <= 3)
        diag_error(a->keypos, "unknown key '%s' in a measured profile (did you mean '%s%s'?)",
                   a->key, per_epoch ? "epochs.N." : "", best);
    else
        diag_error(a->keypos,
                   "unknown key '%s' in a measured profile (stallsim help measured lists them)",
                   a->key);
}

/* "epochs.N.name": N (1..MEASURED_MAX_EPOCHS) and name; 0 when it is not
 * one, after an error when it starts "epochs". */
static int epoch_key(const assign_t *a, int *n, const char **name) {
    if (strncmp(a->key, "epochs", 6) != 0) return 0;
    const char *p = a->key + 6;
    char *end = NULL;
    long e = *p == '.' ? strtol(p + 1, &end, 10) : 0;
    if (*p != '.' || !end || *end != '.' || e < 1 || e > MEASURED_MAX_EPOCHS ||
        !(p[1] >= '1' && p[1] <= '9')) {
        diag_error(a->keypos,
                   "key '%s': expected epochs as a mapping of epoch numbers 1 to %d, each a "
                   "mapping of its keys (epochs: {1: {iterations: 38, epoch_s: 1.2, ...}})",
                   a->key, MEASURED_MAX_EPOCHS);
        return -1;
    }
    *n = (int)e;
    *name = end + 1;
    return 1;
}

/* Each assignment into m; marks seen[] (top-level rows) and eseen[] (per
 * epoch rows x epoch). Returns the errors. */
static int fill(const assign_list_t *l, measured_t *m, unsigned char *seen, unsigned char *eseen) {
    int errors = 0;
    for (size_t i = 0; i < l->n; i++) {
        const assign_t *a = &l->v[i];
        int e = 0, r;
        const char *name = a->key;
        int ek = epoch_key(a, &e, &name);
        if (ek < 0) {
            errors++;
            continue;
        }
        for (r = 0; r < NKEYS; r++)
            if (measured_keys[r].per_epoch == ek && !strcmp(measured_keys[r].name, name)) break;
        if (r == NKEYS) {
            unknown_key(a, name, ek);
            errors++;
            continue;
        }
        if (ek) {
            measured_epoch_t *ep = &m->ep[e - 1];
            if (!eseen[(e - 1) * ES + NKEYS]) {
                eseen[(e - 1) * ES + NKEYS] = 1;
                ep->pos = a->keypos;
            }
            eseen[(e - 1) * ES + r] = 1;
            if (e > m->nepochs) m->nepochs = e;
            errors += store(&measured_keys[r], a, ep);
        } else {
            if (!strncmp(name, "differential.", 13) && !m->diff_pos.line) m->diff_pos = a->keypos;
            seen[r] = 1;
            errors += store(&measured_keys[r], a, m);
        }
    }
    return errors;
}

/* What the keys must say together: the version, every epoch 1..n with its
 * required keys and parts that add up, the differential passes whole. */
static int check(const char *path, measured_t *m, const unsigned char *seen,
                 const unsigned char *eseen) {
    int errors = 0;
    src_pos_t top = {path, 1, 1};
    if (!seen[0]) {
        diag_error(top, "not a stallsim measured profile: expected 'measured_version: 1' "
                        "(stallsim.watch writes one: docs/watch.md)");
        return 1;
    }
    if (!m->nepochs) {
        diag_error(top, "key 'epochs': missing (expected at least epoch 1)");
        errors++;
    }
    for (int e = 0; e < m->nepochs; e++) {
        const measured_epoch_t *ep = &m->ep[e];
        if (!eseen[e * ES + NKEYS]) {
            /* One error for a run of missing epochs: epochs: {1000: ...} once
             * printed 999 lines. */
            int f = e;
            while (f + 1 < m->nepochs && !eseen[(f + 1) * ES + NKEYS])
                f++;
            if (f > e)
                diag_error(m->ep[m->nepochs - 1].pos,
                           "keys 'epochs.%d' to 'epochs.%d': missing (epochs are numbered 1, 2, "
                           "... without gaps)",
                           e + 1, f + 1);
            else
                diag_error(m->ep[m->nepochs - 1].pos,
                           "key 'epochs.%d': missing (epochs are numbered 1, 2, ... without gaps)",
                           e + 1);
            errors++;
            e = f;
            continue;
        }
        for (int r = 0; r < NKEYS; r++)
            if (measured_keys[r].per_epoch && measured_keys[r].required && !eseen[e * ES + r]) {
                diag_error(ep->pos, "key 'epochs.%d.%s': missing (%s)", e + 1,
                           measured_keys[r].name, measured_keys[r].help);
                errors++;
            }
        double sum = ep->wait_s + ep->step_s;
        if (!errors && fabs(sum - ep->epoch_s) > 1e-6 + 1e-3 * ep->epoch_s) {
            diag_error(ep->pos,
                       "key 'epochs.%d.epoch_s': expected wait_s + step_s (%.9g s), got %.9g s",
                       e + 1, sum, ep->epoch_s);
            errors++;
        }
    }
    int nd = 0;
    for (int r = 0; r < NKEYS; r++)
        nd += seen[r] && !strncmp(measured_keys[r].name, "differential.", 13);
    for (int r = 0; nd && r < NKEYS; r++)
        if (!strncmp(measured_keys[r].name, "differential.", 13) && !seen[r] &&
            measured_keys[r].type != MK_STR) {
            diag_error(m->diff_pos, "key '%s': missing (%s; the differential passes come whole)",
                       measured_keys[r].name, measured_keys[r].help);
            errors++;
        }
    return errors;
}

int compare_load(const char *path, measured_t *m) {
    memset(m, 0, sizeof *m);
    m->world_size = 1;
    for (int e = 0; e < MEASURED_MAX_EPOCHS; e++)
        m->ep[e].complete = 1;
    assign_list_t l = {0};
    int rc = scenario_flat_load(path, path, &l);
    if (rc) {
        assign_list_free(&l);
        return rc;
    }
    unsigned char seen[NKEYS] = {0};
    unsigned char *eseen = calloc((size_t)MEASURED_MAX_EPOCHS * ES, 1);
    if (!eseen) {
        assign_list_free(&l);
        return EXIT_RUNTIME;
    }
    int errors = fill(&l, m, seen, eseen);
    if (!errors) errors = check(path, m, seen, eseen);
    free(eseen);
    assign_list_free(&l);
    return errors ? EXIT_INPUT : 0;
}

void compare_print_keys(FILE *out, int markdown) {
    if (markdown) fputs("| key | type | required | meaning |\n| --- | --- | --- | --- |\n", out);
    for (int i = 0; i < NKEYS; i++) {
        const mkey_t *k = &measured_keys[i];
        char name[96];
        snprintf(name, sizeof name, "%s%s", k->per_epoch ? "epochs.N." : "", k->name);
        if (markdown)
            fprintf(out, "| `%s` | %s | %s | %s |\n", name, type_text(k),
                    k->required ? "yes" : "no", k->help);
        else
            fprintf(out, "%-28s %-15s %s%s\n", name, type_text(k), k->required ? "(required) " : "",
                    k->help);
    }
}
