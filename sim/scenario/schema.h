/* schema: the one table of every scenario key (name, type, unit, default,
 * bounds, help). It drives YAML parsing, validation, --set, the key reference
 * (`stallsim help keys`) and the echo of the effective configuration, so a
 * key is defined here once and nowhere else.
 *
 * Two scopes: scenario keys live in scenario_t at their offset; job keys live
 * in each job_t and are written `jobs.N.key` (or `jobs.key` for every job). */
#ifndef STALLSIM_SCHEMA_H
#define STALLSIM_SCHEMA_H

#include <stddef.h>
#include <stdio.h>

#include "scenario.h"

typedef enum {
    KT_INT,
    KT_REAL,
    KT_BOOL,
    KT_ENUM,
    KT_STRING,
    KT_SPLICE /* schema.c's marker: the rows of the kinds of family `offset` go here */
} key_type_t;

/* Offset and size of a scenario_t field, for a row's offset and size. */
#define SCN_FIELD(field) offsetof(scenario_t, field), sizeof(((scenario_t *)0)->field)
/* Offset and size of a field of a kind's own options struct T (scenario.h's
 * kind_opts_t): the schema moves the row to the kind's block as it splices
 * the kind's rows in, so the row's offset then is into scenario_t too. */
#define KIND_OWN             ((size_t)1 << 30)
#define KIND_FIELD(T, field) (KIND_OWN | offsetof(T, field)), sizeof(((T *)0)->field)
#define SCHEMA_BIG           1e15 /* a bound that means unbounded */
typedef enum { SCOPE_SCENARIO, SCOPE_JOB } key_scope_t;

typedef struct {
    const char *name; /* dotted path; for SCOPE_JOB relative to a job */
    key_type_t type;
    const char *unit;             /* "" when unitless */
    const char *def;              /* default as YAML text; NULL = required */
    double min, max;              /* bounds for KT_INT and KT_REAL (inclusive) */
    int min_open;                 /* 1: the lower bound is exclusive (a rate must be > 0) */
    const char *(*choice)(int i); /* KT_ENUM: the name of value i, NULL past the last */
    size_t offset;
    size_t size; /* KT_STRING buffer size */
    const char *help;
} key_def_t;

/* The kinds as the schema sees them, so it never lists a kind itself: the
 * name of kind i of a family (NULL past the last), its one-line help, and
 * the scenario rows it owns (n = 0 when none). The registry (kinds.c, a
 * layer up) registers them before main runs, so the schema asks through
 * these pointers and never calls up; a program whose registry is not linked
 * in stops at the schema's first use. */
typedef enum {
    FAMILY_CACHE,
    FAMILY_STORAGE,
    FAMILY_LOADER,
    FAMILY_TIER, /* one member, the tier (its rows only: no key picks it) */
    FAMILY_PIPELINE
} kind_family_t;
_Static_assert(FAMILY_PIPELINE < SCN_KIND_FAMILIES, "raise SCN_KIND_FAMILIES");
/* Kind i of family f's own options block in s (what its KIND_FIELD rows
 * store into): the kind's file casts it to its options struct. */
static inline void *scenario_kind_opts(scenario_t *s, kind_family_t f, int i) {
    return s->opts[f][i].b;
}
static inline const void *scenario_kind_opts_c(const scenario_t *s, kind_family_t f, int i) {
    return s->opts[f][i].b;
}
typedef struct {
    const char *(*name)(kind_family_t family, int i);
    const char *(*help)(kind_family_t family, int i);
    const key_def_t *(*keys)(kind_family_t family, int i, int *n);
    /* Bytes one item job j prepared hands over where its pipeline kind says
     * (a video clip's frames), else -1: scenario_job_out_item_bytes's. */
    double (*out_bytes)(const scenario_t *s, const job_t *j);
} schema_kinds_t;
void schema_register_kinds(const schema_kinds_t *kinds);
/* The registered out_bytes of job j, or -1. */
double schema_kind_out_bytes(const scenario_t *s, const job_t *j);

const char *prep_mode_name(int i);
const char *dist_mode_name(int i);
const char *reader_mode_name(int i);
const char *server_mode_name(int i);
const char *resolve_by_name(int i);
const char *resume_by_name(int i);

/* The rows of one scope and their count. */
const key_def_t *schema_keys(key_scope_t scope, int *count);
/* Row index of `name` in scope, or -1. */
int schema_find(key_scope_t scope, const char *name);
/* The name of the scenario-scope row stored at offset in scenario_t, or NULL. */
const char *schema_key_at(size_t offset);
/* The valid key nearest to `name` (any scope, job keys as "jobs.N.key"), or NULL. */
const char *schema_suggest(const char *name, char *buf, size_t bufsize);

/* Parses `text` as the row's type, checks bounds, stores it at base+offset.
 * On error returns -1 and writes what was expected into why. */
int schema_store(const key_def_t *k, void *base, const char *text, char *why, size_t whysize);
/* The value at base+offset of a KT_INT or KT_REAL row as a number. */
double schema_number(const key_def_t *k, const void *base);
/* Formats the value at base+offset as YAML text. */
void schema_format(const key_def_t *k, const void *base, char *buf, size_t bufsize);

/* The key reference: one line per key with type, unit, default, bounds, help. */
void schema_print_reference(FILE *out, int markdown);

#endif
