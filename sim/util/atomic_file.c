/* atomic_file: see atomic_file.h. */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"

static void release(atomic_file_t *af) {
    cleanup_drop(af->cleanup); /* after the rename or unlink: a signal before it removes tmp */
    free(af->tmp);
    free(af->path);
    memset(af, 0, sizeof *af);
    af->cleanup = -1;
}

/* The folder holding path must exist and take new files (the temporary
 * file is made there). */
static int folder_check(const char *path, char *err, size_t errlen) {
    char *copy = strdup(path);
    if (!copy) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    const char *dir = dirname(copy);
    struct stat st;
    int rc = 0;
    if (stat(dir, &st) != 0) {
        snprintf(err, errlen, "cannot write %s: %s (the folder %s)", path, strerror(errno), dir);
        rc = -1;
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: %s is not a folder", path, dir);
        rc = -1;
    } else if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "cannot write %s: %s (the folder %s)", path, strerror(errno), dir);
        rc = -1;
    }
    free(copy);
    return rc;
}

char *atomic_target(const char *path, char *err, size_t errlen) {
    struct stat st;
    if (!path[0]) {
        snprintf(err, errlen, "an empty file name");
        return NULL;
    }
    char *target = NULL;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        /* Written through: the rename must replace the file, not the link. */
        target = realpath(path, NULL);
        if (!target || stat(target, &st) != 0) {
            snprintf(err, errlen,
                     "%s: a symbolic link that leads to no file (%s); the output is written "
                     "through a link, never over it: name a file",
                     path, strerror(errno));
            free(target);
            return NULL;
        }
        if (!S_ISREG(st.st_mode)) {
            snprintf(err, errlen,
                     "%s: a symbolic link to %s, which is not a regular file (the output would "
                     "replace it by a rename); name a file, or - for stdout",
                     path, target);
            free(target);
            return NULL;
        }
    } else if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a directory", path);
        return NULL;
    } else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* The commit renames over the target: never over a device, FIFO or socket. */
        snprintf(err, errlen, "%s: not a regular file (the output replaces it by a rename)", path);
        return NULL;
    } else if (!(target = strdup(path))) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (folder_check(target, err, errlen)) {
        free(target);
        return NULL;
    }
    return target;
}

int atomic_is_stdout(const char *path) {
    struct stat l, a, b;
    /* A link only (/dev/stdout, /proc/self/fd/1): /dev/null named as such is
     * a device, refused, even when stdout happens to be /dev/null too. */
    return strcmp(path, "-") == 0 ||
           (lstat(path, &l) == 0 && S_ISLNK(l.st_mode) && stat(path, &a) == 0 &&
            fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino);
}

int atomic_open(atomic_file_t *af, const char *path, char *err, size_t errlen) {
    memset(af, 0, sizeof *af);
    af->cleanup = -1;
    if (!(af->path = atomic_target(path, err, errlen))) return -1;
    path = af->path;
    struct stat st;
    int exists = stat(path, &st) == 0;
    size_t n = strlen(path) + sizeof ".tmp.XXXXXX";
    af->tmp = malloc(n);
    if (!af->tmp) {
        snprintf(err, errlen, "%s: out of memory", path);
        release(af);
        return -1;
    }
    snprintf(af->tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        release(af);
        return -1;
    }
    /* SIGINT or SIGTERM before the commit must not leave it behind. */
    af->cleanup = cleanup_add(af->tmp, 0);
    /* mkstemp makes 0600; give the file the target's mode, or the usual one. */
    mode_t mode = exists ? st.st_mode & 07777 : 0;
    if (!exists) {
        mode_t mask = umask(022);
        umask(mask);
        mode = 0666 & ~mask;
    }
    if (fchmod(fd, mode) != 0 || !(af->f = fdopen(fd, "w"))) {
        snprintf(err, errlen, "cannot write %s: %s", af->tmp, strerror(errno));
        close(fd);
        unlink(af->tmp);
        release(af);
        return -1;
    }
    return 0;
}

void atomic_sync_dir(const char *path) {
    char *copy = strdup(path);
    if (!copy) return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd); /* best effort: some file systems refuse it on folders */
        close(fd);
    }
    free(copy);
}

/* Flushes, syncs and puts the file in place: renamed over the target, or
 * (excl) linked to its name only where no file has it (link() fails on an
 * existing name, with no moment where a check could be outrun). */
static int commit(atomic_file_t *af, char *err, size_t errlen, int excl) {
    int bad = ferror(af->f) || fflush(af->f) != 0 || fsync(fileno(af->f)) != 0;
    int e = bad ? (errno ? errno : EIO) : 0;
    if (fclose(af->f) != 0 && !bad) bad = 1, e = errno;
    af->f = NULL;
    int rc = bad ? 0 : excl ? link(af->tmp, af->path) : rename(af->tmp, af->path);
    if (rc != 0) {
        int exists = excl && errno == EEXIST;
        if (exists)
            snprintf(err, errlen, "%s exists (left unchanged)", af->path);
        else
            snprintf(err, errlen, "cannot %s %s to %s: %s", excl ? "link" : "rename", af->tmp,
                     af->path, strerror(errno));
        unlink(af->tmp);
        release(af);
        return exists ? 1 : -1;
    }
    if (excl && !bad) unlink(af->tmp);
    if (bad) {
        snprintf(err, errlen, "writing %s: %s (left unchanged)", af->path, strerror(e));
        unlink(af->tmp);
        release(af);
        return -1;
    }
    atomic_sync_dir(af->path);
    release(af);
    return 0;
}

int atomic_commit(atomic_file_t *af, char *err, size_t errlen) {
    return commit(af, err, errlen, 0);
}

int atomic_commit_new(atomic_file_t *af, char *err, size_t errlen) {
    return commit(af, err, errlen, 1);
}

void atomic_abort(atomic_file_t *af) {
    if (af->f) fclose(af->f);
    if (af->tmp) unlink(af->tmp);
    release(af);
}
