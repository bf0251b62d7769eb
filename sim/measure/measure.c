/* measure: see measure.h. Owns the command line, the data set in memory and
 * the mapping from a scenario to a real pipeline (pipeline.h), and turns what
 * the pipeline timed into the simulator's epoch_metrics_t. */
#include "measure.h"

#include <errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decode_bench.h"
#include "fig.h"
#include "fileset.h"
#include "http_get.h"
#include "intern.h"
#include "jpeg_gen.h"
#include "metrics.h"
#include "perm.h"
#include "pipeline.h"
#include "report.h"
#include "valid.h"
#include "kinds.h"
#include "scenario.h"
#include "schema.h"
#include "storage_bench.h"
#include "text.h"
#include "topology.h"

#define MAX_BAD_LINES 10

typedef enum { PAGE_WARM, PAGE_COLD, PAGE_COLD_EPOCH } page_mode_t;
static const char *const page_mode_names[] = {"page-warm", "page-cold", "page-cold-epoch"};

typedef struct {
    run_args_t a; /* first: the shared rows' offsets are into it */
    const char *data;
    const char *url; /* --url BASE: GET each item from BASE + its path under data */
    report_format_t format;
    page_mode_t page;
    const char *minio_size; /* as given: bytes, or N% of the dataset */
    int io_threads;         /* 0: from the scenario's queue depth */
    int generate;           /* JPEGs to generate into an empty --data first */
} options;

/* The data set: good JPEGs only, each held in memory for the T_prep run. */
typedef struct {
    file_list fl;
    char **paths;
    char **urls; /* with --url: [n] BASE + path under DIR */
    long *sizes;
    unsigned char **mem;
    int n, non_jpeg, bad;
    double bytes, mean, cv;
} dataset;

static int usage_error(const char *fmt, const char *arg) {
    return options_error("measure", fmt, arg);
}

static int page_fn(void *field, const char *cmd, const char *val) {
    (void)cmd;
    for (int k = 0; k < 3; k++)
        if (!strcmp(val, page_mode_names[k])) {
            *(page_mode_t *)field = (page_mode_t)k;
            return 0;
        }
    return usage_error("--cache: expected page-warm, page-cold or page-cold-epoch, got '%s'", val);
}

static const option_t measure_own_options[] = {
    {.name = "--data",
     .type = OPT_STR,
     .arg = "DIR",
     .offset = offsetof(options, data),
     .help = "the JPEGs (searched recursively); dataset.items, item_kb and\n"
             "item_kb_cv are taken from them"},
    REPORT_FORMAT_OPTION(offsetof(options, format)),
    {.name = "--cache",
     .type = OPT_FN,
     .arg = "MODE",
     .offset = offsetof(options, page),
     .fn = page_fn,
     .help = "the OS page cache before the run: page-warm (default: every\n"
             "file read once first), page-cold (evicted before the run) or\n"
             "page-cold-epoch (evicted before every epoch)"},
    {.name = "--minio-size",
     .type = OPT_STR,
     .arg = "SIZE",
     .offset = offsetof(options, minio_size),
     .help = "MinIO cache (loader.cache=minio) in bytes, or N% of the\n"
             "dataset (default: server.cache_gb)"},
    {.name = "--io-threads",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(options, io_threads),
     .min = 1,
     .max = 1024,
     .help = "reads in flight at most (default: server.storage.queue_depth,\n"
             "at most 16; with --url at most 64)"},
    {.name = "--url",
     .type = OPT_STR,
     .arg = "BASE",
     .offset = offsetof(options, url),
     .help = "GET each item over HTTP from BASE + its path under DIR (one\n"
             "kept-alive connection per fetch thread) instead of reading the\n"
             "file; DIR still decides the items, their sizes and order, and\n"
             "must be served at BASE. Paths may hold only [A-Za-z0-9._/-].\n"
             "Takes --cache page-warm (every object GET once first) and\n"
             "loader.cache none or minio"},
    {.name = "--generate",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(options, generate),
     .min = 1,
     .max = 10000000,
     .help = "when DIR holds no JPEG, first write N generated photograph-like\n"
             "JPEGs there (the set `calibrate` generates; created if missing)"},
    {0},
};

static const option_t *const measure_tables[] = {measure_own_options, run_scenario_options, NULL};

const command_t measure_command = {
    .name = "measure",
    .synopsis = "SCENARIO --data DIR [options]",
    .about = "Runs the scenario's input pipeline for real on this host over the JPEGs in DIR\n"
             "(read, libjpeg-turbo decode, CPU augment on server.cpus threads, the GPU emulated\n"
             "by sleeping each batch's compute time) and reports what `stallsim run` predicts.",
    .tables = measure_tables,
    .positional = "SCENARIO",
    .positional_offset = offsetof(options, a.file),
    .footer = "Results go to stdout, progress and notes to stderr. Exit: 0 done, 1 runtime\n"
              "failure, 2 bad usage or input.\n",
};

/* Returns -1 after --help, 0 to go on, EXIT_INPUT on bad usage. */
static int parse_args(int argc, char **argv, options *o) {
    memset(o, 0, sizeof *o);
    int rc = options_parse(&measure_command, argc, argv, o);
    if (rc) return rc == 1 ? -1 : rc;
    if (!o->a.file) return usage_error("missing the scenario file%s", "");
    if (!o->data) return usage_error("missing --data DIR (the JPEGs to read)%s", "");
    if (o->format == FORMAT_HTML)
        return usage_error("--format html is run's page; measure writes text, csv or json%s", "");
    if (o->url && strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8))
        return usage_error("--url: expected http://HOST[:PORT]/PATH or https://..., got '%s'",
                           o->url);
    if (o->url && o->page != PAGE_WARM)
        return usage_error("--cache %s: with --url the page cache that matters is the server's, "
                           "which measure cannot evict: use page-warm (the default)",
                           page_mode_names[o->page]);
    return 0;
}

