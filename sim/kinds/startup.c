/* startup: see startup.h. */
#include "startup.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "diag.h"
#include "kinds.h"
#include "storage.h"

/* A ListObjectsV2 page's XML is about 350 bytes a key (key, ETag, size,
 * date, storage class), 1000 keys a page. */
#define LIST_KEY_BYTES 350.0
#define LIST_PAGE_KEYS 1000.0

void startup_plan(const scenario_t *s, startup_plan_t *p) {
    p->objects = ceil((double)s->dataset.items / scenario_items_per_read(s));
    p->pages = s->startup.list ? ceil(p->objects / LIST_PAGE_KEYS) : 0;
    p->metadata = s->startup.metadata_mb > 0 ? 1 : 0;
    p->heads = s->startup.head_each ? p->objects : 0;
    p->page_bytes = LIST_KEY_BYTES * fmin(p->objects, LIST_PAGE_KEYS);
}

int64_t startup_resolvers(const scenario_t *s, const topology_t *t, int i) {
    const int64_t ranks = (int64_t)t->inst[i].gpus_per_server * t->inst[i].nservers;
    const loader_ops_t *l = scenario_loader(s);
    const int64_t w = l->worker_procs ? l->worker_procs(s) : 0;
    switch (s->startup.resolve) {
    case RESOLVE_ONE_RANK:
        return 1;
    case RESOLVE_EVERY_RANK:
        return ranks;
    case RESOLVE_EVERY_WORKER:
        return ranks * (w > 0 ? w : 1);
    default:
        return 0;
    }
}

/* The server of an instance's resolver r: ranks in order over its servers,
 * a rank's workers on its server. */
static int resolver_server(const scenario_t *s, const topology_t *t, int i, int64_t r) {
    const instance_t *in = &t->inst[i];
    const int64_t ranks = (int64_t)in->gpus_per_server * in->nservers;
    const int64_t per_rank = startup_resolvers(s, t, i) / (ranks > 0 ? ranks : 1);
    const int64_t rank = per_rank > 0 ? r / per_rank : 0;
    return in->first_server + (int)(rank / in->gpus_per_server);
}

static double cap_of(const scenario_t *s, const storage_ops_t *ops) {
    return ops->request_cap_s ? ops->request_cap_s(s) : s->server.storage.read_iops;
}

/* ---- the closed form ---- */

/* A device's bound between this share of one resolver's time alone and its
 * inverse: neither alone nor the device sets the pace (approximate). */
#define CONTEND 0.5

static double req_s(const scenario_t *s, const storage_ops_t *ops, double bytes) {
    return ops->request_s ? ops->request_s(s, bytes) : ops->service_s(s, bytes);
}

/* Every device's requests and busy seconds, each resolver adding its own. */
typedef struct {
    double requests, work, xfer;
} dev_load_t;

static void model_loads(const scenario_t *s, const topology_t *t, const startup_plan_t *p,
                        dev_load_t *dev) {
    const storage_ops_t *ops = scenario_storage(s);
    const double per = p->pages + p->metadata + p->heads;
    const double work = p->pages * req_s(s, ops, p->page_bytes) +
                        p->metadata * req_s(s, ops, s->startup.metadata_mb * 1e6) +
                        p->heads * req_s(s, ops, 0);
    const double xfer = p->pages * ops->xfer_s(s, p->page_bytes) +
                        p->metadata * ops->xfer_s(s, s->startup.metadata_mb * 1e6);
    for (int i = 0; i < t->ninst; i++)
        for (int64_t r = 0, n = startup_resolvers(s, t, i); r < n; r++) {
            dev_load_t *d = &dev[s->server.storage.shared ? 0 : resolver_server(s, t, i, r)];
            d->requests += per, d->work += work, d->xfer += xfer;
        }
}

/* One resolver alone: its pages in turn, the rest `threads` at once; then
 * each device it uses at its cap, its channel and its request slots. Jobs
 * that share a device each get all of its work: their requests interleave,
 * so each ends near the last (the launch's end is what the bound holds). */
