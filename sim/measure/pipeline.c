/* pipeline: see pipeline.h. One mutex and three condition variables order
 * the stages; an item costs about a millisecond of work, so the lock is
 * nowhere near contended. */
#include "pipeline.h"

#include <errno.h>
#include <gsl/gsl_rng.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "augment.h"
#include "clock.h"
#include "decode_bench.h"
#include "fileset.h"
#include "http_get.h"
#include "storage_bench.h"

#define MAX_BAD_LINES 10
#define SPIN_BELOW_S  100e-6
#define WHY_LEN       320 /* a read error's text: strerror, or libcurl's (CURL_ERROR_SIZE 256) */

struct pipeline {
    pipe_cfg c;
    int64_t nslots, nbatches;
    /* Fetched items waiting for a worker, by slot = position % nslots: only
     * positions of batches not yet started are in flight, so no two share a
     * slot (nslots = prefetch x M). */
    unsigned char **slot_buf;
    size_t *slot_cap;
    const unsigned char **slot_ptr; /* NULL: the item could not be read */
    long *slot_len;
    int64_t *slot_pos; /* position held, -1 none */
    unsigned char **minio;
    long *minio_len;
    double minio_used;
    unsigned char *nfetch, *nprep; /* per item, this epoch */
    int64_t *left;                 /* per batch: items not yet prepped */
    long page;
    int bad_lines;

    pthread_mutex_t mu;
    pthread_cond_t cv_window, cv_fetched, cv_batch;
    /* this epoch */
    const uint32_t *perm;
    int64_t next_fetch, next_prep, started;
    int abort;
    char err[256];
    pipe_epoch ep;
};

typedef struct {
    pipeline *p;
    int id;
} thread_arg;

static void fail_locked(pipeline *p, const char *msg) {
    if (!p->abort) snprintf(p->err, sizeof p->err, "%s", msg);
    p->abort = 1;
    pthread_cond_broadcast(&p->cv_window);
    pthread_cond_broadcast(&p->cv_fetched);
    pthread_cond_broadcast(&p->cv_batch);
}

static void report_bad(pipeline *p, int x, const char *why) {
    if (p->bad_lines < MAX_BAD_LINES)
        fprintf(stderr, "stallsim measure: skipping %s: %s\n",
                p->c.urls ? p->c.urls[x] : p->c.paths[x], why);
    else if (p->bad_lines == MAX_BAD_LINES)
        fprintf(stderr, "stallsim measure: ... (further unreadable items counted, not listed)\n");
    p->bad_lines++;
}

/* 1 (why says it) when item x is not the size the data set was listed
 * with: a file rewritten, truncated or grown since, or while it was read
 * (stat after the read), or an object of another size. Its bytes would
 * describe other data than the figures printed beside them, so it counts as
 * unreadable. */
static int changed_size(const pipeline *p, int x, long len, char *why, size_t n) {
    struct stat st;
    long now = len;
    if (!p->c.urls && stat(p->c.paths[x], &st) == 0) now = (long)st.st_size;
    if (len == p->c.sizes[x] && now == len) return 0;
    if (p->c.urls)
        snprintf(why, n, "%ld bytes received, %ld in its file under --data", len, p->c.sizes[x]);
    else
        snprintf(why, n,
                 "changed size while measured: %ld bytes when the data set was listed, %ld "
                 "read, %ld now",
                 p->c.sizes[x], len, now);
    return 1;
}

/* Claims the next position once the GPU has started the batch `prefetch`
 * before it; decides MinIO admission in that (permutation) order. */
static int64_t claim_fetch(pipeline *p, int *admit) {
    pthread_mutex_lock(&p->mu);
    const int64_t M = p->c.batch_items;
    while (!p->abort && p->next_fetch < p->c.n && p->next_fetch / M >= p->started + p->c.prefetch)
        pthread_cond_wait(&p->cv_window, &p->mu);
    int64_t pos = -1;
    *admit = 0;
    if (!p->abort && p->next_fetch < p->c.n) {
        pos = p->next_fetch++;
        uint32_t x = p->perm[pos];
        if (!p->c.mem && p->c.minio_bytes > 0 && !p->minio[x] &&
            p->minio_used + (double)p->c.sizes[x] <= p->c.minio_bytes) {
            *admit = 1;
            p->minio_used += (double)p->c.sizes[x];
        }
    }
    pthread_mutex_unlock(&p->mu);
    return pos;
}

