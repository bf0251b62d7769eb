/* read_cpu_bench: see read_cpu_bench.h. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "read_cpu_bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "progress.h"
#include "storage_bench.h"

static const double sizes_kb[READ_CPU_NSIZES] = {4, 16, 64, 256, 1024};
enum { MAX_FILES = 4096, MAX_BYTES = 1 << 20, MAX_REPS = 64 };
/* The warm passes' files, 64 MB of each size (at most MAX_FILES): a
 * loader's data set is far larger than the CPU's caches, so a hit in the
 * page cache copies from DRAM. With the 1 MB a size that --quick wrote,
 * the copies came from the CPU's caches: 8.9 us a 64 KB read against
 * 15.5 with 64 MB of files on this 2-vCPU VM (2026-11-25), and the
 * reader's CPU came out 38 % under real readers' (VALIDATION.md, "The
 * reader's CPU per read"). */
static const double warm_set_bytes = 64e6;

/* This thread's CPU seconds, user and system: what getrusage(RUSAGE_THREAD)
 * splits into ru_utime + ru_stime, but in ns (getrusage's sum moved in
 * scheduler ticks here, 4 ms: passes of tens of ms read 0 or a tick). */
static double thread_cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Files of `count` x `bytes` in dir, named s<k>-<i>; 0 or -1. */
static int write_files(const char *dir, int k, int count, size_t bytes, char **paths,
                       const unsigned char *data) {
    for (int i = 0; i < count; i++) {
        paths[i] = malloc(256);
        if (!paths[i]) return -1;
        snprintf(paths[i], 256, "%s/s%d-%d", dir, k, i);
        int fd = open(paths[i], O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) return -1;
        ssize_t w = write(fd, data + (size_t)i % 4096, bytes);
        if (close(fd) != 0 || w != (ssize_t)bytes) return -1;
    }
    return 0;
}

/* One pass: each file opened, read whole, closed; CPU us per read. */
static double read_pass(char **paths, int n, unsigned char *buf) {
    double t0 = thread_cpu_s();
    for (int i = 0; i < n; i++) {
        int fd = open(paths[i], O_RDONLY);
        if (fd < 0) return -1;
        while (read(fd, buf, MAX_BYTES) > 0) {
        }
        close(fd);
    }
    return (thread_cpu_s() - t0) / n * 1e6;
}

/* The loopback server: one connection, each request "GET /<bytes> ..."
 * answered with that many bytes (keep-alive) until the client closes. */
typedef struct {
    int lfd;
    const unsigned char *data;
} http_srv;

/* No GET may hang calibrate: a peer that stops answering fails the GET
 * passes after this long (the profile then says why), never blocks them. */
enum { IO_TIMEOUT_S = 10, GET_DEADLINE_S = 120 };

/* TCP_NODELAY and send/receive timeouts on fd (timeouts cover connect too).
 * The server sent a header and then a body with NODELAY on the client
 * alone: under Nagle's algorithm the body can wait for the client's delayed
 * ACK. On the GPU machine (2026-11-28) calibrate sat idle in these passes
 * for over 6 minutes, load 0.06, until killed. */
