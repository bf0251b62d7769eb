/* clock: a monotonic wall clock in seconds, for every timing in calibrate and
 * measure, and the calling thread's CPU time (to tell work from waiting for a
 * CPU on a shared host). */
#ifndef STALLSIM_CLOCK_H
#define STALLSIM_CLOCK_H
#include <time.h>

static inline double clock_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double clock_thread_cpu(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#endif