static void *fetcher(void *arg) {
    pipeline *p = ((thread_arg *)arg)->p;
    int admit;
    int64_t pos;
    /* With urls: this thread's one HTTP connection, kept alive for the epoch. */
    http_client *http = NULL;
    if (p->c.urls && !p->c.mem) {
        char e[256];
        if (!(http = http_open(e, sizeof e))) {
            pthread_mutex_lock(&p->mu);
            fail_locked(p, e);
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
    }
    while ((pos = claim_fetch(p, &admit)) >= 0) {
        uint32_t x = p->perm[pos];
        int64_t s = pos % p->nslots;
        const unsigned char *ptr = NULL;
        long len = 0, res = 0, tot = 0;
        int hit = 0, read = 0, paged = 0, rd_err = 0;
        char why[WHY_LEN] = "";
        double t0 = clock_now(), busy = 0;
        if (p->c.mem) {
            ptr = p->c.mem[x];
            len = p->c.sizes[x];
        } else if (p->minio[x]) {
            ptr = p->minio[x];
            len = p->minio_len[x];
            hit = 1;
        } else {
            read = 1;
            if (http) {
                rd_err = http_get(http, p->c.urls[x], p->c.sizes[x], &p->slot_buf[s],
                                  &p->slot_cap[s], &len, why, sizeof why) != 0;
            } else {
                paged = p->c.page_hits && storage_file_pages(p->c.paths[x], 0, &res, &tot) == 0;
                if (fileset_read_into(p->c.paths[x], &p->slot_buf[s], &p->slot_cap[s], &len) != 0) {
                    rd_err = 1;
                    snprintf(why, sizeof why, "%s", strerror(errno));
                }
            }
            if (!rd_err) rd_err = changed_size(p, (int)x, len, why, sizeof why);
            if (!rd_err) {
                ptr = p->slot_buf[s];
                if (admit && (p->minio[x] = malloc((size_t)(len > 0 ? len : 1)))) {
                    memcpy(p->minio[x], ptr, (size_t)len);
                    p->minio_len[x] = len;
                }
            }
            busy = clock_now() - t0;
        }
        pthread_mutex_lock(&p->mu);
        if (admit && !p->minio[x]) p->minio_used -= (double)p->c.sizes[x];
        if (rd_err) report_bad(p, (int)x, why);
        p->slot_ptr[s] = ptr;
        p->slot_len[s] = len;
        p->slot_pos[s] = pos;
        p->nfetch[x]++;
        p->ep.fetched++;
        p->ep.read_busy_s += busy;
        if (read && !rd_err) {
            p->ep.reads++;
            p->ep.read_bytes += (double)len;
        }
        if (paged) {
            double missing = (double)(tot - res) * (double)p->page;
            p->ep.miss_bytes += missing < (double)len ? missing : (double)len;
            if (res == tot) hit = 1;
        }
        p->ep.hits += hit;
        pthread_cond_broadcast(&p->cv_fetched);
        pthread_mutex_unlock(&p->mu);
    }
    http_close(http);
    return NULL;
}

static void *worker(void *arg) {
    pipeline *p = ((thread_arg *)arg)->p;
    jpeg_decoder dec;
    float *out = malloc(sizeof(float) * 3 * AUG_OUT * AUG_OUT);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int ok = decoder_init(&dec) == 0 && out && rng;
    pthread_mutex_lock(&p->mu);
    if (!ok) fail_locked(p, "cannot set up a prep worker (decoder or memory)");
    pthread_mutex_unlock(&p->mu);
    if (rng) gsl_rng_set(rng, p->c.seed * 7919u + (unsigned long)((thread_arg *)arg)->id);
    for (;;) {
        pthread_mutex_lock(&p->mu);
        if (p->abort || p->next_prep >= p->c.n) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        int64_t pos = p->next_prep++, s = pos % p->nslots;
        while (!p->abort && p->slot_pos[s] != pos)
            pthread_cond_wait(&p->cv_fetched, &p->mu);
        const unsigned char *jpeg = p->slot_ptr[s];
        long len = p->slot_len[s];
        pthread_mutex_unlock(&p->mu);
        if (p->abort) break;

        uint32_t x = p->perm[pos];
        double c0 = clock_thread_cpu(), t0 = clock_now();
        char why[256] = "";
        int w = 0, h = 0, good = 0;
        if (jpeg && decoder_run(&dec, jpeg, len, &w, &h, why, sizeof why) == 0) {
            aug_params ap;
            aug_draw_params(rng, w, h, &ap);
            augment_cpu(dec.rgb, w, h, &ap, AUG_OUT, AUG_OUT, out);
            good = 1;
        }
        double busy = clock_now() - t0, cpu = clock_thread_cpu() - c0;

        pthread_mutex_lock(&p->mu);
        if (jpeg && !good) report_bad(p, (int)x, why);
        if (!dec.tj) fail_locked(p, "tjInitDecompress failed after a bad file");
        p->nprep[x]++;
        p->ep.prep_busy_s += busy;
        p->ep.prep_cpu_s += cpu;
        if (good)
            p->ep.decoded++;
        else
            p->ep.failed++;
        if (--p->left[pos / p->c.batch_items] == 0) pthread_cond_broadcast(&p->cv_batch);
        pthread_mutex_unlock(&p->mu);
    }
    decoder_free(&dec);
    free(out);
    if (rng) gsl_rng_free(rng);
    return NULL;
}

/* Sleeps until t (CLOCK_MONOTONIC seconds), as the emulated GPU's compute. */
static void sleep_until(double t) {
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

int pipe_create(const pipe_cfg *cfg, pipeline **out, char *err, size_t errlen) {
    *out = NULL;
    if (cfg->n < 1 || cfg->workers < 1 || cfg->fetchers < 1 || cfg->batch_items < 1 ||
        cfg->prefetch < 1) {
        snprintf(err, errlen, "pipeline: nothing to run (items, threads, batch and prefetch >= 1)");
        return -1;
    }
    pipeline *p = calloc(1, sizeof *p);
    if (!p) goto oom;
    p->c = *cfg;
    p->page = sysconf(_SC_PAGESIZE);
    int64_t M = cfg->batch_items;
    p->nbatches = (cfg->n + M - 1) / M;
    p->nslots = M * cfg->prefetch < cfg->n ? M * cfg->prefetch : cfg->n;
    size_t ns = (size_t)p->nslots, n = (size_t)cfg->n;
    p->slot_buf = calloc(ns, sizeof *p->slot_buf);
    p->slot_cap = calloc(ns, sizeof *p->slot_cap);
    p->slot_ptr = calloc(ns, sizeof *p->slot_ptr);
    p->slot_len = calloc(ns, sizeof *p->slot_len);
    p->slot_pos = calloc(ns, sizeof *p->slot_pos);
    p->minio = calloc(n, sizeof *p->minio);
    p->minio_len = calloc(n, sizeof *p->minio_len);
    p->nfetch = calloc(n, 1);
    p->nprep = calloc(n, 1);
    p->left = calloc((size_t)p->nbatches, sizeof *p->left);
    if (!p->slot_buf || !p->slot_cap || !p->slot_ptr || !p->slot_len || !p->slot_pos || !p->minio ||
        !p->minio_len || !p->nfetch || !p->nprep || !p->left)
        goto oom;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv_window, NULL);
    pthread_cond_init(&p->cv_fetched, NULL);
    pthread_cond_init(&p->cv_batch, NULL);
    *out = p;
    return 0;
oom:
    snprintf(err, errlen, "pipeline: out of memory for %d items", cfg->n);
    if (p) {
        /* Not initialised yet: free the arrays only. */
        pthread_mutex_init(&p->mu, NULL);
        pthread_cond_init(&p->cv_window, NULL);
        pthread_cond_init(&p->cv_fetched, NULL);
        pthread_cond_init(&p->cv_batch, NULL);
        pipe_destroy(p);
    }
    return -1;
}

double pipe_minio_used(const pipeline *p) {
    return p->minio_used;
}

void pipe_destroy(pipeline *p) {
    if (!p) return;
    for (int64_t s = 0; p->slot_buf && s < p->nslots; s++)
        free(p->slot_buf[s]);
    for (int i = 0; p->minio && i < p->c.n; i++)
        free(p->minio[i]);
    free(p->slot_buf), free(p->slot_cap), free(p->slot_ptr), free(p->slot_len), free(p->slot_pos);
    free(p->minio), free(p->minio_len), free(p->nfetch), free(p->nprep), free(p->left);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv_window);
    pthread_cond_destroy(&p->cv_fetched);
    pthread_cond_destroy(&p->cv_batch);
    free(p);
}

