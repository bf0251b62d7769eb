/* calendar: see calendar.h. */
#include "calendar.h"

#include <math.h>
#include <stdlib.h>

int calendar_init(calendar_t *c, double dt, double rate, int log2_buckets) {
    size_t n = (size_t)1 << log2_buckets;
    c->dt = dt;
    c->rate = rate;
    c->cap = rate * dt;
    c->inv_dt = 1 / dt;
    c->inv_rate = 1 / rate;
    c->top = 0;
    c->mask = (uint32_t)(n - 1);
    c->b = malloc(n * sizeof *c->b);
    if (!c->b) return -1;
    for (size_t i = 0; i < n; i++)
        c->b[i].tag = -1;
    return 0;
}

double calendar_take(calendar_t *c, double t, double need, double *end) {
    /* floor(t / dt) for t >= 0 as a truncation (no libm call); earlier
     * times are bucket 0. */
    const double q = t * c->inv_dt;
    int64_t i = q > 0 ? (int64_t)q : 0;
    if (i < c->top - (int64_t)c->mask) {
        /* Older than the buckets remembered: served as if alone. */
        *end = t + need * c->inv_rate;
        return t;
    }
    const double total = need;
    double *left = calendar_left(c, i);
    while (*left <= 0)
        left = calendar_left(c, ++i);
    /* Within a bucket the units go in time order: the first free one is at
     * the bucket's start plus what is taken, at the rate. */
    double start = (double)i * c->dt + (c->cap - *left) * c->inv_rate;
    if (start < t) start = t;
    double stop = start;
    for (;;) {
        double take = need < *left ? need : *left;
        *left -= take;
        need -= take;
        stop = (double)i * c->dt + (c->cap - *left) * c->inv_rate;
        if (need <= 0) break;
        left = calendar_left(c, ++i);
    }
    /* A request that starts mid-bucket after units went unused before it
     * still needs its own time. */
    double least = start + total * c->inv_rate;
    *end = stop > least ? stop : least;
    return start;
}

void calendar_destroy(calendar_t *c) {
    free(c->b);
    c->b = NULL;
}

double calendar_bytes(int log2_buckets) {
    return 16 * (double)((size_t)1 << log2_buckets);
}

double calendar_bucket_s(double service_s, double floor_s, double reach_s) {
    double dt = service_s / 16;
    if (dt < floor_s) dt = floor_s;
    double reach =
        (reach_s > CALENDAR_REACH_S ? reach_s : CALENDAR_REACH_S) / (double)(1 << CALENDAR_LOG2);
    if (dt < reach) dt = reach;
    return dt;
}