/* Bytes of the MinIO cache from "--minio-size": an integer number of bytes or
 * a percentage of the dataset. -1 when malformed. */
static double parse_size(const char *s, double dataset_bytes) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !isfinite(v) || v < 0) return -1;
    if (*end == '%' && end[1] == '\0') return v / 100 * dataset_bytes;
    if (*end) return -1;
    return v;
}

static void dataset_free(dataset *d) {
    for (int i = 0; d->mem && i < d->n; i++)
        free(d->mem[i]);
    for (int i = 0; d->urls && i < d->n; i++)
        free(d->urls[i]);
    free(d->mem), free(d->paths), free(d->urls), free(d->sizes);
    fileset_free(&d->fl);
    memset(d, 0, sizeof *d);
}

/* --generate leaves DIR/.stallsim-generated ("count N seed S") once every
 * file is written, so a later run tells a finished set from one that a full
 * disk or a kill cut short. */
#define GEN_MARK ".stallsim-generated"

/* Whether every listed file has a name the generator writes (class_NN/img_NNNNNN.jpg). */
static int all_generated_names(const char *dir, const file_list *fl) {
    size_t n = strlen(dir);
    for (int i = 0; i < fl->n; i++) {
        int c, k, used = 0;
        const char *rel = fl->v[i].path + n;
        if (strncmp(fl->v[i].path, dir, n) != 0 ||
            sscanf(rel, "/class_%2d/img_%6d.jpg%n", &c, &k, &used) != 2 || rel[used] != 0)
            return 0;
    }
    return 1;
}

/* --generate: fills DIR (made if missing) when it has no JPEG yet, or
 * completes a generated set an earlier run did not finish. */
static int generate(const char *dir, int count, unsigned long seed) {
    file_list fl = {0};
    char err[512], mark[4096];
    snprintf(mark, sizeof mark, "%s/" GEN_MARK, dir);
    int have = fileset_scan(dir, &fl, err, sizeof err) == 0 ? fl.n : 0;
    int generated = have > 0 && all_generated_names(dir, &fl);
    fileset_free(&fl);
    int mcount = -1;
    unsigned long mseed = 0;
    FILE *m = fopen(mark, "r");
    if (m && fscanf(m, "count %d seed %lu", &mcount, &mseed) != 2) mcount = -1;
    if (m) fclose(m);
    if (have > 0 && mcount >= 0 && have == mcount) return 0; /* a finished set */
    if (have > 0 && !generated) {
        fprintf(stderr,
                "stallsim measure: --generate: %s already holds %d JPEG(s) that --generate did "
                "not write; measuring them as they are\n",
                dir, have);
        return 0;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "stallsim measure: --data %s: cannot create: %s\n", dir, strerror(errno));
        return EXIT_INPUT;
    }
    if (have > 0 && mcount >= 0 && mcount != have) {
        fprintf(stderr,
                "stallsim measure: --generate: %s holds %d of the %d JPEGs a finished --generate "
                "wrote (files removed since); writing the %d asked for again\n",
                dir, have, mcount, count);
    } else if (have > 0) {
        fprintf(stderr,
                "stallsim measure: --generate: %s holds %d generated JPEG(s) but no record that "
                "the run writing them finished (a full disk, a kill); writing the %d asked for "
                "again\n",
                dir, have, count);
    }
    unlink(mark);
    fprintf(stderr, "stallsim measure: generating %d JPEGs in %s\n", count, dir);
    if (jpeg_gen_dataset(dir, count, seed, 2, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim measure: --generate: %s\n", err);
        return EXIT_RUNTIME;
    }
    /* Files from an earlier, larger request would stay: count what is there. */
    file_list now = {0};
    int n = fileset_scan(dir, &now, err, sizeof err) == 0 ? now.n : 0;
    fileset_free(&now);
    m = fopen(mark, "w");
    int wrote = m && fprintf(m, "count %d seed %lu\n", n, seed) > 0;
    if (m && fclose(m) != 0) wrote = 0;
    if (!wrote) {
        fprintf(stderr, "stallsim measure: --generate: cannot write %s: %s\n", mark,
                strerror(errno));
        return EXIT_RUNTIME;
    }
    return 0;
}

/* Scans DIR and holds every file that has a JPEG header in memory; the rest
 * are counted, reported and left out. */