static void socket_limits(int fd) {
    int one = 1;
    struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

static void *http_serve(void *arg) {
    http_srv *h = arg;
    struct pollfd p = {.fd = h->lfd, .events = POLLIN};
    int fd = poll(&p, 1, IO_TIMEOUT_S * 1000) == 1 ? accept(h->lfd, NULL, NULL) : -1;
    if (fd >= 0) socket_limits(fd);
    char req[512];
    size_t have = 0;
    for (; fd >= 0;) {
        ssize_t r = recv(fd, req + have, sizeof req - 1 - have, 0);
        if (r <= 0) break;
        have += (size_t)r;
        req[have] = 0;
        char *end = strstr(req, "\r\n\r\n");
        if (!end) continue;
        long bytes = strtol(req + 5, NULL, 10);
        char head[128];
        int n = snprintf(head, sizeof head,
                         "HTTP/1.1 200 OK\r\nContent-Length: %ld\r\nConnection: keep-alive\r\n\r\n",
                         bytes);
        /* MSG_MORE: the header leaves with the body, as a server's does */
        if (send(fd, head, (size_t)n, MSG_NOSIGNAL | MSG_MORE) != n) break;
        if (send(fd, h->data, (size_t)bytes, MSG_NOSIGNAL) != bytes) break;
        have = 0;
    }
    if (fd >= 0) close(fd);
    return NULL;
}

/* One GET over the client's connection: the header, then Content-Length
 * bytes into buf. 0, or -1. */
static int http_get(int fd, long bytes, unsigned char *buf) {
    char req[96], head[512];
    int n = snprintf(req, sizeof req, "GET /%ld HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", bytes);
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) return -1;
    size_t have = 0;
    char *end = NULL;
    while (!end) {
        ssize_t r = recv(fd, head + have, sizeof head - 1 - have, 0);
        if (r <= 0) return -1;
        have += (size_t)r;
        head[have] = 0;
        end = strstr(head, "\r\n\r\n");
    }
    const char *cl = strstr(head, "Content-Length: ");
    long want = cl ? strtol(cl + 16, NULL, 10) : -1, got = (long)(have - (size_t)(end + 4 - head));
    while (got < want) {
        ssize_t r = recv(fd, buf, MAX_BYTES, 0);
        if (r <= 0) return -1;
        got += r;
    }
    return want == bytes ? 0 : -1;
}

/* The GET passes: count GETs of each size a pass, reps passes, CPU us per
 * GET of the client thread. 0, or -1 with the reason in r->get_reason. */
static int get_passes(read_cpu_result *r, int reps, const unsigned char *data, unsigned char *buf) {
    http_srv h = {socket(AF_INET, SOCK_STREAM, 0), data};
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    pthread_t th;
    if (h.lfd < 0 || bind(h.lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(h.lfd, 1) != 0 ||
        getsockname(h.lfd, (struct sockaddr *)&a, &al) != 0 ||
        pthread_create(&th, NULL, http_serve, &h) != 0) {
        snprintf(r->get_reason, sizeof r->get_reason, "no server on 127.0.0.1");
        if (h.lfd >= 0) close(h.lfd);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0), rc = 0, late = 0;
    if (fd >= 0) socket_limits(fd);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0) rc = -1;
    double y[MAX_REPS], start = now_s();
    for (int k = 0; k < READ_CPU_NSIZES && rc == 0; k++) {
        long bytes = (long)(sizes_kb[k] * 1000);
        for (int p = 0; p < reps && rc == 0; p++) {
            if (now_s() - start > GET_DEADLINE_S) {
                rc = -1, late = 1;
                break;
            }
            double t0 = thread_cpu_s();
            for (int i = 0; i < r->pass_files[k] && rc == 0; i++)
                rc = http_get(fd, bytes, buf);
            y[p] = (thread_cpu_s() - t0) / r->pass_files[k] * 1e6;
        }
        if (rc == 0) r->get_us[k] = stats_summarize(y, reps); /* y is whole only then */
    }
    if (fd >= 0) close(fd);
    progress("read CPU: GETs on 127.0.0.1: %.1f s of wall", now_s() - start);
    shutdown(h.lfd, SHUT_RDWR);
    close(h.lfd);
    pthread_join(th, NULL);
    if (late)
        snprintf(r->get_reason, sizeof r->get_reason,
                 "the GETs on 127.0.0.1 took over %d s: loopback too slow to time", GET_DEADLINE_S);
    else if (rc != 0)
        snprintf(r->get_reason, sizeof r->get_reason, "a GET on 127.0.0.1 failed");
    return rc;
}

/* Fits us per read = fixed + per_x x MB over the medians of st[0..n). */
static void fit_line(const read_cpu_result *r, const stat_summary *a, const stat_summary *b,
                     cost_line *out) {
    double x[2 * READ_CPU_NSIZES], y[2 * READ_CPU_NSIZES];
    int n = 0;
    for (int k = 0; k < READ_CPU_NSIZES; k++) {
        x[n] = r->size_kb[k] / 1e3, y[n++] = a[k].median;
        if (b) x[n] = r->size_kb[k] / 1e3, y[n++] = b[k].median;
    }
    fit_cost_line(x, y, n, out);
}

