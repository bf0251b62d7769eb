/* sweep_merge: see sweep_merge.h. */
#include "sweep_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "diag.h"
#include "text.h"

enum { MAX_PARTS = 1000000 };

typedef struct {
    const char *path;
    char *csv, *meta; /* the files' text */
    size_t csv_len;
    long i, n, first, end; /* shard I/N, configurations [first, end) */
} part_t;

static int refuse(const char *path, const char *why) {
    fprintf(stderr, "stallsim sweep --merge: ");
    if (path) text_put_escaped(stderr, path), fputs(": ", stderr);
    fprintf(stderr, "%s\n", why);
    return EXIT_INPUT;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    char chunk[1 << 16];
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (n + got + 1 > cap) {
            cap = (n + got + 1) * 2;
            char *b = realloc(buf, cap);
            if (!b) break;
            buf = b;
        }
        memcpy(buf + n, chunk, got), n += got;
    }
    int bad = ferror(f) || got > 0 || !buf;
    fclose(f);
    if (bad) return free(buf), NULL;
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* The metadata lines that say which sweep it is: all but the shard's own. */
static int same_sweep(const char *a, const char *b) {
    static const char *const own[] = {"  \"args_hash\"", "  \"command_line\"", "  \"shard\"",
                                      "  \"configs\"",   "  \"rows\"",         NULL};
    for (;;) {
        const char *ea = strchr(a, '\n'), *eb = strchr(b, '\n');
        int skip_a = 0, skip_b = 0;
        for (int k = 0; own[k]; k++)
            skip_a |= !strncmp(a, own[k], strlen(own[k])),
                skip_b |= !strncmp(b, own[k], strlen(own[k]));
        if (skip_a || skip_b) {
            if (skip_a) a = ea ? ea + 1 : a + strlen(a);
            if (skip_b) b = eb ? eb + 1 : b + strlen(b);
            continue;
        }
        size_t la = ea ? (size_t)(ea - a) : strlen(a), lb = eb ? (size_t)(eb - b) : strlen(b);
        if (la != lb || memcmp(a, b, la)) return 0;
        if (!ea || !eb) return !ea && !eb;
        a = ea + 1, b = eb + 1;
    }
}

/* One part's files and its shard; 0 or EXIT_INPUT after the reason. */
static int load_part(part_t *p) {
    char mpath[4096];
    snprintf(mpath, sizeof mpath, "%s.meta.json", p->path);
    if (!(p->csv = slurp(p->path, &p->csv_len)))
        return refuse(p->path, "cannot read it (a finished shard's CSV, named by its -o)");
    if (!(p->meta = slurp(mpath, NULL)))
        return refuse(p->path, "no PART.meta.json beside it: not a sweep's output");
    if (!strstr(p->meta, "\"status\": \"complete\""))
        return refuse(p->path, "not finished (its metadata's status is not complete): rerun its "
                               "shard's command to finish it");
    const char *sh = strstr(p->meta, "\"shard\": \""), *cf = strstr(p->meta, "\"configs\": [");
    if (!sh || !cf || sscanf(sh, "\"shard\": \"%ld/%ld\"", &p->i, &p->n) != 2 ||
        sscanf(cf, "\"configs\": [%ld, %ld]", &p->first, &p->end) != 2)
        return refuse(p->path, "its metadata name no shard (a sweep's own -o, as written)");
    return 0;
}

