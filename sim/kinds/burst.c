/* burst: see burst.h. */
#include "burst.h"

#include <math.h>
#include <stdlib.h>

#include "diag.h"
#include "kinds.h"
#include "storage.h"

/* A device's bound between this share of one sender's time alone and its
 * inverse: neither alone nor the device sets the pace (approximate). */
#define CONTEND 0.5

static double per_sender(const burst_plan_t *p) {
    return p->pages + p->bodies + p->heads;
}

/* The server of an instance's sender r. */
static int sender_server(const topology_t *t, int i, const burst_who_t *w, int64_t r) {
    const instance_t *in = &t->inst[i];
    const int64_t rank = w->per_rank > 0 ? r / w->per_rank : 0;
    return in->first_server + (int)(rank / in->gpus_per_server);
}

static int device_of(const scenario_t *s, const topology_t *t, int i, const burst_who_t *w,
                     int64_t r) {
    return s->server.storage.shared ? 0 : sender_server(t, i, w, r);
}

static int ndevices(const scenario_t *s) {
    return s->server.storage.shared ? 1 : (int)s->server.count;
}

static double cap_of(const scenario_t *s, const storage_ops_t *ops) {
    return ops->request_cap_s ? ops->request_cap_s(s) : s->server.storage.read_iops;
}

static double chan_s(const scenario_t *s, const storage_ops_t *ops, double bytes) {
    return ops->channel_s ? ops->channel_s(s, bytes) : ops->xfer_s(s, bytes);
}

static double req_s(const scenario_t *s, const storage_ops_t *ops, double bytes) {
    return ops->request_s ? ops->request_s(s, bytes) : ops->service_s(s, bytes);
}

/* A plan's bodies: its writes through the kind's write path, where it has one. */
static double body_s(const scenario_t *s, const storage_ops_t *ops, const burst_plan_t *p) {
    if (p->write && ops->write_s) return ops->write_s(s, p->body_bytes);
    return req_s(s, ops, p->body_bytes);
}

static double body_chan_s(const scenario_t *s, const storage_ops_t *ops, const burst_plan_t *p) {
    if (p->write && ops->write_channel_s) return ops->write_channel_s(s, p->body_bytes);
    return chan_s(s, ops, p->body_bytes);
}

/* Seconds a device's requests take at its caps: one cap for every request,
 * or the writes' own (an object store's PUT rate) beside the reads'. */
static double by_caps(const scenario_t *s, const storage_ops_t *ops, double reads, double writes) {
    const double cap = cap_of(s, ops);
    if (!ops->write_cap_s) return cap > 0 ? (reads + writes) / cap : 0;
    const double wcap = ops->write_cap_s(s);
    return fmax(cap > 0 ? reads / cap : 0, wcap > 0 ? writes / wcap : 0);
}

/* ---- the closed form ---- */

typedef struct {
    double requests, writes, work, xfer; /* writes: of the requests */
} dev_load_t;

static void model_loads(const scenario_t *s, const topology_t *t, const burst_plan_t *plan,
                        const burst_who_t *who, dev_load_t *dev) {
    const storage_ops_t *ops = scenario_storage(s);
    for (int i = 0; i < t->ninst; i++) {
        const burst_plan_t *p = &plan[i];
        const double work = p->pages * req_s(s, ops, p->page_bytes) +
                            p->bodies * body_s(s, ops, p) + p->heads * req_s(s, ops, 0);
        const double xfer =
            p->pages * chan_s(s, ops, p->page_bytes) + p->bodies * body_chan_s(s, ops, p);
        for (int64_t r = 0; r < who[i].senders; r++) {
            dev_load_t *d = &dev[device_of(s, t, i, &who[i], r)];
            d->requests += per_sender(p), d->work += work, d->xfer += xfer;
            d->writes += p->write ? p->bodies : 0;
        }
    }
}

/* One sender alone: its pages in turn, then its bodies and HEADs in rounds
 * of `threads`, a body's round as long as a body. */
static double alone_s(const scenario_t *s, const storage_ops_t *ops, const burst_plan_t *p) {
    const double th = (double)p->threads, t0 = req_s(s, ops, 0);
    const double tb = body_s(s, ops, p);
    return p->pages * req_s(s, ops, p->page_bytes) + ceil((p->bodies + p->heads) / th) * t0 +
           ceil(p->bodies / th) * (tb - t0);
}

