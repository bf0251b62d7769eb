/* tier: a local cache device per server in front of storage (an NVMe cache
 * before an object store; server.tier.*): a second cache over the DRAM
 * cache's misses, read from its own device, a fixed kind's. This file owns
 * its key rows (kinds.c registers them, spliced at schema.c's marker), its
 * rules, the scenario its device is read with and its bytes in the memory
 * budget. The simulator (sim.c) and the model (model.c) still run it by
 * hand; sim/kinds/README.md has the plan that makes it a storage decorator. */
#ifndef STALLSIM_TIER_H
#define STALLSIM_TIER_H

#include "scenario.h"
#include <stdint.h>

#include "schema.h"

/* Its own options (its rows store into them: KIND_FIELD), which the
 * simulator and the model read while they run it by hand. */
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

#endif
