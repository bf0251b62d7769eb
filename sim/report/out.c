/* out: see out.h. */
#include "out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* ---- CSV ---- */

void out_value(FILE *f, const out_field_t *fd, double v) {
    if (fd->kind == OUT_NAME)
        fputs(fd->names[(int)v], f);
    else if (fd->kind == OUT_BOOL)
        fprintf(f, fd->fmt, (int)v);
    else
        fprintf(f, fd->fmt, v);
}

void out_csv_names(FILE *f, const out_field_t *fd, int n, const char *prefix) {
    for (int i = 0; i < n; i++)
        if (!(fd[i].skip & OUT_SKIP_CSV)) fprintf(f, ",%s%s", prefix, fd[i].name);
}

void out_csv_values(FILE *f, const out_field_t *fd, int n, const double *v) {
    for (int i = 0; i < n; i++)
        if (!(fd[i].skip & OUT_SKIP_CSV)) {
            fputc(',', f);
            out_value(f, &fd[i], v[i]);
        }
}

void out_csv_blank(FILE *f, const out_field_t *fd, int n) {
    for (int i = 0; i < n; i++)
        if (!(fd[i].skip & OUT_SKIP_CSV)) fputc(',', f);
}

/* RFC 4180: a field holding a comma, a double quote, CR or LF is quoted, its
 * quotes doubled; any other is written as it is. */
static int csv_needs_quotes(const char *s) {
    return s[strcspn(s, ",\"\r\n")] != 0;
}

void out_csv_field(FILE *f, const char *s) {
    if (!csv_needs_quotes(s)) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

size_t out_csv_quote(char *buf, size_t n, const char *s) {
    size_t used = 0;
    int q = csv_needs_quotes(s);
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (used + 1 < n) buf[used] = (c);                                                         \
        used++;                                                                                    \
    } while (0)
    if (q) PUT('"');
    for (; *s; s++) {
        if (q && *s == '"') PUT('"');
        PUT(*s);
    }
    if (q) PUT('"');
#undef PUT
    if (n) buf[used < n ? used : n - 1] = 0;
    return used;
}

/* ---- text tables ---- */

void out_text_heads(FILE *f, const out_field_t *fd, int n) {
    for (int i = 0; i < n; i++)
        fprintf(f, " %*s", fd[i].width, fd[i].head ? fd[i].head : fd[i].name);
}

void out_text_values(FILE *f, const out_field_t *fd, int n, const double *v) {
    for (int i = 0; i < n; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, fd[i].text_fmt, v[i]);
        fprintf(f, " %*s", fd[i].width, buf);
    }
}

/* ---- JSON ---- */

void out_json_string(FILE *f, const char *s) {
    fputc('"', f);
    while (*s) {
        unsigned char c = (unsigned char)*s;
        int len = text_utf8_len(s);
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else if (len == 0) /* not UTF-8 (a path from the command line): JSON cannot hold it */
            fputs("\\ufffd", f);
        else
            fwrite(s, 1, (size_t)len, f);
        s += len ? len : 1;
    }
    fputc('"', f);
}

void out_json_begin(out_json_t *j, FILE *f) {
    memset(j, 0, sizeof *j);
    j->f = f;
}

void out_jbreak(out_json_t *j, const char *ws) {
    j->brk = ws;
}

/* The separator before a value (and its key), then the key. */
static void put_key(out_json_t *j, const char *key) {
    int *n = &j->count[j->depth];
    if (*n) fputc(',', j->f);
    fputs(j->brk ? j->brk : *n && !j->compact ? " " : "", j->f);
    j->brk = NULL;
    (*n)++;
    if (key) {
        out_json_string(j->f, key);
        fputs(j->compact ? ":" : ": ", j->f);
    }
}

static void open_one(out_json_t *j, const char *key, char bracket) {
    put_key(j, key);
    fputc(bracket, j->f);
    /* Deeper than any document here: the values still go out, counted at the last level. */
    if (j->depth + 1 < OUT_JSON_DEPTH) j->depth++;
    j->count[j->depth] = 0;
    j->closer[j->depth] = bracket == '{' ? '}' : ']';
}

void out_jobj(out_json_t *j, const char *key) {
    open_one(j, key, '{');
}

void out_jarr(out_json_t *j, const char *key) {
    open_one(j, key, '[');
}

void out_jend(out_json_t *j) {
    if (j->depth == 0) return; /* nothing open */
    if (j->brk) fputs(j->brk, j->f);
    j->brk = NULL;
    fputc(j->closer[j->depth], j->f);
    if (j->depth > 0) j->depth--;
}

void out_jnum(out_json_t *j, const char *key, const char *fmt, double v) {
    put_key(j, key);
    if (isfinite(v)) {
        fprintf(j->f, fmt, v);
    } else {
        fputs("null", j->f);
        j->nonfinite++;
    }
}

void out_jint(out_json_t *j, const char *key, long long v) {
    put_key(j, key);
    fprintf(j->f, "%lld", v);
}

void out_jbool(out_json_t *j, const char *key, int b) {
    put_key(j, key);
    fputs(b ? "true" : "false", j->f);
}

void out_jstr(out_json_t *j, const char *key, const char *s) {
    put_key(j, key);
    out_json_string(j->f, s);
}

void out_jnull(out_json_t *j, const char *key) {
    put_key(j, key);
    fputs("null", j->f);
}

void out_jnumtext(out_json_t *j, const char *key, const char *text) {
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v) || strpbrk(text, "xX") /* hex */) {
        out_jnum(j, key, "%g", NAN);
        return;
    }
    put_key(j, key);
    fputs(text, j->f);
}

void out_jfield(out_json_t *j, const out_field_t *fd, double v) {
    if (fd->skip & OUT_SKIP_JSON) return;
    if (fd->kind == OUT_NAME)
        out_jstr(j, fd->name, fd->names[(int)v]);
    else if (fd->kind == OUT_BOOL)
        out_jbool(j, fd->name, v != 0);
    else
        out_jnum(j, fd->name, fd->fmt, v);
}

void out_jfields(out_json_t *j, const out_field_t *fd, int n, const double *v) {
    for (int i = 0; i < n; i++)
        out_jfield(j, &fd[i], v[i]);
}

void out_jrecord(out_json_t *j, const char *key, const out_field_t *fd, int n, const double *v) {
    out_jobj(j, key);
    out_jfields(j, fd, n, v);
    out_jend(j);
}
