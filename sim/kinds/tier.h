/* tier: a local cache device per server in front of storage (an NVMe cache
 * before an object store; server.tier.*): a second cache over the DRAM
 * cache's misses, read from its own device, a fixed kind's. This file owns
 * its key rows (kinds.c registers them, spliced at schema.c's marker), its
 * rules, the scenario its device is read with, its bytes in the memory
 * budget, and how it runs: the simulator's per-server caches and devices
 * (tier_open .. tier_close) and the model's share of reads and device rates
 * (tier_model_*). The simulator and the model only call these; the counters
 * of what it served stay theirs (outputs). sim/kinds/README.md has what is
 * left of making it a storage decorator. */
#ifndef STALLSIM_TIER_H
#define STALLSIM_TIER_H

#include <stdint.h>

#include "cache.h"
#include "scenario.h"
#include "schema.h"
#include "storage.h"

/* Its own options (its rows store into them: KIND_FIELD). */
typedef struct {
    double cache_gb; /* 0 = none */
    int cache;       /* policy: index into the cache kinds */
    double read_mb_s;
    double latency_ms;
    double read_iops;
    int64_t queue_depth;
    double cpu_us_per_read, cpu_us_per_mb; /* the reader's CPU of a tier read */
} tier_opts_t;
SCN_KIND_OPTS_FITS(tier_opts_t);

static inline const tier_opts_t *tier_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_TIER, 0);
}

/* Its scenario rows. */
const key_def_t *tier_keys(int *n);
/* Whether the scenario has a tier (server.tier.cache_gb > 0). */
int tier_on(const scenario_t *s);
/* The scenario the tier's device is read with: s with the tier's figures as
 * a fixed kind's, local to each server. */
void tier_scenario(scenario_t *t, const scenario_t *s);
/* 0 when `name` is a tier key that means nothing here (no tier), else 1. */
int tier_key_used(const scenario_t *s, const char *name);
/* Its rules: 0, or 1 after the errors. */
int tier_check(const scenario_t *s);
/* Memory budget: bytes of every server's tier (cache, device) and the
 * scenario copy its device reads. */
double tier_state_bytes(const scenario_t *s);

/* ---- the simulator's tier ---- */

/* One server's tier: its cache (entries as the DRAM cache's: items, or
 * whole record shards) and its device. */
typedef struct {
    cache_t cache;
    storage_t dev;
} tier_server_t;

/* Every server's tier; zeroed (sv NULL) when closed or never opened. */
typedef struct {
    tier_server_t *sv; /* [nservers]: the simulated ones opened */
    scenario_t *s;     /* the scenario its devices are read with (tier_scenario) */
    int nservers;
} tier_t;

/* Opens the tier of each of nservers servers whose weight is > 0 (weight
 * NULL: every server; a server-sampled run simulates only some), its cache
 * over `entries` entries of the sizes `sizes`, its device's reads
 * `unordered` as storage_t says. 0, or -1 without memory (t is then
 * closed). */
int tier_open(tier_t *t, const scenario_t *s, int nservers, const double *weight,
              const uint32_t *sizes, uint32_t entries, int unordered);
void tier_close(tier_t *t);

/* Server sv's tier (one opened: its weight > 0). */
static inline tier_server_t *tier_server(tier_t *t, int sv) {
    return &t->sv[sv];
}

/* A DRAM miss of `entry` looks in the server's tier v, whose policy
 * updates (a miss is admitted). A hit is read from the tier's device: 1,
 * *end the arrival of its last byte, its io counted wt times
 * (storage_read_wt) in acct. A miss: 0, and the caller reads storage.
 * Inline, on the server's tier_server_t (which the caller may hold once a
 * batch): the simulator's hot loop calls it at every DRAM miss when there
 * is a tier, and cachegrind counted the server's lookup at each miss at
 * 1 % of a tier run's instructions, a time that is negative on a miss (a
 * floating-point test per hit) at 0.4 %; this way costs none. */
static inline int tier_read(tier_server_t *v, uint32_t entry, double at, double bytes,
                            double offset, double wt, io_acct_t *acct, double *end) {
    if (!v->cache.ops->access(&v->cache, entry, CACHE_NEVER)) return 0;
    *end = storage_read_wt(&v->dev, at, bytes, offset, acct, wt);
    return 1;
}

/* Seconds the tier's device streams `bytes` over, past its request's
 * latency: a record shard's items arrive in turn over it. */
double tier_span(const tier_t *t, double bytes);
/* CPU seconds a read of `bytes` from the tier's device costs its reader
 * (storage_cpu_s of its device). */
double tier_cpu_s(const tier_t *t, double bytes);

/* ---- the model's tier ---- */

/* What the model reads of the tier, made once a run (tier_model_open);
 * its device's scenario is copied only when there is a tier. */
typedef struct {
    int on;                   /* a tier (tier_on) */
    int cache;                /* its policy */
    double f;                 /* its size as a fraction of the data set */
    const storage_ops_t *dev; /* its device's kind (set when on) */
    scenario_t s;             /* its device's scenario (set when on) */
} tier_model_t;

void tier_model_open(tier_model_t *m, const scenario_t *s);
/* The share of reads the tier serves at position u in [0, 1) of epoch e
 * (or over the epoch, u < 0: the model takes the mean of its positions,
 * model.c says why), given the DRAM
 * cache's fraction f of the data and its hit h there: the two levels' hit
 * as one cache of the tier's size less h (the tier sees only the misses,
 * so its recency differs: the model marks a run with a tier approximate).
 * k streams in step, each touching an item with probability p per epoch
 * (model.h: model_hit_epoch). 0 without a tier or one no larger than the
 * DRAM cache. */
double tier_model_at(const tier_model_t *m, double f, double h, double p, int k, int e, double u);
/* Its device (when on): the uncontended service time of a read of
 * `bytes`, the reads of `bytes` a second one device serves at most, and a
 * read's CPU seconds to its reader. */
double tier_service_s(const tier_model_t *m, double bytes);
double tier_items_s(const tier_model_t *m, double bytes);
double tier_model_cpu_s(const tier_model_t *m, double bytes);

#endif
