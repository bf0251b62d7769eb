/* storage_bench: see storage_bench.h. */
#include "storage_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bench.h"
#include "clock.h"
#include "progress.h"

#ifndef O_DIRECT
#define O_DIRECT 040000 /* Linux value; glibc only exposes it under _GNU_SOURCE */
#endif

#define ALIGN 4096

const int storage_qds[STORAGE_NQD] = {1, 4, 16, 32};

static int fd_resident(int fd, long size, long *resident, long *total) {
    if (size <= 0) return 0;
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)size, npages = (len + (size_t)page - 1) / (size_t)page;
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char small[64];
    unsigned char *vec = npages <= sizeof small ? small : malloc(npages);
    int rc = 0;
    if (m == MAP_FAILED || !vec || mincore(m, len, vec) != 0) {
        rc = -1;
    } else {
        for (size_t i = 0; i < npages; i++)
            *resident += vec[i] & 1;
        *total += (long)npages;
    }
    if (vec != small) free(vec);
    if (m != MAP_FAILED) munmap(m, len);
    return rc;
}

int storage_file_pages(const char *path, int evict, long *resident, long *total) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    if (evict) {
        /* Dirty pages are not dropped: write them back first. */
        fdatasync(fd);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    }
    int rc = fd_resident(fd, (long)st.st_size, resident, total);
    close(fd);
    return rc;
}

static double pages_pass(char *const *paths, int n, int evict) {
    long resident = 0, total = 0;
    for (int i = 0; i < n; i++)
        if (storage_file_pages(paths[i], evict, &resident, &total) != 0) return -1.0;
    return total > 0 ? (double)resident / (double)total : 0.0;
}

double storage_evict(char *const *paths, int n) {
    return pages_pass(paths, n, 1);
}

double storage_resident(char *const *paths, int n) {
    return pages_pass(paths, n, 0);
}

typedef struct {
    char *const *paths;
    const int *order;
    int n, flags;
    size_t bufsize;
    atomic_int next;
    atomic_int failed;
    pthread_barrier_t start;
    double *lat;             /* per position in order, seconds */
    double *t_start, *t_end; /* per worker: when it began and finished its share */
    long *bytes;             /* per position in order */
    char err[256];
} pass_job;

