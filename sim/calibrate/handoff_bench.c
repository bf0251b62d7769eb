/* handoff_bench: see handoff_bench.h. The registry's entry, bench_handoff,
 * measures a batch of 256 decoded ImageNet crops (256 x 3 x 224 x 224
 * uint8, 38.5 MB) handed to 1, 2, 4 and 8 readers. */
#include "handoff_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cleanup.h"
#include "progress.h"

/* What the writer and its readers share besides the batch: an anonymous
 * shared mapping made before fork. */
typedef struct {
    sem_t go[HANDOFF_MAX_READERS]; /* each reader's: posted when a batch is in the segment
                                    * (one for all would let a fast reader take two) */
    sem_t done; /* posted by each reader: mapped (once), then each batch copied */
    double cpu[HANDOFF_MAX_READERS * (HANDOFF_MAX_REPS + 1)];
    double wall[HANDOFF_MAX_READERS * (HANDOFF_MAX_REPS + 1)];
} handoff_ctl;

/* One point's run: its segment, buffers and processes, freed by point_end. */
typedef struct {
    char name[64], path[96];
    int cleanup_id, linked;
    size_t bytes;
    unsigned char *src, *seg;
    handoff_ctl *ctl;
    pid_t pid[HANDOFF_MAX_READERS];
    int nproc, reaped[HANDOFF_MAX_READERS];
} point_run;

enum { WAIT_LIMIT_S = 60 };

double handoff_shm_free_bytes(void) {
    struct statvfs v;
    if (statvfs("/dev/shm", &v) != 0) return -1;
    return (double)v.f_bavail * (double)v.f_frsize;
}

static double now_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* sem_wait with a deadline of a second; 0, or -1 on timeout. */
static int wait_1s(sem_t *s) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    while (sem_timedwait(s, &ts) != 0)
        if (errno != EINTR) return -1;
    return 0;
}

/* The batch's stamp: its number in the first and last 8 bytes. */
static void stamp(unsigned char *p, size_t bytes, uint64_t batch) {
    memcpy(p, &batch, sizeof batch);
    memcpy(p + bytes - sizeof batch, &batch, sizeof batch);
}

static int stamped(const unsigned char *p, size_t bytes, uint64_t batch) {
    uint64_t a, b;
    memcpy(&a, p, sizeof a);
    memcpy(&b, p + bytes - sizeof b, sizeof b);
    return a == batch && b == batch;
}

/* A reader process: maps the segment by name, copies every batch out into
 * its own buffer. Exit 0, or a code point_check names. */
static int reader(const char *name, size_t bytes, handoff_ctl *ctl, int id, int reps,
                  pid_t parent) {
    int fd = shm_open(name, O_RDONLY, 0);
    if (fd < 0) return 10;
    const unsigned char *seg = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    unsigned char *dst = malloc(bytes);
    if (seg == MAP_FAILED || !dst) return 11;
    memset(dst, 0, bytes); /* the training process's buffer, faulted in once */
    sem_post(&ctl->done);
    for (int b = 0; b <= reps; b++) {
        for (int waited = 0; wait_1s(&ctl->go[id]) != 0; waited++)
            if (getppid() != parent || waited > WAIT_LIMIT_S) return 12;
        double c0 = now_s(CLOCK_THREAD_CPUTIME_ID), w0 = now_s(CLOCK_MONOTONIC);
        memcpy(dst, seg, bytes);
        double c1 = now_s(CLOCK_THREAD_CPUTIME_ID), w1 = now_s(CLOCK_MONOTONIC);
        if (!stamped(dst, bytes, (uint64_t)b)) return 13;
        ctl->cpu[b * HANDOFF_MAX_READERS + id] = c1 - c0;
        ctl->wall[b * HANDOFF_MAX_READERS + id] = w1 - w0;
        sem_post(&ctl->done);
    }
    return 0;
}