static int dataset_load(const char *dir, dataset *d) {
    char err[512];
    memset(d, 0, sizeof *d);
    if (fileset_scan(dir, &d->fl, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim measure: --data %s: %s\n", dir, err);
        return EXIT_INPUT;
    }
    int n = d->fl.n;
    d->non_jpeg = d->fl.non_jpeg;
    /* The T_prep pass holds every file in memory, and MinIO may copy them
     * all again: refuse a data set that could not fit twice. */
    double listed, avail;
    if (!fileset_fits_twice(&d->fl, &listed, &avail)) {
        fprintf(stderr,
                "stallsim measure: --data %s: %.1f GB of JPEGs, but only %.1f GB of memory is "
                "free; measure holds the data set in memory (up to twice): use a subset\n",
                dir, listed / 1e9, avail / 1e9);
        return EXIT_INPUT;
    }
    d->paths = calloc((size_t)(n ? n : 1), sizeof *d->paths);
    d->sizes = calloc((size_t)(n ? n : 1), sizeof *d->sizes);
    d->mem = calloc((size_t)(n ? n : 1), sizeof *d->mem);
    jpeg_decoder dec;
    if (!d->paths || !d->sizes || !d->mem || decoder_init(&dec) != 0) {
        fprintf(stderr, "stallsim measure: out of memory loading %d files\n", n);
        return EXIT_RUNTIME;
    }
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n && dec.tj; i++) {
        unsigned char *buf = NULL;
        long size = 0;
        int w, h;
        char why[256];
        if (fileset_read(d->fl.v[i].path, &buf, &size) != 0) {
            snprintf(why, sizeof why, "%s",
                     errno == EINVAL ? "not a regular file" : strerror(errno));
        } else if (decoder_header(&dec, buf, size, &w, &h, why, sizeof why) == 0) {
            d->paths[d->n] = d->fl.v[i].path;
            d->sizes[d->n] = size;
            d->mem[d->n++] = buf;
            sum += (double)size;
            sum2 += (double)size * (double)size;
            continue;
        }
        free(buf);
        if (d->bad < MAX_BAD_LINES)
            fprintf(stderr, "stallsim measure: skipping %s: %s\n", d->fl.v[i].path, why);
        d->bad++;
    }
    int dec_ok = dec.tj != NULL;
    decoder_free(&dec);
    if (!dec_ok) {
        fprintf(stderr, "stallsim measure: tjInitDecompress failed\n");
        return EXIT_RUNTIME;
    }
    if (d->bad > MAX_BAD_LINES)
        fprintf(stderr, "stallsim measure: ... and %d more bad files\n", d->bad - MAX_BAD_LINES);
    if (d->non_jpeg)
        fprintf(stderr, "stallsim measure: %s: %d file(s) not named *.jpg/*.jpeg skipped\n", dir,
                d->non_jpeg);
    if (d->fl.unreadable)
        fprintf(stderr,
                "stallsim measure: %s: %d entr%s could not be listed or stat'ed (skipped)\n", dir,
                d->fl.unreadable, d->fl.unreadable == 1 ? "y" : "ies");
    if (d->fl.too_deep)
        fprintf(stderr,
                "stallsim measure: %s: %d folder(s) more than %d levels down not searched\n", dir,
                d->fl.too_deep, FILESET_MAX_DEPTH);
    if (d->n == 0) {
        fprintf(stderr, "stallsim measure: --data %s: no readable JPEG files (%d bad, %d other)\n",
                dir, d->bad, d->non_jpeg);
        return EXIT_INPUT;
    }
    d->bytes = sum;
    d->mean = sum / d->n;
    double var = sum2 / d->n - d->mean * d->mean;
    d->cv = var > 0 ? sqrt(var) / d->mean : 0;
    return 0;
}

/* --url: each item's URL, BASE + its path under DIR. Only characters a URL
 * path takes as they are: anything else would need encoding. */
static int dataset_urls(const char *dir, const char *base, dataset *d) {
    static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-";
    size_t dl = strlen(dir), bl = strlen(base);
    int slash = bl > 0 && base[bl - 1] == '/';
    if (!(d->urls = calloc((size_t)d->n, sizeof *d->urls))) {
        fprintf(stderr, "stallsim measure: out of memory for %d URLs\n", d->n);
        return EXIT_RUNTIME;
    }
    for (int i = 0; i < d->n; i++) {
        const char *rel = d->paths[i] + dl; /* fileset_scan: DIR "/" name ... */
        while (*rel == '/')
            rel++;
        if (rel[strspn(rel, ok)]) {
            fprintf(stderr,
                    "stallsim measure: --url: %s: only the characters [A-Za-z0-9._/-] can go "
                    "into a URL unencoded; rename the file or leave it out of --data\n",
                    d->paths[i]);
            return EXIT_INPUT;
        }
        size_t len = bl + 1 + strlen(rel) + 1;
        if (!(d->urls[i] = malloc(len))) {
            fprintf(stderr, "stallsim measure: out of memory for %d URLs\n", d->n);
            return EXIT_RUNTIME;
        }
        snprintf(d->urls[i], len, "%s%s%s", base, slash ? "" : "/", rel);
    }
    return 0;
}

static src_pos_t key_pos(const scenario_t *s, const char *key) {
    int i = schema_find(SCOPE_SCENARIO, key);
    return i >= 0 ? s->origin[i] : (src_pos_t){0};
}

static src_pos_t job_pos(const job_t *j, const char *key) {
    int i = schema_find(SCOPE_JOB, key);
    return i >= 0 ? j->origin[i] : (src_pos_t){0};
}

