/* shards: see shards.h. */
#include "shards.h"

#include <stdlib.h>
#include <string.h>

int shards_init(shards_t *sh, uint32_t n, uint32_t S, uint32_t streams, uint64_t M) {
    memset(sh, 0, sizeof *sh);
    sh->n = n;
    sh->S = S;
    sh->nshards = (uint32_t)(((uint64_t)n + S - 1) / S);
    sh->nstreams = streams ? streams : 1;
    size_t k = sh->nshards, q = sh->nstreams;
    sh->order = calloc(k, sizeof *sh->order);
    sh->cur = calloc(q, sizeof *sh->cur);
    sh->at = calloc(q, sizeof *sh->at);
    sh->first = calloc(k, sizeof *sh->first);
    sh->span = calloc(k, sizeof *sh->span);
    sh->cum = calloc(k, sizeof *sh->cum);
    sh->hit = calloc(k, 1);
    sh->seen = calloc(k, sizeof *sh->seen);
    sh->nbatches = M ? ((uint64_t)n + M - 1) / M : 0;
    sh->batch_worker = calloc(sh->nbatches ? sh->nbatches : 1, sizeof *sh->batch_worker);
    if (!sh->batch_worker || !sh->order || !sh->cur || !sh->at || !sh->first || !sh->span ||
        !sh->cum || !sh->hit || !sh->seen || perm_gen_init(&sh->pg, sh->nshards))
        return -1;
    return 0;
}

void shards_free(shards_t *sh) {
    free(sh->order), free(sh->cur), free(sh->at), free(sh->first), free(sh->span), free(sh->cum);
    free(sh->hit);
    free(sh->seen), free(sh->batch_worker);
    free(sh->req_to), free(sh->req_lo), free(sh->fill), free(sh->lane), free(sh->reach);
    if (sh->pg.n) perm_gen_free(&sh->pg);
    memset(sh, 0, sizeof *sh);
}

double shards_bytes(double n, double S, double streams) {
    double k = S > 0 ? (n + S - 1) / S : n;
    /* order, first, span, cum, hit, seen and the permutation generator's scratch */
    return k * (4 + 8 + 8 + 8 + 1 + 4 + 2 + 4) + streams * 8;
}

int shards_stream_init(shards_t *sh) {
    sh->req_to = calloc(sh->nshards, sizeof *sh->req_to);
    sh->req_lo = calloc(sh->nshards, sizeof *sh->req_lo);
    sh->fill = calloc(sh->nshards, sizeof *sh->fill);
    sh->lane = calloc(sh->nshards, sizeof *sh->lane);
    sh->reach = calloc(sh->nshards, sizeof *sh->reach);
    return sh->req_to && sh->req_lo && sh->fill && sh->lane && sh->reach ? 0 : -1;
}

double shards_stream_bytes(double n, double S) {
    return (S > 0 ? (n + S - 1) / S : n) * (8 + 8 + 8 + 4 + 8);
}

static uint32_t shard_len(const shards_t *sh, uint32_t h) {
    uint64_t end = (uint64_t)(h + 1) * sh->S;
    return (uint32_t)((end < sh->n ? end : sh->n) - (uint64_t)h * sh->S);
}

/* The next item of stream q (whose shards are order[cur], order[cur + step],
 * ...), or UINT32_MAX when it has none left. */
static uint32_t next_item(shards_t *sh, uint32_t q, uint32_t step) {
    if (sh->cur[q] >= sh->nshards) return UINT32_MAX;
    uint32_t h = sh->order[sh->cur[q]];
    uint32_t x = h * sh->S + sh->at[q];
    if (sh->lane) sh->lane[h] = q;
    if (++sh->at[q] == shard_len(sh, h)) {
        sh->at[q] = 0;
        sh->cur[q] = sh->cur[q] + step < sh->cur[q] ? sh->nshards : sh->cur[q] + step;
    }
    return x;
}

void shards_order_lanes(shards_t *sh, gsl_rng *r, uint32_t lanes, uint32_t *perm) {
    perm_generate(&sh->pg, r, sh->order);
    if (lanes > sh->nstreams) lanes = sh->nstreams;
    if (lanes < 1) lanes = 1;
    /* Lane l starts on shard l of the order; a lane that finishes a shard
     * opens the next one nobody has opened. */
    uint32_t opened = lanes < sh->nshards ? lanes : sh->nshards;
    for (uint32_t l = 0; l < lanes; l++)
        sh->cur[l] = l < sh->nshards ? l : sh->nshards, sh->at[l] = 0;
    uint32_t pos = 0, active = opened;
    while (pos < sh->n && active) {
        active = 0;
        for (uint32_t l = 0; l < lanes && pos < sh->n; l++) {
            if (sh->cur[l] >= sh->nshards) continue;
            uint32_t h = sh->order[sh->cur[l]];
            perm[pos++] = h * sh->S + sh->at[l];
            if (sh->lane) sh->lane[h] = l;
            if (++sh->at[l] == shard_len(sh, h)) {
                sh->at[l] = 0;
                sh->cur[l] = opened < sh->nshards ? opened++ : sh->nshards;
            }
            active += sh->cur[l] < sh->nshards;
        }
    }
}

void shards_order_workers(shards_t *sh, gsl_rng *r, uint32_t G, uint32_t W, uint64_t M,
                          uint32_t n_used, uint32_t *perm) {
    perm_generate(&sh->pg, r, sh->order);
    uint32_t Wn = W ? W : 1, Q = G * Wn;
    if (Q > sh->nstreams) Q = sh->nstreams; /* the engine sizes streams as G x W */
    for (uint32_t q = 0; q < Q; q++)
        sh->cur[q] = q < sh->nshards ? q : sh->nshards, sh->at[q] = 0;
    uint64_t pos = 0;
    uint32_t w = Wn - 1;
    for (uint64_t k = 0; pos < sh->n; k++) {
        uint64_t lo = k * M, hi = lo + M < sh->n ? lo + M : sh->n;
        /* The next worker in turn that still has shards on some rank. */
        for (uint32_t t = 0; t < Wn; t++) {
            w = (w + 1) % Wn;
            int alive = 0;
            for (uint32_t r = 0; r < G && !alive; r++)
                alive = r * Wn + w < Q && sh->cur[r * Wn + w] < sh->nshards;
            if (alive) break;
        }
        if (k < sh->nbatches) sh->batch_worker[k] = w;
        for (pos = lo; pos < hi; pos++) {
            /* Past the epoch's used items (drop_last) the order no longer matters. */
            uint32_t r = pos < n_used ? (uint32_t)((pos - lo) % G) : 0;
            uint32_t q = (r * Wn + w) % Q;
            uint32_t x = next_item(sh, q, Q);
            /* This rank's worker ran dry: its other workers' items, then any. */
            for (uint32_t t = 1; x == UINT32_MAX && t < Wn; t++)
                x = next_item(sh, (r * Wn + (w + t) % Wn) % Q, Q);
            for (uint32_t t = 1; x == UINT32_MAX && t < Q; t++)
                x = next_item(sh, (q + t) % Q, Q);
            perm[pos] = x;
        }
    }
}

uint32_t shards_in(shards_t *sh, const uint32_t *perm, uint64_t lo, uint64_t hi) {
    if (++sh->stamp == 0) {
        memset(sh->seen, 0, sizeof *sh->seen * sh->nshards);
        sh->stamp = 1;
    }
    uint32_t d = 0;
    for (uint64_t i = lo; i < hi; i++) {
        uint32_t h = perm[i] / sh->S;
        d += sh->seen[h] != sh->stamp;
        sh->seen[h] = sh->stamp;
    }
    return d;
}
