/* profile_out: how a benchmark writes its part of the host profile: the
 * scenario keys it supplies, gathered and put in order (profile_keys), and
 * the YAML of its `measured:` section (prof_t and its shorthands, so that a
 * writer reads like the YAML it writes). Numbers are plain decimals of about
 * six significant digits (profile_num); strings are always double-quoted.
 *
 * Use, in a benchmark's ops (bench.h):
 *   keys:     profile_key_num(k, 400, "prep.eval_ms", r->ms);
 *   measured: prof_str(o, 4, "api", "TurboJPEG"); prof_stat(o, 4, "ms", r->ms);
 */
#ifndef STALLSIM_PROFILE_OUT_H
#define STALLSIM_PROFILE_OUT_H

#include <stddef.h>
#include <stdio.h>

#include "stats.h"

/* Writes v as a plain decimal with about 6 significant digits into buf. */
const char *profile_num(double v, char *buf, size_t len);

typedef struct {
    FILE *f;
    char nb[64]; /* the last number formatted by prof_n or prof_i */
} prof_t;

/* A number as text, valid until the next call on o. */
const char *prof_n(prof_t *o, double v);
const char *prof_i(prof_t *o, long v);
/* s, double-quoted with " and \ escaped and control bytes as \xNN. */
void prof_quoted(FILE *f, const char *s);
/* "key: value" lines at an indent of ind spaces. */
void prof_num(prof_t *o, int ind, const char *k, double v);
void prof_int(prof_t *o, int ind, const char *k, long v);
void prof_str(prof_t *o, int ind, const char *k, const char *v);
void prof_bool(prof_t *o, int ind, const char *k, int v);
/* k: {median: .., min: .., max: .., n: ..} */
void prof_stat(prof_t *o, int ind, const char *k, stat_summary s);

enum { PROFILE_MAX_KEYS = 48, PROFILE_VALUE_LEN = 256 };

/* The scenario keys of a profile. Each is named by its key (the writer
 * aborts on a name the schema has no row for, so a renamed key cannot
 * leave profiles behind; calib_profile writes every benchmark's) and
 * placed by its rank: the writer sorts
 * by rank (ties keep their order) and nests the keys as YAML, so keys that
 * share a mapping must have neighbouring ranks (it aborts when a mapping
 * would open twice). */
typedef struct {
    int rank;
    const char *key; /* a scenario key, static */
    char value[PROFILE_VALUE_LEN];
} profile_key_t;

typedef struct {
    profile_key_t v[PROFILE_MAX_KEYS];
    int n;
} profile_keys;

/* value as written (a number, or a quoted string); too many keys abort. */
void profile_key(profile_keys *k, int rank, const char *key, const char *value);
void profile_key_num(profile_keys *k, int rank, const char *key, double v);
void profile_key_int(profile_keys *k, int rank, const char *key, long v);

#endif