/* measure runs one job on this one server, with the prep on its CPUs. */
static int check_measurable(const scenario_t *s, int url) {
    int bad = 0;
    if (s->server.count != 1) {
        diag_error(key_pos(s, "server.count"),
                   "key 'server.count': measure runs on this one host: expected 1, got %lld",
                   (long long)s->server.count);
        bad = 1;
    }
    if (s->njobs != 1 || s->jobs[0].count != 1) {
        const job_t *j = s->njobs > 1 ? &s->jobs[1] : &s->jobs[0];
        diag_error(job_pos(j, s->njobs > 1 ? "name" : "count"),
                   "key 'jobs': measure runs one job (one entry, count 1), got %d entr%s, count "
                   "%lld",
                   s->njobs, s->njobs == 1 ? "y" : "ies", (long long)s->jobs[0].count);
        bad = 1;
    }
    if (s->prep.on_gpu) {
        diag_error(key_pos(s, "prep.on_gpu"),
                   "key 'prep.on_gpu': measure runs the augment on the CPU: expected false");
        bad = 1;
    }
    const char *cache = scenario_cache(s)->name;
    const int real = scenario_cache(s)->real;
    if (url && real != CACHE_REAL_NONE && real != CACHE_REAL_LOADER) {
        diag_error(key_pos(s, "loader.cache"),
                   "key 'loader.cache': with --url measure runs none or minio: the client holds "
                   "no page cache of HTTP objects (the server's is warmed by --cache page-warm), "
                   "got '%s'",
                   cache);
        bad = 1;
    } else if (!real) {
        diag_error(key_pos(s, "loader.cache"),
                   "key 'loader.cache': measure runs none, lru (the OS page cache) or minio, got "
                   "'%s'",
                   cache);
        bad = 1;
    }
    return bad ? EXIT_INPUT : 0;
}

typedef struct {
    variant_run_t run; /* run.sim holds the measurements; run.model is unused */
    double minio_bytes;
    int workers, fetchers;
    /* Items that failed (counted as prepared in items/s) and items, over
     * the epochs: said beside the result, not on stderr alone. */
    long long failed, items;
} measured_t;

static void fill_metrics(epoch_metrics_t *m, const pipe_epoch *t, const pipe_epoch *tp, int n,
                         int lru, int workers, int fetchers) {
    memset(m, 0, sizeof *m);
    m->epoch_s = t->epoch_s;
    m->t_prep_s = tp->epoch_s;
    m->t_gpu_s = t->gpu_s;
    m->hit_rate = (double)t->hits / n;
    /* Storage is what lies below the loader's own cache: for lru the page
     * cache is that cache (misses = pages not resident); otherwise every
     * read(2) goes to "storage", whatever the page cache holds. */
    m->storage_read_bytes = lru ? t->miss_bytes : t->read_bytes;
    m->storage_reads = (double)t->reads - (lru ? (double)t->hits : 0);
    m->items_prepped = (double)(t->decoded + t->failed);
    m->items_consumed = n;
    m->cpu_util = t->prep_busy_s / (workers * m->epoch_s);
    m->storage_util = t->read_busy_s / (fetchers * m->epoch_s);
    metrics_derive(m, n);
}

static double evict(const dataset *d) {
    double left = storage_evict(d->paths, d->n);
    if (left < 0)
        fprintf(stderr, "stallsim measure: page cache: cannot tell whether eviction worked\n");
    else
        fprintf(stderr,
                "stallsim measure: page cache: evicted %d files (posix_fadvise DONTNEED); %.1f%% "
                "of their pages still resident%s\n",
                d->n, 100 * left,
                left > 0.01 ? " -- eviction did not work: 'cold' reads may come from memory" : "");
    return left;
}

static void warm(const dataset *d) {
    unsigned char *buf = NULL;
    size_t cap = 0;
    long size;
    for (int i = 0; i < d->n; i++)
        if (fileset_read_into(d->paths[i], &buf, &cap, &size) != 0) break;
    free(buf);
    fprintf(stderr, "stallsim measure: page cache: warmed, %.1f%% of the files' pages resident\n",
            100 * storage_resident(d->paths, d->n));
}

/* --cache page-warm with --url: GETs every object once, over `threads`
 * connections, so the server's caches are warm as page-warm leaves the local
 * page cache (on one connection a 50 ms store took 30 s for 600 objects).
 * Also the check that BASE answers: a transfer that fails (no server, a
 * timeout) ends the run, and so does a server that has none of the objects;
 * objects answered with another status than 200, or other sizes than the
 * files', are counted and noted (the epochs count them as failed items). */
typedef struct {
    const dataset *d;
    int from, step; /* objects from, from + step, ... */
    int missing, differ, failed, server_err;
    double bytes;
    char first[768], err[768], first_differ[768], first_server[768];
} warm_part;

static void *warm_run(void *arg) {
    warm_part *w = arg;
    char err[512];
    unsigned char *buf = NULL;
    size_t cap = 0;
    long len;
    http_client *c = http_open(err, sizeof err);
    if (!c) {
        snprintf(w->err, sizeof w->err, "%s", err);
        w->failed = 1;
        return NULL;
    }
    for (int i = w->from; i < w->d->n; i += w->step) {
        int r = http_get(c, w->d->urls[i], w->d->sizes[i], &buf, &cap, &len, err, sizeof err);
        if (r == -1) {
            snprintf(w->err, sizeof w->err, "cannot GET %s: %s", w->d->urls[i], err);
            w->failed = 1;
            break;
        }
        /* A 5xx is the server failing, not an object it lacks: said apart (B8). */
        if (r == -2 && strstr(err, "HTTP status 5") == err) {
            if (!w->server_err++)
                snprintf(w->first_server, sizeof w->first_server, "%s: %s", w->d->urls[i], err);
        } else if (r == -2 && !w->missing++) {
            snprintf(w->first, sizeof w->first, "%s: %s", w->d->urls[i], err);
        }
        if (r == 0) w->bytes += (double)len;
        if (r == -3 && !w->differ++)
            snprintf(w->first_differ, sizeof w->first_differ, "%s: %s", w->d->urls[i], err);
    }
    free(buf);
    http_close(c);
    return NULL;
}