/* Reaps the readers that have ended; -1 when one failed. */
static int reap(point_run *p, char *err, size_t errlen) {
    static const char *const why[] = {
        "could not open the segment by name", "could not map the segment or allocate its buffer",
        "waited too long for a batch", "copied a batch that was not the one written"};
    for (int i = 0; i < p->nproc; i++) {
        int st;
        if (p->reaped[i] || waitpid(p->pid[i], &st, WNOHANG) != p->pid[i]) continue;
        p->reaped[i] = 1;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (code == 0) continue;
        if (code >= 10 && code <= 13)
            snprintf(err, errlen, "hand-off: reader %d %s", i, why[code - 10]);
        else
            snprintf(err, errlen, "hand-off: reader %d ended by signal %d", i,
                     WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        return -1;
    }
    return 0;
}

/* Waits for n posts of done, watching the readers. */
static int wait_done(point_run *p, int n, char *err, size_t errlen) {
    for (int got = 0, waited = 0; got < n;) {
        if (wait_1s(&p->ctl->done) == 0) {
            got++;
            continue;
        }
        if (reap(p, err, errlen) != 0) return -1;
        if (++waited > WAIT_LIMIT_S) {
            snprintf(err, errlen, "hand-off: the readers did not answer in %d s", WAIT_LIMIT_S);
            return -1;
        }
    }
    return 0;
}

static void unlink_segment(point_run *p) {
    if (p->linked) shm_unlink(p->name);
    p->linked = 0;
    cleanup_drop(p->cleanup_id);
    p->cleanup_id = -1;
}

/* Ends the run on every path: readers still running are killed (by pid),
 * every one reaped, the name removed, the mappings and buffers freed. */
static void point_end(point_run *p) {
    for (int i = 0; i < p->nproc; i++)
        if (!p->reaped[i]) kill(p->pid[i], SIGKILL);
    for (int i = 0; i < p->nproc; i++)
        if (!p->reaped[i]) waitpid(p->pid[i], NULL, 0);
    unlink_segment(p);
    if (p->seg && p->seg != MAP_FAILED) munmap(p->seg, p->bytes);
    if (p->ctl && (void *)p->ctl != MAP_FAILED) {
        for (int i = 0; i < HANDOFF_MAX_READERS; i++)
            sem_destroy(&p->ctl->go[i]);
        sem_destroy(&p->ctl->done);
        munmap(p->ctl, sizeof *p->ctl);
    }
    free(p->src);
}

/* The segment, the shared block and the writer's batch. */
static int point_setup(point_run *p, char *err, size_t errlen) {
    static unsigned seq;
    snprintf(p->name, sizeof p->name, "/stallsim-handoff-%ld-%u", (long)getpid(), seq++);
    snprintf(p->path, sizeof p->path, "/dev/shm%s", p->name);
    int fd = shm_open(p->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "hand-off: shm_open %s: %s", p->name, strerror(errno));
        return -1;
    }
    p->linked = 1;
    p->cleanup_id = cleanup_add(p->path, 0); /* a signal now must not leave it behind */
    int ok = ftruncate(fd, (off_t)p->bytes) == 0;
    p->seg = ok ? mmap(NULL, p->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    p->ctl = mmap(NULL, sizeof *p->ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    p->src = malloc(p->bytes);
    if (!ok || p->seg == MAP_FAILED || p->ctl == MAP_FAILED || !p->src) {
        snprintf(err, errlen, "hand-off: cannot size, map or allocate a %.1f MB batch: %s",
                 (double)p->bytes / 1e6, strerror(errno));
        return -1;
    }
    int sems = sem_init(&p->ctl->done, 1, 0) == 0;
    for (int i = 0; i < HANDOFF_MAX_READERS; i++)
        sems &= sem_init(&p->ctl->go[i], 1, 0) == 0;
    if (!sems) {
        snprintf(err, errlen, "hand-off: process-shared semaphores: %s", strerror(errno));
        return -1;
    }
    /* Pixels that vary, as decoded images do (and no page stays zero). */
    for (size_t i = 0; i < p->bytes; i++)
        p->src[i] = (unsigned char)(i * 131u + (i >> 12) * 7u);
    return 0;
}

/* Forks the readers; each is killed if the writer dies. */
static int spawn(point_run *p, int n, int reps, char *err, size_t errlen) {
    const pid_t parent = getpid();
    fflush(NULL); /* no buffered output written twice */
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(err, errlen, "hand-off: cannot start reader %d: %s", i, strerror(errno));
            return -1;
        }
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) _exit(12);
            _exit(reader(p->name, p->bytes, p->ctl, i, reps, parent));
        }
        p->pid[p->nproc++] = pid;
    }
    return 0;
}

