/* tier: see tier.h. */
#include "tier.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "kinds.h"

extern const storage_ops_t storage_fixed;

static const char *tier_cache_choice(int i) {
    return kind_name(FAMILY_CACHE, i);
}

/* clang-format off */
static key_def_t keys[] = {
    {"server.tier.cache_gb", KT_REAL, "GB", "0", 0, 1e9, 0, NULL, KIND_FIELD(tier_opts_t, cache_gb), "a local cache device per server in front of storage (an NVMe cache before an object store): GB of items it holds; a DRAM miss looks here before storage (0 = no tier)"},
    {"server.tier.cache", KT_ENUM, "", "lru", 0, 0, 0, tier_cache_choice, KIND_FIELD(tier_opts_t, cache), NULL /* tier_help */},
    {"server.tier.read_mb_s", KT_REAL, "MB/s", "3000", 0, SCHEMA_BIG, 1, NULL, KIND_FIELD(tier_opts_t, read_mb_s), "the tier device's read bandwidth (as server.storage.kind: fixed)"},
    {"server.tier.latency_ms", KT_REAL, "ms", "0.08", 0, 1e6, 0, NULL, KIND_FIELD(tier_opts_t, latency_ms), "the tier device's per-request latency"},
    {"server.tier.read_iops", KT_REAL, "IOPS", "0", 0, SCHEMA_BIG, 0, NULL, KIND_FIELD(tier_opts_t, read_iops), "the tier device's read requests per second at most (0 = no limit)"},
    {"server.tier.queue_depth", KT_INT, "requests", "64", 1, 1000000, 0, NULL, KIND_FIELD(tier_opts_t, queue_depth), "the tier device's requests in flight at most"},
    {"server.tier.cpu_us_per_read", KT_REAL, "us", "0", 0, 1e9, 0, NULL, KIND_FIELD(tier_opts_t, cpu_us_per_read), "CPU time of one core that one read from the tier's device costs its reader (a local file's open, read and close), as server.storage.cpu_us_per_read (0 = none)"},
    {"server.tier.cpu_us_per_mb", KT_REAL, "us/MB", "0", 0, 1e9, 0, NULL, KIND_FIELD(tier_opts_t, cpu_us_per_mb), "CPU time of one core per MB a read from the tier's device moves (the kernel's copy), as server.storage.cpu_us_per_mb (0 = none)"},
};
/* clang-format on */
#define NKEYS ((int)(sizeof keys / sizeof keys[0]))

/* server.tier.cache's help lists the registry's policies, those that need
 * the future as refused, so a new policy is listed where it may be chosen. */
static char cache_help[512];
static pthread_once_t help_once = PTHREAD_ONCE_INIT;

static void tier_help(void) {
    char use[256], refused[128];
    cache_kinds_list(use, sizeof use, 0, ", ");
    cache_kinds_list(refused, sizeof refused, 1, " or ");
    int n = snprintf(cache_help, sizeof cache_help,
                     "the tier's policy over the DRAM cache's misses: %s", use);
    if (refused[0])
        snprintf(cache_help + n, sizeof cache_help - (size_t)n, " (%s is refused)", refused);
    keys[1].help = cache_help;
}

const key_def_t *tier_keys(int *n) {
    pthread_once(&help_once, tier_help);
    *n = NKEYS;
    return keys;
}

int tier_on(const scenario_t *s) {
    return tier_opts(s)->cache_gb > 0;
}

void tier_scenario(scenario_t *t, const scenario_t *s) {
    *t = *s;
    t->server.storage.kind = storage_kind_index(&storage_fixed);
    t->server.storage.read_mb_s = tier_opts(s)->read_mb_s;
    t->server.storage.latency_ms = tier_opts(s)->latency_ms;
    t->server.storage.read_iops = tier_opts(s)->read_iops;
    t->server.storage.queue_depth = tier_opts(s)->queue_depth;
    t->server.storage.cpu_us_per_read = tier_opts(s)->cpu_us_per_read;
    t->server.storage.cpu_us_per_mb = tier_opts(s)->cpu_us_per_mb;
    t->server.storage.shared = 0;
}

int tier_key_used(const scenario_t *s, const char *name) {
    /* The device and the policy mean nothing without the tier. */
    return tier_on(s) || strncmp(name, "server.tier.", 12) || !strcmp(name, keys[0].name);
}

/* The rules of a tier: a policy that needs no future, local caching; and
 * without one, none of its other keys. */