static int warm_http(const dataset *d, int threads) {
    if (threads > d->n) threads = d->n;
    if (threads < 1) threads = 1;
    warm_part *w = calloc((size_t)threads, sizeof *w);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    int started = 0, missing = 0, differ = 0, server_err = 0, rc = 0;
    double bytes = 0;
    const char *first = "", *first_differ = "", *first_server = "";
    if (!w || !tid) {
        free(w), free(tid);
        fprintf(stderr, "stallsim measure: out of memory for %d warm-up threads\n", threads);
        return EXIT_RUNTIME;
    }
    for (; started < threads; started++) {
        w[started] = (warm_part){.d = d, .from = started, .step = threads};
        if (pthread_create(&tid[started], NULL, warm_run, &w[started]) != 0) break;
    }
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    if (started < threads) {
        fprintf(stderr, "stallsim measure: cannot start the warm-up threads\n");
        rc = EXIT_RUNTIME;
    }
    for (int t = 0; t < started && !rc; t++) {
        if (w[t].failed) {
            fprintf(stderr, "stallsim measure: --url: %s\n", w[t].err);
            rc = EXIT_RUNTIME;
        }
        if (w[t].missing && !missing) first = w[t].first;
        if (w[t].differ && !differ) first_differ = w[t].first_differ;
        if (w[t].server_err && !server_err) first_server = w[t].first_server;
        missing += w[t].missing, differ += w[t].differ, bytes += w[t].bytes;
        server_err += w[t].server_err;
    }
    if (!rc && server_err == d->n) {
        fprintf(stderr,
                "stallsim measure: --url: the server failed on every one of the %d objects "
                "(first: %s); nothing to measure\n",
                d->n, first_server);
        rc = EXIT_RUNTIME;
    }
    if (!rc && server_err)
        fprintf(stderr,
                "stallsim measure: --url: the server failed on %d of %d objects (first: %s); "
                "they count as failed items\n",
                server_err, d->n, first_server);
    if (!rc && missing + server_err == d->n && missing) {
        fprintf(stderr,
                "stallsim measure: --url: none of the %d objects is served there (first: %s): "
                "is BASE right, and does it serve --data?\n",
                d->n, first);
        rc = EXIT_INPUT;
    }
    if (!rc)
        fprintf(stderr,
                "stallsim measure: warmed the server: GET %d objects (%.0f bytes) once each\n",
                d->n - missing - server_err - differ, bytes);
    if (!rc && missing)
        fprintf(stderr,
                "stallsim measure: --url: %d of %d objects not served (first: %s); they count as "
                "failed items\n",
                missing, d->n, first);
    if (!rc && differ)
        fprintf(stderr,
                "stallsim measure: --url: %d objects differ in size from their files under "
                "--data (first: %s): the server holds other data; they count as failed items\n",
                differ, first_differ);
    free(w), free(tid);
    return rc;
}

/* Runs every epoch of one variant twice, in the same order: with every item in
 * memory (T_prep), then as the scenario says (T). The T_prep pass touches
 * neither the page cache nor MinIO, so T sees the caches as they were. */