/* One item as a loader fetches it: open, read to EOF, close. */
static long read_item(const char *path, int flags, unsigned char *buf, size_t bufsize) {
    int fd = open(path, O_RDONLY | flags);
    if (fd < 0) return -1;
    long off = 0;
    for (;;) {
        /* O_DIRECT needs block-aligned offsets and lengths: read whole blocks. */
        ssize_t r = pread(fd, buf, bufsize, off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        off += r;
        if ((size_t)r < bufsize) break;
    }
    close(fd);
    return off;
}

typedef struct {
    pass_job *job;
    int id;
} worker_arg;

static void *pass_worker(void *arg) {
    pass_job *job = ((worker_arg *)arg)->job;
    int id = ((worker_arg *)arg)->id;
    unsigned char *buf = NULL;
    if (posix_memalign((void **)&buf, ALIGN, job->bufsize) != 0) buf = NULL;
    pthread_barrier_wait(&job->start);
    job->t_start[id] = clock_now();
    int i;
    while (buf && (i = atomic_fetch_add(&job->next, 1)) < job->n) {
        const char *path = job->paths[job->order[i]];
        double t0 = clock_now();
        long got = read_item(path, job->flags, buf, job->bufsize);
        job->lat[i] = clock_now() - t0;
        job->bytes[i] = got;
        if (got < 0 && !atomic_exchange(&job->failed, 1))
            snprintf(job->err, sizeof job->err, "read %.200s: %.40s", path, strerror(errno));
    }
    job->t_end[id] = clock_now();
    if (!buf && !atomic_exchange(&job->failed, 1))
        snprintf(job->err, sizeof job->err, "out of memory");
    free(buf);
    return NULL;
}

/* Reads every file once with qd threads; returns elapsed seconds or -1.
 * Elapsed runs from the first worker's start to the last one's end, as the
 * workers see it: the main thread may be scheduled late on a small host. */
static double run_pass(char *const *paths, const int *order, int n, int qd, int flags,
                       size_t bufsize, double *lat, long *bytes, char *err, size_t errlen) {
    pass_job job = {.paths = paths,
                    .order = order,
                    .n = n,
                    .flags = flags,
                    .bufsize = bufsize,
                    .lat = lat,
                    .bytes = bytes};
    atomic_init(&job.next, 0);
    atomic_init(&job.failed, 0);
    pthread_t tid[64];
    worker_arg wa[64];
    double t_start[64], t_end[64];
    if (qd > 64) qd = 64;
    job.t_start = t_start;
    job.t_end = t_end;
    if (pthread_barrier_init(&job.start, NULL, (unsigned)qd + 1) != 0) {
        snprintf(err, errlen, "pthread_barrier_init failed");
        return -1.0;
    }
    int started = 0;
    for (; started < qd; started++)
        if (wa[started] = (worker_arg){&job, started},
            pthread_create(&tid[started], NULL, pass_worker, &wa[started]) != 0)
            break;
    if (started < qd) {
        /* The barrier counts on qd workers; without them nobody could pass it. */
        fprintf(stderr, "calibrate: cannot start %d reader threads\n", qd);
        abort();
    }
    pthread_barrier_wait(&job.start);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    double t0 = t_start[0], t1 = t_end[0];
    for (int t = 1; t < started; t++) {
        if (t_start[t] < t0) t0 = t_start[t];
        if (t_end[t] > t1) t1 = t_end[t];
    }
    double el = t1 - t0;
    pthread_barrier_destroy(&job.start);
    if (atomic_load(&job.failed)) {
        snprintf(err, errlen, "%s", job.err);
        return -1.0;
    }
    return el;
}

/* The first line of a sysfs file as a long, or -1. */
static long sysfs_long(const char *path) {
    FILE *f = fopen(path, "r");
    long v = -1;
    if (f && fscanf(f, "%ld", &v) != 1) v = -1;
    if (f) fclose(f);
    return v;
}

int storage_where(const char *path, char *device, size_t len, long *read_ahead_kb) {
    struct stat st;
    char sys[64], real[4096], q[4200];
    device[0] = '\0';
    *read_ahead_kb = -1;
    if (stat(path, &st) != 0) return -1;
    unsigned maj = major(st.st_dev), min = minor(st.st_dev);
    snprintf(sys, sizeof sys, "/sys/dev/block/%u:%u", maj, min);
    if (!realpath(sys, real)) return -1; /* no block device: tmpfs, NFS, overlay */
    snprintf(q, sizeof q, "%s/partition", real);
    if (access(q, F_OK) == 0) { /* a partition's queue is its disk's */
        char *slash = strrchr(real, '/');
        if (slash) *slash = '\0';
    }
    snprintf(q, sizeof q, "%s/queue/read_ahead_kb", real);
    long ra = sysfs_long(q);
    if (ra < 0) return -1;
    const char *name = strrchr(real, '/');
    snprintf(device, len, "%u:%u (%s)", maj, min, name ? name + 1 : real);
    *read_ahead_kb = ra;
    return 0;
}

typedef struct {
    long size;
    int i;
} sized_t;

static int larger_first(const void *a, const void *b) {
    long x = ((const sized_t *)a)->size, y = ((const sized_t *)b)->size;
    return (x < y) - (x > y);
}

/* One sequential stream (storage_bench.h): 0, or -1 with err. */
static int seq_pass(char *const *paths, const long *sizes, int n, int flags, storage_result *out,
                    char *err, size_t errlen) {
    sized_t *by = malloc(sizeof *by * (size_t)n);
    char **chosen = malloc(sizeof *chosen * (size_t)n);
    unsigned char *buf = NULL;
    int rc = -1, k = 0;
    if (!by || !chosen || posix_memalign((void **)&buf, ALIGN, STORAGE_SEQ_PIECE) != 0) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        by[i] = (sized_t){sizes[i], i};
    qsort(by, (size_t)n, sizeof *by, larger_first);
    for (long total = 0; k < n && total < STORAGE_SEQ_BYTES; k++) {
        chosen[k] = paths[by[k].i];
        total += by[k].size;
    }
    if (!flags) storage_evict(chosen, k);
    double t0 = clock_now(), got = 0;
    for (int i = 0; i < k; i++) {
        long r = read_item(chosen[i], flags, buf, STORAGE_SEQ_PIECE);
        if (r < 0) {
            snprintf(err, errlen, "read %.200s: %.40s", chosen[i], strerror(errno));
            goto done;
        }
        got += (double)r;
    }
    double el = clock_now() - t0;
    out->seq_files = k;
    out->seq_mb = got / 1e6;
    out->seq_mb_s = el > 0 ? got / el / 1e6 : 0;
    rc = 0;
done:
    free(by);
    free(chosen);
    free(buf);
    return rc;
}

/* After the curve: one sequential stream, cold as the curve's reads were,
 * and where the files lie. 0, or -1 with err. */
static int stream_and_where(char *const *paths, const long *sizes, int n, storage_result *out,
                            char *err, size_t errlen) {
    int flags = strcmp(out->cold_method, "o_direct") == 0 ? O_DIRECT : 0;
    if (seq_pass(paths, sizes, n, flags, out, err, errlen) != 0) return -1;
    progress("storage: one sequential stream %.1f MB/s (%d files, %.1f MB, cold)", out->seq_mb_s,
             out->seq_files, out->seq_mb);
    storage_where(paths[0], out->device, sizeof out->device, &out->read_ahead_kb);
    const char *slash = strrchr(paths[0], '/');
    snprintf(out->dir, sizeof out->dir, "%.*s", slash ? (int)(slash - paths[0]) : 1,
             slash ? paths[0] : ".");
    return 0;
}

static int o_direct_works(const char *path, size_t bufsize) {
    unsigned char *buf;
    if (posix_memalign((void **)&buf, ALIGN, bufsize) != 0) return 0;
    long got = read_item(path, O_DIRECT, buf, bufsize);
    free(buf);
    return got >= 0;
}

/* Median-based figures of one queue depth from its passes' samples. */
static void summarize_point(storage_point *pt, int qd, const double *el, int reps, double total_mb,
                            int n, const double *lat) {
    double mb_s[64], items_s[64];
    for (int r = 0; r < reps; r++) {
        mb_s[r] = total_mb / el[r];
        items_s[r] = n / el[r];
    }
    pt->qd = qd;
    pt->mb_s = stats_summarize(mb_s, reps);
    pt->items_s = stats_summarize(items_s, reps);
    int m = n * reps;
    pt->p50_ms = stats_percentile(lat, m, 50) * 1e3;
    pt->p90_ms = stats_percentile(lat, m, 90) * 1e3;
    pt->p99_ms = stats_percentile(lat, m, 99) * 1e3;
}

/* Items/s of the ssd kind's device (storage_ssd.c, reads in issue order)
 * over one pass of these files with q reads in flight, each read paying z
 * seconds and then its bytes at bw on one FIFO channel: a pass as the
 * benchmark makes one, its start and its drain included. */
static double pass_rate(const long *sizes, int n, int q, double z, double bw) {
    double ring[64] = {0}, chan = 0;
    for (int i = 0, h = 0; i < n; i++, h = h + 1 == q ? 0 : h + 1) {
        double xs = ring[h] + z;
        if (xs < chan) xs = chan;
        chan = ring[h] = xs + (double)sizes[i] / bw;
    }
    return n / chan;
}

/* The ssd kind's curve from the cold points. Its bandwidth is the rate of the
 * plateau, the run of depths around the best one whose medians all reach that
 * depth's slowest repetition (the device at its bandwidth, within the
 * benchmark's own spread): their mean, so that one lucky repetition does not
 * set it. Each depth's latency is then the one with which that device, q
 * reads of these files in flight, moves the items/s measured there (at most
 * the plateau's; 0 when even no latency is slower). Not q / items_s(q) -
 * mean_size / bandwidth, Little's law: that counts the queueing for the
 * bandwidth as latency, which the channel then adds again where the two bind
 * together (reads of spread sizes leave the channel idle: 5-8% slow on a
 * throttled disk's flat curve). */
static void ssd_curve(storage_result *out, const long *sizes, int n) {
    int b = 0;
    for (int q = 1; q < STORAGE_NQD; q++)
        if (out->cold[q].items_s.median > out->cold[b].items_s.median) b = q;
    double floor = out->cold[b].items_s.min;
    int first = b, last = b;
    while (first > 0 && out->cold[first - 1].items_s.median >= floor)
        first--;
    while (last + 1 < STORAGE_NQD && out->cold[last + 1].items_s.median >= floor)
        last++;
    double rate = 0; /* items/s on the plateau */
    for (int q = first; q <= last; q++)
        rate += out->cold[q].items_s.median / (last - first + 1);
    double mean_bytes = out->total_mb * 1e6 / out->files, bw = rate * mean_bytes;
    out->peak_mb_s = bw / 1e6;
    for (int q = 0; q < STORAGE_NQD; q++) {
        int qd = storage_qds[q];
        double want = out->cold[q].items_s.median, lo = 0, hi = qd / want;
        if (want > rate) want = rate;
        if (pass_rate(sizes, n, qd, 0, bw) <= want) hi = 0;
        for (int i = 0; i < 60 && hi > 0; i++) {
            double mid = (lo + hi) / 2;
            if (pass_rate(sizes, n, qd, mid, bw) > want)
                lo = mid;
            else
                hi = mid;
        }
        double z = (lo + hi) / 2;
        out->curve_ms[q] = z < 1e-9 ? 0 : z * 1e3; /* below a nanosecond: the bisection's rest */
    }
}

static void fit_model(storage_result *out, const double *req_bytes, const double *req_s, int m) {
    double x[STORAGE_NQD], y[STORAGE_NQD];
    double best = -1.0;
    for (int q = 0; q < STORAGE_NQD; q++) {
        x[q] = 1.0 / storage_qds[q];
        y[q] = 1.0 / out->cold[q].items_s.median;
        if (out->cold[q].mb_s.median > best) {
            best = out->cold[q].mb_s.median;
            out->queue_depth = storage_qds[q];
        }
    }
    double mean_bytes = out->total_mb * 1e6 / out->files;
    int qd_ok = fit_linear(x, y, STORAGE_NQD, &out->qd_fit) == 0 && out->qd_fit.slope > 0 &&
                out->qd_fit.intercept > 0;
    int req_ok = fit_linear(req_bytes, req_s, m, &out->request_fit) == 0 &&
                 out->request_fit.slope > 0 && out->request_fit.intercept > 0;
    if (qd_ok) {
        out->fit_method = "qd_curve";
        out->latency_ms = out->qd_fit.slope * 1e3;
        out->read_mb_s = mean_bytes / out->qd_fit.intercept / 1e6;
    } else if (req_ok) {
        out->fit_method = "per_request";
        out->latency_ms = out->request_fit.intercept * 1e3;
        out->read_mb_s = 1.0 / out->request_fit.slope / 1e6;
    } else {
        /* Neither line is physical: report what was seen directly. */
        out->fit_method = "none";
        out->latency_ms = out->cold[0].p50_ms;
        out->read_mb_s = best;
    }
}

int storage_bench(char *const *paths, const long *sizes, int n, int reps, unsigned long seed,
                  storage_result *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (n < 1 || reps < 1 || reps > 64) {
        snprintf(err, errlen, "storage: need files and 1..64 repetitions");
        return -1;
    }
    long maxsize = 0;
    double total = 0.0;
    for (int i = 0; i < n; i++) {
        if (sizes[i] > maxsize) maxsize = sizes[i];
        total += (double)sizes[i];
    }
    out->files = n;
    out->reps = reps;
    out->total_mb = total / 1e6;
    out->mean_kb = total / n / 1e3;
    size_t bufsize = ((size_t)maxsize / ALIGN + 1) * ALIGN;
    int *order = malloc(sizeof *order * (size_t)n);
    double *lat = malloc(sizeof *lat * (size_t)n * (size_t)reps);
    long *bytes = malloc(sizeof *bytes * (size_t)n);
    double *req_b = malloc(sizeof *req_b * (size_t)n * (size_t)reps);
    double *req_s = malloc(sizeof *req_s * (size_t)n * (size_t)reps);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int rc = -1;
    if (!order || !lat || !bytes || !req_b || !req_s || !rng) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    gsl_rng_set(rng, seed);
    for (int i = 0; i < n; i++)
        order[i] = i;

    /* Untimed pass: fills the page cache for the warm passes. */
    if (run_pass(paths, order, n, 4, 0, bufsize, lat, bytes, err, errlen) < 0) goto done;

    /* How cold reads are made cold, decided once, up front. */
    double res = storage_evict(paths, n);
    out->resident_after = res;
    if (res >= 0.0 && res <= 0.01) {
        out->cold_method = "fadvise_dontneed";
        out->eviction_ok = 1;
    } else if (o_direct_works(paths[0], bufsize)) {
        out->cold_method = "o_direct";
        out->eviction_ok = 1;
        progress("storage: page-cache eviction did not work (%.0f%% resident): using O_DIRECT",
                 res * 100);
    } else {
        out->cold_method = "none";
        out->eviction_ok = 0;
        progress("storage: WARNING: cannot evict the page cache nor use O_DIRECT: 'cold' reads "
                 "may be served from memory");
    }
    if (run_pass(paths, order, n, 4, 0, bufsize, lat, bytes, err, errlen) < 0) goto done;

    for (int cold = 0; cold <= 1; cold++) {
        for (int q = 0; q < STORAGE_NQD; q++) {
            double el[64];
            int flags = cold && strcmp(out->cold_method, "o_direct") == 0 ? O_DIRECT : 0;
            for (int r = 0; r < reps; r++) {
                gsl_ran_shuffle(rng, order, (size_t)n, sizeof *order);
                if (cold && !flags) {
                    double after = storage_evict(paths, n);
                    if (after > out->resident_after) out->resident_after = after;
                    if (after < 0.0 || after > 0.01) out->eviction_ok = 0;
                }
                el[r] = run_pass(paths, order, n, storage_qds[q], flags, bufsize,
                                 lat + (size_t)r * n, bytes, err, errlen);
                if (el[r] < 0) goto done;
                if (cold && q == 0)
                    for (int i = 0; i < n; i++)
                        req_b[(size_t)r * n + i] = (double)bytes[i];
            }
            storage_point *pt = cold ? &out->cold[q] : &out->warm[q];
            summarize_point(pt, storage_qds[q], el, reps, out->total_mb, n, lat);
            progress("storage: %s qd %2d: %.1f MB/s, %.0f items/s, p50 %.3f ms, p99 %.3f ms",
                     cold ? "cold" : "warm", storage_qds[q], pt->mb_s.median, pt->items_s.median,
                     pt->p50_ms, pt->p99_ms);
            if (cold && q == 0) /* lat is reused by the next depths: keep these */
                memcpy(req_s, lat, sizeof *req_s * (size_t)n * (size_t)reps);
        }
    }
    fit_model(out, req_b, req_s, n * reps);
    ssd_curve(out, sizes, n);
    if (stream_and_where(paths, sizes, n, out, err, errlen) != 0) goto done;
    rc = 0;
done:
    if (rng) gsl_rng_free(rng);
    free(order);
    free(lat);
    free(bytes);
    free(req_b);
    free(req_s);
    return rc;
}

/* calibrate's benchmark: the set's files as they lie on this host's storage. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    const jpeg_set *set = c->set;
    char **paths = malloc(sizeof *paths * (size_t)set->n);
    long *sizes = malloc(sizeof *sizes * (size_t)set->n);
    if (!paths || !sizes) {
        free(paths);
        free(sizes);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < set->n; i++)
        paths[i] = (char *)set->v[i].path, sizes[i] = set->v[i].size;
    storage_result *r = res;
    char why[512];
    progress("storage: %d passes per queue depth, warm and cold", c->reps);
    int rc = storage_bench(paths, sizes, set->n, c->reps, c->seed, r, why, sizeof why);
    free(paths);
    free(sizes);
    if (rc != 0) {
        snprintf(err, errlen, "storage: %s", why);
        return -1;
    }
    if (!r->eviction_ok)
        progress("WARNING: cold reads were not verified cold (see measured.method)");
    progress("storage model: %.1f MB/s, %.3f ms latency (%s fit), best queue depth %d",
             r->read_mb_s, r->latency_ms, r->fit_method, r->queue_depth);
    return 0;
}

static void bench_keys(const void *res, profile_keys *k) {
    const storage_result *s = res;
    profile_key_num(k, CALIB_KEY(300, "server.storage.read_mb_s"), s->read_mb_s);
    profile_key_num(k, CALIB_KEY(301, "server.storage.latency_ms"), s->latency_ms);
    profile_key_int(k, CALIB_KEY(302, "server.storage.queue_depth"), s->queue_depth);
    /* server.storage.kind: ssd's keys: the cold curve itself. */
    _Static_assert(STORAGE_NQD == 4, "the ssd kind's curve is at calibrate's four depths");
    profile_key_num(k, CALIB_KEY(303, "server.storage.latency_qd1_ms"), s->curve_ms[0]);
    profile_key_num(k, CALIB_KEY(304, "server.storage.latency_qd4_ms"), s->curve_ms[1]);
    profile_key_num(k, CALIB_KEY(305, "server.storage.latency_qd16_ms"), s->curve_ms[2]);
    profile_key_num(k, CALIB_KEY(306, "server.storage.latency_qd32_ms"), s->curve_ms[3]);
    profile_key_num(k, CALIB_KEY(307, "server.storage.peak_mb_s"), s->peak_mb_s);
    /* The streaming reader's window and the linux cache's readahead: the
     * device's own, where the files lie on one. */
    if (s->read_ahead_kb >= 0)
        profile_key_int(k, CALIB_KEY(308, "server.storage.read_ahead_kb"), s->read_ahead_kb);
}

