/* storage_queue: see storage_queue.h. */
#include "storage_queue.h"

#include <stdlib.h>

#include "kinds.h"

/* How far back the calendars must remember: the synchronous readers'
 * batches come out of time order by up to R batches of reads served one
 * after another, so four times R x a batch's reads x a read's share of the
 * device. At 64 workers' batches of 512 over a 137 MB/s channel that is
 * 98 s; the default reach (20 s) then served the older reads as if alone,
 * and the channel moved 1.7 % more than its bandwidth (storage_util 1.017). */
static double reach_s(const scenario_t *s, const storage_queue_t *q, double svc, double xfer) {
    double readers = (double)loader_sync_readers(s), batch = 1;
    for (int i = 0; i < s->njobs; i++)
        if ((double)s->jobs[i].batch_per_gpu > batch) batch = (double)s->jobs[i].batch_per_gpu;
    double per = batch / scenario_items_per_read(s), share = svc / q->qd;
    if (share < xfer) share = xfer;
    if (share < q->iops_gap) share = q->iops_gap;
    return 4 * readers * (per > 1 ? per : 1) * share;
}

int storage_queue_init(storage_queue_t *q, const storage_t *d, const scenario_t *s, double bw,
                       double lat_s) {
    int qd = (int)s->server.storage.queue_depth;
    q->bw = bw;
    q->qd = qd;
    q->iops_gap = s->server.storage.read_iops > 0 ? 1 / s->server.storage.read_iops : 0;
    q->admit_s = qd * q->iops_gap;
    q->unordered = d->unordered;
    q->ring = calloc((size_t)qd, sizeof q->ring[0]);
    if (!q->ring) return -1;
    if (q->unordered) {
        /* A read is a whole record shard where the data are sharded. */
        double xfer = scenario_item_bytes_mean(s) * scenario_items_per_read(s) / bw;
        double dt = calendar_bucket_s(lat_s + xfer, xfer, reach_s(s, q, lat_s + xfer, xfer));
        if (calendar_init(&q->slots, dt, qd, CALENDAR_LOG2) ||
            calendar_init(&q->chan, dt, 1, CALENDAR_LOG2))
            return -1;
        if (q->iops_gap > 0 &&
            calendar_init(&q->iops, dt, s->server.storage.read_iops, CALENDAR_LOG2))
            return -1;
    }
    return 0;
}

void storage_queue_begin(storage_queue_t *q, double at) {
    /* an ordered queue's calendars are never set up: left alone */
    calendar_cap_before(&q->slots, at), calendar_cap_before(&q->chan, at);
    calendar_cap_before(&q->iops, at);
}

void storage_queue_destroy(storage_queue_t *q) {
    /* calendars never set up are zero: freeing them is a no-op */
    calendar_destroy(&q->slots), calendar_destroy(&q->chan), calendar_destroy(&q->iops);
    free(q->ring);
    q->ring = NULL;
}

double storage_queue_items_s(const scenario_t *s, double bw, double lat_s, double bytes,
                             int *latency_bound) {
    double by_bw = bw / bytes;
    double by_lat = (double)s->server.storage.queue_depth / (lat_s + bytes / bw);
    double iops = s->server.storage.read_iops;
    if (iops > 0 && iops < by_lat) by_lat = iops;
    if (latency_bound) *latency_bound = by_lat < by_bw;
    return by_lat < by_bw ? by_lat : by_bw;
}

double storage_queue_slots(const scenario_t *s) {
    return (double)s->server.storage.queue_depth;
}

double storage_queue_bytes(const scenario_t *s) {
    double b = 8 * (double)s->server.storage.queue_depth; /* the request ring */
    if (scenario_loader(s)->sync_reads) b += 3 * calendar_bytes(CALENDAR_LOG2);
    /* server.storage.write_apart: a second queue for the writes */
    return s->server.storage.write_apart ? 2 * b : b;
}