/* One reader count: reps + 1 batches (the first warms up). */
static int run_point(size_t bytes, int n, int reps, handoff_point *pt, double *wr, char *err,
                     size_t errlen) {
    point_run p = {.bytes = bytes, .cleanup_id = -1};
    int rc = point_setup(&p, err, errlen);
    if (rc == 0) rc = spawn(&p, n, reps, err, errlen);
    if (rc == 0) rc = wait_done(&p, n, err, errlen); /* every reader has mapped it */
    if (rc == 0) unlink_segment(&p);                 /* the mappings keep it alive */
    for (int b = 0; b <= reps && rc == 0; b++) {
        stamp(p.src, bytes, (uint64_t)b);
        double c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
        memcpy(p.seg, p.src, bytes);
        if (b > 0) wr[b - 1] = (now_s(CLOCK_THREAD_CPUTIME_ID) - c0) * 1e3 / ((double)bytes / 1e6);
        for (int i = 0; i < n; i++)
            sem_post(&p.ctl->go[i]);
        rc = wait_done(&p, n, err, errlen);
    }
    for (int i = 0; i < p.nproc && rc == 0; i++) {
        int st = 0;
        if (p.reaped[i]) continue; /* reaped while waiting: reap() found it well */
        if (waitpid(p.pid[i], &st, 0) != p.pid[i]) st = -1;
        p.reaped[i] = 1;
        if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            snprintf(err, errlen, "hand-off: reader %d failed after its last batch", i);
            rc = -1;
        }
    }
    if (rc == 0) {
        double cpu[HANDOFF_MAX_READERS * HANDOFF_MAX_REPS],
            wall[HANDOFF_MAX_READERS * HANDOFF_MAX_REPS];
        const double mb = (double)bytes / 1e6;
        int k = 0;
        for (int b = 1; b <= reps; b++)
            for (int i = 0; i < n; i++, k++) {
                cpu[k] = p.ctl->cpu[b * HANDOFF_MAX_READERS + i] * 1e3 / mb;
                wall[k] = p.ctl->wall[b * HANDOFF_MAX_READERS + i] * 1e3 / mb;
            }
        pt->readers = n;
        pt->cpu_ms_per_mb = stats_summarize(cpu, k);
        pt->wall_ms_per_mb = stats_summarize(wall, k);
    }
    point_end(&p);
    return rc;
}

void handoff_fit(const double *n, const double *y, int k, double *a, double *b) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < k; i++) {
        double x = n[i] - 1;
        sx += x, sy += y[i], sxx += x * x, sxy += x * y[i];
    }
    double den = k * sxx - sx * sx;
    *b = den > 0 ? (k * sxy - sx * sy) / den : 0;
    *a = k > 0 ? (sy - *b * sx) / k : 0;
    if (*a >= 0 && *b >= 0) return;
    /* A boundary: the flat line at the mean, or the line through the origin. */
    double a1 = k > 0 && sy > 0 ? sy / k : 0, b2 = sxx > 0 && sxy > 0 ? sxy / sxx : 0;
    double e1 = 0, e2 = 0;
    for (int i = 0; i < k; i++) {
        double x = n[i] - 1;
        e1 += (y[i] - a1) * (y[i] - a1);
        e2 += (y[i] - b2 * x) * (y[i] - b2 * x);
    }
    if (e1 <= e2)
        *a = a1, *b = 0;
    else
        *a = 0, *b = b2;
}

/* The batch must fit /dev/shm, and the writer's, the segment's and the
 * readers' buffers the free memory. */
