/* storage_fixed: a device or share with a fixed per-request latency, a read
 * bandwidth and a queue depth: a request waits for one of queue_depth slots,
 * pays the latency, then transfers at full bandwidth on one FIFO channel.
 * It stands for a local SSD, a RAID array or an NFS share measured by
 * `stallsim calibrate`. */
#include <stdlib.h>
#include <string.h>

#include "storage.h"

/* The channel's recent transfers, oldest first, sorted by start. A read
 * issued in time order (every stream of the pool loader) goes after the last
 * one, FIFO. A synchronous reader (loader_pytorch.c) issues its reads from
 * several workers whose batches the engine walks one after another, so a
 * read may arrive earlier in time than reads already placed: it takes the
 * first gap after it in the recent transfers, as the device would have
 * served it then. */
enum { SPANS = 64 };

typedef struct {
    double s, e;
} span_t;

typedef struct {
    double lat_s, bw;
    int qd, head;
    double chan_free, last_issue;
    int nspan;
    span_t span[2 * SPANS]; /* span[0..nspan) */
    double ring[];          /* completion times of the last qd requests */
} fixed_t;

static int fixed_init(storage_t *d, const scenario_t *s) {
    int qd = (int)s->server.storage.queue_depth;
    fixed_t *f = calloc(1, sizeof *f + (size_t)qd * sizeof f->ring[0]);
    if (!f) return -1;
    f->lat_s = s->server.storage.latency_ms / 1e3;
    f->bw = s->server.storage.read_mb_s * 1e6;
    f->qd = qd;
    d->state = f;
    return 0;
}

static void span_insert(fixed_t *f, int at, double s, double e) {
    if (f->nspan == 2 * SPANS) { /* keep the newest SPANS, amortised */
        memmove(f->span, f->span + SPANS, SPANS * sizeof f->span[0]);
        f->nspan = SPANS;
        at -= SPANS;
        if (at < 0) at = 0;
    }
    memmove(f->span + at + 1, f->span + at, (size_t)(f->nspan - at) * sizeof f->span[0]);
    f->span[at] = (span_t){s, e};
    f->nspan++;
}

/* The start of a transfer of xfer seconds ready at x that arrived out of
 * order; *at is where its span goes. */
static double backfill(const fixed_t *f, double x, double xfer, int *at) {
    int i = f->nspan;
    while (i > 0 && f->span[i - 1].e > x)
        i--;
    double c = x;
    for (; i < f->nspan; i++) {
        if (c + xfer <= f->span[i].s) break;
        if (f->span[i].e > c) c = f->span[i].e;
    }
    *at = i;
    return c;
}

static double fixed_read(storage_t *d, double issue, double bytes, io_acct_t *acct) {
    fixed_t *f = d->state;
    double xfer = bytes / f->bw;
    double start, xs;
    int at = f->nspan;
    if (issue >= f->last_issue) {
        double slot = f->ring[f->head];
        start = issue > slot ? issue : slot;
        xs = start + f->lat_s;
        if (xs < f->chan_free) xs = f->chan_free;
        f->last_issue = issue;
    } else {
        /* The ring's oldest entry may be a later read's: take the earliest
         * completion instead. */
        int k = 0;
        for (int j = 1; j < f->qd; j++)
            if (f->ring[j] < f->ring[k]) k = j;
        f->head = k;
        start = issue > f->ring[k] ? issue : f->ring[k];
        xs = backfill(f, start + f->lat_s, xfer, &at);
    }
    double end = xs + xfer;
    if (end > f->chan_free) f->chan_free = end;
    span_insert(f, at, xs, end);
    f->ring[f->head] = end;
    f->head = f->head + 1 == f->qd ? 0 : f->head + 1;
    acct->xfer_busy += xfer;
    acct->reads++;
    acct->slot_busy += end - start;
    return end;
}

static void fixed_destroy(storage_t *d) {
    free(d->state);
    d->state = NULL;
}

/* The lesser of bandwidth and queue_depth / (latency + transfer). */
static double fixed_items_s(const scenario_t *s, double bytes, int *latency_bound) {
    double bw = s->server.storage.read_mb_s * 1e6;
    double by_bw = bw / bytes;
    double by_lat =
        (double)s->server.storage.queue_depth / (s->server.storage.latency_ms / 1e3 + bytes / bw);
    if (latency_bound) *latency_bound = by_lat < by_bw;
    return by_lat < by_bw ? by_lat : by_bw;
}

static double fixed_xfer_s(const scenario_t *s, double bytes) {
    return bytes / (s->server.storage.read_mb_s * 1e6);
}

static double fixed_service_s(const scenario_t *s, double bytes) {
    return s->server.storage.latency_ms / 1e3 + fixed_xfer_s(s, bytes);
}

static double fixed_slots(const scenario_t *s) {
    return (double)s->server.storage.queue_depth;
}

static double fixed_bytes(const scenario_t *s) {
    return 8 * (double)s->server.storage.queue_depth + 2 * SPANS * sizeof(span_t) + 64;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"server.storage.read_mb_s", KT_REAL, "MB/s", "525", 0, SCHEMA_BIG, 1, NULL, SCN_FIELD(server.storage.read_mb_s), "storage read bandwidth (per server, or for all when shared)"},
    {"server.storage.latency_ms", KT_REAL, "ms", "0.1", 0, 1e6, 0, NULL, SCN_FIELD(server.storage.latency_ms), "per-request storage latency before the transfer"},
    {"server.storage.queue_depth", KT_INT, "requests", "32", 1, 1000000, 0, NULL, SCN_FIELD(server.storage.queue_depth), "storage requests in flight at most"},
};
/* clang-format on */

const storage_ops_t storage_fixed = {
    .name = "fixed",
    .help = "fixed per-request latency, read bandwidth and queue depth",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .init = fixed_init,
    .read = fixed_read,
    .destroy = fixed_destroy,
    .items_s = fixed_items_s,
    .xfer_s = fixed_xfer_s,
    .service_s = fixed_service_s,
    .slots = fixed_slots,
    .state_bytes = fixed_bytes,
};