/* The file passes of size k, warm then cold. 0, or -1. */
static int file_passes(read_cpu_result *r, int k, int reps, char **paths, unsigned char *buf) {
    double w[MAX_REPS], c[MAX_REPS];
    const int n = r->files[k], nc = r->pass_files[k];
    if (read_pass(paths, n, buf) < 0) return -1; /* fills the page cache */
    for (int p = 0; p < reps; p++)
        if ((w[p] = read_pass(paths, n, buf)) < 0) return -1;
    r->warm_us[k] = stats_summarize(w, reps);
    /* Cold reads copy pages the device just wrote, not in the CPU's caches
     * whatever the set's size: a smaller set keeps the device's passes
     * short. */
    for (int p = 0; p < reps && r->cold_ok; p++) {
        double left = storage_evict(paths, nc);
        if (left > r->resident_after) r->resident_after = left;
        if (left < 0 || left > 0.05) {
            r->cold_ok = 0;
            break;
        }
        if ((c[p] = read_pass(paths, nc, buf)) < 0) return -1;
    }
    if (r->cold_ok) r->cold_us[k] = stats_summarize(c, reps);
    return 0;
}

int read_cpu_bench(int quick, int reps, read_cpu_result *r, char *err, size_t errlen) {
    memset(r, 0, sizeof *r);
    reps = reps < 3 ? 3 : reps > MAX_REPS ? MAX_REPS : reps;
    r->reps = reps, r->cold_ok = 1;
    const char *tmp = getenv("TMPDIR");
    snprintf(r->dir, sizeof r->dir, "%s/stallsim-readcpu-XXXXXX", tmp && *tmp ? tmp : "/var/tmp");
    unsigned char *data = malloc(MAX_BYTES + 4096), *buf = malloc(MAX_BYTES);
    char **paths = calloc(MAX_FILES, sizeof *paths);
    int rc = data && buf && paths && mkdtemp(r->dir) ? 0 : -1;
    if (rc) snprintf(err, errlen, "cannot make %s or its buffers: %s", r->dir, strerror(errno));
    for (size_t i = 0; data && i < MAX_BYTES + 4096; i++)
        data[i] = (unsigned char)(i * 2654435761u >> 13);
    for (int k = 0; k < READ_CPU_NSIZES && rc == 0; k++) {
        const double bytes = sizes_kb[k] * 1000;
        int n = (int)((quick ? 1e6 : 16e6) / bytes), w = (int)(warm_set_bytes / bytes);
        r->size_kb[k] = sizes_kb[k];
        r->pass_files[k] = n < 32 ? 32 : n > MAX_FILES ? MAX_FILES : n;
        r->files[k] = w < r->pass_files[k] ? r->pass_files[k] : w > MAX_FILES ? MAX_FILES : w;
        errno = 0;
        rc = write_files(r->dir, k, r->files[k], (size_t)bytes, paths, data);
        if (rc == 0) rc = file_passes(r, k, reps, paths, buf);
        if (rc)
            snprintf(err, errlen, "files of %g KB in %s: %s", sizes_kb[k], r->dir,
                     errno ? strerror(errno) : "a short write or read");
        for (int i = 0; i < r->files[k]; i++)
            if (paths[i]) unlink(paths[i]), free(paths[i]), paths[i] = NULL;
        if (rc == 0)
            progress("read CPU: %g KB files: %.2f us a read warm, %.2f cold", sizes_kb[k],
                     r->warm_us[k].median, r->cold_ok ? r->cold_us[k].median : -1);
    }
    if (data && buf && paths) rmdir(r->dir);
    if (rc == 0) {
        r->get_ok = get_passes(r, reps, data, buf) == 0;
        fit_line(r, r->warm_us, NULL, &r->warm);
        if (r->cold_ok) fit_line(r, r->cold_us, NULL, &r->cold);
        if (r->get_ok) fit_line(r, r->get_us, NULL, &r->get);
    }
    free(data), free(buf), free(paths);
    return rc;
}

/* A host where the benchmark's files cannot be written (a full $TMPDIR, a
 * file-size limit) is not a failure of calibrate: the profile says why and
 * carries no read CPU keys (the scenario's own, or 0, stand), as the
 * hand-off does without room in /dev/shm. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    read_cpu_result *r = res;
    char why[256];
    if (read_cpu_bench(c->quick, c->reps, r, why, sizeof why) != 0) {
        (void)err, (void)errlen;
        snprintf(r->reason, sizeof r->reason, "%s", why);
        progress("read CPU not measured: %s", r->reason);
        return 0;
    }
    r->measured = 1;
    return 0;
}

/* A hit in the page cache is a warm read; a read from storage a cold one
 * (on tmpfs, where nothing is cold, a warm one: the files are in memory). */
