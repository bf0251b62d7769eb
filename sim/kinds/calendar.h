/* calendar: a resource's capacity over time, cut into buckets of dt seconds,
 * for requests that arrive out of time order. A synchronous reader
 * (loader_pytorch.c) issues reads from many workers whose batches the engine
 * walks one after another, so a read may come earlier in time than reads
 * already served; a FIFO device would make it wait behind them. A calendar
 * instead serves it from the capacity still free at its time, as a fluid:
 * each bucket holds rate x dt units, and a request takes units from the
 * first bucket with any left, onward.
 *
 *   calendar_t c;
 *   calendar_init(&c, dt, rate, log2_buckets);   // 0, or -1 without memory
 *   double start = calendar_take(&c, t, need, &end);
 *   calendar_destroy(&c);
 *
 * It remembers 2^log2_buckets buckets back from the latest one touched; a
 * request older than that is served as if it were alone (the owner picks dt
 * so that the buckets reach back further than requests come out of order). */
#ifndef STALLSIM_CALENDAR_H
#define STALLSIM_CALENDAR_H

#include <stdint.h>

typedef struct calendar {
    double dt, rate, cap; /* cap = rate x dt, the units of one bucket */
    /* 1 / dt and 1 / rate: every read and every item's core divides by
     * them, and a division costs several multiplications' time. */
    double inv_dt, inv_rate;
    int64_t top; /* the latest bucket touched */
    uint32_t mask;
    /* By bucket & mask: the units left in it and which bucket the slot
     * holds (another: all left), side by side, one cache line a bucket. */
    struct calendar_bucket {
        double left;
        int64_t tag;
    } * b;
} calendar_t;
typedef struct calendar_bucket calendar_bucket_t;

int calendar_init(calendar_t *c, double dt, double rate, int log2_buckets);
/* Units left in bucket i (a slot holding another bucket is a fresh one). */
static inline double *calendar_left(calendar_t *c, int64_t i) {
    calendar_bucket_t *b = &c->b[(uint32_t)i & c->mask];
    if (b->tag != i) {
        b->tag = i;
        b->left = c->cap;
    }
    if (i > c->top) c->top = i;
    return &b->left;
}

/* Bucket i's slot, fresh if it held another bucket; calendar_left without
 * the latest-bucket mark, which the callers below set once at their end
 * (they walk forward from a bucket at or past top - mask, so the same). */
static inline calendar_bucket_t *calendar_slot(calendar_bucket_t *b, uint32_t mask, int64_t i,
                                               double cap) {
    calendar_bucket_t *k = &b[(uint32_t)i & mask];
    if (k->tag != i) {
        k->tag = i;
        k->left = cap;
    }
    return k;
}

/* The calendar as `rate` slots: a request holds one of them for dur
 * seconds from t on, taking at most its own time from each bucket (a long
 * request is one slot busy, not all of them). Returns when it starts; *end
 * when it lets go. Inline: the pytorch kind holds a core for every item.
 * The calendar's fields are read into locals once: a store to a bucket's
 * double could otherwise be one to them, and the compiler reloads them. */
static inline double calendar_hold(calendar_t *c, double t, double dur, double *end) {
    const double dt = c->dt, cap = c->cap;
    const uint32_t mask = c->mask;
    calendar_bucket_t *const b = c->b;
    /* floor(t / dt) for t >= 0, as a truncation (no libm call); earlier
     * times are bucket 0. */
    const double q = t * c->inv_dt;
    int64_t i = q > 0 ? (int64_t)q : 0;
    const int64_t top = c->top;
    if (i < top - (int64_t)mask) {
        *end = t + dur;
        return t;
    }
    calendar_bucket_t *k = calendar_slot(b, mask, i, cap);
    while (k->left <= 0)
        k = calendar_slot(b, mask, ++i, cap);
    double start = (double)i * dt;
    if (start < t) start = t;
    double next = (double)(i + 1) * dt;
    /* The common case: the hold fits in the rest of its first bucket (the
     * loop below would take dur from it and stop, the same sums). */
    if (next - start >= dur && k->left >= dur) {
        k->left -= dur;
        if (i > top) c->top = i;
        *end = start + dur;
        return start;
    }
    /* One slot: at most the bucket's own time from each bucket; where the
     * other slots left less, the rest carries on into the next. */
    double need = dur, at = start, stop;
    for (;;) {
        double span = next - at;
        if (span > need) span = need;
        const double left = k->left;
        double take = span < left ? span : left;
        k->left = left - take;
        need -= take;
        stop = at + take;
        if (need <= 0) break;
        at = next;
        /* Past the latest bucket touched every bucket is fresh, and a slot
         * takes its whole span from each: a hold of millions of buckets (a
         * transfer of 1e4 s an item) skips to its last ring's worth, which
         * leaves the ring as the walk would, in constant time; the walk cost
         * time in proportion to simulated seconds (NH1). */
        if (i >= top && cap >= dt) {
            const int64_t skip = (int64_t)(need * c->inv_dt) - (int64_t)mask - 2;
            if (skip > 0) i += skip, need -= (double)skip * dt, at = (double)(i + 1) * dt;
        }
        k = calendar_slot(b, mask, ++i, cap);
        next = (double)(i + 1) * dt;
    }
    if (i > top) c->top = i;
    *end = stop > start + dur ? stop : start + dur;
    return start;
}