static void storage_points(prof_t *o, const char *k, const storage_point *p) {
    fprintf(o->f, "    %s:\n", k);
    for (int q = 0; q < STORAGE_NQD; q++) {
        fprintf(o->f, "      - queue_depth: %d\n", p[q].qd);
        prof_stat(o, 8, "mb_s", p[q].mb_s);
        prof_stat(o, 8, "items_s", p[q].items_s);
        fprintf(o->f, "        latency_ms: {p50: %s, ", prof_n(o, p[q].p50_ms));
        fprintf(o->f, "p90: %s, ", prof_n(o, p[q].p90_ms));
        fprintf(o->f, "p99: %s}\n", prof_n(o, p[q].p99_ms));
    }
}

static void bench_measured(const void *res, prof_t *o) {
    const storage_result *s = res;
    FILE *f = o->f;
    prof_str(o, 4, "model",
             "time per item at queue depth q = latency_ms/q + mean_size/read_mb_s (cold)");
    prof_str(o, 4, "fit_method", s->fit_method ? s->fit_method : "none");
    prof_str(o, 4, "ssd_model",
             "server.storage.kind: ssd: peak_mb_s = the mean cold MB/s of the plateau (the "
             "depths around the best whose medians reach its slowest repetition); latency at "
             "queue depth q = the one with which that device (latency, then the bytes on one FIFO "
             "channel), q reads of these files in flight, moves the cold items/s measured at q "
             "(at most the plateau's)");
    fprintf(f, "    qd_curve_fit: {latency_ms: %s, ", prof_n(o, s->qd_fit.slope * 1e3));
    fprintf(f, "size_over_bandwidth_ms: %s, ", prof_n(o, s->qd_fit.intercept * 1e3));
    fprintf(f, "r2: %s}\n", prof_n(o, s->qd_fit.r2));
    fprintf(f, "    per_request_fit: {ms_per_mb: %s, ", prof_n(o, s->request_fit.slope * 1e9));
    fprintf(f, "latency_ms: %s, ", prof_n(o, s->request_fit.intercept * 1e3));
    fprintf(f, "r2: %s, n: %d}\n", prof_n(o, s->request_fit.r2), s->request_fit.n);
    storage_points(o, "warm", s->warm);
    storage_points(o, "cold", s->cold);
    prof_str(o, 4, "path", s->dir);
    prof_str(o, 4, "device", s->device[0] ? s->device : "none: not on a block device");
    prof_int(o, 4, "read_ahead_kb", s->read_ahead_kb);
    fprintf(f, "    sequential: {mb_s: %s, ", prof_n(o, s->seq_mb_s));
    fprintf(f, "files: %d, ", s->seq_files);
    fprintf(f, "mb: %s, ", prof_n(o, s->seq_mb));
    fprintf(f, "piece_kb: %d}\n", STORAGE_SEQ_PIECE >> 10);
}

/* How the cold reads were made cold, under measured.method. */
static void bench_method(const void *res, prof_t *o) {
    const storage_result *s = res;
    prof_str(o, 4, "cold_read_method", s->cold_method ? s->cold_method : "none");
    prof_bool(o, 4, "eviction_worked", s->eviction_ok);
    prof_num(o, 4, "worst_resident_fraction_after_eviction", s->resident_after);
}

static void bench_judge(const void *res, stability_t *st) {
    const storage_result *s = res;
    for (int q = 0; q < STORAGE_NQD; q++)
        if (s->cold[q].qd == s->queue_depth)
            stability_figure(st, "storage MB/s (cold, best queue depth)", s->cold[q].mb_s);
}

const calib_bench_t bench_storage = {
    .section = "storage",
    .size = sizeof(storage_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .method = bench_method,
    .judge = bench_judge,
};
