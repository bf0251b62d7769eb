/* storage_object: an HTTP object store (S3, GCS, IBM COS, MinIO, nginx) read
 * one object per item with GETs. What sets its pace is the time to first
 * byte and the number of GETs in flight, not a device's bandwidth:
 *
 * - a GET holds a connection for its first-byte latency (lognormal, from a
 *   median and a 99th percentile; drawn per request from the seed) and then
 *   moves the object at one connection's rate, conn_mb_s;
 * - the connections in flight are the device's slots: under the pool loader
 *   its reader_threads per server, capped by the client's connections per
 *   process and per server; under PyTorch's DataLoader every worker reads
 *   synchronously, one GET each, so the workers are the concurrency and
 *   only the per-server cap can bind;
 * - optional aggregate caps: max_mb_s over all connections (the store's or
 *   the NIC's bandwidth, served as a fluid: a transfer ends no earlier than
 *   its share of the channel allows) and max_get_s GETs a second (a
 *   client-side limiter: a GET over it waits for its turn);
 * - the store's own limit per key prefix (S3: 5,500 GET/HEAD a second a
 *   prefix): objects striped over `prefixes` prefixes (object k, or shard k,
 *   in prefix k mod prefixes), each admitting prefix_get_s requests a
 *   second in windows of an integer number of requests; a request over it is
 *   answered 503 SlowDown after a median first byte, and the client retries
 *   after a back-off drawn as botocore's: U(0, 1) x min(retry_cap_ms,
 *   retry_base_ms x 2^attempt), from the seed. Every refusal is a request
 *   (io_acct_t.retries) and holds its connection through the back-off;
 * - optionally a HEAD before each object (a loader that stats a file before
 *   reading it): a request of its own, one first byte long, against the
 *   prefix's rate like a GET.
 *
 * The model's closed form: items/s = slots / (n x (E[first byte] + size / n
 * / conn_mb_s) + head x E[first byte]) for n ranged parts, until max_mb_s /
 * size, max_get_s / (n + head) or prefixes x prefix_get_s / (n + head) binds;
 * exact without a latency tail (object_model_exact). One item = one GET, so
 * the output's storage_reads are the GETs of an epoch. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "calendar.h"
#include "diag.h"
#include "kinds.h"
#include "storage.h"

/* The object storage kind's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    double first_byte_ms;     /* median time to first byte of a GET */
    double first_byte_p99_ms; /* its 99th percentile; 0 = the median (no spread) */
    double conn_mb_s;         /* one connection's transfer rate */
    double max_mb_s;          /* aggregate bandwidth cap; 0 = none */
    double max_get_s;         /* GETs per second at most; 0 = none */
    int64_t reader_threads;   /* pool loader: GETs in flight per server */
    int64_t conns_per_process;
    int64_t conns_per_server;
    double range_mb;      /* ranged GETs of at most this much, issued at once; 0 = whole */
    int64_t prefixes;     /* key prefixes the objects are striped over */
    double prefix_get_s;  /* GET+HEAD/s one prefix serves before 503s; 0 = none */
    double retry_base_ms; /* back-off after a 503: U(0,1) x min(cap, base x 2^k) */
    double retry_cap_ms;
    int head;            /* a HEAD before each object's GET (the loader stats) */
    int list_each_epoch; /* the job lists the keys every epoch, not once */
    double prefix_put_s; /* PUT/s one prefix serves before 503s; 0 = none */
    double part_mb;      /* a multipart upload's parts at most; 0 = one PUT a file */
} object_opts_t;
SCN_KIND_OPTS_FITS(object_opts_t);

static const object_opts_t *obj_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_STORAGE, s->server.storage.kind);
}

#define Z99 2.3263478740408408 /* the standard normal's 99th percentile */

typedef struct {
    double median_s, sigma, conn_bw, max_bw, range_b;
    double get_gap, get_free; /* max_get_s: one GET admitted per gap */
    uint64_t seed, nreq;
    int slots, unordered, head;
    int per, nclients; /* heap: nclients heaps of per connections (object_clients) */
    calendar_t cal_slots, cal_chan, cal_get;
    /* The prefixes' limit: a calendar each, a window of whole requests a
     * bucket; objects to prefixes by their offset's number. */
    calendar_t *pre, *pre_put; /* pre_put: the PUTs' rate, a count of its own */
    int64_t npre;
    double key_bytes; /* bytes an object's offset advances: mean item x items a read */
    double retry_base, retry_cap, refuse_s;
    double admit_gap; /* 1 / the requests a second the store admits (0: no cap) */
    uint64_t nretry;
    /* In issue order: when each connection is next free, a min-heap. GETs
     * of different latencies finish out of order, so a GET takes whichever
     * connection frees first, not the next in turn. */
    double heap[];
} object_t;

/* Replaces the heap's least element (heap[0]) by v. */
static void heap_replace_top(double *h, int n, double v) {
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1] < h[c]) c++;
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

