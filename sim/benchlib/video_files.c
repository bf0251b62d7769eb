/* video_files: see video_files.h. */
#include "video_files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static int is_video_name(const char *name) {
    static const char *const ext[] = {".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t e = strlen(ext[i]);
        if (n > e && strcasecmp(name + n - e, ext[i]) == 0) return 1;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends dir/name to out when it is a regular file; -1 out of memory. */
static int add_file(const char *dir, const char *name, video_files *out, size_t *cap) {
    size_t len = strlen(dir) + strlen(name) + 2;
    char *p = malloc(len);
    struct stat st;
    if (!p) return -1;
    snprintf(p, len, "%s/%s", dir, name);
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(p);
        return 0;
    }
    if ((size_t)out->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 16;
        char **np = realloc(out->path, nc * sizeof *np);
        if (!np) {
            free(p);
            return -1;
        }
        out->path = np, *cap = nc;
    }
    out->path[out->n++] = p;
    return 0;
}

int video_files_scan(const char *dir, int max, video_files *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "--videos %s: %s", dir, strerror(errno));
        return -1;
    }
    size_t cap = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));)
        if (is_video_name(e->d_name)) rc = add_file(dir, e->d_name, out, &cap);
    closedir(d);
    if (rc != 0) {
        snprintf(err, errlen, "--videos %s: out of memory", dir);
        video_files_free(out);
        return -1;
    }
    if (out->n == 0) {
        snprintf(err, errlen,
                 "--videos %s: no video file (*.mp4, *.mkv, *.webm, *.avi, *.mov, *.m4v) in it "
                 "(not searched recursively)",
                 dir);
        return -1;
    }
    qsort(out->path, (size_t)out->n, sizeof *out->path, cmp_str);
    out->found = out->n;
    while (out->n > max)
        free(out->path[--out->n]);
    return 0;
}

void video_files_free(video_files *v) {
    for (int i = 0; i < v->n; i++)
        free(v->path[i]);
    free(v->path);
    memset(v, 0, sizeof *v);
}
