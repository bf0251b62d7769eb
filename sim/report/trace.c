/* trace: see trace.h. */
#include "trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "memory.h"
#include "out.h"
#include "report.h"

#ifndef STALLSIM_VERSION
#define STALLSIM_VERSION "0.0.0"
#endif

/* A counter's change: +1 when a request starts, -1 when it ends. */
typedef struct {
    double t;
    int counter, delta;
} tick_t;

/* A prep core (pool) or worker (pytorch) and the run of one batch's items on it. */
typedef struct {
    int stream, server, rank, worker; /* worker: -1 for a pool core */
    int tid;
    double free;     /* pool replica: when its last item ends */
    int open, epoch; /* a run is open */
    int64_t batch;
    double start, end, busy;
    int items;
} lane_t;

/* One iteration of a job instance in the window, until its epoch ends. */
typedef struct {
    int64_t batch;
    double idle, start, cpu, compute, lag, items;
} iter_rec_t;

typedef struct {
    iter_rec_t *rec;
    int n, cap;
    int epoch;
    double lag_before; /* the lag after the last iteration before the window */
    double tail_min;   /* least lag after the window, to the epoch's end */
} inst_t;

/* Per stream: this epoch's items and hits so far (the hit rate counter). */
typedef struct {
    int epoch;
    double items, hits;
} stream_acct_t;

struct trace {
    FILE *f;
    out_json_t j; /* the file, compact */
    trace_window_t w;
    int pid;
    sim_observer_t obs;
    const variant_run_t *v;
    int pool; /* the loader's workers read asynchronously (a pool of cores) */
    int workers;
    int64_t cur_batch[2]; /* the batch being run: stream, batch */
    int cur_worker, cur_in_window;
    lane_t *lanes;
    int nlanes, caplanes;
    tick_t *ticks;
    size_t nticks, capticks;
    inst_t *inst;
    stream_acct_t *acct;
    int nstreams;
    int mem; /* the scenario counts memory (memory_shown): a memory track per server */
    int failed;
};

static int in_epochs(const trace_t *t, int epoch) {
    return epoch + 1 >= t->w.epoch_lo && epoch + 1 <= t->w.epoch_hi;
}

static int in_window(const trace_t *t, int epoch, int64_t batch) {
    return in_epochs(t, epoch) && batch + 1 >= t->w.iter_lo && batch + 1 <= t->w.iter_hi;
}

int trace_parse_range(const char *s, int64_t *lo, int64_t *hi) {
    if (strcmp(s, "all") == 0) {
        *lo = 1, *hi = TRACE_ALL;
        return 0;
    }
    char *end;
    long long a = strtoll(s, &end, 10), b = a;
    if (end == s || a < 1) return -1;
    if (*end == '-') {
        const char *p = end + 1;
        b = strtoll(p, &end, 10);
        if (end == p || b < a) return -1;
    }
    if (*end) return -1;
    *lo = a, *hi = b;
    return 0;
}

/* ---- writing events ---- */

/* An event: an object on its own line in "traceEvents". */
static out_json_t *begin_event(trace_t *t, const char *ph, int tid) {
    out_json_t *j = &t->j;
    out_jbreak(j, "\n");
    out_jobj(j, NULL);
    out_jstr(j, "ph", ph);
    out_jint(j, "pid", t->pid);
    out_jint(j, "tid", tid);
    return j;
}

static void put_us(out_json_t *j, const char *key, double seconds) {
    out_jnum(j, key, "%.3f", seconds * 1e6);
}

static void meta_name(trace_t *t, const char *what, int tid, const char *name) {
    out_json_t *j = begin_event(t, "M", tid);
    out_jint(j, "ts", 0);
    out_jstr(j, "name", what);
    out_jobj(j, "args");
    out_jstr(j, "name", name);
    out_jend(j);
    out_jend(j);
}

static void meta_sort(trace_t *t, const char *what, int tid, int index) {
    out_json_t *j = begin_event(t, "M", tid);
    out_jint(j, "ts", 0);
    out_jstr(j, "name", what);
    out_jobj(j, "args");
    out_jint(j, "sort_index", index);
    out_jend(j);
    out_jend(j);
}

/* A complete event's args: the batch (1-based) of an epoch, and the
 * items and busy seconds where it has them (< 0: not). */
typedef struct {
    int epoch;
    long long batch;
    double items, busy_s;
} slice_args_t;

