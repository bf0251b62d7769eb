/* sweep_out: see sweep_out.h. */
#include "sweep_out.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/file.h>
#include <unistd.h>

#include "atomic_file.h"
#include "diag.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char *concat(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 1);
    if (s) memcpy(s, a, la), memcpy(s + la, b, lb + 1);
    return s;
}

static int io_error(const char *what, const char *path) {
    fprintf(stderr, "stallsim sweep: %s %s: %s\n", what, path, strerror(errno));
    return EXIT_RUNTIME;
}

static int write_all(int fd, const char *buf, size_t len) {
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        buf += w, len -= (size_t)w;
    }
    return 0;
}

static int write_meta(const sweep_out_t *o, const char *status) {
    atomic_file_t af;
    char err[512];
    if (atomic_open(&af, o->meta_path, err, sizeof err)) {
        fprintf(stderr, "stallsim sweep: %s\n", err);
        return EXIT_RUNTIME;
    }
    char hash[32];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)o->spec.args_hash);
    out_json_t j;
    out_json_begin(&j, af.f);
    out_jobj(&j, NULL);
    out_jbreak(&j, "\n  ");
    out_jstr(&j, "status", status);
    out_jbreak(&j, "\n  ");
    out_jstr(&j, "args_hash", hash);
    o->spec.meta(o->spec.meta_ctx, &j);
    out_jbreak(&j, "\n");
    out_jend(&j);
    fputc('\n', af.f);
    if (atomic_commit(&af, err, sizeof err)) {
        fprintf(stderr, "stallsim sweep: %s\n", err);
        return EXIT_RUNTIME;
    }
    return 0;
}

/* 1 when the metadata file exists with this hash (and, if want_complete, says complete). */
static int meta_matches(const sweep_out_t *o, int want_complete, int *exists) {
    FILE *f = fopen(o->meta_path, "r");
    *exists = f != NULL;
    if (!f) return 0;
    char want[64], *line = NULL;
    size_t cap = 0;
    snprintf(want, sizeof want, "\"args_hash\": \"%016llx\"",
             (unsigned long long)o->spec.args_hash);
    int hash = 0, complete = 0;
    while (getline(&line, &cap, f) > 0) {
        if (strstr(line, want)) hash = 1;
        if (strstr(line, "\"status\": \"complete\"")) complete = 1;
    }
    free(line);
    fclose(f);
    return hash && (complete || !want_complete);
}

/* Fields in a CSV record: commas outside quotes, plus one (RFC 4180: a
 * quoted field may hold commas, doubled quotes and newlines). */
static int csv_fields(const char *s, size_t len) {
    int n = 1, quoted = 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '"')
            quoted = !quoted;
        else if (s[i] == ',' && !quoted)
            n++;
    return n;
}

/* Reads one CSV record into *rec (NUL-terminated, *len bytes): up to a
 * newline outside quotes, so a quoted field's newline does not end it.
 * Returns 1 when the record is whole (its newline read, no NUL byte: a crash
 * can leave zero-filled blocks), 0 at the end of the file or on a torn or
 * damaged record, -1 without memory. */
static int read_record(FILE *f, char **rec, size_t *cap, size_t *len) {
    int quoted = 0, c;
    *len = 0;
    while ((c = getc_unlocked(f)) != EOF) {
        if (*len + 2 > *cap) {
            size_t ncap = *cap ? *cap * 2 : 4096;
            char *r = realloc(*rec, ncap);
            if (!r) return -1;
            *rec = r, *cap = ncap;
        }
        (*rec)[(*len)++] = (char)c;
        (*rec)[*len] = 0;
        if (c == 0) return 0;
        if (c == '"') quoted = !quoted;
        if (c == '\n' && !quoted) return 1;
    }
    return 0;
}

/* Byte offset just past the last complete configuration of the partial file
 * (0 when even the header is not right; -1 without memory: nothing may be cut
 * then); *next is the configuration after it.
 * A row of configuration c is whole (read_record), starts with c's prefix
 * and has as many fields as the header. */
static long scan_partial(const sweep_out_t *o, int64_t *next) {
    const sweep_out_spec_t *s = &o->spec;
    *next = s->first;
    FILE *f = fopen(o->partial, "r");
    if (!f) return 0;
    char *rec = NULL, prefix[8192];
    size_t cap = 0, len = 0;
    long keep = 0, pos = 0;
    int nfields = csv_fields(s->header, strlen(s->header)), got;
    if ((got = read_record(f, &rec, &cap, &len)) == 1 && strcmp(rec, s->header) == 0) {
        keep = pos = (long)len;
        for (int64_t c = s->first; c < s->end && got >= 0; c++) {
            s->prefix(s->ctx, c, prefix, sizeof prefix);
            size_t plen = strlen(prefix);
            int64_t r = 0;
            for (; r < s->rows[c - s->first]; r++) {
                if ((got = read_record(f, &rec, &cap, &len)) != 1 ||
                    strncmp(rec, prefix, plen) != 0 || csv_fields(rec, len) != nfields)
                    break;
                pos += (long)len;
            }
            if (r < s->rows[c - s->first]) break;
            keep = pos;
            *next = c + 1;
        }
    }
    free(rec);
    fclose(f);
    return got < 0 ? -1 : keep;
}

