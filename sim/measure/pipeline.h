/* pipeline: a real input pipeline on this host, the loader that
 * `stallsim measure` times. It does what the simulator replays (sim/engine.c),
 * with real work in place of modelled costs:
 *
 * - items are taken in the order of one epoch's permutation; global batch k
 *   is positions [kM, (k+1)M) of it;
 * - `fetchers` threads read items (open, read(2) to EOF, close; or, given
 *   urls, GET them whole over one kept-alive HTTP connection per thread
 *   (http_get.h); or take them from the in-process MinIO cache, or from
 *   memory in the T_prep run), in
 *   order, at most `prefetch` batches ahead of the batch the GPU last
 *   started: the storage queue;
 * - `workers` threads decode each item with libjpeg-turbo and run the CPU
 *   augment (augment_cpu to 224 x 224) in order, each as soon as its item is
 *   fetched: the prep cores. The float tensor goes to the worker's own buffer
 *   (batches are counted, not collated: the model has no collate cost either);
 * - the calling thread emulates the GPU: it waits for batch k to be complete,
 *   marks it started (freeing a prefetch slot) and sleeps the batch's compute
 *   time, as the DLIO benchmark does.
 *
 * MinIO (CoorDL): an item read from a file is admitted, as a copy of its
 * encoded bytes, while the cache has room for it; it is never evicted.
 * Admission is decided in permutation order, as in the simulator, so the
 * cache's contents do not depend on thread timing.
 *
 * Use: pipe_create(&cfg, &p, err, n); pipe_run_epoch(p, perm, &ep, err, n)
 *      per epoch; pipe_destroy(p).
 */
#ifndef STALLSIM_PIPELINE_H
#define STALLSIM_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int n;                     /* items */
    char *const *paths;        /* [n] files */
    char *const *urls;         /* [n] URLs to GET instead of reading paths, or NULL */
    const long *sizes;         /* [n] file sizes (MinIO admission) */
    unsigned char *const *mem; /* [n] encoded items held in memory (the T_prep run), or NULL */
    int workers;               /* prep threads */
    int fetchers;              /* fetch threads: reads in flight at most */
    int64_t batch_items;       /* M: items of one global batch */
    int prefetch;              /* batches prepared ahead of the GPU */
    double compute_s;          /* emulated GPU time of a full batch */
    double compute_last_s;     /* ... and of the last, partial batch */
    double minio_bytes;        /* MinIO capacity in bytes; 0 = no MinIO cache */
    int page_hits; /* count items wholly in the page cache (mincore) before reading; not with urls
                    */
    unsigned long seed; /* augment crops and flips */
} pipe_cfg;

typedef struct {
    double epoch_s;     /* first fetch to the end of the last batch's compute */
    double gpu_s;       /* emulated GPU busy time, measured around each wait */
    double prep_busy_s; /* decode + augment seconds, summed over workers */
    double prep_cpu_s;  /* CPU time the workers got for that work (thread CPU clock): below
                           prep_busy_s when they waited for a CPU another process held */
    double read_busy_s; /* seconds in open/read/close (or GET), summed over fetchers */
    long fetched;       /* items fetched (any source) */
    long decoded;       /* items decoded and augmented */
    long failed;        /* items that could not be read or decoded (skipped) */
    long hits;          /* MinIO hits; with page_hits, also files wholly resident */
    long reads;         /* files read with read(2) (or objects fetched with GET) */
    double read_bytes;  /* bytes read with read(2) (or received by GETs) */
    double miss_bytes;  /* with page_hits: bytes of pages not resident before the read */
    int once;           /* 1 when every item was fetched exactly once and prepped exactly once */
} pipe_epoch;

typedef struct pipeline pipeline;

int pipe_create(const pipe_cfg *cfg, pipeline **out, char *err, size_t errlen);
/* Runs one epoch in the order perm (a permutation of [0, n)). Returns 0, or
 * -1 with err set on a runtime failure (threads, memory, decoder). */
int pipe_run_epoch(pipeline *p, const uint32_t *perm, pipe_epoch *out, char *err, size_t errlen);
/* Bytes held by the MinIO cache. */
double pipe_minio_used(const pipeline *p);
void pipe_destroy(pipeline *p);

#endif
