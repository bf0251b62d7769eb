/* read_cpu_bench: the reader's CPU for one read, what
 * server.storage.cpu_us_per_read and cpu_us_per_mb charge (storage.h: cpu_s).
 *
 * Files of 4, 16, 64, 256 and 1024 KB are written to a fresh directory
 * under $TMPDIR (else /var/tmp), 64 MB of each size (at most 4096 files)
 * so that warm reads copy from DRAM, as a loader's do; a pass reads each file of one size once,
 * whole, as a loader does per item (open, read until EOF into a buffer of
 * its own, close; buffered, O_DIRECT off), on one thread, timing that
 * thread's CPU with getrusage(RUSAGE_THREAD) (ru_utime + ru_stime) over the
 * pass (CLOCK_THREAD_CPUTIME_ID: the same sum in ns; getrusage's moved in
 * scheduler ticks); per read = the pass's CPU over its files. Warm passes follow an
 * untimed pass that fills the page cache; cold passes first evict the files
 * (fdatasync + posix_fadvise(POSIX_FADV_DONTNEED), checked with mincore: a
 * host whose files stay resident, tmpfs, has no cold figure, and says so).
 * HTTP GETs of the same sizes go to a server thread of its own on
 * 127.0.0.1 over one keep-alive connection, timing the client thread the
 * same way (a C client: the kernel's TCP receive and the least client work;
 * a Python client adds its own).
 *
 * Fit: CPU us per read = per_read + per_mb x MB, both >= 0 (fit_cost_line)
 * over the medians, warm, cold and GET each. The warm line is a hit in the
 * page cache (server.cache_cpu_us_*), the cold one a read from the device
 * (server.storage.cpu_us_*; the warm one where nothing is cold: tmpfs); the
 * GET line a remote hit's under partitioned caching (server.network.cpu_us_*:
 * a request and a TCP receive on the reader), and an object store's by hand
 * (the profile describes local files). */
#ifndef STALLSIM_READ_CPU_BENCH_H
#define STALLSIM_READ_CPU_BENCH_H

#include <stddef.h>

#include "fit.h"
#include "stats.h"

enum { READ_CPU_NSIZES = 5 };

typedef struct {
    double size_kb[READ_CPU_NSIZES];
    int files[READ_CPU_NSIZES];            /* files of each size: the warm passes' */
    int pass_files[READ_CPU_NSIZES];       /* the cold and GET passes' (the first ones) */
    stat_summary warm_us[READ_CPU_NSIZES]; /* CPU us per read, per pass */
    stat_summary cold_us[READ_CPU_NSIZES];
    stat_summary get_us[READ_CPU_NSIZES];
    int reps, cold_ok, get_ok;
    int measured;          /* 0: the files could not be written or read (the reason in `reason`) */
    double resident_after; /* worst fraction of pages resident after eviction */
    char dir[200], get_reason[120], reason[256];
    cost_line warm, cold, get; /* per_x: us per MB; fixed: us per read */
} read_cpu_result;

/* Measures into out; 0, or -1 with the reason in err. */
int read_cpu_bench(int quick, int reps, read_cpu_result *out, char *err, size_t errlen);

#endif