/* Takes `need` units at `rate` per second from time t on. Returns when the
 * first unit was taken (>= t); *end is when the last one was (>= the start
 * + need / rate). Inline: every read of a storage kind that queues out of
 * order takes from one or two. */
static inline double calendar_take(calendar_t *c, double t, double need, double *end) {
    const double dt = c->dt, cap = c->cap, inv_rate = c->inv_rate;
    const uint32_t mask = c->mask;
    calendar_bucket_t *const b = c->b;
    /* floor(t / dt) for t >= 0 as a truncation (no libm call); earlier
     * times are bucket 0. */
    const double q = t * c->inv_dt;
    int64_t i = q > 0 ? (int64_t)q : 0;
    const int64_t top = c->top;
    if (i < top - (int64_t)mask) {
        /* Older than the buckets remembered: served as if alone. */
        *end = t + need * inv_rate;
        return t;
    }
    const double total = need;
    calendar_bucket_t *k = calendar_slot(b, mask, i, cap);
    while (k->left <= 0)
        k = calendar_slot(b, mask, ++i, cap);
    /* Within a bucket the units go in time order: the first free one is at
     * the bucket's start plus what is taken, at the rate. */
    double start = (double)i * dt + (cap - k->left) * inv_rate;
    if (start < t) start = t;
    double stop;
    for (;;) {
        const double left = k->left;
        double take = need < left ? need : left;
        k->left = left - take;
        need -= take;
        stop = (double)i * dt + (cap - k->left) * inv_rate;
        if (need <= 0) break;
        k = calendar_slot(b, mask, ++i, cap);
    }
    if (i > top) c->top = i;
    /* A request that starts mid-bucket after units went unused before it
     * still needs its own time. */
    const double least = start + total * inv_rate;
    *end = stop > least ? stop : least;
    return start;
}
/* The bucket holding `at` keeps only its capacity after `at`: what begins
 * at `at` (an epoch's first reads or items) may not take the time before
 * it, which the fluid would otherwise serve as more than the resource has
 * in the span. A calendar never set up (no buckets) is left alone. */
static inline void calendar_cap_before(calendar_t *c, double at) {
    if (!c->b) return;
    const double q = at / c->dt;
    const int64_t i = q > 0 ? (int64_t)q : 0;
    if (i < c->top - (int64_t)c->mask) return;
    double *left = calendar_left(c, i), room = ((double)(i + 1) * c->dt - at) * c->rate;
    if (*left > room) *left = room;
}
void calendar_destroy(calendar_t *c);
/* Bytes of a calendar of 2^log2_buckets buckets. */
double calendar_bytes(int log2_buckets);

/* What the storage kinds use for reads out of time order: calendars of
 * 2^CALENDAR_LOG2 buckets, and a bucket of calendar_bucket_s seconds: a
 * 16th of a request's service_s, at least floor_s (a read's transfer, so
 * that it touches few buckets), and long enough that the buckets reach back
 * reach_s, or CALENDAR_REACH_S if more (over the batches of every worker in
 * flight: a batch of a slow pipeline can take seconds). */
enum { CALENDAR_LOG2 = 14 };
#define CALENDAR_REACH_S 20.0
double calendar_bucket_s(double service_s, double floor_s, double reach_s);

#endif
