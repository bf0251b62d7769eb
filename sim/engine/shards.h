/* shards: record shards (TFRecord, WebDataset tar, ...) for the simulator:
 * the epoch's item order and what each shard's read has delivered so far.
 *
 * Items [hS, (h+1)S) are shard h (the last may be shorter). Each epoch a
 * stream reads its shards in a uniform random order, each from its first
 * item to its last, with one request for the whole shard:
 * - the pool loader keeps `lanes` shards open and takes their items in turn
 *   (tf.data's interleave; DALI's and CoorDL's readers);
 * - PyTorch's DataLoader splits the shards over its ranks and workers, as
 *   WebDataset does: rank r's worker w reads shards q, q + Q, ... of the
 *   order (q = r x W + w, Q = ranks x W), and its batches are its own
 *   shards' items in turn.
 * The engine looks a shard up in the cache and reads it from storage when
 * its first item comes (first, hit) and serves the rest from that read.
 *
 *   shards_t sh;  shards_init(&sh, n, S, lanes_or_streams);
 *   shards_order_lanes(&sh, rng, lanes, perm)              (pool), or
 *   shards_order_workers(&sh, rng, G, W, M, n_used, perm)   (pytorch);
 *   shards_free(&sh); */
#ifndef STALLSIM_SHARDS_H
#define STALLSIM_SHARDS_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "perm.h"

typedef struct {
    uint32_t n, S, nshards;
    perm_gen_t pg;
    uint32_t *order;    /* [nshards]: this epoch's shard order */
    uint32_t *cur, *at; /* [streams]: each lane's or worker's shard (index into order) and item */
    uint32_t nstreams;
    double *first;          /* [nshards]: when the shard's first byte arrived this epoch (T) */
    double *span;           /* [nshards]: how long its bytes then took to arrive */
    double *cum;            /* [nshards]: its bytes delivered so far this epoch */
    unsigned char *hit;     /* [nshards]: served from the cache this epoch */
    uint32_t *seen, stamp;  /* [nshards]: shards_in's marks */
    uint32_t *batch_worker; /* [batches]: shards_order_workers' worker of each batch */
    /* Streamed (loader.reader: stream; shards_stream_init): the shard's
     * bytes asked of storage so far, and where its last read began; its
     * last read ends at first[h], the one before at span[h]. */
    double *req_to, *req_lo;
    double *fill; /* [nshards]: bytes its worker reads before its first item (its buffer's fill) */
    uint32_t *lane; /* [nshards]: the lane or worker (0 .. streams - 1) that reads it this epoch */
    double *reach;  /* [nshards]: through a page cache, where the read before its last reached */
    uint64_t nbatches;
} shards_t;

/* 0, or -1 without memory. streams: lanes (pool) or ranks x workers
 * (pytorch, whose batches of M items get their worker in batch_worker). */
int shards_init(shards_t *sh, uint32_t n, uint32_t S, uint32_t streams, uint64_t M);
void shards_free(shards_t *sh);
/* Bytes of state for n items in shards of S, streams as above. */
double shards_bytes(double n, double S, double streams);
/* A streaming reader's state beside it (req_to, req_lo, fill, lane, reach): 0,
 * or -1 without memory; and its bytes for n items in shards of S. */
int shards_stream_init(shards_t *sh);
double shards_stream_bytes(double n, double S);
/* The pool loader's order: `lanes` shards open, one item of each in turn. */
void shards_order_lanes(shards_t *sh, gsl_rng *r, uint32_t lanes, uint32_t *perm);
/* PyTorch's: positions kM + r + iG of global batch k (DistributedSampler's
 * split) from rank r's worker batch_worker[k]: the workers in turn, those
 * out of shards on every rank dropping out (W = 0: the rank's own process);
 * a rank whose own worker ran dry takes that rank's other workers' items. */
void shards_order_workers(shards_t *sh, gsl_rng *r, uint32_t G, uint32_t W, uint64_t M,
                          uint32_t n_used, uint32_t *perm);
/* Distinct shards among perm[lo, hi): the batch's mix. */
uint32_t shards_in(shards_t *sh, const uint32_t *perm, uint64_t lo, uint64_t hi);

#endif
