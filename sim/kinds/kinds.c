/* kinds: see kinds.h. */
#include "kinds.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "schema.h"

extern const cache_ops_t cache_none, cache_lru, cache_minio, cache_fifo, cache_belady, cache_linux;
extern const storage_ops_t storage_fixed, storage_object, storage_hdd, storage_ssd;
extern const loader_ops_t loader_pool, loader_pytorch, loader_threads, loader_dali;
extern const pipeline_ops_t pipeline_image_train, pipeline_image_eval, pipeline_audio,
    pipeline_video;

/* The order is the choices' order in the key reference and the index each
 * scenario stores: append, never reorder. */
static const cache_ops_t *const caches[] = {&cache_none, &cache_lru,    &cache_minio,
                                            &cache_fifo, &cache_belady, &cache_linux};
#define NCACHES ((int)(sizeof caches / sizeof caches[0]))

static const storage_ops_t *const storages[] = {&storage_fixed, &storage_object, &storage_hdd,
                                                &storage_ssd};
#define NSTORAGES ((int)(sizeof storages / sizeof storages[0]))

const cache_ops_t *cache_kind(int i) {
    return i >= 0 && i < NCACHES ? caches[i] : NULL;
}

int cache_kind_find(const char *name) {
    for (int i = 0; i < NCACHES; i++)
        if (strcmp(caches[i]->name, name) == 0) return i;
    return -1;
}

const cache_ops_t *scenario_cache(const scenario_t *s) {
    return cache_kind(s->loader.cache);
}

double cache_hit_at(int kind, double f, double p, int k, int e, double u) {
    const cache_ops_t *c = cache_kind(kind);
    int exact;
    if (u >= 0 && c->hit_at) return c->hit_at(f, p, k, e, u);
    return c->hit_epoch(f, p, k, e, &exact);
}

void cache_kinds_list(char *buf, size_t n, int needs_future, const char *last) {
    int k = 0, m = 0;
    for (int i = 0; i < NCACHES; i++)
        m += !caches[i]->needs_future == !needs_future;
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < NCACHES && used < n; i++) {
        if (!caches[i]->needs_future != !needs_future) continue;
        const char *sep = k == 0 ? "" : k == m - 1 ? last : ", ";
        used += (size_t)snprintf(buf + used, n - used, "%s%s", sep, caches[i]->name);
        k++;
    }
}

static const loader_ops_t *const loaders[] = {&loader_pool, &loader_pytorch, &loader_threads,
                                              &loader_dali};
#define NLOADERS ((int)(sizeof loaders / sizeof loaders[0]))

/* The first is every job's default (image_train). */
static const pipeline_ops_t *const pipelines[] = {&pipeline_image_train, &pipeline_image_eval,
                                                  &pipeline_audio, &pipeline_video};
#define NPIPELINES ((int)(sizeof pipelines / sizeof pipelines[0]))

const pipeline_ops_t *pipeline_kind(int i) {
    return i >= 0 && i < NPIPELINES ? pipelines[i] : NULL;
}

int pipeline_kind_index(const pipeline_ops_t *ops) {
    int i = 0;
    while (pipelines[i] != ops)
        i++;
    return i;
}

const loader_ops_t *scenario_loader(const scenario_t *s) {
    return loaders[s->loader.kind];
}

int64_t loader_staged_batches(const scenario_t *s, const job_t *j) {
    const loader_ops_t *l = scenario_loader(s);
    return l->staged_batches ? l->staged_batches(s, j) : scenario_staged_batches(s, j);
}

double loader_cores_in_use(const scenario_t *s, double cores, double busy) {
    return scenario_prep_cores_shaped(s) && busy > 0 && busy < cores ? busy : cores;
}

double loader_busy_max(const scenario_t *s, double ahead, double per_server) {
    int train = s->loader.prep == PREP_COORDINATED;
    for (int i = 0; i < s->njobs; i++)
        train |= s->jobs[i].train_cpu_ms > 0;
    return ahead * per_server + (train ? (double)loader_ranks_a_server(s) : 0);
}

int64_t loader_ranks_a_server(const scenario_t *s) {
    int64_t ranks = 0;
    for (int i = 0; i < s->njobs; i++)
        ranks += s->jobs[i].count * s->jobs[i].gpus;
    return ranks > s->server.gpus ? s->server.gpus : ranks;
}