/* Instance i: alone, then each device its senders use at its cap, its
 * channel and its request slots. Instances that share a device each get all
 * of its work: their requests interleave, so each ends near the last. */
static void model_one(const scenario_t *s, const topology_t *t, const burst_plan_t *p,
                      const burst_who_t *w, int i, const dev_load_t *dev, burst_t *o) {
    const storage_ops_t *ops = scenario_storage(s);
    /* A sender's requests go on connections of its own where the kind's
     * slots are connections; a device's queue they share. */
    const double slots = ops->slots_are_connections ? 0 : ops->slots(s);
    const double alone = alone_s(s, ops, p), per = per_sender(p), t0 = req_s(s, ops, 0);
    *o = (burst_t){.approximate =
                       ops->position_dependent || (ops->model_exact && !ops->model_exact(s))};
    if (w->senders == 0) return;
    o->requests = (double)w->senders * per;
    o->pages = (double)w->senders * p->pages, o->bodies = (double)w->senders * p->bodies;
    o->heads = (double)w->senders * p->heads;
    o->seconds = alone;
    if (!dev) o->approximate = 1; /* no memory for the devices' bounds: alone only */
    for (int64_t r = 0; dev && r < w->senders; r++) {
        const dev_load_t *d = &dev[device_of(s, t, i, w, r)];
        const double by_cap = by_caps(s, ops, d->requests - d->writes, d->writes);
        /* (the channel's first transfer waits a request's first byte; a
         * rate limit's bucket, empty at the launch as a cgroup's throttle
         * starts its budget with the first request, fills over that wait
         * and moves as much of the transfer ahead of the rate) */
        const double bucket = ops->bucket_s ? fmin(ops->bucket_s(s), t0) : 0;
        const double xfer = fmax(0, d->xfer - bucket);
        const double shared = fmax(slots > 0 ? d->work / slots : 0, d->xfer > 0 ? t0 + xfer : 0);
        if (by_cap > o->seconds) o->seconds = by_cap, o->approximate = 1;
        /* Senders that contend for a device about as long as each takes
         * alone queue behind each other: the larger bound falls short. */
        if (d->requests > per + 0.5 && shared > CONTEND * alone && shared < alone / CONTEND)
            o->approximate = 1;
        o->seconds = fmax(o->seconds, shared);
    }
    /* (fair shares: every sender ends with the last) */
    o->first_s = o->seconds;
}

void burst_model(const scenario_t *s, const topology_t *t, const burst_plan_t *plan,
                 const burst_who_t *who, burst_t *out) {
    dev_load_t *dev = calloc((size_t)ndevices(s), sizeof *dev);
    if (dev) model_loads(s, t, plan, who, dev);
    for (int i = 0; i < t->ninst; i++)
        model_one(s, t, &plan[i], &who[i], i, dev, &out[i]);
    free(dev);
}

/* ---- the simulator ---- */

/* A sender's thread, keyed by when it sends its next request. */
typedef struct {
    double at;
    int32_t snd;
} slot_t;

typedef struct {
    int inst, dev;
    int lead;    /* its rank's first sender */
    double next; /* requests sent */
    double done; /* its last answer */
    int listing; /* still on its pages (one thread) */
} sender_t;

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
    const burst_plan_t *plan;
    double key_bytes; /* an object's offset step: the prefix it names */
    storage_t *dev;
    sender_t *snd;
    io_acct_t *acct; /* per instance */
    slot_t *heap;
    int64_t nsnd, nheap;
} replay_t;

/* Sender r's next request at `at`: which it is, its bytes and the object it
 * names; returns when its answer arrives. */
static double send(replay_t *x, sender_t *r, double at) {
    const burst_plan_t *p = &x->plan[r->inst];
    const double k = r->next++;
    double bytes = 0, object;
    if (k < p->pages)
        bytes = p->page_bytes, object = k * p->page_objects;
    else if (k < p->pages + p->bodies)
        bytes = p->body_bytes, object = k - p->pages;
    else
        object = k - p->pages - p->bodies;
    storage_t *d = &x->dev[r->dev];
    io_acct_t *a = &x->acct[r->inst];
    const int body = k >= p->pages && k < p->pages + p->bodies;
    if (body && p->write && d->ops->write)
        return d->ops->write(d, at, bytes, object * x->key_bytes, 0, a);
    if (d->ops->request) return d->ops->request(d, at, bytes, object * x->key_bytes, 0, a);
    return d->ops->read(d, at, bytes, object * x->key_bytes, 0, a);
}