/* The emulated GPU: batch by batch, wait until complete, start, compute. */
static void consume(pipeline *p, double t_start) {
    double t_end = t_start;
    for (int64_t b = 0; b < p->nbatches; b++) {
        pthread_mutex_lock(&p->mu);
        while (!p->abort && p->left[b] > 0)
            pthread_cond_wait(&p->cv_batch, &p->mu);
        p->started = b + 1;
        pthread_cond_broadcast(&p->cv_window);
        int stop = p->abort;
        pthread_mutex_unlock(&p->mu);
        if (stop) return;
        double c = b + 1 == p->nbatches ? p->c.compute_last_s : p->c.compute_s;
        double t0 = clock_now();
        /* A sleep's wake-up costs tens of microseconds or more on a busy
         * host: below that, spin, so a near-zero compute time stays near zero. */
        if (c >= SPIN_BELOW_S)
            sleep_until(t0 + c);
        else
            while (clock_now() < t0 + c) {
            }
        t_end = clock_now();
        p->ep.gpu_s += t_end - t0;
    }
    p->ep.epoch_s = t_end - t_start;
}

int pipe_run_epoch(pipeline *p, const uint32_t *perm, pipe_epoch *out, char *err, size_t errlen) {
    const int nth = p->c.fetchers + p->c.workers;
    pthread_t *tid = calloc((size_t)nth, sizeof *tid);
    thread_arg *ta = calloc((size_t)nth, sizeof *ta);
    if (!tid || !ta) {
        free(tid), free(ta);
        snprintf(err, errlen, "pipeline: out of memory for %d threads", nth);
        return -1;
    }
    memset(&p->ep, 0, sizeof p->ep);
    p->perm = perm;
    p->next_fetch = p->next_prep = p->started = 0;
    p->abort = 0;
    p->err[0] = '\0';
    memset(p->nfetch, 0, (size_t)p->c.n);
    memset(p->nprep, 0, (size_t)p->c.n);
    for (int64_t s = 0; s < p->nslots; s++)
        p->slot_pos[s] = -1;
    for (int64_t b = 0; b < p->nbatches; b++) {
        int64_t hi = (b + 1) * p->c.batch_items;
        p->left[b] = (hi < p->c.n ? hi : p->c.n) - b * p->c.batch_items;
    }
    double t_start = clock_now();
    int started = 0;
    for (; started < nth; started++) {
        ta[started] = (thread_arg){p, started};
        void *(*fn)(void *) = started < p->c.fetchers ? fetcher : worker;
        if (pthread_create(&tid[started], NULL, fn, &ta[started]) != 0) {
            pthread_mutex_lock(&p->mu);
            fail_locked(p, "cannot start the loader's threads");
            pthread_mutex_unlock(&p->mu);
            break;
        }
    }
    consume(p, t_start);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    free(tid), free(ta);
    if (p->abort) {
        snprintf(err, errlen, "pipeline: %s", p->err);
        return -1;
    }
    int once = 1;
    for (int i = 0; i < p->c.n; i++)
        once &= p->nfetch[i] == 1 && p->nprep[i] == 1;
    p->ep.once = once;
    *out = p->ep;
    return 0;
}