int loader_curve_parse(const char *str, double *k, double *e, int *bad) {
    int n = 0;
    for (const char *p = str; *p;) {
        char *end;
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p) break;
        *bad = n + 1;
        if (n == LOADER_CURVE_MAX) return -1;
        k[n] = strtod(p, &end);
        if (end == p || *end != ':') return -1;
        p = end + 1;
        e[n] = strtod(p, &end);
        if (end == p || (*end && *end != ',' && *end != ' ')) return -1;
        p = end;
        if (!(k[n] >= 1 && k[n] < 1e6) || !(e[n] > 0 && e[n] <= 1)) return -1;
        if (n == 0 ? k[0] != 1 || e[0] != 1 : k[n] <= k[n - 1]) return -1;
        n++;
    }
    return n == 1 ? (*bad = 1, -1) : n;
}

double loader_model_span(const loader_model_t *m, const double *v, double i0, double i1) {
    const double a = i0 / m->items * m->steps, b = i1 / m->items * m->steps;
    if (!(b > a)) {
        int j = (int)a;
        return v[j < m->steps ? (j > 0 ? j : 0) : m->steps - 1];
    }
    double sum = 0;
    for (int j = a > 0 ? (int)a : 0; j < m->steps && j < b; j++) {
        double lo = a > j ? a : j, hi = b < j + 1 ? b : j + 1;
        sum += (hi - lo) * v[j];
    }
    return sum / (b - a);
}

double loader_curve_at(const char *str, double x) {
    double k[LOADER_CURVE_MAX], e[LOADER_CURVE_MAX];
    int bad, n = loader_curve_parse(str, k, e, &bad);
    if (n < 2 || x <= 1) return 1;
    for (int i = 1; i < n; i++)
        if (x <= k[i]) return e[i - 1] + (e[i] - e[i - 1]) * (x - k[i - 1]) / (k[i] - k[i - 1]);
    return e[n - 1];
}

int loader_curve_check(const scenario_t *s, const char *key, const char *str, const char *per) {
    double k[LOADER_CURVE_MAX], e[LOADER_CURVE_MAX];
    int at = 0;
    if (loader_curve_parse(str, k, e, &at) >= 0) return 0;
    diag_error(s->origin[schema_find(SCOPE_SCENARIO, key)],
               "key '%s': point %d: expected \"1:1, PER_CORE:EFFICIENCY, ...\" (at least two "
               "points, at most %d; %s per core rising from 1:1, each efficiency in (0, 1]; the "
               "probe measures it)",
               key, at, LOADER_CURVE_MAX, per);
    return 1;
}

int loader_knob_ladder(int64_t *v, int max, int64_t from, double top) {
    int n = 0;
    for (int64_t w = from; n < max && (double)w <= top;) {
        v[n++] = w;
        int pow2 = w > 1 && (w & (w - 1)) == 0;
        w = w < 2 ? w + 1 : pow2 ? w + w / 2 : (int64_t)1 << (64 - __builtin_clzll((uint64_t)w));
    }
    return n;
}

int64_t loader_sync_readers(const scenario_t *s) {
    const loader_ops_t *l = scenario_loader(s);
    return l->sync_reads ? l->readers_in_flight(s) : 0;
}

int64_t loader_buffer_slices(const scenario_t *s, const job_t *j, int64_t n, int64_t m) {
    int64_t B = s->loader.shuffle_buffer < n ? s->loader.shuffle_buffer : n;
    if (B <= 0) return 0;
    int per_rank = 0;
    scenario_loader(s)->shard_lanes(s, &per_rank);
    /* A worker's own buffer (WebDataset's shuffle inside the worker) yields
     * from its first `initial` (100) items on, reading two items an output
     * until it holds B; the worker reads and prepares in one thread, so its
     * reads move earlier but its busy time does not: the buffer changes the
     * mix, not the time. tf.data's and DALI's fill B before the first. */
    if (per_rank) return 0;
    const loader_ops_t *l = scenario_loader(s);
    if (l->buffer_items) {
        B = l->buffer_items(s, j, B);
        if (B > n) B = n;
    }
    return (B + m - 1) / m;
}