/* A complete event ("X"). */
static void slice(trace_t *t, int tid, const char *name, const char *cat, double ts, double dur,
                  const slice_args_t *a) {
    if (dur < 0) dur = 0;
    out_json_t *j = begin_event(t, "X", tid);
    out_jstr(j, "name", name);
    out_jstr(j, "cat", cat);
    put_us(j, "ts", ts);
    put_us(j, "dur", dur);
    out_jobj(j, "args");
    out_jint(j, "epoch", a->epoch);
    out_jint(j, "batch", a->batch);
    if (a->items >= 0) out_jnum(j, "items", "%.0f", a->items);
    if (a->busy_s >= 0) out_jnum(j, "busy_s", "%.9g", a->busy_s);
    out_jend(j);
    out_jend(j);
}

/* A counter event ("C") of n series. */
static void counters(trace_t *t, const char *name, double ts, int n, const char *const *key,
                     const double *value) {
    out_json_t *j = begin_event(t, "C", 0);
    out_jstr(j, "name", name);
    put_us(j, "ts", ts);
    out_jobj(j, "args");
    for (int i = 0; i < n; i++)
        out_jnum(j, key[i], "%.9g", value[i]);
    out_jend(j);
    out_jend(j);
}

static void counter(trace_t *t, const char *name, double ts, const char *key, double value) {
    counters(t, name, ts, 1, &key, &value);
}

/* ---- the memory track ---- */

/* Server sv's memory (MiB): its processes at their peak from the start
 * (memory.h: the training processes, their workers, /dev/shm, a cache in
 * the loader), and the cache's bytes held so far (page cache or the
 * loader's), one counter track of stacked series. */
static void memory_counter(trace_t *t, int sv, double ts, double cache_used) {
    const memory_parts_t m = memory_peak(&t->v->scn, &t->v->topo, sv);
    static const char *const keys[] = {"training processes", "workers", "/dev/shm", "cache"};
    const double mib[] = {m.processes / MIB, m.workers / MIB, m.shm / MIB, cache_used / MIB};
    char name[64];
    snprintf(name, sizeof name, "memory of server %d: MiB", sv + 1);
    counters(t, name, ts, 4, keys, mib);
}

/* Each server that runs a training process, at the variant's start. */
static void memory_start(trace_t *t) {
    const topology_t *tp = &t->v->topo;
    for (int sv = 0; sv < (int)t->v->scn.server.count; sv++)
        for (int i = 0; i < tp->ninst; i++)
            if (sv >= tp->inst[i].first_server &&
                sv < tp->inst[i].first_server + tp->inst[i].nservers) {
                memory_counter(t, sv, 0, 0);
                break;
            }
}

/* ---- counters of requests in flight ---- */

enum { CTR_STORAGE, CTR_TIER, CTR_NIC, CTR_KINDS };
static const char *const ctr_name[] = {"storage %d: requests in flight",
                                       "tier %d: requests in flight",
                                       "NIC of server %d: transfers in flight"};

static void tick(trace_t *t, int kind, int device, double at, int delta) {
    if (t->nticks == t->capticks) {
        size_t cap = t->capticks ? 2 * t->capticks : 4096;
        tick_t *n = realloc(t->ticks, cap * sizeof *n);
        if (!n) {
            t->failed = 1;
            return;
        }
        t->ticks = n, t->capticks = cap;
    }
    t->ticks[t->nticks++] = (tick_t){at, device * CTR_KINDS + kind, delta};
}

static int tick_cmp(const void *a, const void *b) {
    const tick_t *x = a, *y = b;
    if (x->counter != y->counter) return x->counter < y->counter ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->delta > y->delta) - (x->delta < y->delta); /* ends first at a tie */
}

static void flush_ticks(trace_t *t) {
    qsort(t->ticks, t->nticks, sizeof *t->ticks, tick_cmp);
    int level = 0;
    for (size_t i = 0; i < t->nticks; i++) {
        const tick_t *k = &t->ticks[i];
        if (i == 0 || k->counter != t->ticks[i - 1].counter) level = 0;
        level += k->delta;
        /* One value per instant: the level after all its changes. */
        if (i + 1 < t->nticks && t->ticks[i + 1].counter == k->counter && t->ticks[i + 1].t == k->t)
            continue;
        char name[96];
        snprintf(name, sizeof name, ctr_name[k->counter % CTR_KINDS], k->counter / CTR_KINDS + 1);
        counter(t, name, k->t, "requests", level);
    }
    t->nticks = 0;
}

/* ---- prep lanes ---- */