static double lat_sigma(const scenario_t *s) {
    double m = obj_opts(s)->first_byte_ms, q = obj_opts(s)->first_byte_p99_ms;
    return q > m && m > 0 ? log(q / m) / Z99 : 0;
}

/* E[first byte] in seconds: a lognormal's mean is its median x e^(sigma^2 / 2). */
static double lat_mean_s(const scenario_t *s) {
    double sg = lat_sigma(s);
    return obj_opts(s)->first_byte_ms / 1e3 * exp(sg * sg / 2);
}

/* GETs one reading process (or PyTorch worker) may keep in flight. */
static int64_t cap_or(int64_t v, int64_t cap) {
    return cap > 0 && cap < v ? cap : v;
}

/* Ranged GETs an object of `bytes` takes: ceil(bytes / range_mb), or 1. */
static double parts_of(double range_b, double bytes) {
    return range_b > 0 && bytes > range_b ? ceil(bytes / range_b) : 1;
}

static double object_requests(const scenario_t *s, double bytes);

/* Connections in flight from one server: its readers'. */
static int object_client_slots(const scenario_t *s) {
    int64_t per = loader_sync_readers(s); /* one GET per synchronous reader */
    if (per) {
        /* With ranged GETs a worker's object is its parts at once, on up to
         * connections_per_process connections (else as many as the parts of
         * an object four times the mean: past that parts wait). */
        int64_t parts = 1;
        if (obj_opts(s)->range_mb > 0)
            parts = cap_or(
                (int64_t)parts_of(obj_opts(s)->range_mb * 1e6,
                                  4 * scenario_item_bytes_mean(s) * scenario_items_per_read(s)),
                obj_opts(s)->conns_per_process);
        per *= parts;
    } else {
        per = cap_or(obj_opts(s)->reader_threads, obj_opts(s)->conns_per_process);
    }
    per = cap_or(per, obj_opts(s)->conns_per_server);
    if (per > 1000000) per = 1000000;
    return (int)(per < 1 ? 1 : per);
}

/* Connections in flight on one device: a server's readers (all servers'
 * when the store is shared). */
static int object_slots_n(const scenario_t *s) {
    double per = object_client_slots(s);
    if (s->server.storage.shared) per *= (double)s->server.count;
    return (int)(per > 1000000 ? 1000000 : per);
}

/* The device's connections kept apart by client: on a shared store each
 * server's reader threads hold their own server's connections, so a GET
 * waits for one of its own server's, never another's idle one (pooled, a
 * lone job waited behind the GETs of jobs on other servers: semfuzz, a
 * makespan +16.8 % with twice the cores). Synchronous readers (unordered)
 * hold one GET each, so their pool is their own already. */
static int object_clients(const scenario_t *s, int unordered) {
    return s->server.storage.shared && !unordered ? (int)s->server.count : 1;
}

/* Seconds an object holds its connections: its n parts each a first byte
 * and their bytes, and its HEAD's first byte. */
static double object_held_s(const scenario_t *s, double bytes) {
    double n = object_requests(s, bytes), lat = lat_mean_s(s);
    return n * (lat + bytes / n / (obj_opts(s)->conn_mb_s * 1e6)) + (obj_opts(s)->head ? lat : 0);
}

/* A uniform in (0, 1) from the seed and the request's number (splitmix64):
 * the draws depend on nothing but the order of the GETs, which is fixed. */