/* Past its pages a sender's other threads join it. */
static void listing_done(replay_t *x, sender_t *r, int32_t id, double at) {
    r->listing = 0;
    for (int64_t k = 1; k < x->plan[r->inst].threads; k++) {
        x->heap[x->nheap] = (slot_t){at, id};
        heap_up(x->heap, x->nheap++);
    }
}

/* The requests sent before `until` (INFINITY: every one). */
static void replay_until(replay_t *x, double until) {
    while (x->nheap > 0 && x->heap[0].at < until) {
        const slot_t top = x->heap[0];
        sender_t *r = &x->snd[top.snd];
        const burst_plan_t *p = &x->plan[r->inst];
        if (r->next >= per_sender(p)) { /* this thread is done */
            x->heap[0] = x->heap[--x->nheap];
            if (x->nheap > 0) heap_down(x->heap, x->nheap, 0);
            continue;
        }
        const double end = send(x, r, top.at);
        if (end > r->done) r->done = end;
        x->heap[0].at = end;
        heap_down(x->heap, x->nheap, 0);
        if (r->listing && r->next >= p->pages) listing_done(x, r, top.snd, end);
    }
}

static void replay(replay_t *x) {
    replay_until(x, INFINITY);
}

/* The senders and their threads' heap, once: replay_start fills them. */
static int senders_alloc(replay_t *x, const topology_t *t, const burst_who_t *who) {
    int64_t slots = 0;
    for (int i = 0; i < t->ninst; i++)
        slots += who[i].senders * (x->plan[i].threads > 0 ? x->plan[i].threads : 1);
    if (x->nsnd <= 0 || slots <= 0) return -1;
    x->acct = calloc((size_t)t->ninst, sizeof *x->acct);
    x->snd = calloc((size_t)x->nsnd, sizeof *x->snd);
    x->heap = calloc((size_t)slots, sizeof *x->heap);
    return x->acct && x->snd && x->heap ? 0 : -1;
}

/* Every sender from `at`, on a device with state (a server-sampled run's
 * unsimulated servers have none: theirs send nothing). */
static void replay_start(replay_t *x, const topology_t *t, const burst_who_t *who, double at) {
    const scenario_t *s = x->s;
    int64_t k = 0;
    x->nheap = 0;
    for (int i = 0; i < t->ninst; i++) {
        x->acct[i] = (io_acct_t){0};
        for (int64_t r = 0; r < who[i].senders; r++, k++) {
            x->snd[k] = (sender_t){.inst = i,
                                   .dev = device_of(s, t, i, &who[i], r),
                                   .lead = who[i].per_rank <= 1 || r % who[i].per_rank == 0,
                                   .listing = x->plan[i].pages > 0,
                                   .done = at};
            if (x->dev[x->snd[k].dev].state) x->heap[x->nheap++] = (slot_t){at, (int32_t)k};
        }
    }
    /* a sender with no pages starts its threads at once */
    const int64_t lead = x->nheap;
    for (int64_t h = 0; h < lead; h++) {
        const int32_t r = x->heap[h].snd;
        for (int64_t j = 1; !x->snd[r].listing && j < x->plan[x->snd[r].inst].threads; j++)
            x->heap[x->nheap++] = (slot_t){at, r};
    }
}

static int replay_build(replay_t *x, const topology_t *t, const burst_who_t *who) {
    const scenario_t *s = x->s;
    x->dev = calloc((size_t)ndevices(s), sizeof *x->dev);
    if (!x->dev || senders_alloc(x, t, who) != 0) return -1;
    for (int v = 0; v < ndevices(s); v++) {
        x->dev[v].ops = x->ops, x->dev[v].unordered = 0;
        if (x->ops->init(&x->dev[v], s) != 0) return -1;
    }
    replay_start(x, t, who, 0);
    return 0;
}

static void replay_free(replay_t *x) {
    for (int v = 0; x->dev && v < ndevices(x->s); v++)
        if (x->dev[v].state) x->ops->destroy(&x->dev[v]);
    free(x->dev), free(x->acct), free(x->snd), free(x->heap);
}

