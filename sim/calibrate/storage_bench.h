/* storage_bench: per-item reads of real files, warm and cold, at several
 * queue depths, and the storage model fitted to them.
 *
 * One pass reads every file once, whole, in a fresh random order (open, pread
 * until EOF, close: what a data loader does per item), with qd threads
 * keeping qd requests in flight. Warm passes follow an untimed pass that
 * fills the page cache. Cold passes first evict the files: fdatasync +
 * posix_fadvise(POSIX_FADV_DONTNEED), verified by mmap + mincore; if pages
 * stay resident it reads with O_DIRECT instead, and says so.
 *
 * Model (what the simulator replays): a request costs latency + size / bw,
 * latency overlapped across the queue, bandwidth shared. So the time per item
 * at queue depth q is  t(q) = latency / q + mean_size / bw : a least-squares
 * line in 1/q over the cold queue-depth curve. Should that give a
 * non-physical (negative) term, the per-request fit of time vs bytes at
 * queue depth 1 is used instead, and the profile records which.
 *
 * One sequential stream follows: the largest files evicted, then read by
 * one reader, each in order in 1 MiB pieces (a streaming reader's pattern;
 * no key takes its rate: the profile records it beside the curve, with the
 * device the files lie on and its readahead window, server.storage.
 * read_ahead_kb, which the streaming reader and the linux cache read).
 *
 * The ssd kind takes the cold curve itself instead of a fit: the rate of the
 * plateau around the best depth as its bandwidth, and per depth the latency
 * with which its device reproduces the throughput measured there
 * (storage_result.curve_ms; storage_bench.c's ssd_curve).
 *
 * Use: storage_bench(paths, sizes, n, reps, seed, &res, err, errlen).
 */
#ifndef STALLSIM_STORAGE_BENCH_H
#define STALLSIM_STORAGE_BENCH_H

#include <stddef.h>
#include "fit.h"
#include "stats.h"

#define STORAGE_NQD 4
extern const int storage_qds[STORAGE_NQD]; /* 1, 4, 16, 32 */

typedef struct {
    int qd;
    stat_summary mb_s, items_s;    /* per pass (1 MB = 1e6 bytes) */
    double p50_ms, p90_ms, p99_ms; /* per-request latency over all passes */
} storage_point;

typedef struct {
    int files, reps;
    double total_mb, mean_kb;
    storage_point warm[STORAGE_NQD], cold[STORAGE_NQD];
    const char *cold_method; /* "fadvise_dontneed" or "o_direct" or "none" */
    int eviction_ok;         /* pages were verified gone (or O_DIRECT used) */
    double resident_after;   /* worst fraction of pages resident after eviction */
    linear_fit qd_fit;       /* seconds per item vs 1 / queue depth (cold) */
    linear_fit request_fit;  /* seconds per request vs bytes (cold, qd 1) */
    const char *fit_method;  /* "qd_curve", "per_request" or "none" */
    double read_mb_s, latency_ms;
    int queue_depth; /* of the best cold throughput */
    /* The ssd kind's curve (storage_ssd.c): the plateau's MB/s, and at each
     * depth q the per-request latency with which its device, q reads of
     * these files in flight, moves the items/s measured there (at most the
     * plateau's; storage_bench.c's ssd_curve). */
    double peak_mb_s, curve_ms[STORAGE_NQD];
    /* Which storage this was: the folder of the first file, the block
     * device holding it ("" when on none: tmpfs, NFS, overlay) and that
     * disk's readahead window (-1 when unknown; storage_where). */
    char dir[1024], device[96];
    long read_ahead_kb;
    /* One sequential stream: the largest files, cold, one reader reading
     * each in order in STORAGE_SEQ_PIECE pieces, up to STORAGE_SEQ_BYTES. */
    double seq_mb_s, seq_mb;
    int seq_files;
} storage_result;

#define STORAGE_SEQ_PIECE (1 << 20)
#define STORAGE_SEQ_BYTES (64L << 20)

/* The block device holding path, as "major:minor (disk)" in device (the
 * whole disk's name, a partition's parent), and that disk's read_ahead_kb
 * (/sys/block/DISK/queue/read_ahead_kb); 0, or -1 with device "" and
 * *read_ahead_kb -1 when path is on no block device. */
int storage_where(const char *path, char *device, size_t len, long *read_ahead_kb);

int storage_bench(char *const *paths, const long *sizes, int n, int reps, unsigned long seed,
                  storage_result *out, char *err, size_t errlen);

/* Evicts the files from the page cache and returns the fraction of their
 * pages still resident afterwards (mincore), or -1 when it cannot tell. */
double storage_evict(char *const *paths, int n);

/* Adds one file's resident and total pages (mmap + mincore) to *resident and
 * *total, evicting it first when asked; 0, or -1 when it cannot tell. */
int storage_file_pages(const char *path, int evict, long *resident, long *total);

/* Fraction of the files' pages resident in the page cache (mincore), or -1. */
double storage_resident(char *const *paths, int n);

#endif
