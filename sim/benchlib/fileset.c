/* fileset: see fileset.h. */
#include "fileset.h"

#include <dirent.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_jpeg_name(const char *name) {
    const char *dot = strrchr(name, '.');
    return dot && (strcasecmp(dot, ".jpg") == 0 || strcasecmp(dot, ".jpeg") == 0);
}

static int push(file_list *fl, const char *path, long size) {
    if (fl->n == fl->cap) {
        int cap = fl->cap ? fl->cap * 2 : 256;
        file_entry *v = realloc(fl->v, sizeof *v * (size_t)cap);
        if (!v) return -1;
        fl->v = v;
        fl->cap = cap;
    }
    char *p = strdup(path);
    if (!p) return -1;
    fl->v[fl->n].path = p;
    fl->v[fl->n].size = size;
    fl->n++;
    return 0;
}

static int scan(const char *dir, file_list *fl, int depth) {
    if (depth > FILESET_MAX_DEPTH) {
        fl->too_deep++;
        return 0;
    }
    DIR *d = opendir(dir);
    if (!d) {
        fl->unreadable++;
        return 0;
    }
    struct dirent *e;
    char path[4096];
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path) {
            fl->unreadable++;
            continue;
        }
        struct stat st, lst;
        if (lstat(path, &lst) != 0) {
            fl->unreadable++;
            continue;
        }
        if (S_ISDIR(lst.st_mode)) {
            rc = scan(path, fl, depth + 1);
            continue;
        }
        if (!is_jpeg_name(e->d_name)) {
            if (S_ISREG(lst.st_mode)) fl->non_jpeg++;
            continue;
        }
        /* A link named *.jpg counts as a file; a dangling one is listed and
         * fails when read, like any unreadable file. */
        long size = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long)st.st_size : -1;
        if (push(fl, path, size) != 0) rc = -1;
    }
    closedir(d);
    return rc;
}

static int cmp_entry(const void *a, const void *b) {
    return strcmp(((const file_entry *)a)->path, ((const file_entry *)b)->path);
}

int fileset_scan(const char *dir, file_list *out, char *err, size_t errlen) {
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a readable directory", dir);
        return -1;
    }
    if (scan(dir, out, 0) != 0) {
        snprintf(err, errlen, "out of memory listing %s", dir);
        return -1;
    }
    if (out->n > 1) qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_entry);
    return 0;
}

void fileset_free(file_list *fl) {
    for (int i = 0; i < fl->n; i++)
        free(fl->v[i].path);
    free(fl->v);
    memset(fl, 0, sizeof *fl);
}

int fileset_read_into(const char *path, unsigned char **buf, size_t *cap, long *size) {
    /* Non-blocking: opening a FIFO named x.jpg must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    long n = (long)st.st_size, off = 0;
    size_t need = (size_t)(n > 0 ? n : 1);
    if (need > *cap) {
        unsigned char *b = realloc(*buf, need);
        if (!b) {
            close(fd);
            errno = ENOMEM;
            return -1;
        }
        *buf = b;
        *cap = need;
    }
    while (off < n) {
        ssize_t r = pread(fd, *buf + off, (size_t)(n - off), off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break; /* shrank while reading: keep what is there */
        off += r;
    }
    close(fd);
    *size = off;
    return 0;
}

int fileset_read(const char *path, unsigned char **buf, long *size) {
    size_t cap = 0;
    *buf = NULL;
    return fileset_read_into(path, buf, &cap, size);
}

int fileset_fits_twice(const file_list *fl, double *listed, double *avail) {
    *listed = 0;
    *avail = (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < fl->n; i++)
        *listed += fl->v[i].size > 0 ? (double)fl->v[i].size : 0; /* -1: unreadable */
    return !(*avail > 0 && 2 * *listed > *avail);
}

void fileset_remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                fileset_remove_tree(path);
            else
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

void fileset_sample(file_list *fl, int max, unsigned long seed) {
    if (fl->n <= max) return;
    int *idx = malloc(sizeof *idx * (size_t)fl->n), *pick = malloc(sizeof *pick * (size_t)max);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!idx || !pick || !rng) { /* keep the first max: still a valid (if biased) sample */
        for (int i = max; i < fl->n; i++)
            free(fl->v[i].path);
    } else {
        gsl_rng_set(rng, seed);
        for (int i = 0; i < fl->n; i++)
            idx[i] = i;
        gsl_ran_choose(rng, pick, (size_t)max, idx, (size_t)fl->n, sizeof *idx);
        /* Free the paths left out before compacting, which overwrites slots. */
        char *keep = calloc((size_t)fl->n, 1);
        for (int i = 0; keep && i < max; i++)
            keep[pick[i]] = 1;
        for (int i = 0; keep && i < fl->n; i++)
            if (!keep[i]) free(fl->v[i].path);
        for (int i = 0; i < max; i++)
            fl->v[i] = fl->v[pick[i]]; /* pick is ascending, so pick[i] >= i */
        free(keep);
    }
    fl->n = max;
    free(idx);
    free(pick);
    if (rng) gsl_rng_free(rng);
}