static void close_run(trace_t *t, lane_t *l) {
    if (!l->open) return;
    const slice_args_t args = {l->epoch + 1, (long long)l->batch + 1, l->items, l->busy};
    char name[48];
    snprintf(name, sizeof name, "batch %lld", (long long)l->batch + 1);
    slice(t, l->tid, name, "prep", l->start, l->end - l->start, &args);
    l->open = 0;
}

static lane_t *new_lane(trace_t *t, int stream, int server, int rank, int worker) {
    if (t->nlanes == t->caplanes) {
        int cap = t->caplanes ? 2 * t->caplanes : 64;
        lane_t *n = realloc(t->lanes, (size_t)cap * sizeof *n);
        if (!n) {
            t->failed = 1;
            return NULL;
        }
        t->lanes = n, t->caplanes = cap;
    }
    lane_t *l = &t->lanes[t->nlanes];
    memset(l, 0, sizeof *l);
    l->stream = stream, l->server = server, l->rank = rank, l->worker = worker;
    l->tid = 1000 + t->nlanes++;
    int k = 0; /* its number among its stream's lanes of that server or rank */
    for (int i = 0; i < t->nlanes - 1; i++)
        k += t->lanes[i].stream == stream && t->lanes[i].server == server &&
             t->lanes[i].rank == rank;
    char name[128];
    const char *job = "";
    for (int i = t->v->topo.ninst - 1; i >= 0; i--)
        if (t->v->topo.inst[i].stream == stream) job = t->v->topo.inst[i].name;
    if (worker < 0)
        snprintf(name, sizeof name, "prep core %d, server %d (%s)", k + 1, server + 1, job);
    else if (t->workers == 0)
        snprintf(name, sizeof name, "rank %d training process (%s)", rank, job);
    else
        snprintf(name, sizeof name, "rank %d worker %d (%s)", rank, worker, job);
    meta_name(t, "thread_name", l->tid, name);
    meta_sort(t, "thread_sort_index", l->tid, l->tid);
    return l;
}

/* The core the pool gave the item: its earliest-free core then (a replica
 * of loader_pool's choice, grown as the window needs cores). */
static lane_t *pool_lane(trace_t *t, const sim_item_t *it) {
    double start = it->prep_end - it->prep_s;
    double slack = 1e-9 * (fabs(start) > 1 ? fabs(start) : 1);
    lane_t *best = NULL;
    for (int i = 0; i < t->nlanes; i++) {
        lane_t *l = &t->lanes[i];
        if (l->stream == it->stream && l->server == it->server && (!best || l->free < best->free))
            best = l;
    }
    if (!best || best->free > start + slack) best = new_lane(t, it->stream, it->server, -1, -1);
    return best;
}

static lane_t *worker_lane(trace_t *t, const sim_item_t *it) {
    int wk =
        t->workers > 0 ? (t->cur_worker >= 0 ? t->cur_worker : (int)(it->batch % t->workers)) : 0;
    for (int i = 0; i < t->nlanes; i++) {
        lane_t *l = &t->lanes[i];
        if (l->stream == it->stream && l->rank == it->rank && l->worker == wk) return l;
    }
    return new_lane(t, it->stream, -1, it->rank, wk);
}

/* ---- the observer ---- */

static void on_batch(void *ctx, const sim_batch_t *b) {
    trace_t *t = ctx;
    stream_acct_t *a = &t->acct[b->stream];
    if (a->epoch != b->epoch) a->epoch = b->epoch, a->items = a->hits = 0;
    t->cur_worker = b->worker;
    t->cur_in_window = in_window(t, b->epoch, b->batch);
    /* The window's batches, and the one after it: the hit rate at its end. */
    if (!t->cur_in_window && !in_window(t, b->epoch, b->batch - 1)) return;
    char name[160];
    const char *job = t->v->topo.inst[b->inst[0]].name;
    if (a->items > 0) {
        snprintf(name, sizeof name, "hit rate so far in the epoch (%s)", job);
        counter(t, name, b->issue, "hit_rate", a->hits / a->items);
    }
    if (!t->cur_in_window) return;
    snprintf(name, sizeof name, "staged batches (%s)", job);
    counter(t, name, b->issue, "batches", b->staged);
}

static void on_cache(void *ctx, int server, double at, double used, double capacity) {
    trace_t *t = ctx;
    (void)capacity;
    if (!t->cur_in_window) return;
    char name[64];
    snprintf(name, sizeof name, "cache of server %d: GB held", server + 1);
    counter(t, name, at, "GB", used / 1e9);
    if (t->mem) memory_counter(t, server, at, used);
}

