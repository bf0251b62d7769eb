/* init_data: see init_data.h. */
#include "init_data.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diag.h"
#include "text.h"

#define MAX_KINDS 64 /* distinct file name extensions told apart; more share the last */

/* The files of one name extension (lower case; "" for none). */
typedef struct {
    char ext[16];
    int64_t files;
    uint64_t sum, max;
    unsigned __int128 sumsq; /* exact: the sizes' squares pass 2^64 past 4 GB */
    char *largest;           /* the path of its largest file (malloc'ed) */
} kind_t;

typedef struct {
    const char *top; /* as the user named it, for messages */
    int64_t skipped, unreadable, empty;
    char *first_unreadable;
    kind_t kinds[MAX_KINDS];
    int nkinds;
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

static kind_t *kind_of(walk_t *w, const char *name) {
    const char *dot = strrchr(name, '.');
    char ext[16] = "";
    size_t n = dot ? strlen(dot + 1) : 0;
    if (n < sizeof ext)
        for (size_t i = 0; i < n; i++)
            ext[i] = (char)tolower((unsigned char)dot[1 + i]);
    for (int k = 0; k < w->nkinds; k++)
        if (!strcmp(w->kinds[k].ext, ext)) return &w->kinds[k];
    if (w->nkinds == MAX_KINDS) return &w->kinds[MAX_KINDS - 1];
    kind_t *k = &w->kinds[w->nkinds++];
    memcpy(k->ext, ext, sizeof ext);
    return k;
}

static void add_file(walk_t *w, const char *path, const char *name, uint64_t size) {
    if (size == 0) { /* measure skips an empty file: no item to decode */
        w->empty++;
        return;
    }
    kind_t *k = kind_of(w, name);
    k->files++;
    k->sum += size;
    k->sumsq += (unsigned __int128)size * size;
    if (size > k->max) {
        char *p = strdup(path);
        if (p) free(k->largest), k->largest = p, k->max = size;
    }
}

/* An entry that cannot be stat'ed (a dangling link, a link loop) is skipped
 * and counted, as measure does: one such name gave up the whole walk. */
static void unreadable(walk_t *w, const char *path) {
    if (!w->unreadable++) w->first_unreadable = strdup(path);
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
            unreadable(w, buf);
        } else if (S_ISDIR(st.st_mode)) {
            if (S_ISLNK(lst.st_mode))
                w->skipped++;
            else
                rc = walk(w, buf, len + 1 + n);
        } else if (S_ISREG(st.st_mode)) {
            add_file(w, buf, e->d_name, (uint64_t)st.st_size);
        }
        buf[len] = 0;
        errno = 0;
    }
    if (!rc && errno) rc = fail(w, buf, strerror(errno));
    closedir(d);
    return rc;
}

static int is_image(const char *ext) {
    static const char *const images[] = {"jpg", "jpeg", "png",  "webp", "bmp",
                                         "gif", "tif",  "tiff", "ppm",  NULL};
    for (int i = 0; images[i]; i++)
        if (!strcmp(ext, images[i])) return 1;
    return 0;
}

/* Which kinds are items: the images when there are any (what measure and
 * the probe read), else the extension most files have; a label CSV, a
 * README or the archive the images came from are not items. */
static void choose(const walk_t *w, int *use) {
    int any_image = 0, best = -1;
    for (int k = 0; k < w->nkinds; k++)
        any_image |= is_image(w->kinds[k].ext);
    for (int k = 0; k < w->nkinds; k++) {
        use[k] = any_image && is_image(w->kinds[k].ext);
        if (best < 0 || w->kinds[k].files > w->kinds[best].files) best = k;
    }
    if (!any_image && best >= 0) use[best] = 1;
}

/* What was left out, on stderr and in d->other_*. */
static void tell_skipped(const walk_t *w, const int *use, init_data_t *d) {
    const kind_t *big = NULL;
    for (int k = 0; k < w->nkinds; k++) {
        if (use[k]) continue;
        d->other_files += w->kinds[k].files;
        d->other_bytes += (double)w->kinds[k].sum;
        if (!big || w->kinds[k].max > big->max) big = &w->kinds[k];
    }
    if (d->other_files) {
        char shown[PATH_MAX];
        text_escape(shown, sizeof shown, big->largest);
        fprintf(stderr,
                "stallsim init: --data: %lld files of other kinds than the items skipped "
                "(%.3g GB; the largest: %s, %.3g GB)\n",
                (long long)d->other_files, d->other_bytes / 1e9, shown, (double)big->max / 1e9);
    }
    if (w->unreadable) {
        char shown[PATH_MAX];
        text_escape(shown, sizeof shown, w->first_unreadable ? w->first_unreadable : "?");
        fprintf(stderr,
                "stallsim init: --data: %lld entries that cannot be read skipped (dangling links, "
                "link loops; the first: %s)\n",
                (long long)w->unreadable, shown);
    }
}

/* The figures of the chosen kinds; EXIT_INPUT where they make no data set. */
static int figures(const walk_t *w, const int *use, const char *dir, init_data_t *d) {
    int64_t files = 0;
    uint64_t sum = 0, max = 0;
    unsigned __int128 sumsq = 0;
    const char *largest = NULL;
    for (int k = 0; k < w->nkinds; k++)
        if (use[k]) {
            files += w->kinds[k].files, sum += w->kinds[k].sum, sumsq += w->kinds[k].sumsq;
            if (w->kinds[k].max > max) max = w->kinds[k].max, largest = w->kinds[k].largest;
        }
    if (files == 0)
        return fail(w, dir,
                    w->empty ? "every file under it is empty"
                             : "no files under it (hidden ones are skipped)");
    long double n = (long double)files, mean = (long double)sum / n;
    long double var = (long double)sumsq / n - mean * mean;
    d->files = files;
    d->empty = w->empty;
    d->mean_bytes = (double)mean;
    d->cv = var > 0 ? (double)(sqrtl(var) / mean) : 0;
    if (d->cv > INIT_DATA_MAX_CV) {
        char why[PATH_MAX + 256], shown[PATH_MAX];
        text_escape(shown, sizeof shown, largest ? largest : "?");
        snprintf(why, sizeof why,
                 "the item sizes spread too far (std / mean %.4g, at most %g): the largest is %s "
                 "(%.3g MB, the mean %.3g MB); is it one of the training items?",
                 d->cv, INIT_DATA_MAX_CV, shown, (double)max / 1e6, (double)mean / 1e6);
        return fail(w, dir, why);
    }
    return 0;
}

int init_data_walk(const char *dir, init_data_t *d) {
    walk_t *w = calloc(1, sizeof *w);
    char buf[PATH_MAX];
    struct stat st;
    memset(d, 0, sizeof *d);
    if (!w) return fprintf(stderr, "stallsim init: out of memory\n"), EXIT_RUNTIME;
    w->top = dir;
    int rc = 0, use[MAX_KINDS] = {0};
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if (stat(dir, &st) != 0)
        rc = fail(w, dir, strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = fail(w, dir, "not a folder (name the training set's folder)");
    else if (len >= PATH_MAX)
        rc = fail(w, dir, "longer than PATH_MAX");
    if (!rc) {
        memcpy(buf, dir, len);
        buf[len] = 0;
        rc = walk(w, buf, len);
    }
    if (!rc) {
        choose(w, use);
        d->skipped = w->skipped;
        d->unreadable = w->unreadable;
        tell_skipped(w, use, d);
        rc = figures(w, use, dir, d);
    }
    for (int k = 0; k < w->nkinds; k++)
        free(w->kinds[k].largest);
    free(w->first_unreadable);
    free(w);
    return rc;
}