int tier_check(const scenario_t *s) {
    int bad = 0;
    if (!tier_on(s)) {
        const int to = schema_find(SCOPE_JOB, "checkpoint.to");
        for (int j = 0; j < s->njobs; j++)
            if (s->jobs[j].checkpoint.to == CKPT_TO_TIER) {
                diag_error(s->jobs[j].origin[to],
                           "jobs.%d.checkpoint.to: tier writes the checkpoints to each "
                           "server's tier device: set server.tier.cache_gb (> 0) too, or "
                           "write them to storage",
                           j);
                bad = 1;
            }
        for (int i = 1; i < NKEYS; i++) {
            int row = schema_find(SCOPE_SCENARIO, keys[i].name);
            if (s->explicit_key[row]) {
                diag_error(s->origin[row],
                           "%s describes the tier: set server.tier.cache_gb (> 0) too, or "
                           "leave it out",
                           keys[i].name);
                bad = 1;
            }
        }
        return bad;
    }
    const cache_ops_t *tc = cache_kind(tier_opts(s)->cache);
    if (tc->needs_future) {
        char use[256];
        cache_kinds_list(use, sizeof use, 0, " or ");
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "server.tier.cache")],
                   "server.tier.cache: %s needs the future of the tier's own access stream, "
                   "which stallsim does not build: use %s",
                   tc->name, use);
        bad = 1;
    }
    if (s->loader.dist_cache == DIST_SHARDED) {
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "server.tier.cache_gb")],
                   "server.tier.cache_gb: a tier is a local cache of each server; "
                   "loader.dist_cache: partitioned serves remote hits over the network "
                   "instead, and the two are not modelled together (use local)");
        bad = 1;
    }
    return bad;
}

double tier_state_bytes(const scenario_t *s) {
    const double n = (double)s->dataset.items, servers = (double)s->server.count;
    double entries = s->dataset.shard_items > 1 ? ceil(n / (double)s->dataset.shard_items) : n;
    double b = servers * (cache_kind(tier_opts(s)->cache)->state_bytes(entries) + 64);
    scenario_t *ts = malloc(sizeof *ts);
    if (ts) {
        tier_scenario(ts, s);
        b += servers * scenario_storage(ts)->state_bytes(ts);
        free(ts);
    }
    return b + (double)sizeof(scenario_t);
}

/* ---- the simulator's tier ---- */

int tier_open(tier_t *t, const scenario_t *s, int nservers, const double *weight,
              const uint32_t *sizes, uint32_t entries, int unordered) {
    memset(t, 0, sizeof *t);
    t->nservers = nservers;
    t->s = malloc(sizeof *t->s);
    t->sv = calloc((size_t)nservers, sizeof *t->sv);
    if (!t->s || !t->sv) goto fail;
    tier_scenario(t->s, s);
    const cache_ops_t *policy = cache_kind(tier_opts(s)->cache);
    const uint64_t capacity = (uint64_t)(tier_opts(s)->cache_gb * 1e9);
    for (int k = 0; k < nservers; k++) {
        if (weight && !(weight[k] > 0)) continue;
        tier_server_t *v = &t->sv[k];
        if (cache_init(&v->cache, policy, entries, sizes, capacity) != 0) goto fail;
        v->dev.ops = scenario_storage(t->s);
        v->dev.unordered = unordered;
        if (v->dev.ops->init(&v->dev, t->s) != 0) goto fail;
    }
    return 0;
fail:
    tier_close(t);
    return -1;
}

void tier_close(tier_t *t) {
    for (int k = 0; t->sv && k < t->nservers; k++) {
        cache_destroy(&t->sv[k].cache);
        if (t->sv[k].dev.ops) t->sv[k].dev.ops->destroy(&t->sv[k].dev);
    }
    free(t->sv), free(t->s);
    memset(t, 0, sizeof *t);
}

double tier_span(const tier_t *t, double bytes) {
    const storage_ops_t *d = scenario_storage(t->s);
    return d->service_s(t->s, bytes) - d->service_s(t->s, 0);
}

double tier_cpu_s(const tier_t *t, double bytes) {
    return storage_cpu_s(t->s, bytes);
}

/* ---- the model's tier ---- */

void tier_model_open(tier_model_t *m, const scenario_t *s) {
    m->on = tier_on(s);
    m->cache = tier_opts(s)->cache;
    const double D = scenario_dataset_bytes(s);
    m->f = D > 0 ? (m->on ? tier_opts(s)->cache_gb * 1e9 : 0) / D : 1;
    /* The copy is a whole scenario: made only when it is read. */
    if (m->on) tier_scenario(&m->s, s);
    m->dev = m->on ? scenario_storage(&m->s) : NULL;
}

double tier_model_at(const tier_model_t *m, double f, double h, double p, int k, int e, double u) {
    double h2 = m->on && m->f > f ? cache_hit_at(m->cache, m->f, p, k, e, u) : 0;
    return h2 > h ? h2 - h : 0;
}

double tier_service_s(const tier_model_t *m, double bytes) {
    return m->dev->service_s(&m->s, bytes);
}

double tier_items_s(const tier_model_t *m, double bytes) {
    int latency_bound;
    return m->dev->items_s(&m->s, bytes, &latency_bound);
}

double tier_model_cpu_s(const tier_model_t *m, double bytes) {
    return storage_cpu_s(&m->s, bytes);
}
