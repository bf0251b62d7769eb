/* grid_run: see grid_run.h. */
#include "grid_run.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "options.h"

int grid_sets(const sweep_grid_t *g, const assign_list_t *const *layers, int nlayers, int64_t c,
              assign_list_t *l) {
    static const src_pos_t vary_pos = {"--vary", 0, 0};
    l->n = 0;
    for (int k = 0; k < nlayers; k++)
        for (size_t i = 0; layers[k] && i < layers[k]->n; i++) {
            const assign_t *a = &layers[k]->v[i];
            if (assign_push(l, a->key, a->value, a->pos, a->keypos, 1)) return EXIT_RUNTIME;
        }
    if (c < 0) return 0; /* the scenario as given */
    int idx[SWEEP_MAX_AXES];
    sweep_grid_point(g, c, idx);
    for (int a = 0; a < g->naxes; a++) {
        const sweep_axis_t *ax = &g->axes[a];
        if (!ax->is_variant && assign_push(l, ax->key, ax->values[idx[a]], vary_pos, vary_pos, 1))
            return EXIT_RUNTIME;
    }
    return 0;
}

int grid_build(const scenario_doc_t *doc, const sweep_grid_t *g, const assign_list_t *const *layers,
               int nlayers, int64_t c, int variant, int simulations, grid_worker_t *w) {
    int rc = grid_sets(g, layers, nlayers, c, &w->sets);
    return rc ? rc : run_build(doc, &w->sets, variant, simulations, w->v);
}

/* ---- the pool ---- */

typedef struct {
    char *buf;
    size_t len;
    int ready;
} slot_t;

typedef struct {
    const grid_run_spec_t *sp;
    pthread_mutex_t mu;
    pthread_cond_t done_cv, space_cv;
    int64_t next;      /* the next configuration to claim */
    int64_t written;   /* with deliver: the configuration the caller waits for */
    int window;        /* with deliver: results held at most */
    slot_t *slots;     /* with deliver: configuration c's at c % window */
    int rc;            /* the failure that stops the run, or 0 */
    int64_t failed_at; /* the lowest configuration that returned EXIT_INPUT, or -1 */
    int space_waiters; /* workers waiting for the caller to free a slot */
    double last_wake;  /* when a worker last woke the caller */
} pool_t;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Under the lock: an out-of-memory failure outranks an invalid configuration. */
static void note_failure(pool_t *q, int rc, int64_t c) {
    if (!q->rc || q->rc == EXIT_INPUT) q->rc = rc;
    if (rc == EXIT_INPUT && (q->failed_at < 0 || c < q->failed_at)) q->failed_at = c;
}

/* Without deliver: chunks of configurations, results kept by spec->run. */
static void run_chunks(pool_t *q, grid_worker_t *w) {
    const grid_run_spec_t *sp = q->sp;
    int rc = 0;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        int64_t from = q->rc ? sp->end : q->next;
        q->next = from + sp->chunk;
        pthread_mutex_unlock(&q->mu);
        if (from >= sp->end) break;
        int64_t to = from + sp->chunk < sp->end ? from + sp->chunk : sp->end;
        for (int64_t c = from; c < to && !rc; c++)
            if ((rc = sp->run(sp->ctx, w, c, NULL, NULL)) != 0) {
                pthread_mutex_lock(&q->mu);
                note_failure(q, rc, c);
                pthread_mutex_unlock(&q->mu);
            }
        if (rc) break;
    }
}

/* With deliver: one configuration at a time, at most a window ahead of the caller. */
static void run_ordered(pool_t *q, grid_worker_t *w) {
    const grid_run_spec_t *sp = q->sp;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->rc && q->next < sp->end && q->next >= q->written + q->window) {
            pthread_cond_broadcast(&q->done_cv); /* the caller may be waiting for a wake-up */
            q->space_waiters++;
            pthread_cond_wait(&q->space_cv, &q->mu);
            q->space_waiters--;
        }
        if (q->rc || q->next >= sp->end) break;
        int64_t c = q->next++;
        pthread_mutex_unlock(&q->mu);
        char *buf = NULL;
        size_t len = 0;
        int rc = sp->run(sp->ctx, w, c, &buf, &len);
        pthread_mutex_lock(&q->mu);
        if (rc) {
            free(buf);
            note_failure(q, rc, c);
            break;
        }
        slot_t *s = &q->slots[c % q->window];
        s->buf = buf, s->len = len, s->ready = 1;
        /* Waking the caller for every quick configuration costs more than
         * running it (--model-only): wake it at most every 20 ms, or when
         * half the window is waiting, or for the last configuration. */
        double t = now_s();
        if (t - q->last_wake >= 0.02 || c + 1 - q->written >= q->window / 2 || q->next >= sp->end) {
            q->last_wake = t;
            pthread_cond_broadcast(&q->done_cv);
        }
    }
    pthread_cond_broadcast(&q->done_cv);
    pthread_cond_broadcast(&q->space_cv);
    pthread_mutex_unlock(&q->mu);
}