void startup_model(const scenario_t *s, const topology_t *t, startup_t *out) {
    const storage_ops_t *ops = scenario_storage(s);
    startup_plan_t p;
    startup_plan(s, &p);
    const int ndev = s->server.storage.shared ? 1 : (int)s->server.count;
    dev_load_t *dev = calloc((size_t)ndev, sizeof *dev);
    if (dev) model_loads(s, t, &p, dev);
    /* A resolver's requests go on connections of its own where the kind's
     * slots are connections; a device's queue they share. */
    const double th = (double)s->startup.threads, cap = cap_of(s, ops);
    const double slots = ops->slots_are_connections ? 0 : ops->slots(s);
    /* the requests after the listing in rounds of `threads`, the index's
     * longer one among them */
    const double t0 = req_s(s, ops, 0), tm = req_s(s, ops, s->startup.metadata_mb * 1e6);
    const double alone = p.pages * req_s(s, ops, p.page_bytes) +
                         ceil((p.metadata + p.heads) / th) * t0 + p.metadata * (tm - t0);
    const double per = p.pages + p.metadata + p.heads;
    const int inexact = ops->position_dependent || (ops->model_exact && !ops->model_exact(s));
    for (int i = 0; i < t->ninst; i++) {
        startup_t *o = &out[i];
        const int64_t n = startup_resolvers(s, t, i);
        *o = (startup_t){.approximate = inexact};
        if (n == 0) continue;
        o->requests = (double)n * per;
        o->seconds = alone;
        for (int64_t r = 0; dev && r < n; r++) {
            const dev_load_t *d = &dev[s->server.storage.shared ? 0 : resolver_server(s, t, i, r)];
            const double by_cap = cap > 0 ? d->requests / cap : 0;
            const double by_slots = slots > 0 ? d->work / slots : 0;
            const double shared = fmax(by_slots, d->xfer);
            if (by_cap > o->seconds) o->seconds = by_cap, o->approximate = 1;
            /* Resolvers that contend for a device about as long as each
             * takes alone queue behind each other: the larger bound is then
             * short of the simulator's interleaving. */
            if (d->requests > per + 0.5 && shared > CONTEND * alone && shared < alone / CONTEND)
                o->approximate = 1;
            o->seconds = fmax(o->seconds, shared);
        }
    }
    free(dev);
}

/* ---- the simulator ---- */

/* A resolver's thread, keyed by when it sends its next request. */
typedef struct {
    double at;
    int32_t res;
} slot_t;

typedef struct {
    int inst, dev;
    double next; /* requests sent */
    double done; /* its last answer */
    int listing; /* still on its LIST pages (one thread) */
} resolver_t;

static void heap_down(slot_t *h, int64_t n, int64_t i) {
    const slot_t v = h[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1].at < h[c].at) c++;
        if (h[c].at >= v.at) break;
        h[i] = h[c], i = c;
    }
    h[i] = v;
}

static void heap_up(slot_t *h, int64_t i) {
    const slot_t v = h[i];
    while (i > 0 && h[(i - 1) / 2].at > v.at) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = v;
}

typedef struct {
    const scenario_t *s;
    const storage_ops_t *ops;
    startup_plan_t p;
    storage_t *dev;
    resolver_t *res;
    io_acct_t *acct; /* per instance */
    slot_t *heap;
    int64_t nres, nheap;
} replay_t;

/* Resolver r's next request at `at`: which it is, its bytes and the object
 * it names (its prefix); returns when its answer arrives. */
static double send(replay_t *x, resolver_t *r, double at) {
    const startup_plan_t *p = &x->p;
    const double k = r->next++,
                 key = scenario_item_bytes_mean(x->s) * scenario_items_per_read(x->s);
    double bytes = 0, object = 0;
    if (k < p->pages)
        bytes = p->page_bytes, object = k * LIST_PAGE_KEYS;
    else if (k < p->pages + p->metadata)
        bytes = x->s->startup.metadata_mb * 1e6;
    else
        object = k - p->pages - p->metadata;
    storage_t *d = &x->dev[r->dev];
    io_acct_t *a = &x->acct[r->inst];
    if (d->ops->request) return d->ops->request(d, at, bytes, object * key, 0, a);
    return d->ops->read(d, at, bytes, object * key, 0, a);
}

static void replay(replay_t *x) {
    const double per = x->p.pages + x->p.metadata + x->p.heads;
    const int64_t th = x->s->startup.threads;
    while (x->nheap > 0) {
        slot_t top = x->heap[0];
        resolver_t *r = &x->res[top.res];
        if (r->next >= per) { /* this thread is done */
            x->heap[0] = x->heap[--x->nheap];
            if (x->nheap > 0) heap_down(x->heap, x->nheap, 0);
            continue;
        }
        const double end = send(x, r, top.at);
        if (end > r->done) r->done = end;
        x->heap[0].at = end;
        heap_down(x->heap, x->nheap, 0);
        if (r->listing && r->next >= x->p.pages) {
            /* the listing is done: the rest goes `threads` at once */
            r->listing = 0;
            for (int64_t k = 1; k < th; k++) {
                x->heap[x->nheap] = (slot_t){end, top.res};
                heap_up(x->heap, x->nheap++);
            }
        }
    }
}