static void on_item(void *ctx, const sim_item_t *it) {
    trace_t *t = ctx;
    stream_acct_t *a = &t->acct[it->stream];
    a->items++;
    a->hits += it->source == SIM_FROM_CACHE || it->source == SIM_FROM_REMOTE;
    if (!t->cur_in_window) return;
    if (it->req_end > 0) {
        int kind = it->source == SIM_FROM_REMOTE ? CTR_NIC
                   : it->source == SIM_FROM_TIER ? CTR_TIER
                                                 : CTR_STORAGE;
        int dev = kind == CTR_NIC ? it->server : it->device;
        tick(t, kind, dev, it->issue, 1);
        tick(t, kind, dev, it->req_end, -1);
    }
    lane_t *l = t->pool ? pool_lane(t, it) : worker_lane(t, it);
    if (!l) return;
    double start = it->prep_end - it->prep_s;
    if (t->pool) l->free = it->prep_end;
    if (l->open && (l->batch != it->batch || l->epoch != it->epoch)) close_run(t, l);
    if (!l->open) {
        l->open = 1, l->epoch = it->epoch, l->batch = it->batch;
        /* A worker's batch starts with its first read; a core's with its first prep. */
        l->start = t->pool ? start : it->issue;
        l->busy = 0, l->items = 0;
    }
    l->end = it->prep_end;
    l->busy += it->prep_s;
    l->items++;
}

static int push_iter(inst_t *in, const iter_rec_t *r) {
    if (in->n == in->cap) {
        int cap = in->cap ? 2 * in->cap : 64;
        iter_rec_t *n = realloc(in->rec, (size_t)cap * sizeof *n);
        if (!n) return -1;
        in->rec = n, in->cap = cap;
    }
    in->rec[in->n++] = *r;
    return 0;
}

/* The epoch's iterations in the window on the GPU track, their waits split
 * (trace.h): fetch stall F(i) = max(0, least lag from i to the epoch's end),
 * never decreasing, each wait its increment; the rest of the wait prep. */
static void flush_gpu(trace_t *t, int inst, inst_t *in) {
    double run_min = in->tail_min;
    for (int i = in->n - 1; i >= 0; i--) {
        if (in->rec[i].lag < run_min) run_min = in->rec[i].lag;
        in->rec[i].lag = run_min > 0 ? run_min : 0; /* now F(i) */
    }
    double before = in->lag_before;
    if (in->n > 0 && in->rec[0].lag < before) before = in->rec[0].lag;
    double F_prev = before > 0 ? before : 0;
    int tid = 1 + inst;
    for (int i = 0; i < in->n; i++) {
        const iter_rec_t *r = &in->rec[i];
        double wait = r->start - r->idle;
        double fetch = r->lag - F_prev;
        F_prev = r->lag;
        if (fetch < 0) fetch = 0;
        if (fetch > wait) fetch = wait;
        const slice_args_t args = {in->epoch + 1, (long long)r->batch + 1, -1, -1};
        if (fetch > 0) slice(t, tid, "wait: fetch", "stall.fetch", r->idle, fetch, &args);
        if (wait - fetch > 0)
            slice(t, tid, "wait: prep", "stall.prep", r->idle + fetch, wait - fetch, &args);
        if (r->cpu > 0) slice(t, tid, "CPU step", "stall.prep", r->start, r->cpu, &args);
        const slice_args_t cargs = {in->epoch + 1, (long long)r->batch + 1, r->items, -1};
        char name[48];
        snprintf(name, sizeof name, "compute batch %lld", (long long)r->batch + 1);
        slice(t, tid, name, "gpu", r->start + r->cpu, r->compute, &cargs);
    }
    in->n = 0;
}

static void on_iteration(void *ctx, const sim_iter_t *it) {
    trace_t *t = ctx;
    inst_t *in = &t->inst[it->inst];
    if (!in_epochs(t, it->epoch)) return;
    if (in->epoch != it->epoch) {
        in->epoch = it->epoch, in->n = 0;
        in->lag_before = 0, in->tail_min = INFINITY;
    }
    double end = it->start + it->cpu_s + it->compute_s;
    double end_mem = it->start_mem + it->cpu_mem_s + it->compute_s;
    double lag = (end - it->ep_start) - (end_mem - it->ep_start_mem);
    if (it->batch + 1 < t->w.iter_lo) {
        in->lag_before = lag;
    } else if (it->batch + 1 > t->w.iter_hi) {
        if (lag < in->tail_min) in->tail_min = lag;
    } else {
        iter_rec_t r = {it->batch, it->idle, it->start, it->cpu_s, it->compute_s, lag, it->items};
        if (push_iter(in, &r)) t->failed = 1;
    }
    if (it->last) flush_gpu(t, it->inst, in);
}