static void *worker(void *arg) {
    pool_t *q = arg;
    grid_worker_t w = {.v = calloc(1, sizeof *w.v)};
    if (!w.v) {
        pthread_mutex_lock(&q->mu);
        note_failure(q, EXIT_RUNTIME, -1);
        pthread_cond_broadcast(&q->done_cv);
        pthread_mutex_unlock(&q->mu);
    } else if (q->sp->deliver) {
        run_ordered(q, &w);
    } else {
        run_chunks(q, &w);
    }
    assign_list_free(&w.sets);
    free(w.v);
    return NULL;
}

/* The caller's side with deliver: each configuration's bytes in order. */
static int deliver_in_order(pool_t *q) {
    const grid_run_spec_t *sp = q->sp;
    int rc = 0;
    for (int64_t c = sp->first; c < sp->end && !rc; c++) {
        pthread_mutex_lock(&q->mu);
        slot_t *s = &q->slots[c % q->window];
        while (!s->ready && !q->rc)
            pthread_cond_wait(&q->done_cv, &q->mu);
        if (!s->ready) {
            rc = q->rc;
            pthread_mutex_unlock(&q->mu);
            break;
        }
        slot_t got = *s;
        memset(s, 0, sizeof *s);
        q->written = c + 1;
        if (q->space_waiters) pthread_cond_broadcast(&q->space_cv);
        pthread_mutex_unlock(&q->mu);
        rc = sp->deliver(sp->ctx, c, got.buf, got.len);
        free(got.buf);
    }
    pthread_mutex_lock(&q->mu);
    if (rc && !q->rc) q->rc = rc;
    pthread_cond_broadcast(&q->space_cv);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

int grid_run(const grid_run_spec_t *sp, int64_t *failed_at) {
    pool_t q;
    memset(&q, 0, sizeof q);
    q.sp = sp;
    q.next = q.written = sp->first;
    q.failed_at = -1;
    *failed_at = -1;
    int64_t todo = sp->end - sp->first, per = sp->deliver || sp->chunk < 1 ? 1 : sp->chunk;
    int64_t want = (todo + per - 1) / per;
    int n = sp->threads < want ? sp->threads : (int)want;
    if (n < 1) n = 1;
    q.window = 16 * n;
    q.slots = sp->deliver ? calloc((size_t)q.window, sizeof *q.slots) : NULL;
    pthread_t *th = calloc((size_t)n, sizeof *th);
    if ((sp->deliver && !q.slots) || !th) {
        free(q.slots), free(th);
        return EXIT_RUNTIME;
    }
    pthread_mutex_init(&q.mu, NULL);
    pthread_cond_init(&q.done_cv, NULL);
    pthread_cond_init(&q.space_cv, NULL);
    int started = 0, rc = 0;
    for (; started < n && todo > 0; started++)
        if (pthread_create(&th[started], NULL, worker, &q)) break;
    if (started == 0 && todo > 0) {
        if (sp->deliver)
            rc = EXIT_RUNTIME;
        else
            worker(&q); /* no thread to be had: the work on this one */
    }
    if (!rc && sp->deliver) rc = deliver_in_order(&q);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (!rc) rc = q.rc;
    *failed_at = q.failed_at;
    for (int i = 0; sp->deliver && i < q.window; i++)
        free(q.slots[i].buf);
    pthread_cond_destroy(&q.done_cv);
    pthread_cond_destroy(&q.space_cv);
    pthread_mutex_destroy(&q.mu);
    free(q.slots);
    free(th);
    return rc;
}