static int measure_variant(const options *o, const dataset *d, measured_t *mv) {
    scenario_t *s = &mv->run.scn;
    const job_t *j = &s->jobs[0];
    char err[512];
    int n = d->n, rc = 0;
    int64_t M = j->gpus * j->batch_per_gpu, rem = n % M;
    pipe_cfg cfg = {
        .n = n,
        .paths = d->paths,
        .urls = o->url ? d->urls : NULL,
        .sizes = d->sizes,
        .workers = (int)s->server.cpus,
        .fetchers = mv->fetchers,
        .batch_items = M,
        .prefetch = (int)j->prefetch_batches,
        .compute_s = scenario_job_compute_s(s, j, (double)j->batch_per_gpu),
        .compute_last_s =
            rem ? scenario_job_compute_s(s, j, (double)((rem + j->gpus - 1) / j->gpus)) : 0,
        .minio_bytes = mv->minio_bytes,
        .page_hits = !o->url && scenario_cache(s)->real == CACHE_REAL_PAGE,
        .seed = (unsigned long)s->seed,
    };
    if (!rem) cfg.compute_last_s = cfg.compute_s;
    pipe_cfg cfg_mem = cfg;
    cfg_mem.mem = d->mem;
    cfg_mem.urls = NULL;
    cfg_mem.minio_bytes = 0;
    cfg_mem.page_hits = 0;
    pipeline *pt = NULL, *pp = NULL;
    uint32_t *perm = malloc(sizeof *perm * (size_t)n);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    perm_gen_t pg = {0};
    if (!perm || !rng || perm_gen_init(&pg, (uint32_t)n) != 0) {
        fprintf(stderr, "stallsim measure: out of memory\n");
        rc = EXIT_RUNTIME;
        goto done;
    }
    if (pipe_create(&cfg, &pt, err, sizeof err) || pipe_create(&cfg_mem, &pp, err, sizeof err)) {
        fprintf(stderr, "stallsim measure: %s\n", err);
        rc = EXIT_RUNTIME;
        goto done;
    }
    gsl_rng_set(rng, (unsigned long)s->seed);
    if (o->url) {
        if ((rc = warm_http(d, mv->fetchers))) goto done;
    } else if (o->page == PAGE_WARM)
        warm(d);
    else if (o->page == PAGE_COLD)
        evict(d);
    for (int e = 0; e < s->epochs; e++) {
        pipe_epoch t, tp;
        perm_generate(&pg, rng, perm);
        if (o->page == PAGE_COLD_EPOCH) evict(d);
        if (pipe_run_epoch(pp, perm, &tp, err, sizeof err) ||
            pipe_run_epoch(pt, perm, &t, err, sizeof err)) {
            fprintf(stderr, "stallsim measure: %s\n", err);
            rc = EXIT_RUNTIME;
            goto done;
        }
        if (!t.once || !tp.once) {
            fprintf(stderr,
                    "stallsim measure: internal error: an item was not fetched and "
                    "prepped exactly once in epoch %d\n",
                    e + 1);
            rc = EXIT_RUNTIME;
            goto done;
        }
        if (t.decoded == 0 && n > 0) {
            /* Failed items count as prepared: an epoch of failures alone
             * would print a normal throughput and GPU share from nothing. */
            fprintf(stderr,
                    "stallsim measure: %s epoch %d: none of the %d items was decoded (%ld failed: "
                    "see the messages above); no result\n",
                    s->variant, e + 1, n, t.failed);
            rc = EXIT_RUNTIME;
            goto done;
        }
        fill_metrics(metrics_at(&mv->run.sim, 0, e), &t, &tp, n, cfg.page_hits, cfg.workers,
                     cfg.fetchers);
        mv->failed += t.failed, mv->items += n;
        fprintf(stderr,
                "stallsim measure: %s epoch %d: T %.3f s, T_prep %.3f s, T_gpu %.3f s; %ld items "
                "fetched once each, %ld decoded, %ld failed; %ld files read (%.0f bytes), %ld "
                "hits; MinIO holds %.0f bytes; prep threads on a CPU %.1f%% of their busy time "
                "(T_prep pass %.1f%%)\n",
                s->variant, e + 1, t.epoch_s, tp.epoch_s, t.gpu_s, t.fetched, t.decoded, t.failed,
                t.reads, t.read_bytes, t.hits, pipe_minio_used(pt),
                100 * t.prep_cpu_s / t.prep_busy_s, 100 * tp.prep_cpu_s / tp.prep_busy_s);
    }
done:
    pipe_destroy(pt);
    pipe_destroy(pp);
    perm_gen_free(&pg);
    if (rng) gsl_rng_free(rng);
    free(perm);
    return rc;
}

/* ---- output: the rows of `stallsim run`, with source "measured" ---- */

static void text_out(const options *o, const dataset *d, const measured_t *mv, int nv) {
    const scenario_t *s = &mv[0].run.scn;
    /* Paths and the URL are the command line's: shown with control characters
     * escaped, as run shows its scenario path. */
    printf("stallsim %s measure -- %s (", STALLSIM_VERSION, s->name);
    text_put_escaped(stdout, o->a.file);
    printf("), seed %lld, %lld epochs, cache %s\n", (long long)s->seed, (long long)s->epochs,
           page_mode_names[o->page]);
    printf("dataset %d items from ", d->n);
    text_put_escaped(stdout, o->data);
    if (o->url) {
        printf(" via GET from ");
        text_put_escaped(stdout, o->url);
    }
    printf(", %.3f GB (mean %.1f KB, cv %.2f); 1 server x %lld GPUs, "
           "%lld prep threads, %d fetch threads\n",
           d->bytes / 1e9, d->mean / 1e3, d->cv, (long long)s->server.gpus,
           (long long)s->server.cpus, mv[0].fetchers);
    for (int k = 0; k < nv; k++)
        printf("variant %-10s loader.cache=%s, MinIO %.3f GB (%.1f%% of the dataset)\n",
               mv[k].run.scn.variant, scenario_cache(&mv[k].run.scn)->name, mv[k].minio_bytes / 1e9,
               100 * mv[k].minio_bytes / d->bytes);
    /* run's table (valid_out passed the figures), finer: measured epochs are short. */
    static const report_table_t table = {8, 1, 0};
    report_text_header(stdout, &table);
    for (int k = 0; k < nv; k++)
        for (int e = 0; e < mv[k].run.scn.epochs; e++)
            report_text_row(stdout, &table, mv[k].run.scn.variant, mv[k].run.topo.inst[0].name,
                            e + 1, "measured", metrics_at(&mv[k].run.sim, 0, e), NULL);
    for (int k = 0; k < nv; k++)
        if (mv[k].failed)
            printf("\nvariant %s: %lld of %lld items failed (%.1f%%; the messages on stderr say "
                   "why): items/s counts them as prepared\n",
                   mv[k].run.scn.variant[0] ? mv[k].run.scn.variant : "-", mv[k].failed,
                   mv[k].items, 100.0 * (double)mv[k].failed / (double)mv[k].items);
    printf("\nprep_stall = T_prep - T_gpu, fetch_stall = T - T_prep (measured: T_prep with every "
           "item in memory, T_gpu the emulated GPU's time); bottleneck: the larger stall, or gpu "
           "at >= 97%% utilisation.\n");
}

