/* storage_queue: the request path storage_fixed and storage_ssd share, each
 * keeping one in its state and saying only what a request's latency is.
 * queue_depth request slots; the read_iops gate, which admits one request
 * per 1 / read_iops seconds; one FIFO transfer channel at bandwidth bw.
 * Reads that may arrive out of time order (storage_t.unordered) go through
 * three calendars instead: request slots (queue_depth per second of slot
 * time), the gate and the channel (one second per second), their buckets as
 * calendar_bucket_s sizes them from a mean read (a whole shard for record
 * shards).
 *
 * An ordered read: storage_queue_admit (it holds a slot from *start, and
 * reaches the device at the time returned), then storage_queue_transfer from
 * then plus its latency; an unordered one: storage_queue_unordered. Either
 * way storage_queue_account then. static inline: the simulator's hot path. */
#ifndef STALLSIM_STORAGE_QUEUE_H
#define STALLSIM_STORAGE_QUEUE_H

#include "calendar.h"
#include "storage.h"

typedef struct {
    double bw;                  /* bytes/s */
    double iops_gap, iops_free; /* read_iops: one request admitted per gap */
    double admit_s;             /* qd x iops_gap: storage_queue_account's, made once */
    int qd, head;
    double chan_free;
    /* The bucket of a rate limiter (storage_fixed's server.storage.burst_ms,
     * seconds of the channel; 0: none): a transfer may take the channel's
     * time left unused up to this long before it is ready, so a reader idle
     * a while reads at once and only the average rate holds (blk-throttle
     * budgets bytes over time; a cloud volume's throttle is a bucket too). */
    double burst_s;
    int unordered;
    calendar_t slots, chan, iops;
    double *ring; /* ordered: completion times of the last qd requests, oldest at head */
} storage_queue_t;

/* From the scenario's queue_depth and read_iops, at bandwidth bw (bytes/s),
 * a read's latency lat_s sizing the calendars. 0, or -1 without memory (q
 * is then still for storage_queue_destroy). */
int storage_queue_init(storage_queue_t *q, const storage_t *d, const scenario_t *s, double bw,
                       double lat_s);
void storage_queue_destroy(storage_queue_t *q);
/* storage_ops_t.epoch_begin for a queue: its calendars from `at` on. */
void storage_queue_begin(storage_queue_t *q, double at);

static inline double storage_queue_admit(storage_queue_t *q, double issue, double *start) {
    double slot = q->ring[q->head];
    *start = issue > slot ? issue : slot;
    /* One waiting for the gate holds its slot. */
    double go = *start;
    if (q->iops_gap > 0) {
        if (go < q->iops_free) go = q->iops_free;
        q->iops_free = go + q->iops_gap;
    }
    return go;
}

/* The transfer of xfer seconds, ready to start at `ready` (admitted plus its
 * latency); when its last byte arrives, which frees its slot. */
static inline double storage_queue_transfer(storage_queue_t *q, double ready, double xfer) {
    double from = ready - q->burst_s;
    if (from < q->chan_free) from = q->chan_free;
    q->chan_free = from + xfer;
    const double end = q->chan_free > ready ? q->chan_free : ready;
    q->ring[q->head] = end;
    q->head = q->head + 1 == q->qd ? 0 : q->head + 1;
    return end;
}

static inline double storage_queue_unordered(storage_queue_t *q, double issue, double lat_s,
                                             double xfer, double *start) {
    double held, end;
    *start = calendar_hold(&q->slots, issue, lat_s + xfer, &held);
    double go = q->iops_gap > 0 ? calendar_take(&q->iops, *start, 1, &held) : *start;
    calendar_take(&q->chan, go + lat_s - q->burst_s, xfer, &end);
    return end > go + lat_s ? end : go + lat_s;
}

static inline void storage_queue_account(const storage_queue_t *q, io_acct_t *acct, double start,
                                         double end, double xfer) {
    acct->xfer_busy += xfer;
    acct->reads++;
    /* Under a request-rate cap each request also uses queue_depth / read_iops
     * of slot time: the share of the admission rate it takes, so a stream
     * bound by the cap shows its slots full however few it keeps in flight. */
    double held_s = end - start, admit_s = q->admit_s;
    acct->slot_busy += held_s > admit_s ? held_s : admit_s;
}

/* Model: the least of bw / bytes, read_iops and queue_depth / (lat_s +
 * transfer); a request-rate limit counts as latency-bound (it is not
 * bandwidth). */
double storage_queue_items_s(const scenario_t *s, double bw, double lat_s, double bytes,
                             int *latency_bound);
/* storage_ops_t.slots and .state_bytes of a kind built on the queue. */
double storage_queue_slots(const scenario_t *s);
double storage_queue_bytes(const scenario_t *s);

#endif