double loader_buffer_peak(const scenario_t *s, double n) {
    const double B = (double)s->loader.shuffle_buffer, initial = B < 100 ? B : 100;
    if (B <= 0 || n <= 0) return 0;
    const double ramp = (n + (initial < n ? initial : n)) / 2;
    return B < ramp ? B : ramp;
}

const storage_ops_t *scenario_storage(const scenario_t *s) {
    return storages[s->server.storage.kind];
}

double storage_cpu_s(const scenario_t *s, double bytes) {
    const storage_ops_t *k = scenario_storage(s);
    if (k->cpu_s) return k->cpu_s(s, bytes);
    return (s->server.storage.cpu_us_per_read + s->server.storage.cpu_us_per_mb * bytes / 1e6) /
           1e6;
}

double storage_hit_cpu_s(const scenario_t *s, double bytes) {
    if (scenario_cache(s)->holds_memory || scenario_storage(s)->lists_requests) return 0;
    return (s->server.cache_cpu_us_per_read + s->server.cache_cpu_us_per_mb * bytes / 1e6) / 1e6;
}

double remote_hit_cpu_s(const scenario_t *s, double bytes) {
    if (s->loader.dist_cache != DIST_SHARDED) return 0;
    return (s->server.network.cpu_us_per_read + s->server.network.cpu_us_per_mb * bytes / 1e6) /
           1e6;
}

int storage_cpu_on(const scenario_t *s) {
    return s->server.storage.cpu_us_per_read > 0 || s->server.storage.cpu_us_per_mb > 0 ||
           s->server.cache_cpu_us_per_read > 0 || s->server.cache_cpu_us_per_mb > 0 ||
           remote_hit_cpu_s(s, 1e6) > 0 ||
           (tier_on(s) && (tier_opts(s)->cpu_us_per_read > 0 || tier_opts(s)->cpu_us_per_mb > 0));
}

int storage_kind_index(const storage_ops_t *ops) {
    int i = 0;
    while (storages[i] != ops)
        i++;
    return i;
}

int storage_kind_find(const char *name) {
    for (int i = 0; i < NSTORAGES; i++)
        if (strcmp(storages[i]->name, name) == 0) return i;
    return -1;
}

const char *kind_name(kind_family_t family, int i) {
    if (i < 0) return NULL;
    switch (family) {
    case FAMILY_CACHE:
        return i < NCACHES ? caches[i]->name : NULL;
    case FAMILY_STORAGE:
        return i < NSTORAGES ? storages[i]->name : NULL;
    case FAMILY_LOADER:
        return i < NLOADERS ? loaders[i]->name : NULL;
    case FAMILY_PIPELINE:
        return i < NPIPELINES ? pipelines[i]->name : NULL;
    case FAMILY_TIER:
        return i == 0 ? "tier" : NULL;
    }
    return NULL;
}

const char *kind_help(kind_family_t family, int i) {
    if (!kind_name(family, i)) return NULL;
    switch (family) {
    case FAMILY_CACHE:
        return caches[i]->help;
    case FAMILY_STORAGE:
        return storages[i]->help;
    case FAMILY_LOADER:
        return loaders[i]->help;
    case FAMILY_PIPELINE:
        return pipelines[i]->help;
    case FAMILY_TIER:
        return "a local cache device per server in front of storage (tier.c)";
    }
    return NULL;
}

const key_def_t *kind_keys(kind_family_t family, int i, int *n) {
    *n = 0;
    if (family == FAMILY_TIER && i == 0) return tier_keys(n);
    if (family == FAMILY_STORAGE && i >= 0 && i < NSTORAGES) {
        *n = storages[i]->nkeys;
        return storages[i]->keys;
    }
    if (family == FAMILY_LOADER && i >= 0 && i < NLOADERS) {
        *n = loaders[i]->nkeys;
        return loaders[i]->keys;
    }
    if (family == FAMILY_PIPELINE && i >= 0 && i < NPIPELINES) {
        *n = pipelines[i]->nkeys;
        return pipelines[i]->keys;
    }
    return NULL;
}

/* The schema (a layer down) takes the kinds from here: registered before
 * main, so it never calls up into the registry. CMake's link option on
 * stallsim_scenario pulls this file into every program that has the schema. */
__attribute__((constructor)) static void register_kinds(void) {
    static const schema_kinds_t table = {kind_name, kind_help, kind_keys, pipeline_own_out_bytes};
    schema_register_kinds(&table);
}