static void json_out(const options *o, const dataset *d, const measured_t *mv, int nv) {
    out_json_t j;
    out_json_begin(&j, stdout);
    out_jobj(&j, NULL);
    out_jint(&j, "format_version", 1);
    out_jstr(&j, "stallsim_version", STALLSIM_VERSION);
    out_jstr(&j, "command", "measure");
    out_jstr(&j, "cache", page_mode_names[o->page]);
    out_jint(&j, "data_items", d->n);
    out_jnum(&j, "data_bytes", "%.0f", d->bytes);
    out_jint(&j, "bad_files", d->bad);
    out_jint(&j, "non_jpeg_files", d->non_jpeg);
    out_jbreak(&j, "\n ");
    out_jarr(&j, "variants");
    for (int k = 0; k < nv; k++) {
        const scenario_t *s = &mv[k].run.scn;
        out_jbreak(&j, "\n  ");
        out_jobj(&j, NULL);
        out_jstr(&j, "name", s->variant);
        out_jobj(&j, "total_s");
        out_jnum(&j, "measured", "%.9g", report_total_s(&mv[k].run.sim));
        out_jend(&j);
        out_jnum(&j, "minio_bytes", "%.0f", mv[k].minio_bytes);
        out_jint(&j, "prep_threads", (long long)s->server.cpus);
        out_jint(&j, "fetch_threads", mv[k].fetchers);
        out_jint(&j, "items_failed", mv[k].failed);
        out_jint(&j, "items_measured", mv[k].items);
        out_jarr(&j, "epochs");
        for (int e = 0; e < s->epochs; e++) {
            out_jbreak(&j, "\n   ");
            out_jobj(&j, NULL);
            out_jint(&j, "epoch", e + 1);
            report_json_metrics(&j, "measured", metrics_at(&mv[k].run.sim, 0, e), NULL);
            out_jend(&j);
        }
        out_jend(&j);
        out_jend(&j);
    }
    out_jbreak(&j, "\n");
    out_jend(&j);
    out_jend(&j);
    putchar('\n');
}

static void csv_out(const measured_t *mv, int nv) {
    report_csv_header(stdout, NULL);
    for (int k = 0; k < nv; k++)
        for (int e = 0; e < mv[k].run.scn.epochs; e++)
            report_csv_row(stdout, NULL, mv[k].run.scn.variant, mv[k].run.topo.inst[0].name, e + 1,
                           "measured", metrics_at(&mv[k].run.sim, 0, e), NULL);
}

/* The stalls are differences of separately timed runs (DS-Analyzer's
 * split: T, T_prep with every item in memory, T_gpu): on a busy machine the
 * T_prep pass can come out slower than the real one, which gave stall shares
 * outside 0-100 % (issue 33 S6). A pass cannot be slower than the run it
 * leaves work out of, so such a time is taken at the run's and said; so is
 * a utilisation a timer's skew put past 1. The report's check comes after. */
static void reconcile(measured_t *mv, int nv) {
    for (int k = 0; k < nv; k++)
        for (int e = 0; e < mv[k].run.scn.epochs; e++) {
            epoch_metrics_t *m = metrics_at(&mv[k].run.sim, 0, e);
            const char *var = mv[k].run.scn.variant[0] ? mv[k].run.scn.variant : "-";
            double tp = m->t_prep_s, tg = m->t_gpu_s, cu = m->cpu_util, su = m->storage_util;
            if (m->t_prep_s > m->epoch_s) m->t_prep_s = m->epoch_s;
            if (m->t_gpu_s > m->t_prep_s) m->t_gpu_s = m->t_prep_s;
            if (m->cpu_util > 1) m->cpu_util = 1;
            if (m->storage_util > 1) m->storage_util = 1;
            if (tp != m->t_prep_s || tg != m->t_gpu_s)
                fprintf(stderr,
                        "stallsim measure: warning: variant %s, epoch %d: the timed passes "
                        "disagree (T %.4g s, T_prep %.4g s, T_gpu %.4g s; a pass leaving work "
                        "out cannot be slower): the split takes T_prep %.4g s and T_gpu %.4g s, "
                        "so its stalls are shares of T; the machine's load moved between the "
                        "passes: measure again on an idle machine or with more items\n",
                        var, e + 1, m->epoch_s, tp, tg, m->t_prep_s, m->t_gpu_s);
            if (cu != m->cpu_util || su != m->storage_util)
                fprintf(stderr,
                        "stallsim measure: warning: variant %s, epoch %d: busy time past the "
                        "epoch's (cpu %.4g, storage %.4g of it): shown as 1\n",
                        var, e + 1, cu, su);
            metrics_derive(m, m->items_consumed);
        }
}

/* Every measured figure through the report's one check (valid.h) before any is printed. */
static int valid_out(const measured_t *mv, int nv) {
    for (int k = 0; k < nv; k++)
        for (int e = 0; e < mv[k].run.scn.epochs; e++) {
            char where[256];
            snprintf(where, sizeof where, "measured, variant %s, epoch %d",
                     mv[k].run.scn.variant[0] ? mv[k].run.scn.variant : "-", e + 1);
            if (report_valid_row(metrics_at(&mv[k].run.sim, 0, e), NULL, &mv[k].run.scn, "measure",
                                 where, 1))
                return EXIT_RUNTIME;
        }
    return 0;
}