static double unit(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static double first_byte(object_t *o) {
    if (o->sigma == 0) return o->median_s;
    return o->median_s * exp(o->sigma * gsl_cdf_ugaussian_Pinv(unit(o->seed, o->nreq++)));
}

/* The back-off draws are a stream of their own, so a scenario that is never
 * throttled draws the same latencies as before the prefixes existed. */
#define RETRY_STREAM 0x5DEECE66DA3B9F1Dull
enum { PRE_LOG2 = 8 }; /* buckets a prefix's calendar remembers */
/* A prefix's window is at least this long: the store's rate is a rate over
 * a time, not a gap between requests. With one request a window, a window
 * no retry happened to land in was capacity lost (8% at 2.5 attempts a
 * window); with 32 at 1e6 GET/s, 256 connections' first GETs at once were
 * refused by a store nowhere near its rate. */
#define PRE_WINDOW_S 0.1

static int prefix_cap_on(const scenario_t *s) {
    return obj_opts(s)->prefix_get_s > 0;
}

/* Requests an object costs the request rate: its ranged parts, and its HEAD. */
static double rate_requests(const scenario_t *s, double bytes);

/* A prefix's window: a whole number of requests (so a window admits exactly
 * rate x dt), long enough that its 2^PRE_LOG2 windows reach back over the
 * longest a request comes out of time order: a refusal, the longest
 * back-off, a slow first byte and a read's transfer, twice; under a
 * synchronous loader also over the workers' batches (CALENDAR_REACH_S), and
 * over every connection's batch at the prefix's rate: at 1 GET/s, 8
 * workers' batches of 32 came 256 s out of order, and a request older than
 * the windows remembered was admitted free (semfuzz: 4% faster than the
 * rate allows). */
static double prefix_window_s(const scenario_t *s, int unordered, double rate) {
    double p99 = obj_opts(s)->first_byte_p99_ms, med = obj_opts(s)->first_byte_ms;
    double xfer =
        scenario_item_bytes_mean(s) * scenario_items_per_read(s) / (obj_opts(s)->conn_mb_s * 1e6);
    double reach = 2 * ((med + (p99 > med ? p99 : med) + obj_opts(s)->retry_cap_ms) / 1e3 + xfer);
    if (unordered) {
        int64_t batch = 1;
        for (int j = 0; j < s->njobs; j++)
            if (s->jobs[j].batch_per_gpu > batch) batch = s->jobs[j].batch_per_gpu;
        double behind = 2 * (double)object_slots_n(s) * (double)batch / rate;
        if (reach < CALENDAR_REACH_S) reach = CALENDAR_REACH_S;
        if (reach < behind) reach = behind;
    }
    double k = ceil(reach / (1 << PRE_LOG2) * rate);
    double least = ceil(PRE_WINDOW_S * rate);
    return (k > least ? k : least) / rate;
}

/* How far back the shared channel (max_mb_s) must remember: as the queue's
 * (storage_queue.c), four times the synchronous readers' batches of reads,
 * each a read's share of the channel. At 8 PyTorch workers' batches of 512
 * under 20 MB/s that is 82 s; the default reach (20 s) served the older reads
 * as if the channel were idle, and it moved 35 % more than its cap
 * (storage_util 1.35, refused as an impossible figure). */
static double chan_reach_s(const scenario_t *s) {
    double readers = (double)loader_sync_readers(s), batch = 1;
    for (int i = 0; i < s->njobs; i++)
        if ((double)s->jobs[i].batch_per_gpu > batch) batch = (double)s->jobs[i].batch_per_gpu;
    double per = batch / scenario_items_per_read(s);
    double share =
        scenario_item_bytes_mean(s) * scenario_items_per_read(s) / (obj_opts(s)->max_mb_s * 1e6);
    return 4 * readers * (per > 1 ? per : 1) * share;
}

/* A calendar a prefix, each admitting `rate` requests a second. */
static calendar_t *prefix_cals(const scenario_t *s, int64_t n, int unordered, double rate) {
    calendar_t *c = calloc((size_t)n, sizeof c[0]);
    if (!c) return NULL;
    const double dt = prefix_window_s(s, unordered, rate);
    for (int64_t p = 0; p < n; p++)
        if (calendar_init(&c[p], dt, rate, PRE_LOG2)) {
            for (int64_t q = 0; q <= p; q++)
                calendar_destroy(&c[q]);
            free(c);
            return NULL;
        }
    return c;
}

static int prefix_init(object_t *o, const scenario_t *s, int unordered) {
    o->npre = obj_opts(s)->prefixes;
    o->key_bytes = scenario_item_bytes_mean(s) * scenario_items_per_read(s);
    o->retry_base = obj_opts(s)->retry_base_ms / 1e3;
    o->retry_cap = obj_opts(s)->retry_cap_ms / 1e3;
    o->refuse_s = o->median_s;
    const double get = obj_opts(s)->prefix_get_s, put = obj_opts(s)->prefix_put_s;
    o->admit_gap = get > 0 ? 1 / ((double)o->npre * get) : 0;
    if (get > 0 && !(o->pre = prefix_cals(s, o->npre, unordered, get))) return -1;
    /* PUTs come only in issue order (a burst's) */
    if (put > 0 && !(o->pre_put = prefix_cals(s, o->npre, 0, put))) return -1;
    return 0;
}

/* Whether the prefix admits a request at t: a whole request left in t's
 * window (the window's count does not depend on the order requests come
 * in); one older than the windows remembered takes the oldest's
 * (prefix_admit moves a request up to it first; rounding may leave t just
 * before it). */
static int prefix_admits(calendar_t *c, double t) {
    const double q = t / c->dt;
    int64_t i = q > 0 ? (int64_t)q : 0;
    /* Older than the windows remembered: the oldest's, never free (t moved
     * up to the oldest window's start could round to the one before it and
     * pass unrated: semfuzz seed 71, 1735 GETs in one second at 59.4 GET/s,
     * an epoch at twice the rate with 1 s back-offs). */
    if (i < c->top - (int64_t)c->mask) i = c->top - (int64_t)c->mask;
    double *left = calendar_left(c, i);
    if (*left < 0.5) return 0;
    *left -= 1;
    return 1;
}

/* A request for the object at `offset`, first sent at t: when its prefix
 * admits it, after each refusal's answer and back-off. */
static double prefix_admit(object_t *o, calendar_t *pre, double t, double offset, io_acct_t *acct) {
    if (!pre) return t;
    uint64_t key = (uint64_t)(offset / o->key_bytes + 0.5);
    calendar_t *c = &pre[key % (uint64_t)o->npre];
    /* A request older than the windows remembered waits for the oldest:
     * admitted free, another stream's requests out of order by more than
     * the windows reach got past the rate (semfuzz seed 5: two DALI jobs
     * at 1 GET/s, 1204 GETs in 88 s). */
    const double oldest = (double)(c->top - (int64_t)c->mask) * c->dt;
    if (t < oldest) t = oldest;
    /* retry_base_ms and retry_cap_ms are positive (their rows' bounds) and
     * a draw is never 0, so every retry moves on: no loop without end. */
    double ceiling = o->retry_base;
    while (!prefix_admits(c, t)) {
        acct->retries++;
        if (ceiling >= o->retry_cap) {
            /* A window only loses requests: every retry before the next one
             * is refused. Where that is many back-offs away (a slow rate's
             * long windows), they are counted at their mean step, not drawn
             * one by one (1e-6 GET/s took a million draws a request). */
            double step = o->refuse_s + o->retry_cap / 2;
            double k = floor(((floor(t / c->dt) + 1) * c->dt - t) / step) - 1;
            if (k > 0) acct->retries += k, t += k * step;
        }
        double b = ceiling < o->retry_cap ? ceiling : o->retry_cap;
        t += o->refuse_s + b * unit(o->seed ^ RETRY_STREAM, o->nretry++);
        if (ceiling < o->retry_cap) ceiling *= 2;
    }
    return t;
}

/* Connections a heap holds: one client's, or the device's where they are
 * pooled (object_clients gives the heaps). */
static int object_heap_per(const scenario_t *s, int nclients) {
    return nclients > 1 ? object_client_slots(s) : object_slots_n(s);
}

static int object_init(storage_t *d, const scenario_t *s) {
    int slots = object_slots_n(s), nclients = object_clients(s, d->unordered);
    int per = object_heap_per(s, nclients);
    object_t *o = calloc(1, sizeof *o + (size_t)per * (size_t)nclients * sizeof o->heap[0]);
    if (!o) return -1;
    o->per = per, o->nclients = nclients;
    d->state = o;
    o->median_s = obj_opts(s)->first_byte_ms / 1e3;
    o->sigma = lat_sigma(s);
    o->conn_bw = obj_opts(s)->conn_mb_s * 1e6;
    o->max_bw = obj_opts(s)->max_mb_s * 1e6;
    o->range_b = obj_opts(s)->range_mb * 1e6;
    o->get_gap = obj_opts(s)->max_get_s > 0 ? 1 / obj_opts(s)->max_get_s : 0;
    o->seed = (uint64_t)s->seed;
    o->slots = slots;
    o->unordered = d->unordered;
    o->head = obj_opts(s)->head;
    if ((prefix_cap_on(s) || obj_opts(s)->prefix_put_s > 0) && prefix_init(o, s, d->unordered))
        return -1;
    double xfer = scenario_item_bytes_mean(s) * scenario_items_per_read(s) / o->conn_bw;
    double dt = calendar_bucket_s(lat_mean_s(s) + xfer, 0, 0);
    /* First bytes come out of issue order whenever latencies differ, so the
     * shared channel is a calendar in both modes. */
    if (o->max_bw > 0 &&
        calendar_init(&o->cal_chan, calendar_bucket_s(lat_mean_s(s) + xfer, 0, chan_reach_s(s)), 1,
                      CALENDAR_LOG2))
        return -1;
    if (o->unordered) {
        if (calendar_init(&o->cal_slots, dt, slots, CALENDAR_LOG2)) return -1;
        if (o->get_gap > 0 && calendar_init(&o->cal_get, dt, obj_opts(s)->max_get_s, CALENDAR_LOG2))
            return -1;
    }
    return 0;
}

/* In issue order: when a request ready at `go` is sent, past the GET/s gate
 * and its prefix's refusals. */
static double ordered_admit(object_t *o, double go, double offset, io_acct_t *acct) {
    if (o->get_gap > 0) {
        if (go < o->get_free) go = o->get_free;
        o->get_free = go + o->get_gap;
    }
    return prefix_admit(o, o->pre, go, offset, acct);
}

/* The aggregate cap as a fluid: an object's bytes take `chan` seconds of
 * the shared channel from its first byte on; when its last byte arrives. */
static double channel_end(object_t *o, double end, double xfer, double chan) {
    if (chan <= 0) return end;
    double chan_end;
    calendar_take(&o->cal_chan, end - xfer, chan, &chan_end);
    return chan_end > end ? chan_end : end;
}

/* One GET of `bytes` (a HEAD: no bytes, is_head) of the object at `offset`,
 * issued at `issue`: when its last byte arrives. */
static double object_get(object_t *o, double issue, double bytes, double offset, int client,
                         int is_head, io_acct_t *acct) {
    double *heap = o->heap + (size_t)(client % o->nclients) * (size_t)o->per;
    double lat = first_byte(o), xfer = bytes / o->conn_bw,
           chan = o->max_bw > 0 ? bytes / o->max_bw : 0;
    double start, end;
    if (o->unordered) {
        double held;
        start = calendar_hold(&o->cal_slots, issue, lat + xfer, &held);
        double go = o->get_gap > 0 ? calendar_take(&o->cal_get, start, 1, &held) : start;
        go = prefix_admit(o, o->pre, go, offset, acct);
        end = go + lat + xfer;
    } else {
        double slot = heap[0];
        start = issue > slot ? issue : slot;
        /* A GET waiting for the request rate holds its connection. */
        end = ordered_admit(o, start, offset, acct) + lat + xfer;
    }
    end = channel_end(o, end, xfer, chan);
    if (!o->unordered) heap_replace_top(heap, o->per, end);
    acct->xfer_busy += chan > 0 ? chan : xfer / o->slots;
    if (is_head)
        acct->heads++;
    else
        acct->reads++;
    /* Under a request-rate cap each request also takes its share of the
     * admitted rate's slot time, so a stream the cap binds shows its
     * connections full (storage_queue_account's rule). */
    double gap = o->get_gap > o->admit_gap ? o->get_gap : o->admit_gap;
    double held_s = end - start, admit_s = o->slots * gap;
    acct->slot_busy += held_s > admit_s ? held_s : admit_s;
    return end;
}

/* An object is its ranged GETs, issued at once, each on a connection of its
 * own (boto3's and s5cmd's parallel parts): done when its last part is. */
static double object_read(storage_t *d, double issue, double bytes, double offset, int client,
                          io_acct_t *acct) {
    /* The offset names the object (its prefix); its latency does not
     * depend on where the bytes are. */
    object_t *o = d->state;
    /* A loader that stats the object first sends its GETs on the answer. */
    if (o->head) issue = object_get(o, issue, 0, offset, client, 1, acct);
    double n = parts_of(o->range_b, bytes), end = issue;
    for (double k = 0; k < n; k++) {
        double e = object_get(o, issue, bytes / n, offset, client, 0, acct);
        if (e > end) end = e;
    }
    return end;
}

/* A start-up request: a HEAD (no bytes) or one GET, never ranged, with no
 * HEAD of its own before it, and on a connection of the resolver's own (its
 * thread pool's, not the loader's), in issue order: the store's gates and
 * prefixes and the channel are the epochs'. */
static double object_request(storage_t *d, double issue, double bytes, double offset, int client,
                             io_acct_t *acct) {
    object_t *o = d->state;
    (void)client;
    const double xfer = bytes / o->conn_bw, chan = o->max_bw > 0 ? bytes / o->max_bw : 0;
    double end = ordered_admit(o, issue, offset, acct) + first_byte(o) + xfer;
    end = channel_end(o, end, xfer, chan);
    acct->xfer_busy += chan > 0 ? chan : xfer / o->slots;
    if (bytes <= 0)
        acct->heads++;
    else
        acct->reads++;
    return end;
}

/* A PUT (a multipart upload's part, or a whole file): as a start-up GET,
 * on a connection of the writer's own, its first byte and its bytes at a
 * connection's rate, the aggregate channel shared; against its prefix's
 * PUT rate, not the GETs' (S3 counts them apart), 503s retried after the
 * same back-off. max_get_s is a GET limiter: PUTs pass it. */
static double object_write(storage_t *d, double issue, double bytes, double offset, int client,
                           io_acct_t *acct) {
    object_t *o = d->state;
    (void)client;
    const double xfer = bytes / o->conn_bw, chan = o->max_bw > 0 ? bytes / o->max_bw : 0;
    double end = prefix_admit(o, o->pre_put, issue, offset, acct) + first_byte(o) + xfer;
    end = channel_end(o, end, xfer, chan);
    /* busy where it shares the aggregate channel with the GETs; its
     * connection is not one of theirs */
    acct->xfer_busy += chan;
    acct->writes++;
    return end;
}

/* PUTs a second the store admits at most: every prefix at prefix_put_s. */
static double object_write_cap(const scenario_t *s) {
    return (double)obj_opts(s)->prefixes * obj_opts(s)->prefix_put_s;
}

static double object_part_bytes(const scenario_t *s) {
    return obj_opts(s)->part_mb * 1e6;
}

/* Requests on connections of their own share only the aggregate cap. */
static double object_channel_s(const scenario_t *s, double bytes) {
    const double bw = obj_opts(s)->max_mb_s * 1e6;
    return bw > 0 ? bytes / bw : 0;
}

/* A start-up request's time alone: its first byte and its bytes on one
 * connection (no HEAD before it, no ranges). */
static double object_request_s(const scenario_t *s, double bytes) {
    return lat_mean_s(s) + bytes / (obj_opts(s)->conn_mb_s * 1e6);
}

/* The aggregate channel, the connections and the GET/s gate from `at` on
 * (those never set up are left alone); a prefix's windows count whole
 * requests and are left as they are. */
static void object_begin(storage_t *d, double at) {
    object_t *o = d->state;
    calendar_cap_before(&o->cal_chan, at), calendar_cap_before(&o->cal_slots, at);
    calendar_cap_before(&o->cal_get, at);
}

static void object_destroy(storage_t *d) {
    object_t *o = d->state;
    if (o) /* calendars never set up are zero: freeing them is a no-op */
    {
        calendar_destroy(&o->cal_slots), calendar_destroy(&o->cal_get),
            calendar_destroy(&o->cal_chan);
        for (int64_t p = 0; o->pre && p < o->npre; p++)
            calendar_destroy(&o->pre[p]);
        for (int64_t p = 0; o->pre_put && p < o->npre; p++)
            calendar_destroy(&o->pre_put[p]);
        free(o->pre), free(o->pre_put);
    }
    free(d->state);
    d->state = NULL;
}

static double object_requests(const scenario_t *s, double bytes) {
    return parts_of(obj_opts(s)->range_mb * 1e6, bytes);
}

static double rate_requests(const scenario_t *s, double bytes) {
    return object_requests(s, bytes) + (obj_opts(s)->head ? 1 : 0);
}

/* A GET's CPU: each request (ranged part, HEAD) its per-read cost. */
static double object_cpu_s(const scenario_t *s, double bytes) {
    return (s->server.storage.cpu_us_per_read * rate_requests(s, bytes) +
            s->server.storage.cpu_us_per_mb * bytes / 1e6) /
           1e6;
}

/* An object's time: its HEAD's first byte if any, then a first byte and its
 * largest part, the parts in parallel. */
static double object_service_s(const scenario_t *s, double bytes) {
    double head = obj_opts(s)->head ? lat_mean_s(s) : 0;
    return head + lat_mean_s(s) +
           bytes / object_requests(s, bytes) / (obj_opts(s)->conn_mb_s * 1e6);
}

/* Requests a second the store admits at most: max_get_s, or all prefixes
 * at prefix_get_s each, whichever is less (0: no cap). */
static double object_request_cap(const scenario_t *s) {
    double cap = obj_opts(s)->max_get_s;
    if (prefix_cap_on(s)) {
        double pre = (double)obj_opts(s)->prefixes * obj_opts(s)->prefix_get_s;
        if (cap <= 0 || pre < cap) cap = pre;
    }
    return cap;
}

/* concurrency / (n x (E[first byte] + size / n / conn_mb_s) + a HEAD's first
 * byte) for n ranged parts, or the aggregate caps: the request rate over
 * the requests an object makes, its bandwidth over its size. */
static double object_items_s(const scenario_t *s, double bytes, int *latency_bound) {
    double by_conn = object_slots_n(s) / object_held_s(s, bytes);
    double gets = object_request_cap(s) / rate_requests(s, bytes);
    if (gets > 0 && gets < by_conn) by_conn = gets;
    double bw = obj_opts(s)->max_mb_s * 1e6;
    double by_bw = bw > 0 ? bw / bytes : INFINITY;
    if (latency_bound) *latency_bound = by_conn <= by_bw;
    return by_conn < by_bw ? by_conn : by_bw;
}

/* The channel is the aggregate cap when there is one, else the connections
 * together: a transfer uses 1 / slots of it. */
static double object_xfer_s(const scenario_t *s, double bytes) {
    double bw = obj_opts(s)->max_mb_s * 1e6;
    if (bw > 0) return bytes / bw;
    return bytes / (obj_opts(s)->conn_mb_s * 1e6 * object_slots_n(s));
}

static double object_heads(const scenario_t *s) {
    return obj_opts(s)->head ? 1 : 0;
}

/* A LIST returns at most 1000 keys (S3's ListObjectsV2): a job lists the
 * objects (its shards where the data are sharded) once, or every epoch. */
static double object_lists(const scenario_t *s, int epoch) {
    if (epoch > 0 && !obj_opts(s)->list_each_epoch) return 0;
    return ceil((double)s->dataset.items / scenario_shard_items(s) / 1000);
}

static double object_slots(const scenario_t *s) {
    return object_slots_n(s);
}

/* Items/s one server's own connections serve at most (object_clients). */
static double object_client_items_s(const scenario_t *s, double bytes) {
    return object_client_slots(s) / object_held_s(s, bytes);
}

static double object_bytes(const scenario_t *s) {
    const int nclients = object_clients(s, scenario_loader(s)->sync_reads);
    double b = 8 * (double)object_heap_per(s, nclients) * nclients;
    if (prefix_cap_on(s))
        b += (double)obj_opts(s)->prefixes * (calendar_bytes(PRE_LOG2) + sizeof(calendar_t));
    if (obj_opts(s)->prefix_put_s > 0)
        b += (double)obj_opts(s)->prefixes * (calendar_bytes(PRE_LOG2) + sizeof(calendar_t));
    if (scenario_loader(s)->sync_reads) b += 2 * calendar_bytes(CALENDAR_LOG2);
    if (obj_opts(s)->max_mb_s > 0) b += calendar_bytes(CALENDAR_LOG2);
    return b;
}

/* The prefixes' rate is the simulator's where the connections ask for far
 * more (every window's requests are taken) or far less (no 503s); between,
 * clients asleep in their back-off leave windows unused: with 16 attempts a
 * second a connection and 1.3 x the rate asked, the simulator was 6% slower.
 * Asking far more is not enough when the back-off is long: 16,384
 * connections sleeping up to botocore's 20 s attempt about 1,600 times a
 * second, under one prefix's 5,500 (the simulator 12% slower), so the
 * attempts the connections make at the longest back-off must cover it too
 * (a retry counts a request whatever it asks: GET or HEAD). */
static int prefix_inexact(const scenario_t *s) {
    if (!prefix_cap_on(s)) return 0;
    double bytes = scenario_item_bytes_mean(s) * scenario_items_per_read(s);
    double n = object_requests(s, bytes), lat = lat_mean_s(s);
    double held =
        n * (lat + bytes / n / (obj_opts(s)->conn_mb_s * 1e6)) + (obj_opts(s)->head ? lat : 0);
    double asked = object_slots_n(s) / held * rate_requests(s, bytes);
    double cap = (double)obj_opts(s)->prefixes * obj_opts(s)->prefix_get_s;
    /* a refused attempt waits a median first byte and half the longest
     * back-off (at 2.1 x the rate: 2.3% slower; 0.3 x: 12%) */
    double asleep =
        object_slots_n(s) / (obj_opts(s)->first_byte_ms / 1e3 + obj_opts(s)->retry_cap_ms / 2e3);
    return asked > cap / 2 && (asked < 4 * cap || asleep < 2 * cap);
}

/* With a latency tail a batch waits for its slowest GET, and the loader's
 * window (prefetch_batches, or PyTorch's outstanding batches) holds back the
 * GETs behind it: the simulator has that, the model's mean rate does not
 * (ImageNet-like batches of 32, a p99 of 5x the median, a window of 2
 * batches: the simulator is 5% slower; 20x and 64 readers: 7x). */
static int object_model_exact(const scenario_t *s) {
    /* Ranged parts of items of spread sizes: the model counts the mean's. */
    int parts_vary = obj_opts(s)->range_mb > 0 && s->dataset.item_kb_cv > 0;
    return lat_sigma(s) == 0 && !parts_vary && !prefix_inexact(s);
}

static int object_check(const scenario_t *s) {
    int bad = 0;
    double m = obj_opts(s)->first_byte_ms, q = obj_opts(s)->first_byte_p99_ms;
    if (q > 0 && q < m) {
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "server.storage.first_byte_p99_ms")],
                   "server.storage.first_byte_p99_ms: expected at least the median "
                   "(server.storage.first_byte_ms = %g), got %g",
                   m, q);
        bad = 1;
    }
    /* A mean item in more than 10,000 ranged GETs (S3's most parts of a
     * multipart object) is no download anyone runs, and each part is an
     * event: range_mb = 1e-9 split 114 KB into 114,000 GETs and a run that
     * never ended (issue 33, H1). */
    double range = obj_opts(s)->range_mb * 1e6, mean = scenario_item_bytes_mean(s);
    if (range > 0 && mean / range > 10000) {
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "server.storage.range_mb")],
                   "server.storage.range_mb: a mean item of %.6g MB in ranges of %g MB is %.3g "
                   "GETs; expected at most 10,000 an object (at least %.3g MB)",
                   mean / 1e6, range / 1e6, mean / range, mean / 1e6 / 10000);
        bad = 1;
    }
    int rt = schema_find(SCOPE_SCENARIO, "server.storage.reader_threads");
    if (scenario_loader(s)->sync_reads && s->explicit_key[rt]) {
        diag_error(s->origin[rt],
                   "server.storage.reader_threads is the pool loader's reader pool; under "
                   "loader.kind: pytorch each worker issues its own GETs, one at a time "
                   "(set loader.num_workers)");
        bad = 1;
    }
    return bad ? EXIT_INPUT : 0;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"server.storage.first_byte_ms", KT_REAL, "ms", "15", 0, 1e6, 0, NULL, KIND_FIELD(object_opts_t, first_byte_ms), "object: median time from a GET to its first byte"},
    {"server.storage.first_byte_p99_ms", KT_REAL, "ms", "0", 0, 1e6, 0, NULL, KIND_FIELD(object_opts_t, first_byte_p99_ms), "object: 99th percentile of the time to first byte (lognormal with the median; 0 = every GET takes the median)"},
    {"server.storage.conn_mb_s", KT_REAL, "MB/s", "80", 0, SCHEMA_BIG, 1, NULL, KIND_FIELD(object_opts_t, conn_mb_s), "object: transfer rate of one connection once the first byte has come"},
    {"server.storage.max_mb_s", KT_REAL, "MB/s", "0", 0, SCHEMA_BIG, 0, NULL, KIND_FIELD(object_opts_t, max_mb_s), "object: bandwidth of all connections together (per server, or for all when shared; 0 = no cap)"},
    {"server.storage.max_get_s", KT_REAL, "GET/s", "0", 0, SCHEMA_BIG, 0, NULL, KIND_FIELD(object_opts_t, max_get_s), "object: GET requests per second the store admits at most (0 = no cap)"},
    {"server.storage.reader_threads", KT_INT, "requests", "16", 1, 1000000, 0, NULL, KIND_FIELD(object_opts_t, reader_threads), "object, pool loader: GETs a server's reader keeps in flight (DALI's or CoorDL's reader threads)"},
    {"server.storage.connections_per_process", KT_INT, "connections", "0", 0, 1000000, 0, NULL, KIND_FIELD(object_opts_t, conns_per_process), "object: HTTP connections one process may open (boto3's max_pool_connections is 10; 0 = no cap)"},
    {"server.storage.range_mb", KT_REAL, "MB", "0", 0, SCHEMA_BIG, 0, NULL, KIND_FIELD(object_opts_t, range_mb), "object: an object larger than this is fetched as ranged GETs of at most this much, issued at once on connections of their own (boto3's multipart download; 0 = one GET)"},
    {"server.storage.prefixes", KT_INT, "prefixes", "1", 1, 65536, 0, NULL, KIND_FIELD(object_opts_t, prefixes), "object: key prefixes the objects are spread over (object or shard k under prefix k mod prefixes, as a hashed key prefix spreads them); prefix_get_s holds for each"},
    {"server.storage.prefix_get_s", KT_REAL, "GET/s a prefix", "0", 0, SCHEMA_BIG, 0, NULL, KIND_FIELD(object_opts_t, prefix_get_s), "object: GET and HEAD requests a second one prefix serves; more are answered 503 SlowDown and retried after a back-off (S3 publishes 5,500; 0 = no limit)"},
    {"server.storage.retry_base_ms", KT_REAL, "ms", "1000", 0.001, 1e7, 0, NULL, KIND_FIELD(object_opts_t, retry_base_ms), "object: back-off after the first 503, doubling each retry up to retry_cap_ms, each drawn uniformly below its ceiling (botocore's standard mode: 1 s)"},
    {"server.storage.retry_cap_ms", KT_REAL, "ms", "20000", 0.001, 1e7, 0, NULL, KIND_FIELD(object_opts_t, retry_cap_ms), "object: the longest back-off ceiling after a 503 (botocore: 20 s)"},
    {"server.storage.head", KT_BOOL, "", "false", 0, 0, 0, NULL, KIND_FIELD(object_opts_t, head), "object: a HEAD before each object's GET, as a loader that stats a file first sends (s3fs, fsspec, a FUSE mount): a request of one first byte, against the prefix's rate"},
    {"server.storage.list_each_epoch", KT_BOOL, "", "false", 0, 0, 0, NULL, KIND_FIELD(object_opts_t, list_each_epoch), "object: the job lists the keys at every epoch's start (LIST pages of 1000 keys, counted and priced at prices.list_per_1000), not once at its first"},
    {"server.storage.prefix_put_s", KT_REAL, "PUT/s a prefix", "0", 0, SCHEMA_BIG, 0, NULL, KIND_FIELD(object_opts_t, prefix_put_s), "object: PUT requests a second one prefix serves (a checkpoint's parts), counted apart from its GETs; more are answered 503 SlowDown and retried after the same back-off (S3 publishes 3,500 PUT/COPY/POST/DELETE a second a prefix; 0 = no limit)"},
    {"server.storage.part_mb", KT_REAL, "MB", "8", 0, SCHEMA_BIG, 0, NULL, KIND_FIELD(object_opts_t, part_mb), "object: a file written larger than this goes as a multipart upload, in parts of at most this much, each a PUT (boto3's TransferConfig multipart_chunksize: 8 MB; S3 takes at most 10,000 parts; 0 = one PUT a file)"},
    {"server.storage.connections_per_server", KT_INT, "connections", "0", 0, 1000000, 0, NULL, KIND_FIELD(object_opts_t, conns_per_server), "object: HTTP connections all processes of one server may open together (0 = no cap)"},
};
/* clang-format on */

const storage_ops_t storage_object = {
    .name = "object",
    .help = "HTTP object store: time to first byte, connections in flight, per-connection rate",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .lists_requests = 1,
    .init = object_init,
    .read = object_read,
    .destroy = object_destroy,
    .epoch_begin = object_begin,
    .items_s = object_items_s,
    .client_items_s = object_client_items_s,
    .xfer_s = object_xfer_s,
    .service_s = object_service_s,
    .slots = object_slots,
    .state_bytes = object_bytes,
    .check = object_check,
    .model_exact = object_model_exact,
    .slots_are_connections = 1,
    .requests = object_requests,
    .heads = object_heads,
    .request = object_request,
    .request_s = object_request_s,
    .channel_s = object_channel_s,
    .request_cap_s = object_request_cap,
    .lists = object_lists,
    .cpu_s = object_cpu_s,
    .write = object_write,
    .write_s = object_request_s,
    .write_channel_s = object_channel_s,
    .write_cap_s = object_write_cap,
    .write_part_bytes = object_part_bytes,
};