static void bench_keys(const void *res, profile_keys *k) {
    const read_cpu_result *r = res;
    if (!r->measured) return;
    const cost_line *st = r->cold_ok ? &r->cold : &r->warm;
    profile_key_num(k, CALIB_KEY(250, "server.cache_cpu_us_per_read"), r->warm.fixed);
    profile_key_num(k, CALIB_KEY(251, "server.cache_cpu_us_per_mb"), r->warm.per_x);
    /* A remote hit (partitioned caching) is a request and a TCP receive on
     * its reader, as the GET over 127.0.0.1 is on the client's thread. */
    if (r->get_ok) {
        profile_key_num(k, CALIB_KEY(252, "server.network.cpu_us_per_read"), r->get.fixed);
        profile_key_num(k, CALIB_KEY(253, "server.network.cpu_us_per_mb"), r->get.per_x);
    }
    profile_key_num(k, CALIB_KEY(308, "server.storage.cpu_us_per_read"), st->fixed);
    profile_key_num(k, CALIB_KEY(309, "server.storage.cpu_us_per_mb"), st->per_x);
}

static void line_out(prof_t *o, const char *k, const cost_line *l) {
    fprintf(o->f, "    %s: {us_per_read: %s, ", k, prof_n(o, l->fixed));
    fprintf(o->f, "us_per_mb: %s, fit: ", prof_n(o, l->per_x));
    prof_quoted(o->f, cost_method_words(l->method));
    fprintf(o->f, "}\n");
}

static void bench_measured(const void *res, prof_t *o) {
    const read_cpu_result *r = res;
    prof_bool(o, 4, "measured", r->measured);
    if (!r->measured) {
        prof_str(o, 4, "reason", r->reason);
        return;
    }
    prof_str(o, 4, "method",
             "files read whole (open, read, close; buffered) by one thread, warm and cold "
             "(POSIX_FADV_DONTNEED); GETs on 127.0.0.1, one connection; the thread's CPU "
             "(CLOCK_THREAD_CPUTIME_ID) a read; 1 MB = 1e6 bytes");
    prof_str(o, 4, "dir", r->dir);
    prof_int(o, 4, "passes", r->reps);
    prof_bool(o, 4, "cold_measured", r->cold_ok);
    prof_num(o, 4, "resident_after_evict", r->resident_after);
    prof_str(o, 4, "fit",
             "us a read = us_per_read + us_per_mb x MB, both >= 0; warm: "
             "server.cache_cpu_us_*; cold (else warm): server.storage.cpu_us_*; get: "
             "server.network.cpu_us_* (a remote hit), and an object store's by hand");
    line_out(o, "warm", &r->warm);
    if (r->cold_ok) line_out(o, "cold", &r->cold);
    if (r->get_ok)
        line_out(o, "get", &r->get);
    else
        prof_str(o, 4, "get_reason", r->get_reason);
    fprintf(o->f, "    sizes:\n");
    for (int k = 0; k < READ_CPU_NSIZES; k++) {
        fprintf(o->f, "      - kb: %s\n", prof_n(o, r->size_kb[k]));
        prof_int(o, 8, "files", r->files[k]);
        prof_int(o, 8, "cold_get_files", r->pass_files[k]);
        prof_stat(o, 8, "warm_us", r->warm_us[k]);
        if (r->cold_ok) prof_stat(o, 8, "cold_us", r->cold_us[k]);
        if (r->get_ok) prof_stat(o, 8, "get_us", r->get_us[k]);
    }
}

static void bench_judge(const void *res, stability_t *st) {
    const read_cpu_result *r = res;
    if (!r->measured) return;
    stability_figure(st, "read CPU us (64 KB, warm)", r->warm_us[2]);
}

const calib_bench_t bench_read_cpu = {
    .section = "read_cpu",
    .size = sizeof(read_cpu_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .judge = bench_judge,
};
