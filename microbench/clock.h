/* clock: a monotonic wall clock in seconds, for every timing in calibrate. */
#ifndef STALLSIM_CLOCK_H
#define STALLSIM_CLOCK_H
#include <time.h>

static inline double clock_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#endif