static int replay_build(replay_t *x, const topology_t *t) {
    const scenario_t *s = x->s;
    const int ndev = s->server.storage.shared ? 1 : (int)s->server.count;
    x->dev = calloc((size_t)ndev, sizeof *x->dev);
    x->acct = calloc((size_t)t->ninst, sizeof *x->acct);
    x->res = calloc((size_t)x->nres, sizeof *x->res);
    x->heap = calloc((size_t)x->nres * (size_t)s->startup.threads, sizeof *x->heap);
    if (!x->dev || !x->acct || !x->res || !x->heap) return -1;
    for (int v = 0; v < ndev; v++) {
        x->dev[v].ops = x->ops, x->dev[v].unordered = 0;
        if (x->ops->init(&x->dev[v], s) != 0) return -1;
    }
    int64_t k = 0;
    for (int i = 0; i < t->ninst; i++)
        for (int64_t r = 0, n = startup_resolvers(s, t, i); r < n; r++, k++) {
            const int v = s->server.storage.shared ? 0 : resolver_server(s, t, i, r);
            x->res[k] = (resolver_t){.inst = i, .dev = v, .listing = x->p.pages > 0};
            x->heap[k] = (slot_t){0, (int32_t)k};
        }
    x->nheap = k;
    /* a resolver with no pages starts its threads at once */
    for (int64_t r = 0; r < k; r++)
        for (int64_t j = 1; !x->res[r].listing && j < s->startup.threads; j++)
            x->heap[x->nheap++] = (slot_t){0, (int32_t)r};
    return 0;
}

static void replay_free(replay_t *x) {
    const int ndev = x->s->server.storage.shared ? 1 : (int)x->s->server.count;
    for (int v = 0; x->dev && v < ndev; v++)
        if (x->dev[v].state) x->ops->destroy(&x->dev[v]);
    free(x->dev), free(x->acct), free(x->res), free(x->heap);
}

int startup_sim(const scenario_t *s, const topology_t *t, startup_t *out) {
    replay_t x = {.s = s, .ops = scenario_storage(s)};
    startup_plan(s, &x.p);
    for (int i = 0; i < t->ninst; i++)
        x.nres += startup_resolvers(s, t, i);
    const double total = (double)x.nres * (x.p.pages + x.p.metadata + x.p.heads);
    if (x.nres == 0 || total > STARTUP_SIM_MAX) {
        startup_model(s, t, out);
        for (int i = 0; x.nres > 0 && i < t->ninst; i++)
            out[i].approximate = 1;
        return 0;
    }
    if (replay_build(&x, t) != 0) {
        replay_free(&x);
        diag_error((src_pos_t){0}, "out of memory for the start-up phase's %.0f resolvers",
                   (double)x.nres);
        return EXIT_RUNTIME;
    }
    replay(&x);
    for (int i = 0; i < t->ninst; i++)
        out[i] = (startup_t){.throttled = x.acct[i].retries};
    for (int64_t r = 0; r < x.nres; r++) {
        startup_t *o = &out[x.res[r].inst];
        o->requests += x.res[r].next;
        if (x.res[r].done > o->seconds) o->seconds = x.res[r].done;
    }
    replay_free(&x);
    return 0;
}

int startup_resume_scenario(const scenario_t *s, scenario_t *skip) {
    if (s->startup.resume_by != RESUME_SKIP || !(s->startup.resume_at > 0)) return 0;
    *skip = *s;
    skip->epochs = 1;
    skip->dataset.items = (int64_t)ceil(s->startup.resume_at * (double)s->dataset.items);
    skip->startup.resolve = RESOLVE_NONE;
    skip->startup.resume_at = 0;
    for (int j = 0; j < skip->njobs; j++) {
        /* no step: the GPUs take each batch at once */
        job_t *jb = &skip->jobs[j];
        jb->gpu_items_per_s = 0, jb->compute_s_per_batch = 1e-9, jb->train_cpu_ms = 0;
    }
    return 1;
}

void startup_resume_into(run_metrics_t *r, const run_metrics_t *skip) {
    for (int i = 0; i < r->ninst; i++)
        metrics_at(r, i, 0)->resume_s = metrics_at(skip, i, 0)->epoch_s;
}

void startup_into(run_metrics_t *r, const startup_t *st) {
    for (int i = 0; i < r->ninst; i++) {
        epoch_metrics_t *m = metrics_at(r, i, 0);
        m->startup_s = st[i].seconds;
        m->startup_requests = st[i].requests;
        m->startup_throttled = st[i].throttled;
        m->startup_approximate = st[i].approximate;
    }
}