int cache_init(cache_t *c, const cache_ops_t *ops, uint32_t n, const uint32_t *size,
               uint64_t capacity) {
    return cache_init_pages(c, ops, n, size, capacity, 0, 0, 0);
}

int cache_init_pages(cache_t *c, const cache_ops_t *ops, uint32_t n, const uint32_t *size,
                     uint64_t capacity, uint32_t page, uint32_t read_ahead, uint32_t lanes) {
    memset(c, 0, sizeof *c);
    c->ops = ops;
    c->size = size;
    c->n = n;
    c->capacity = capacity;
    if (ops->pages) c->page = page, c->read_ahead = read_ahead, c->lanes = lanes;
    return c->ops->init(c);
}

/* Items of one size: a read's rounded up to pages. One item's: its size
 * under dataset.item_kb's lognormal (as the simulator draws it) rounded up
 * to pages, P x sum over k of Pr(size > kP), summed where the terms are
 * neither 1 nor 0 to within 8 sigma; a spread wider than 8 pages leaves
 * the remainder uniform, half a page. A record shard's: its items' and
 * half a page. */
double cache_read_bytes_mean(const scenario_t *s, double items) {
    const double mean = scenario_item_bytes_mean(s), cv = s->dataset.item_kb_cv;
    const double P = CACHE_PAGE_BYTES;
    if (!scenario_cache(s)->pages) return mean;
    if (!(cv > 0)) return ceil(items * (mean < 1 ? 1 : floor(mean + 0.5)) / P) * P / items;
    if (items > 1 || mean * cv > 8 * P) return mean + P / 2 / items;
    const double sigma = sqrt(log1p(cv * cv)), zeta = log(mean) - sigma * sigma / 2;
    const double lo = floor(exp(zeta - 8 * sigma) / P), hi = exp(zeta + 8 * sigma) / P;
    double sum = P * (lo + 1);
    for (double k = lo + 1; k < hi; k++)
        sum += P * gsl_cdf_ugaussian_Q((log(k * P) - zeta) / sigma);
    return sum;
}

void cache_destroy(cache_t *c) {
    if (c->ops) c->ops->destroy(c);
    memset(c, 0, sizeof *c);
}

/* Whether kind i of `family` lists key `name` among its rows. A key more
 * than one kind lists (storage.h's shared rows) is each one's. */
static int kind_owns(kind_family_t family, int i, const char *name) {
    int n;
    const key_def_t *k = kind_keys(family, i, &n);
    for (int j = 0; j < n; j++)
        if (strcmp(k[j].name, name) == 0) return 1;
    return 0;
}

/* The first kind of `family` that owns key `name`, or -1. */
static int key_owner(kind_family_t family, const char *name) {
    for (int i = 0; kind_name(family, i); i++)
        if (kind_owns(family, i, name)) return i;
    return -1;
}

static int owned_by_other(kind_family_t family, int chosen, const char *name) {
    return key_owner(family, name) >= 0 && !kind_owns(family, chosen, name);
}

/* Whether a job stages asynchronous checkpoints (server.mem_gbps bounds it). */
static int async_stages(const scenario_t *s) {
    for (int j = 0; j < s->njobs; j++)
        if (s->jobs[j].checkpoint.mode == CKPT_ASYNC && s->jobs[j].checkpoint.gb > 0) return 1;
    return 0;
}