/* The parts ordered by shard, each of 1..N once, of one sweep, following one another. */
static int check_parts(part_t *parts, int np) {
    part_t **by = calloc((size_t)parts[0].n, sizeof *by);
    if (!by) return refuse(NULL, "out of memory");
    int rc = 0;
    for (int k = 0; k < np && !rc; k++) {
        part_t *p = &parts[k];
        char why[256];
        if (p->n != parts[0].n || p->i < 1 || p->i > p->n) {
            snprintf(why, sizeof why, "shard %ld/%ld of a sweep in %ld shards (the first part's)",
                     p->i, p->n, parts[0].n);
            rc = refuse(p->path, why);
        } else if (by[p->i - 1]) {
            snprintf(why, sizeof why, "shard %ld/%ld twice (also in %s)", p->i, p->n,
                     by[p->i - 1]->path);
            rc = refuse(p->path, why);
        } else if (!same_sweep(p->meta, parts[0].meta)) {
            rc = refuse(p->path, "a shard of another sweep (scenario, grid or flags differ from "
                                 "the first part's metadata)");
        } else {
            by[p->i - 1] = p;
        }
    }
    for (long i = 0; !rc && i < parts[0].n; i++) {
        char why[160];
        if (!by[i]) {
            snprintf(why, sizeof why, "shard %ld/%ld is missing", i + 1, parts[0].n);
            rc = refuse(NULL, why);
        } else if (i > 0 && by[i]->first != by[i - 1]->end) {
            rc = refuse(by[i]->path, "its configurations do not follow the previous shard's");
        }
    }
    part_t *sorted = rc ? NULL : malloc((size_t)np * sizeof *sorted);
    if (!rc && !sorted) rc = refuse(NULL, "out of memory");
    for (long i = 0; !rc && i < parts[0].n; i++)
        sorted[i] = *by[i]; /* every part once: np == N here */
    if (!rc) memcpy(parts, sorted, (size_t)np * sizeof *parts);
    free(sorted);
    free(by);
    return rc;
}

static int write_merged(const char *out, const part_t *parts, int np) {
    atomic_file_t af = {.f = stdout, .cleanup = -1};
    char err[512];
    int stream = atomic_is_stdout(out);
    if (!stream && atomic_open(&af, out, err, sizeof err)) return refuse(NULL, err);
    const char *head_end = strchr(parts[0].csv, '\n');
    size_t hlen = head_end ? (size_t)(head_end - parts[0].csv) + 1 : parts[0].csv_len;
    int bad = 0;
    for (int k = 0; k < np && !bad; k++) {
        const char *body = parts[k].csv + (k ? hlen : 0);
        bad = fwrite(body, 1, parts[k].csv_len - (k ? hlen : 0), af.f) !=
              parts[k].csv_len - (k ? hlen : 0);
    }
    if (stream) return fflush(stdout) || bad ? EXIT_RUNTIME : 0;
    if (bad) {
        atomic_abort(&af);
        return refuse(out, "cannot write it");
    }
    if (atomic_commit(&af, err, sizeof err)) return fprintf(stderr, "%s\n", err), EXIT_RUNTIME;
    return 0;
}

int sweep_merge_main(int argc, char **argv) {
    const char *out = NULL;
    int first = 1;
    if (argc >= 3 && (!strcmp(argv[1], "-o") || !strcmp(argv[1], "--output")))
        out = argv[2], first = 3;
    int np = argc - first;
    if (!out || np < 1 || np > MAX_PARTS)
        return refuse(NULL, "expected: stallsim sweep --merge -o OUT.csv PART.csv... (the "
                            "shards' CSVs, in any order)");
    part_t *parts = calloc((size_t)np, sizeof *parts);
    if (!parts) return refuse(NULL, "out of memory");
    int rc = 0;
    struct stat os, ps;
    int have_out = stat(out, &os) == 0;
    for (int k = 0; k < np && !rc; k++) {
        parts[k].path = argv[first + k];
        /* -o one of the parts would replace a shard by the merge. */
        if (have_out && stat(parts[k].path, &ps) == 0 && ps.st_dev == os.st_dev &&
            ps.st_ino == os.st_ino)
            rc = refuse(parts[k].path, "is also -o: the merge goes to another file");
        if (!rc) rc = load_part(&parts[k]);
    }
    if (!rc) rc = check_parts(parts, np);
    if (!rc) {
        /* Every part's header is the first's (the same sweep's). */
        const char *h0 = strchr(parts[0].csv, '\n');
        size_t hl = h0 ? (size_t)(h0 - parts[0].csv) : 0;
        for (int k = 1; k < np && !rc; k++)
            if (parts[k].csv_len < hl || memcmp(parts[k].csv, parts[0].csv, hl))
                rc = refuse(parts[k].path, "its header differs from the first shard's");
    }
    if (!rc) rc = write_merged(out, parts, np);
    for (int k = 0; k < np; k++)
        free(parts[k].csv), free(parts[k].meta);
    free(parts);
    return rc;
}