/* The pid holding a flock on fd's file, from /proc/locks; 0 when unknown. */
static long lock_holder(int fd) {
    struct stat st;
    FILE *f = fopen("/proc/locks", "r");
    if (!f || fstat(fd, &st)) {
        if (f) fclose(f);
        return 0;
    }
    char line[256];
    long found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        long pid;
        unsigned maj, min;
        unsigned long long ino;
        char kind[16];
        if (sscanf(line, "%*s %15s %*s %*s %ld %x:%x:%llu", kind, &pid, &maj, &min, &ino) == 5 &&
            strcmp(kind, "FLOCK") == 0 && ino == (unsigned long long)st.st_ino &&
            pid != (long)getpid())
            found = pid;
    }
    fclose(f);
    return found;
}

/* One writer per OUT: the partial file is opened (created if missing) and
 * locked before anything is read, truncated or written; *existed says whether
 * it was there. 0, or EXIT_INPUT / EXIT_RUNTIME after a message. */
static int lock_partial(sweep_out_t *o, int *existed) {
    for (int tries = 0;; tries++) {
        *existed = access(o->partial, F_OK) == 0;
        o->fd = open(o->partial, O_RDWR | O_CREAT | O_NOFOLLOW, 0666);
        if (o->fd < 0) return io_error("cannot open", o->partial);
        if (flock(o->fd, LOCK_EX | LOCK_NB) != 0) {
            int busy = errno == EWOULDBLOCK;
            long pid = busy ? lock_holder(o->fd) : 0;
            close(o->fd);
            o->fd = -1;
            if (!busy) return io_error("cannot lock", o->partial);
            char who[48] = "another process";
            if (pid > 0) snprintf(who, sizeof who, "another process (pid %ld)", pid);
            fprintf(stderr,
                    "stallsim sweep: %s is writing %s: two sweeps cannot share -o %s; wait for "
                    "it to finish, or choose another -o\n",
                    who, o->partial, o->spec.path);
            return EXIT_INPUT;
        }
        /* Locked; but a sweep that finished between our open and our lock
         * has renamed that file to OUT (it renames before it unlocks):
         * then the name is free again, or another's, and we start over. */
        struct stat fs, ns;
        if (fstat(o->fd, &fs) == 0 && stat(o->partial, &ns) == 0 && fs.st_dev == ns.st_dev &&
            fs.st_ino == ns.st_ino)
            break;
        close(o->fd);
        o->fd = -1;
        if (tries == 20) {
            fprintf(stderr, "stallsim sweep: %s keeps being replaced (another sweep?); try again\n",
                    o->partial);
            return EXIT_RUNTIME;
        }
    }
    return 0;
}

/* The sweep's own files are never links: one planted there (in a shared
 * folder) would have the sweep create, truncate or replace its target. */
static int refuse_links(const sweep_out_t *o) {
    const char *own[2] = {o->partial, o->meta_path};
    for (int i = 0; i < 2; i++) {
        struct stat ls;
        if (lstat(own[i], &ls) == 0 && S_ISLNK(ls.st_mode)) {
            fprintf(stderr,
                    "stallsim sweep: %s is a symbolic link; a sweep's partial and metadata files "
                    "are never written through links: remove it, or choose another -o\n",
                    own[i]);
            return EXIT_INPUT;
        }
    }
    return 0;
}

