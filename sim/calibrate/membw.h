/* membw: the host's memory bandwidth, STREAM-like, for the profile's
 * server.mem_gbps (the bound on prep cores past prep.scaling's last point).
 *
 * Three arrays of doubles, each array_mb (shrunk to fit a quarter of the free
 * memory), far beyond any last-level cache; the triad a[i] = b[i] + q * c[i]
 * runs on t threads (pthreads), each thread its own contiguous slice, for t
 * in 1..8, then powers of two and max_threads itself. Every thread count runs
 * one warm-up pass and `reps` timed passes; a pass's time runs from the first
 * thread's start to the last one's end. Bytes counted as STREAM counts them:
 * two arrays read and one written per element (24 bytes), not the read a
 * write-allocate cache adds. 1 GB = 1e9 bytes. The arrays are first touched
 * by max_threads threads, each its own slice (pages placed near the thread
 * of the all-threads run); after the runs every element of `a` is checked,
 * so no pass can be left out by the compiler.
 *
 * Use: membw_result r; membw_bench(ncores, 256, 5, &r, err, sizeof err);
 *      r.gb_s is the all-threads median.
 */
#ifndef STALLSIM_MEMBW_H
#define STALLSIM_MEMBW_H

#include <stddef.h>

#include "stats.h"

#define MEMBW_MAX_POINTS 32

typedef struct {
    int threads;
    stat_summary gb_s; /* per pass: bytes read + written over its time */
} membw_point;

typedef struct {
    int reps, max_threads, npoints;
    double array_mb; /* each of the three arrays, as run */
    double llc_kb;   /* the last-level cache of cpu0 from sysfs (1 KB = 1000 bytes); 0 = unknown */
    membw_point curve[MEMBW_MAX_POINTS];
    double gb_s; /* the median of max_threads threads */
} membw_result;

/* max_threads in 1..256, reps in 1..64, array_mb > 0. 0, or -1 with the
 * reason in err (out of memory or threads, a wrong result). */
int membw_bench(int max_threads, double array_mb, int reps, membw_result *out, char *err,
                size_t errlen);

#endif