int kinds_key_used(const scenario_t *s, const char *name) {
    /* Sampling means nothing to a dataset below its threshold. */
    if (!strncmp(name, "sim.sample_", 11) && s->dataset.items <= s->sampling.above_items) return 0;
    /* Server sampling means nothing to one server, partitioned caches or shards. */
    if (!strncmp(name, "sim.server", 10) &&
        (s->server.count < 2 || s->loader.dist_cache == DIST_SHARDED || s->dataset.shard_items > 1))
        return 0;
    if (!tier_key_used(s, name)) return 0;
    /* No curve is linear scaling: the echo says nothing of it. */
    if (!s->prep.scaling[0] && !strcmp(name, "prep.scaling")) return 0;
    /* The memory-bandwidth bound takes both keys: neither means anything alone. */
    if (!(s->server.mem_gbps > 0 && s->prep.mem_mb_per_item > 0) &&
        (!strcmp(name, "server.mem_gbps") || !strcmp(name, "prep.mem_mb_per_item")) &&
        !(s->server.mem_gbps > 0 && !strcmp(name, "server.mem_gbps") && async_stages(s)))
        return 0;
    /* A remote hit's CPU means nothing without partitioned caching. */
    if (s->loader.dist_cache != DIST_SHARDED && !strncmp(name, "server.network.cpu_us_", 22))
        return 0;
    /* A pipeline's costs mean nothing when no job runs it. */
    if (!pipeline_key_used(s, name)) return 0;
    /* The GPU decode's costs mean nothing when images decode on the CPU. */
    if (s->prep.decode != DECODE_GPU &&
        (!strncmp(name, "prep.huffman_", 13) || !strcmp(name, "prep.gpu_decode_ms_per_mp") ||
         !strncmp(name, "prep.hw_decode", 14)))
        return 0;
    /* Nor the share sent to a hardware decoder the GPU does not have. */
    if (!(s->prep.hw_decode_mp_s > 0) && !strcmp(name, "prep.hw_decoder_load")) return 0;
    return !owned_by_other(FAMILY_STORAGE, s->server.storage.kind, name) &&
           !owned_by_other(FAMILY_LOADER, s->loader.kind, name);
}

/* For each scenario row, the kinds of each family that own it (bit i: kind
 * i), worked out once: kinds_check runs for every configuration of a
 * search, and comparing every set key with every kind's keys there cost
 * more than the model. */
#define NFAMILIES 3
static unsigned long long row_owners[NFAMILIES][SCN_MAX_KEYS];
static pthread_once_t owners_once = PTHREAD_ONCE_INIT;

static void find_owners(void) {
    int nrows;
    const key_def_t *rows = schema_keys(SCOPE_SCENARIO, &nrows);
    for (int f = 0; f < NFAMILIES; f++)
        for (int row = 0; row < nrows; row++)
            for (int i = 0; kind_name((kind_family_t)f, i); i++) {
                if (i >= 64) abort(); /* more kinds than the mask holds */
                if (kind_owns((kind_family_t)f, i, rows[row].name)) row_owners[f][row] |= 1ULL << i;
            }
}

/* A key the user set that belongs to another kind than the one chosen would
 * be silently ignored: refuse it. */
static int foreign_keys(const scenario_t *s, kind_family_t family, int chosen, const char *key) {
    int bad = 0, nrows;
    const char *uses = kind_name(family, chosen);
    if (!uses) return 0;
    pthread_once(&owners_once, find_owners);
    const key_def_t *rows = schema_keys(SCOPE_SCENARIO, &nrows);
    const int kind_row = schema_find(SCOPE_SCENARIO, key);
    const unsigned char kind_layer = kind_row >= 0 ? s->explicit_key[kind_row] : 0;
    char who[SCN_STR + 16] = "this scenario";
    if (s->variant[0]) snprintf(who, sizeof who, "variant '%s'", s->variant);
    for (int row = 0; row < nrows; row++) {
        /* A key of the base or a --set under a variant's kind (the base's
         * read_mb_s under a variant's kind: object) is the old kind's, left
         * behind: a variant could never switch kinds otherwise. A --set of
         * the kind itself still conflicts with the file's keys: that is one
         * command line contradicting its scenario. */
        if (!s->explicit_key[row] ||
            (kind_layer == SCN_LAYER_VARIANT && s->explicit_key[row] < kind_layer))
            continue;
        const char *name = rows[row].name;
        unsigned long long own = row_owners[family][row];
        if (!own || (own >> chosen & 1)) continue;
        char by[160] = ""; /* the kinds that own it: "fixed" or "fixed or ssd" */
        size_t used = 0;
        for (int i = 0; kind_name(family, i) && used < sizeof by; i++)
            if (kind_owns(family, i, name))
                used += (size_t)snprintf(by + used, sizeof by - used, "%s%s", used ? " or " : "",
                                         kind_name(family, i));
        diag_error(s->origin[row], "key '%s' belongs to %s: %s, but %s uses %s", name, key, by, who,
                   uses);
        bad = 1;
    }
    return bad;
}

/* A GPU's memory where the loader keeps no buffers of its own there (a
 * kind that does, DALI, checks its queues in its own check): the job's
 * training memory and the prepared batches it holds on the GPU. */