/* ---- the file ---- */

/* "lo-hi" or "lo-all": an epoch or iteration window. */
static void put_range(out_json_t *j, const char *key, int64_t lo, int64_t hi) {
    char r[64];
    if (hi == TRACE_ALL)
        snprintf(r, sizeof r, "%lld-all", (long long)lo);
    else
        snprintf(r, sizeof r, "%lld-%lld", (long long)lo, (long long)hi);
    out_jstr(j, key, r);
}

trace_t *trace_open(FILE *out, const trace_window_t *w, const char *scenario_path) {
    trace_t *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->f = out;
    t->w = *w;
    t->obs = (sim_observer_t){t, on_batch, on_cache, on_item, on_iteration};
    out_json_t *j = &t->j;
    out_json_begin(j, out);
    j->compact = 1;
    out_jobj(j, NULL);
    out_jstr(j, "displayTimeUnit", "ms");
    out_jobj(j, "otherData");
    out_jstr(j, "generator", "stallsim " STALLSIM_VERSION);
    out_jstr(j, "scenario", scenario_path);
    put_range(j, "epochs", w->epoch_lo, w->epoch_hi);
    put_range(j, "iterations", w->iter_lo, w->iter_hi);
    out_jstr(j, "clock", "simulated, microseconds from the run's start");
    out_jend(j);
    out_jbreak(j, "\n");
    out_jarr(j, "traceEvents");
    return t;
}

const sim_observer_t *trace_variant(trace_t *t, const variant_run_t *v) {
    t->pid++;
    t->v = v;
    t->pool = !scenario_loader(&v->scn)->sync_reads;
    const loader_ops_t *l = scenario_loader(&v->scn);
    t->workers = l->worker_procs ? (int)l->worker_procs(&v->scn) : 0;
    t->nlanes = 0;
    t->nticks = 0;
    t->nstreams = v->topo.ninst; /* streams are at most the instances */
    t->mem = memory_shown(&v->scn);
    t->inst = calloc((size_t)v->topo.ninst, sizeof *t->inst);
    t->acct = calloc((size_t)v->topo.ninst, sizeof *t->acct);
    if (!t->inst || !t->acct) {
        t->failed = 1;
        return NULL;
    }
    for (int i = 0; i < v->topo.ninst; i++)
        t->inst[i].epoch = -1, t->acct[i].epoch = -1;
    char name[160];
    snprintf(name, sizeof name, "variant %s", v->scn.variant);
    meta_name(t, "process_name", 0, name);
    meta_sort(t, "process_sort_index", 0, t->pid);
    for (int i = 0; i < v->topo.ninst; i++) {
        const instance_t *in = &v->topo.inst[i];
        const job_t *j = &v->scn.jobs[in->job];
        snprintf(name, sizeof name, "GPUs of %s (%lld GPU%s, server%s %d%s)", in->name,
                 (long long)j->gpus, j->gpus == 1 ? "" : "s", in->nservers > 1 ? "s" : "",
                 in->first_server + 1, in->nservers > 1 ? "+" : "");
        meta_name(t, "thread_name", 1 + i, name);
        meta_sort(t, "thread_sort_index", 1 + i, 1 + i);
    }
    if (t->mem) memory_start(t);
    return &t->obs;
}

int trace_variant_end(trace_t *t) {
    for (int i = 0; i < t->nlanes; i++)
        close_run(t, &t->lanes[i]);
    flush_ticks(t);
    for (int i = 0; t->inst && i < t->v->topo.ninst; i++)
        free(t->inst[i].rec);
    free(t->inst), free(t->acct);
    t->inst = NULL, t->acct = NULL;
    return t->failed ? -1 : 0;
}

int trace_close(trace_t *t) {
    out_jbreak(&t->j, "\n");
    out_jend(&t->j);
    out_jend(&t->j);
    fputc('\n', t->f);
    int rc = t->failed || ferror(t->f) ? -1 : 0;
    free(t->lanes), free(t->ticks);
    free(t);
    return rc;
}
