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
