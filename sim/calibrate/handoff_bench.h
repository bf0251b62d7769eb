/* handoff_bench: what CoorDL's coordinated prep costs each job to receive a
 * prepared batch, for the pool loader's loader.handoff_ms_per_mb and
 * loader.handoff_ms_per_mb_per_reader.
 *
 * CoorDL prepares each batch once and stages it in shared memory; every
 * job's training process then copies it into a tensor (or pinned buffer) of
 * its own. Measured as that: one process (the writer) copies a batch from
 * its private buffer into a POSIX shared-memory segment; N reader processes
 * (fork), each having opened and mapped the segment by name once as a
 * process of another job would, copy the whole batch into a private buffer
 * they touched once beforehand (the training process's reused buffer); a
 * barrier per batch (process-shared semaphores) starts the N copies together
 * and the writer's next batch after the last. Every copy is checked against
 * the batch's stamp, so none can be skipped or read a stale batch. The first
 * batch warms up (page faults of the fresh mappings) and is not counted.
 *
 * Cost = the copying process's CPU time (CLOCK_THREAD_CPUTIME_ID) over the
 * batch's MB (1 MB = 1e6 bytes): the simulator charges it as CPU on the
 * server's cores (jobs.N.train_cpu_ms's mechanism), where contention for
 * cores is its own business; the wall time is reported beside it. Readers
 * copying at once compete for memory bandwidth: the fit over the reader
 * counts, per reader, is cost(N) = a + b (N - 1) with a, b >= 0.
 *
 * The segment's name is removed as soon as every reader has mapped it (and
 * on every error before that, and by cleanup.h on SIGINT/SIGTERM/SIGHUP), so
 * no run leaves one in /dev/shm; a batch larger than /dev/shm's free space,
 * than the process's file-size limit (ulimit -f: a segment is a file), or
 * than the free memory for the writer's and readers' buffers, is refused
 * before anything is created. calibrate then writes neither key and says
 * why (`hand-off not measured: ...`), as it does without a GPU.
 *
 * Use: handoff_result r;
 *      int n[] = {1, 2, 4, 8};
 *      handoff_bench(256.0 * 3 * 224 * 224, n, 4, 5, &r, err, sizeof err);
 *      r.ms_per_mb, r.ms_per_mb_per_reader: the fit.
 */
#ifndef STALLSIM_HANDOFF_BENCH_H
#define STALLSIM_HANDOFF_BENCH_H

#include <stddef.h>

#include "stats.h"

enum { HANDOFF_MAX_POINTS = 8, HANDOFF_MAX_READERS = 16, HANDOFF_MAX_REPS = 32 };

typedef struct {
    int readers;
    stat_summary cpu_ms_per_mb;  /* each reader's copy: CPU ms per MB, over readers and batches */
    stat_summary wall_ms_per_mb; /* the same copies' wall time */
} handoff_point;

typedef struct {
    int measured; /* calibrate's run: 0 where this host cannot hold a batch (reason) */
    char reason[320];
    double batch_mb;    /* one batch, as measured */
    double shm_free_mb; /* /dev/shm's free space before the run */
    int reps, npoints, online_cores;
    handoff_point pt[HANDOFF_MAX_POINTS];
    stat_summary write_ms_per_mb; /* the writer's copy into the segment, CPU, every point's */
    double ms_per_mb;             /* the fit: one reader alone */
    double ms_per_mb_per_reader;  /* the fit: added per further reader copying at once */
} handoff_result;

/* bytes: one batch (>= 4096); readers: npoints counts in 1..HANDOFF_MAX_READERS;
 * reps in 1..HANDOFF_MAX_REPS. 0, or -1 with the reason in err (the batch
 * does not fit /dev/shm or memory, a process could not be started, a copy
 * was wrong or a reader died); nothing is left in /dev/shm either way. */
int handoff_bench(double bytes, const int *readers, int npoints, int reps, handoff_result *out,
                  char *err, size_t errlen);

/* The least-squares line y = a + b (n - 1) through k points with a, b >= 0
 * (the better of the unconstrained fit and the two boundaries). */
void handoff_fit(const double *n, const double *y, int k, double *a, double *b);

/* The path /dev/shm gives a segment named by shm_open, for the free-space
 * check; exposed for the test. */
double handoff_shm_free_bytes(void);

#endif
