/* profile_out: see profile_out.h. */
#include "profile_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *profile_num(double v, char *buf, size_t len) {
    if (!isfinite(v)) {
        snprintf(buf, len, "null"); /* never produced by a measurement; kept parseable */
        return buf;
    }
    if (v == 0.0) {
        snprintf(buf, len, "0");
        return buf;
    }
    int mag = (int)floor(log10(fabs(v)));
    int decimals = 5 - mag;
    if (decimals < 0) decimals = 0;
    if (decimals > 15) decimals = 15;
    snprintf(buf, len, "%.*f", decimals, v);
    if (strchr(buf, '.')) {
        char *end = buf + strlen(buf) - 1;
        while (*end == '0')
            *end-- = '\0';
        if (*end == '.') *end = '\0';
    }
    if (strcmp(buf, "-0") == 0) snprintf(buf, len, "0");
    return buf;
}

const char *prof_n(prof_t *o, double v) {
    return profile_num(v, o->nb, sizeof o->nb);
}

const char *prof_i(prof_t *o, long v) {
    snprintf(o->nb, sizeof o->nb, "%ld", v);
    return o->nb;
}

void prof_quoted(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void prof_num(prof_t *o, int ind, const char *k, double v) {
    fprintf(o->f, "%*s%s: %s\n", ind, "", k, prof_n(o, v));
}

void prof_int(prof_t *o, int ind, const char *k, long v) {
    fprintf(o->f, "%*s%s: %ld\n", ind, "", k, v);
}

void prof_str(prof_t *o, int ind, const char *k, const char *v) {
    fprintf(o->f, "%*s%s: ", ind, "", k);
    prof_quoted(o->f, v);
    fputc('\n', o->f);
}

void prof_bool(prof_t *o, int ind, const char *k, int v) {
    fprintf(o->f, "%*s%s: %s\n", ind, "", k, v ? "true" : "false");
}

void prof_stat(prof_t *o, int ind, const char *k, stat_summary s) {
    fprintf(o->f, "%*s%s: {median: %s, ", ind, "", k, prof_n(o, s.median));
    fprintf(o->f, "min: %s, ", prof_n(o, s.min));
    fprintf(o->f, "max: %s, n: %d}\n", prof_n(o, s.max), s.n);
}

void profile_key(profile_keys *k, int rank, const char *key, const char *value) {
    if (k->n == PROFILE_MAX_KEYS || strlen(value) >= PROFILE_VALUE_LEN)
        abort(); /* raise the limits: a programming error the registry test catches */
    k->v[k->n].rank = rank;
    k->v[k->n].key = key;
    snprintf(k->v[k->n].value, PROFILE_VALUE_LEN, "%s", value);
    k->n++;
}

void profile_key_num(profile_keys *k, int rank, const char *key, double v) {
    char b[64];
    profile_key(k, rank, key, profile_num(v, b, sizeof b));
}

void profile_key_int(profile_keys *k, int rank, const char *key, long v) {
    char b[32];
    snprintf(b, sizeof b, "%ld", v);
    profile_key(k, rank, key, b);
}
