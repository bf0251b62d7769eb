/* che: see che.h.
 *
 * An LRU cache of K = f N items holds exactly the items touched in the last
 * T, where T makes the expected number of distinct items touched in the
 * window equal K. With window probabilities P(untouched by one stream) =
 * 1 - p tau within an epoch, the window either still lies in the history (not
 * yet full), or crosses into earlier epochs, or fits in the current one;
 * g = (1-f)^(1/k), q = (1-p)^e give
 *   not full (u < u_fill):  hit = 1 - q^k (1 - p u)^(k-1)
 *   window reaches back:    hit = 1 - (1 - f) / (1 - p u)
 *   window in this epoch:   hit = 1 - g^(k-1)              (u >= u_zero)
 * with (1 - p u_fill) q = g and u_zero = (1 - g) / p. k = p = 1 gives the
 * classic f + (1-f) ln(1-f); in general the steady state is
 * f + (1-f) ln(1-f) / k for p = 1. */
#include "che.h"

#include <math.h>

che_t che_init(double f, double p, int k, int e) {
    che_t s = {f, p, pow(1 - f, 1.0 / k), pow(1 - p, e), k};
    return s;
}

double che_fill_part(const che_t *s, double a) {
    if (a <= 0) return 0;
    double qk = pow(s->q, s->k);
    return a - qk * (1 - pow(1 - s->p * a, s->k)) / (s->p * s->k);
}

static double clamp01(double x) {
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

double che_fill_time(const che_t *s) {
    if (s->q <= s->g) return 0;
    return clamp01((1 - s->g / s->q) / s->p);
}

double che_fill_at(const che_t *s, double u) {
    return 1 - pow(s->q, s->k) * pow(1 - s->p * u, s->k - 1);
}

double che_lru_epoch(double f, double p, int k, int e) {
    if (f <= 0 || p <= 0) return 0;
    che_t s = che_init(f < 1 ? f : 1, p, k, e);
    if (f >= 1) return che_fill_part(&s, 1);
    double a = che_fill_time(&s);
    double z = clamp01((1 - s.g) / p);
    if (z < a) z = a;
    double reach = (z - a) + (1 - f) / p * log((1 - p * z) / (1 - p * a));
    return che_fill_part(&s, a) + reach + (1 - pow(s.g, k - 1)) * (1 - z);
}

double che_lru_at(double f, double p, int k, int e, double u) {
    if (f <= 0 || p <= 0) return 0;
    che_t s = che_init(f < 1 ? f : 1, p, k, e);
    double a = f >= 1 ? 1 : che_fill_time(&s);
    if (u < a) return che_fill_at(&s, u);
    double z = clamp01((1 - s.g) / p);
    if (u < z) return 1 - (1 - f) / (1 - p * u);
    return 1 - pow(s.g, k - 1);
}