int burst_sim(const scenario_t *s, const topology_t *t, const burst_plan_t *plan,
              const burst_who_t *who, burst_t *out) {
    replay_t x = {.s = s, .ops = scenario_storage(s), .plan = plan};
    x.key_bytes = scenario_item_bytes_mean(s) * scenario_items_per_read(s);
    double total = 0;
    for (int i = 0; i < t->ninst; i++)
        x.nsnd += who[i].senders, total += (double)who[i].senders * per_sender(&plan[i]);
    if (x.nsnd == 0 || total > BURST_SIM_MAX) {
        burst_model(s, t, plan, who, out);
        for (int i = 0; x.nsnd > 0 && i < t->ninst; i++)
            out[i].approximate = 1;
        return 0;
    }
    if (replay_build(&x, t, who) != 0) {
        replay_free(&x);
        diag_error((src_pos_t){0}, "out of memory for %.0f senders' requests", (double)x.nsnd);
        return EXIT_RUNTIME;
    }
    replay(&x);
    for (int i = 0; i < t->ninst; i++) {
        const double n = (double)who[i].senders;
        out[i] = (burst_t){.throttled = x.acct[i].retries,
                           .pages = n * plan[i].pages,
                           .bodies = n * plan[i].bodies,
                           .heads = n * plan[i].heads};
    }
    for (int64_t r = 0; r < x.nsnd; r++) {
        burst_t *o = &out[x.snd[r].inst];
        o->requests += x.snd[r].next;
        if (x.snd[r].done > o->seconds) o->seconds = x.snd[r].done;
        if (x.snd[r].lead && x.snd[r].done > o->first_s) o->first_s = x.snd[r].done;
    }
    replay_free(&x);
    return 0;
}

/* ---- on the caller's devices ---- */

struct burst_replay {
    replay_t x;
    const topology_t *t;
    burst_who_t *who;
};

burst_replay_t *burst_replay_open(const scenario_t *s, const topology_t *t,
                                  const burst_plan_t *plan, const burst_who_t *who,
                                  storage_t *dev) {
    burst_replay_t *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->x = (replay_t){.s = s, .ops = scenario_storage(s), .plan = plan, .dev = dev};
    b->x.key_bytes = scenario_item_bytes_mean(s) * scenario_items_per_read(s);
    b->t = t;
    double total = 0;
    for (int i = 0; i < t->ninst; i++)
        b->x.nsnd += who[i].senders, total += (double)who[i].senders * per_sender(&plan[i]);
    b->who = malloc((size_t)t->ninst * sizeof *b->who);
    if (b->x.nsnd == 0 || total > BURST_SIM_MAX || !b->who || senders_alloc(&b->x, t, who)) {
        burst_replay_close(b);
        return NULL;
    }
    for (int i = 0; i < t->ninst; i++)
        b->who[i] = who[i];
    return b;
}

void burst_replay_begin(burst_replay_t *b, double at) {
    replay_start(&b->x, b->t, b->who, at);
}

int burst_replay_until(burst_replay_t *b, double until, io_acct_t *acct, double *end) {
    replay_t *x = &b->x;
    replay_until(x, until);
    for (int i = 0; i < b->t->ninst; i++) {
        acct->reads += x->acct[i].reads, acct->heads += x->acct[i].heads;
        acct->writes += x->acct[i].writes, acct->retries += x->acct[i].retries;
        acct->xfer_busy += x->acct[i].xfer_busy, acct->slot_busy += x->acct[i].slot_busy;
        x->acct[i] = (io_acct_t){0};
    }
    *end = 0;
    for (int64_t r = 0; r < x->nsnd; r++)
        if (x->snd[r].done > *end) *end = x->snd[r].done;
    return x->nheap == 0;
}

double burst_replay_run(burst_replay_t *b, double at, io_acct_t *acct) {
    double end = at;
    burst_replay_begin(b, at);
    burst_replay_until(b, INFINITY, acct, &end);
    return end > at ? end : at;
}

void burst_replay_close(burst_replay_t *b) {
    if (!b) return;
    free(b->x.acct), free(b->x.snd), free(b->x.heap), free(b->who);
    free(b);
}