int sweep_out_open(sweep_out_t *o, const sweep_out_spec_t *spec, int64_t *resume, int *complete) {
    memset(o, 0, sizeof *o);
    o->spec = *spec;
    o->fd = -1;
    *complete = 0;
    *resume = spec->first;
    if (strcmp(spec->path, "-") == 0) {
        /* A stream: rows go out as they come; nothing to resume, no metadata. */
        o->stream = 1;
        o->fd = STDOUT_FILENO;
        o->partial = strdup("stdout");
        if (!o->partial) return EXIT_RUNTIME;
        if (write_all(o->fd, spec->header, strlen(spec->header)))
            return io_error("cannot write", o->partial);
        return 0;
    }
    /* The finished file replaces OUT by a rename, which would replace a
     * device or FIFO too (as root, -o /dev/full would swap the device out). */
    struct stat st;
    if (stat(spec->path, &st) == 0 && !S_ISREG(st.st_mode)) {
        fprintf(stderr,
                "stallsim sweep: -o %s: not a regular file (the finished CSV replaces it by a "
                "rename); name a file\n",
                spec->path);
        return EXIT_INPUT;
    }
    o->partial = concat(spec->path, ".partial");
    o->meta_path = concat(spec->path, ".meta.json");
    if (!o->partial || !o->meta_path) return EXIT_RUNTIME;

    int existed = 0, rc = refuse_links(o);
    if (!rc) rc = lock_partial(o, &existed);
    if (rc) return rc;

    /* An empty partial file holds no rows: a run cut short between creating
     * it and writing its metadata, or one that found its sweep complete. */
    struct stat ps;
    if (existed && fstat(o->fd, &ps) == 0 && ps.st_size == 0) existed = 0;
    int meta_exists;
    if (existed) {
        if (!meta_matches(o, 0, &meta_exists)) {
            fprintf(stderr,
                    "stallsim sweep: %s is an unfinished sweep with other arguments (%s); rerun "
                    "the command it records to finish it, or delete %s to start this one\n",
                    o->partial,
                    meta_exists ? "its command line is in the .meta.json" : "no metadata",
                    o->partial);
            return EXIT_INPUT;
        }
        long keep = scan_partial(o, resume);
        if (keep < 0) {
            fprintf(stderr, "stallsim sweep: out of memory reading %s (left as it is)\n",
                    o->partial);
            return EXIT_RUNTIME;
        }
        if (ftruncate(o->fd, keep) || lseek(o->fd, keep, SEEK_SET) < 0)
            return io_error("cannot truncate", o->partial);
        if (keep == 0 && write_all(o->fd, spec->header, strlen(spec->header)))
            return io_error("cannot write", o->partial);
        if (fsync(o->fd)) return io_error("cannot sync", o->partial);
        o->last_sync = now_s();
        /* Always said (not progress): a user should know the rows are not all from this run. */
        fprintf(stderr, "stallsim sweep: resuming %s at configuration %lld (%lld of %lld done)\n",
                o->partial, (long long)*resume, (long long)(*resume - spec->first),
                (long long)(spec->end - spec->first));
        return 0;
    }
    if (access(spec->path, F_OK) == 0 && meta_matches(o, 1, &meta_exists)) {
        /* Done already: the partial file was only made to hold the lock. */
        unlink(o->partial);
        *complete = 1;
        return 0;
    }
    if (access(spec->path, F_OK) == 0 && meta_exists && !meta_matches(o, 0, &meta_exists)) {
        /* Another sweep's finished output: its metadata must stay its own
         * (a new "running" over it would make it unreadable if this run dies). */
        unlink(o->partial);
        fprintf(stderr,
                "stallsim sweep: %s is the output of a sweep with other arguments (its command "
                "line is in %s); choose another -o, or delete %s and %s to replace it\n",
                spec->path, o->meta_path, spec->path, o->meta_path);
        return EXIT_INPUT;
    }
    /* The metadata first: a partial file is never without the hash that owns it. */
    rc = write_meta(o, "running");
    if (rc) return rc;
    if (write_all(o->fd, spec->header, strlen(spec->header)) || fsync(o->fd))
        return io_error("cannot write", o->partial);
    o->last_sync = now_s();
    return 0;
}

int sweep_out_write(sweep_out_t *o, const char *rows, size_t len) {
    if (write_all(o->fd, rows, len)) return io_error("cannot write", o->partial);
    if (o->stream) return 0;
    /* kill -9 keeps what was written; syncing bounds what a power loss can take back. */
    double t = now_s();
    if (t - o->last_sync >= 1.0) {
        if (fsync(o->fd)) return io_error("cannot sync", o->partial);
        o->last_sync = t;
    }
    return 0;
}

int sweep_out_finish(sweep_out_t *o) {
    if (o->stream) {
        o->fd = -1;
        return 0;
    }
    if (fsync(o->fd)) return io_error("cannot sync", o->partial);
    /* Renamed and marked complete while still locked: a sweep that opens
     * OUT.partial meanwhile finds it gone (or locked), never a finished file
     * under the partial file's name. */
    if (rename(o->partial, o->spec.path)) return io_error("cannot rename to", o->spec.path);
    atomic_sync_dir(o->spec.path);
    int rc = write_meta(o, "complete");
    if (close(o->fd) && !rc) rc = io_error("cannot close", o->spec.path);
    o->fd = -1;
    return rc;
}

void sweep_out_close(sweep_out_t *o) {
    if (o->fd >= 0 && !o->stream) close(o->fd);
    o->fd = -1;
    free(o->partial);
    free(o->meta_path);
    o->partial = o->meta_path = NULL;
}
