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
/* Takes `need` units at `rate` per second from time t on. Returns when the
 * first unit was taken (>= t); *end is when the last one was (>= the start
 * + need / rate). */
double calendar_take(calendar_t *c, double t, double need, double *end);
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

/* The calendar as `rate` slots: a request holds one of them for dur
 * seconds from t on, taking at most its own time from each bucket (a long
 * request is one slot busy, not all of them). Returns when it starts; *end
 * when it lets go. Inline: the pytorch kind holds a core for every item. */
static inline double calendar_hold(calendar_t *c, double t, double dur, double *end) {
    const double dt = c->dt;
    /* floor(t / dt) for t >= 0, as a truncation (no libm call); earlier
     * times are bucket 0. */
    const double q = t * c->inv_dt;
    int64_t i = q > 0 ? (int64_t)q : 0;
    if (i < c->top - (int64_t)c->mask) {
        *end = t + dur;
        return t;
    }
    double *left = calendar_left(c, i);
    while (*left <= 0)
        left = calendar_left(c, ++i);
    double start = (double)i * dt;
    if (start < t) start = t;
    /* One slot: at most the bucket's own time from each bucket; where the
     * other slots left less, the rest carries on into the next. */
    double need = dur, at = start, stop = start;
    for (;;) {
        const double next = (double)(i + 1) * dt;
        double span = next - at;
        if (span > need) span = need;
        double take = span < *left ? span : *left;
        *left -= take;
        need -= take;
        stop = at + take;
        if (need <= 0) break;
        at = next;
        left = calendar_left(c, ++i);
    }
    *end = stop > start + dur ? stop : start + dur;
    return start;
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
