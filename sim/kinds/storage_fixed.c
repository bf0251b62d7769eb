/* storage_fixed: a device or share with a fixed per-request latency, a read
 * bandwidth and a queue depth: a request waits for one of queue_depth slots,
 * pays the latency, then transfers at full bandwidth on one FIFO channel.
 * It stands for a local SSD, a RAID array or an NFS share measured by
 * `stallsim calibrate`. */
#include <stdlib.h>

#include "calendar.h"
#include "kinds.h"
#include "storage.h"

/* Reads that may arrive out of time order (storage_t.unordered) go through
 * two calendars instead of the FIFO: request slots (queue_depth per second
 * of slot time) and the channel (one second per second), their buckets as
 * calendar_bucket_s sizes them from a mean read (a whole shard for record
 * shards). */

typedef struct {
    double lat_s, bw;
    double iops_gap, iops_free; /* read_iops: one request admitted per gap */
    int qd, head;
    double chan_free;
    int unordered;
    calendar_t slots, chan, iops;
    double ring[]; /* FIFO: completion times of the last qd requests */
} fixed_t;

static int fixed_init(storage_t *d, const scenario_t *s) {
    int qd = (int)s->server.storage.queue_depth;
    fixed_t *f = calloc(1, sizeof *f + (size_t)qd * sizeof f->ring[0]);
    if (!f) return -1;
    d->state = f;
    f->lat_s = s->server.storage.latency_ms / 1e3;
    f->bw = s->server.storage.read_mb_s * 1e6;
    f->qd = qd;
    f->iops_gap = s->server.storage.read_iops > 0 ? 1 / s->server.storage.read_iops : 0;
    f->unordered = d->unordered;
    if (f->unordered) {
        /* A read is a whole record shard where the data are sharded. */
        double xfer = scenario_item_bytes_mean(s) * scenario_items_per_read(s) / f->bw;
        double dt = calendar_bucket_s(f->lat_s + xfer, xfer, 0);
        if (calendar_init(&f->slots, dt, qd, CALENDAR_LOG2) ||
            calendar_init(&f->chan, dt, 1, CALENDAR_LOG2))
            return -1;
        if (f->iops_gap > 0 &&
            calendar_init(&f->iops, dt, s->server.storage.read_iops, CALENDAR_LOG2))
            return -1;
    }
    return 0;
}

static double fixed_read(storage_t *d, double issue, double bytes, double offset, io_acct_t *acct) {
    (void)offset; /* its latency does not depend on where the bytes are */
    fixed_t *f = d->state;
    double xfer = bytes / f->bw;
    double start, end;
    if (f->unordered) {
        double held;
        start = calendar_hold(&f->slots, issue, f->lat_s + xfer, &held);
        double go = f->iops_gap > 0 ? calendar_take(&f->iops, start, 1, &held) : start;
        calendar_take(&f->chan, go + f->lat_s, xfer, &end);
    } else {
        double slot = f->ring[f->head];
        start = issue > slot ? issue : slot;
        /* The device admits one request per 1 / read_iops seconds; one
         * waiting for that holds its slot. */
        double go = start;
        if (f->iops_gap > 0) {
            if (go < f->iops_free) go = f->iops_free;
            f->iops_free = go + f->iops_gap;
        }
        double xs = go + f->lat_s;
        if (xs < f->chan_free) xs = f->chan_free;
        end = xs + xfer;
        f->chan_free = end;
        f->ring[f->head] = end;
        f->head = f->head + 1 == f->qd ? 0 : f->head + 1;
    }
    acct->xfer_busy += xfer;
    acct->reads++;
    /* Under a request-rate cap each request also uses queue_depth / read_iops
     * of slot time: the share of the admission rate it takes, so a stream
     * bound by the cap shows its slots full however few it keeps in flight. */
    double held_s = end - start, admit_s = f->qd * f->iops_gap;
    acct->slot_busy += held_s > admit_s ? held_s : admit_s;
    return end;
}

static void fixed_destroy(storage_t *d) {
    fixed_t *f = d->state;
    if (f && f->unordered) {
        calendar_destroy(&f->slots), calendar_destroy(&f->chan);
        if (f->iops_gap > 0) calendar_destroy(&f->iops);
    }
    free(d->state);
    d->state = NULL;
}

/* The least of bandwidth, queue_depth / (latency + transfer) and read_iops
 * (a request-rate limit counts as latency-bound: it is not bandwidth). */
static double fixed_items_s(const scenario_t *s, double bytes, int *latency_bound) {
    double bw = s->server.storage.read_mb_s * 1e6;
    double by_bw = bw / bytes;
    double by_lat =
        (double)s->server.storage.queue_depth / (s->server.storage.latency_ms / 1e3 + bytes / bw);
    double iops = s->server.storage.read_iops;
    if (iops > 0 && iops < by_lat) by_lat = iops;
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
    double b = 8 * (double)s->server.storage.queue_depth; /* the request ring */
    if (scenario_loader(s)->sync_reads) b += 3 * calendar_bytes(CALENDAR_LOG2);
    return b;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"server.storage.read_mb_s", KT_REAL, "MB/s", "525", 0, SCHEMA_BIG, 1, NULL, SCN_FIELD(server.storage.read_mb_s), "storage read bandwidth (per server, or for all when shared)"},
    {"server.storage.latency_ms", KT_REAL, "ms", "0.1", 0, 1e6, 0, NULL, SCN_FIELD(server.storage.latency_ms), "per-request storage latency before the transfer"},
    STORAGE_KEY_READ_IOPS, /* shared with ssd */
    STORAGE_KEY_QUEUE_DEPTH,
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