static int gpu_input_fits(const scenario_t *s) {
    int errors = 0;
    if (!(s->server.gpu_mem_gb > 0)) return 0;
    for (int j = 0; j < s->njobs; j++) {
        const job_t *jb = &s->jobs[j];
        double input = scenario_job_gpu_input_bytes(s, jb), need = jb->gpu_mem_gb * 1e9 + input;
        if (need > s->server.gpu_mem_gb * 1e9) {
            const int gpu = pipeline_gpu_decodes(s, jb);
            diag_error(scenario_job_pos(s, j, "gpu_mem_gb"),
                       "job '%s' does not fit its GPUs: %.3g GB each (training %.3g GB + "
                       "%lld prepared batch(es) of %lld x %.6g KB%s = %.3g GB of input) but "
                       "server.gpu_mem_gb = %g; lower batch_per_gpu%s",
                       jb->name, need / 1e9, jb->gpu_mem_gb,
                       (long long)(gpu ? scenario_staged_batches(s, jb) : 1),
                       (long long)jb->batch_per_gpu, scenario_job_out_item_bytes(s, jb) / 1e3,
                       gpu ? " + one batch of decoded full-size images" : "", input / 1e9,
                       s->server.gpu_mem_gb,
                       gpu ? " or prefetch_batches, or decode on the CPU" : "");
            errors++;
        }
    }
    return errors;
}

/* loader.reader: stream reads record shards (what it streams), and a tier's
 * device is read whole (tier.c: the shard its entry): not modelled with it. */
static int reader_check(const scenario_t *s) {
    if (s->loader.reader != READER_STREAM) return 0;
    const src_pos_t at = s->origin[schema_find(SCOPE_SCENARIO, "loader.reader")];
    if (s->dataset.shard_items <= 1) {
        diag_error(at, "loader.reader: stream reads record shards in order; give "
                       "dataset.shard_items (> 1) or dataset.shard_mb, or leave it out");
        return 1;
    }
    if (tier_on(s)) {
        diag_error(at, "loader.reader: stream is not modelled with a tier (server.tier.*), "
                       "whose device serves a shard whole; use loader.reader: whole with it");
        return 1;
    }
    return 0;
}

int kinds_check(const scenario_t *s, const topology_t *t) {
    int rc = 0;
    const cache_ops_t *c = scenario_cache(s);
    if (s->loader.dist_cache == DIST_SHARDED && !c->partitionable) {
        char names[256] = "";
        size_t used = 0;
        for (int i = 0; i < NCACHES && used < sizeof names; i++)
            if (caches[i]->partitionable)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                         used ? " or " : "", caches[i]->name);
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "loader.dist_cache")],
                   "loader.dist_cache: partitioned needs loader.cache: %s (CoorDL's cooperating "
                   "MinIO caches), got %s",
                   names, c->name);
        rc = EXIT_INPUT;
    }
    if (c->check && c->check(s, t)) rc = EXIT_INPUT;
    if (s->dataset.shard_items > 1 && (c->needs_future || s->loader.dist_cache == DIST_SHARDED)) {
        char what[64], use[256];
        snprintf(what, sizeof what, "loader.cache: %s", c->name);
        cache_kinds_list(use, sizeof use, 0, " or ");
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "dataset.shard_items")],
                   "dataset.shard_items: record shards are cached whole by the servers' own "
                   "caches; %s is not modelled with them (use %s, and loader.dist_cache: local)",
                   c->needs_future ? what : "loader.dist_cache: partitioned", use);
        rc = EXIT_INPUT;
    }
    if (reader_check(s)) rc = EXIT_INPUT;
    if (foreign_keys(s, FAMILY_STORAGE, s->server.storage.kind, "server.storage.kind"))
        rc = EXIT_INPUT;
    if (foreign_keys(s, FAMILY_LOADER, s->loader.kind, "loader.kind")) rc = EXIT_INPUT;
    if (tier_check(s)) rc = EXIT_INPUT;
    if (pipeline_check(s)) rc = EXIT_INPUT;
    const loader_ops_t *l = scenario_loader(s);
    if (l->check && l->check(s)) rc = EXIT_INPUT;
    if (!l->gpu_bytes && gpu_input_fits(s)) rc = EXIT_INPUT;
    const storage_ops_t *st = scenario_storage(s);
    if (st->check && st->check(s)) rc = EXIT_INPUT;
    return rc;
}