/* Builds and checks every selected variant, with the dataset's real figures. */
static int build_variants(scenario_doc_t *doc, const options *o, const dataset *d, measured_t *mv,
                          int *nv) {
    int idx[SCN_MAX_VARIANTS + 1], n = 0;
    int rc = run_select(doc, "measure", o->a.only, o->a.nonly, idx, &n);
    if (rc) return rc;
    /* The data set decides N and the sizes: they go in after the user's --set
     * (only a variant's own overrides come later). */
    assign_list_t sets = {0};
    static const char *const keys[3] = {"dataset.items", "dataset.item_kb", "dataset.item_kb_cv"};
    char v[3][64], who[SCN_STR + 32];
    snprintf(v[0], sizeof v[0], "%d", d->n);
    snprintf(v[1], sizeof v[1], "%.6g", d->mean / 1e3);
    snprintf(v[2], sizeof v[2], "%.6g", d->cv);
    /* An error in a figure the data gave names the data, not --set. */
    snprintf(who, sizeof who, "--data %s (measured)", o->data);
    src_pos_t from_data = {intern(who), 0, 0};
    if (!from_data.file) rc = EXIT_RUNTIME;
    for (size_t i = 0; i < o->a.sets.n && !rc; i++)
        rc = assign_push(&sets, o->a.sets.v[i].key, o->a.sets.v[i].value, o->a.sets.v[i].pos,
                         o->a.sets.v[i].keypos, 1);
    for (int i = 0; i < 3 && !rc; i++)
        rc = assign_push(&sets, keys[i], v[i], from_data, from_data, 1) ? EXIT_INPUT : 0;
    for (int k = 0; k < n && !rc; k++) {
        scenario_t *s = &mv[k].run.scn;
        rc = run_build(doc, &sets, idx[k], 0, &mv[k].run);
        if (!rc) rc = check_measurable(s, o->url != NULL);
        if (rc) break;
        if (scenario_cache(s)->real == CACHE_REAL_LOADER) {
            double b =
                o->minio_size ? parse_size(o->minio_size, d->bytes) : scenario_cache_bytes(s);
            if (b < 0) {
                rc = usage_error("--minio-size: expected bytes or N%% of the dataset, got '%s'",
                                 o->minio_size);
                break;
            }
            mv[k].minio_bytes = b;
            s->server.cache_gb = b / 1e9;
        }
        mv[k].workers = (int)s->server.cpus;
        /* Threads: reads in flight; an object store takes more than a disk. */
        int64_t qd = s->server.storage.queue_depth, cap = o->url ? 64 : 16;
        /* An object store's connections are its reader threads, capped per
         * process and per server: the simulator's request slots. */
        const storage_ops_t *st = scenario_storage(s);
        if (st->slots_are_connections) qd = (int64_t)st->slots(s), cap = 1024;
        mv[k].fetchers = o->io_threads ? o->io_threads : (int)(qd < cap ? qd : cap);
        if (metrics_alloc(&mv[k].run.sim, 1, (int)s->epochs)) rc = EXIT_RUNTIME;
    }
    assign_list_free(&sets);
    *nv = n;
    return rc;
}

int measure_main(int argc, char **argv) {
    options o;
    int rc = parse_args(argc, argv, &o);
    if (rc) {
        assign_list_free(&o.a.sets);
        return rc < 0 ? EXIT_OK : rc;
    }
    scenario_doc_t doc;
    dataset d;
    measured_t *mv = NULL;
    int nv = 0, curl_up = 0;
    memset(&d, 0, sizeof d);
    rc = scenario_doc_load(&doc, o.a.file);
    if (!rc && o.generate) rc = generate(o.data, o.generate, 1);
    if (!rc) rc = dataset_load(o.data, &d);
    if (!rc && o.url) rc = dataset_urls(o.data, o.url, &d);
    if (!rc && o.url && !(curl_up = http_global_init() == 0)) {
        fprintf(stderr, "stallsim measure: --url: cannot initialise libcurl\n");
        rc = EXIT_RUNTIME;
    }
    if (!rc && !(mv = calloc(SCN_MAX_VARIANTS + 1, sizeof *mv))) rc = EXIT_RUNTIME;
    if (!rc) rc = build_variants(&doc, &o, &d, mv, &nv);
    if (!rc) {
        fprintf(stderr,
                "stallsim measure: dataset from %s: %d JPEG files, %.1f KB mean, cv %.3f (sets "
                "dataset.items, dataset.item_kb, dataset.item_kb_cv; --set can still override "
                "the scenario's other keys)\n",
                o.data, d.n, d.mean / 1e3, d.cv);
        if (o.url)
            fprintf(stderr,
                    "stallsim measure: items come from %s (GET there by their paths under %s; "
                    "%d fetch threads, one HTTP connection each)\n",
                    o.url, o.data, mv[0].fetchers);
        if (o.minio_size && scenario_cache(&mv[0].run.scn)->real != CACHE_REAL_LOADER)
            fprintf(stderr, "stallsim measure: note: --minio-size is ignored where "
                            "loader.cache is not minio\n");
    }
    for (int k = 0; k < nv && !rc; k++)
        rc = measure_variant(&o, &d, &mv[k]);
    if (!rc) reconcile(mv, nv);
    if (!rc) rc = valid_out(mv, nv);
    if (!rc) {
        if (o.format == FORMAT_CSV)
            csv_out(mv, nv);
        else if (o.format == FORMAT_JSON)
            json_out(&o, &d, mv, nv);
        else
            text_out(&o, &d, mv, nv);
        if (fflush(stdout) != 0) {
            perror("stallsim measure: writing results");
            rc = EXIT_RUNTIME;
        }
    }
    for (int k = 0; mv && k < nv; k++)
        metrics_free(&mv[k].run.sim);
    free(mv);
    dataset_free(&d);
    if (curl_up) http_global_cleanup();
    scenario_doc_free(&doc);
    assign_list_free(&o.a.sets);
    return rc;
}