static int fits(double bytes, int most, handoff_result *out, char *err, size_t errlen) {
    double shm = handoff_shm_free_bytes();
    out->shm_free_mb = shm / 1e6;
    if (shm >= 0 && bytes > shm) {
        snprintf(err, errlen,
                 "hand-off: a batch of %.1f MB does not fit /dev/shm, which has %.1f MB free; "
                 "give /dev/shm more room (docker run --shm-size=1g, a Memory emptyDir in "
                 "Kubernetes) or free it",
                 bytes / 1e6, shm / 1e6);
        return -1;
    }
    struct rlimit fl;
    if (getrlimit(RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY &&
        bytes > (double)fl.rlim_cur) {
        snprintf(err, errlen,
                 "hand-off: a batch of %.1f MB is past this process's file-size limit of %.3f MB "
                 "(ulimit -f; a shared-memory segment is a file)",
                 bytes / 1e6, (double)fl.rlim_cur / 1e6);
        return -1;
    }
    double avail = (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (avail > 0 && (most + 2) * bytes > avail) {
        snprintf(err, errlen,
                 "hand-off: %d readers of a %.1f MB batch need %.1f MB of memory, %.1f MB is "
                 "free",
                 most, bytes / 1e6, (most + 2) * bytes / 1e6, avail / 1e6);
        return -1;
    }
    return 0;
}

int handoff_bench(double bytes, const int *readers, int npoints, int reps, handoff_result *out,
                  char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    int most = 0;
    for (int i = 0; i < npoints && npoints <= HANDOFF_MAX_POINTS; i++) {
        if (readers[i] < 1 || readers[i] > HANDOFF_MAX_READERS) most = -1;
        if (most >= 0 && readers[i] > most) most = readers[i];
    }
    if (!(bytes >= 4096) || npoints < 1 || npoints > HANDOFF_MAX_POINTS || most < 1 || reps < 1 ||
        reps > HANDOFF_MAX_REPS) {
        snprintf(err, errlen, "hand-off: bad arguments");
        return -1;
    }
    if (fits(bytes, most, out, err, errlen) != 0) return -1;
    double wr[HANDOFF_MAX_POINTS * HANDOFF_MAX_REPS], n[HANDOFF_MAX_POINTS], y[HANDOFF_MAX_POINTS];
    out->batch_mb = bytes / 1e6, out->reps = reps;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    out->online_cores = cores > 0 ? (int)cores : 1;
    for (int k = 0; k < npoints; k++) {
        handoff_point *pt = &out->pt[k];
        if (run_point((size_t)bytes, readers[k], reps, pt, wr + k * reps, err, errlen) != 0)
            return -1;
        n[k] = readers[k], y[k] = pt->cpu_ms_per_mb.median;
        progress("hand-off: %d reader%s: %.3f ms/MB CPU each (wall %.3f), batch of %.1f MB",
                 readers[k], readers[k] > 1 ? "s" : "", y[k], pt->wall_ms_per_mb.median,
                 out->batch_mb);
    }
    out->npoints = npoints;
    out->write_ms_per_mb = stats_summarize(wr, npoints * reps);
    handoff_fit(n, y, npoints, &out->ms_per_mb, &out->ms_per_mb_per_reader);
    return 0;
}

/* calibrate's benchmark: 256 decoded 224 x 224 RGB crops, uint8. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    static const int readers[] = {1, 2, 4, 8};
    const double bytes = 256.0 * 3 * 224 * 224;
    handoff_result *r = res;
    /* A host that cannot hold a batch in /dev/shm cannot hand one over
     * either: not a failure of calibrate, the profile says why. */
    if (fits(bytes, 8, r, r->reason, sizeof r->reason) != 0) {
        const size_t pre = strlen("hand-off: ");
        memmove(r->reason, r->reason + pre, strlen(r->reason + pre) + 1);
        progress("hand-off not measured: %s", r->reason);
        return 0;
    }
    if (handoff_bench(bytes, readers, 4, c->reps, r, err, errlen) != 0) return -1;
    r->measured = 1;
    return 0;
}

static void bench_keys(const void *res, profile_keys *k) {
    const handoff_result *r = res;
    if (!r->measured) return;
    profile_key_num(k, CALIB_KEY(1200, "loader.handoff_ms_per_mb"), r->ms_per_mb);
    profile_key_num(k, CALIB_KEY(1201, "loader.handoff_ms_per_mb_per_reader"),
                    r->ms_per_mb_per_reader);
}

static void bench_measured(const void *res, prof_t *o) {
    const handoff_result *r = res;
    prof_bool(o, 4, "measured", r->measured);
    if (!r->measured) {
        prof_str(o, 4, "reason", r->reason);
        return;
    }
    prof_str(o, 4, "method",
             "one writer copies each batch into a POSIX shared-memory segment; N forked "
             "readers, each with the segment mapped by name, copy all of it into a private "
             "buffer touched beforehand; a barrier per batch; the first batch not counted; "
             "CPU time of each copy (CLOCK_THREAD_CPUTIME_ID); 1 MB = 1e6 bytes");
    prof_num(o, 4, "batch_mb", r->batch_mb);
    prof_num(o, 4, "shm_free_mb", r->shm_free_mb);
    prof_int(o, 4, "online_cores", r->online_cores);
    prof_int(o, 4, "batches", r->reps);
    prof_str(o, 4, "fit",
             "each reader's CPU ms/MB = handoff_ms_per_mb + "
             "handoff_ms_per_mb_per_reader x (readers - 1), both >= 0, "
             "least squares over the medians");
    prof_stat(o, 4, "write_ms_per_mb", r->write_ms_per_mb);
    fprintf(o->f, "    readers:\n");
    for (int k = 0; k < r->npoints; k++) {
        fprintf(o->f, "      - readers: %d\n", r->pt[k].readers);
        prof_stat(o, 8, "cpu_ms_per_mb", r->pt[k].cpu_ms_per_mb);
        prof_stat(o, 8, "wall_ms_per_mb", r->pt[k].wall_ms_per_mb);
    }
}

static void bench_judge(const void *res, stability_t *st) {
    const handoff_result *r = res;
    for (int k = 0; k < r->npoints && r->measured; k++)
        if (r->pt[k].readers == 1)
            stability_figure(st, "hand-off ms/MB (1 reader)", r->pt[k].cpu_ms_per_mb);
}

const calib_bench_t bench_handoff = {
    .section = "handoff",
    .size = sizeof(handoff_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .judge = bench_judge,
};
