/* init_data: see init_data.h. */
#include "init_data.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "text.h"

typedef struct {
    const char *top; /* as the user named it, for messages */
    int64_t files, skipped;
    uint64_t sum;
    unsigned __int128 sumsq; /* exact: the sizes' squares pass 2^64 past 4 GB */
} walk_t;

static int fail(const walk_t *w, const char *path, const char *what) {
    char shown[PATH_MAX];
    text_escape(shown, sizeof shown, path);
    fprintf(stderr, "stallsim init: --data ");
    text_put_escaped(stderr, w->top);
    if (strcmp(path, w->top) != 0) fprintf(stderr, ": %s", shown);
    fprintf(stderr, ": %s\n", what);
    return EXIT_INPUT;
}

/* The folder at path (its name in buf, buf holding PATH_MAX bytes). */
static int walk(walk_t *w, char *buf, size_t len) {
    DIR *d = opendir(buf);
    if (!d) return fail(w, buf, strerror(errno));
    int rc = 0;
    struct dirent *e;
    errno = 0;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.') {
            w->skipped += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
            continue;
        }
        size_t n = strlen(e->d_name);
        if (len + 1 + n >= PATH_MAX) {
            rc = fail(w, buf, "a path under it is longer than PATH_MAX");
            break;
        }
        buf[len] = '/';
        memcpy(buf + len + 1, e->d_name, n + 1);
        struct stat st, lst;
        if (lstat(buf, &lst) != 0 || stat(buf, &st) != 0) {
            rc = fail(w, buf, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            if (S_ISLNK(lst.st_mode))
                w->skipped++;
            else
                rc = walk(w, buf, len + 1 + n);
        } else if (S_ISREG(st.st_mode)) {
            uint64_t size = (uint64_t)st.st_size;
            w->files++;
            w->sum += size;
            w->sumsq += (unsigned __int128)size * size;
        }
        buf[len] = 0;
        errno = 0;
    }
    if (!rc && errno) rc = fail(w, buf, strerror(errno));
    closedir(d);
    return rc;
}

int init_data_walk(const char *dir, init_data_t *d) {
    walk_t w = {.top = dir};
    char buf[PATH_MAX];
    struct stat st;
    memset(d, 0, sizeof *d);
    if (stat(dir, &st) != 0) return fail(&w, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return fail(&w, dir, "not a folder (name the training set's folder)");
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (len >= PATH_MAX) return fail(&w, dir, "longer than PATH_MAX");
    memcpy(buf, dir, len);
    buf[len] = 0;
    int rc = walk(&w, buf, len);
    if (rc) return rc;
    if (w.files == 0) return fail(&w, dir, "no files under it (hidden ones are skipped)");
    if (w.sum == 0) return fail(&w, dir, "every file under it is empty");
    long double n = (long double)w.files, mean = (long double)w.sum / n;
    long double var = (long double)w.sumsq / n - mean * mean;
    d->files = w.files;
    d->skipped = w.skipped;
    d->mean_bytes = (double)mean;
    d->cv = var > 0 ? (double)(sqrtl(var) / mean) : 0;
    return 0;
}
