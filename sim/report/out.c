/* out: see out.h. */
#include "out.h"

void out_value(FILE *f, const out_field_t *fd, double v, int json) {
    if (fd->kind == OUT_NAME)
        fprintf(f, json ? "\"%s\"" : "%s", fd->names[(int)v]);
    else if (fd->kind == OUT_BOOL && json)
        fputs(v ? "true" : "false", f);
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
            out_value(f, &fd[i], v[i], 0);
        }
}

void out_json_members(FILE *f, const out_field_t *fd, int n, const double *v) {
    int first = 1;
    for (int i = 0; i < n; i++)
        if (!(fd[i].skip & OUT_SKIP_JSON)) {
            fprintf(f, "%s\"%s\": ", first ? "" : ", ", fd[i].name);
            out_value(f, &fd[i], v[i], 1);
            first = 0;
        }
}
