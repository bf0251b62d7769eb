/* budget: see budget.h. Sizes are summed in doubles, so no product of
 * user-given counts can overflow before the comparison. */
#include "budget.h"

#include <math.h>
#include <stdlib.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kinds.h"
#include "metrics.h"
#include "schema.h"
#include "shards.h"

size_t sim_memory_bytes(const scenario_t *s, const topology_t *t) {
    const double n = (double)s->dataset.items;
    const double servers = (double)s->server.count;
    /* The servers whose caches, tiers and own devices are simulated: every
     * one, or a sample (server_sample.h), with a per-server figure each. */
    const int k = s->sampling.servers_sampled;
    const double cached = k > 0 && k < servers ? (double)k : servers;
    const cache_ops_t *cache = scenario_cache(s);
    const int future = cache->needs_future;
    double b = 4 * n; /* item sizes */
    double buckets = n / 4096 + 1 < 65535 ? n / 4096 + 1 : 65535;
    b += 2 * n + 4 * (buckets + 1); /* permutation generator */
    if (s->loader.dist_cache == DIST_SHARDED) {
        b += 2 * n + 8 * servers; /* owner per item, bytes per server */
    } else {
        /* one cache per server, over the shards when the data are sharded;
         * a page cache's entries are chunks of them (cache_chunk_bytes) */
        double entries = s->dataset.shard_items > 1 ? ceil(n / (double)s->dataset.shard_items) : n;
        const uint64_t ra = (uint64_t)s->server.storage.read_ahead_kb << 10;
        if (cache->pages) entries += scenario_dataset_bytes(s) / (double)cache_chunk_bytes(ra);
        b += cached * cache->state_bytes(entries);
    }
    if (s->dataset.shard_items > 1) b += 4 * ceil(n / (double)s->dataset.shard_items);
    double stor = s->server.storage.shared ? 1 : cached;
    b += stor * scenario_storage(s)->state_bytes(s); /* storage state */
    b += servers * 64;                               /* cache, NIC, storage structs */
    if (tier_on(s)) b += tier_state_bytes(s) * cached / servers;
    if (k > 0) b += 2 * servers * (double)s->epochs * 8 + servers * 9; /* lat, weight, keep */

    /* Streams: one per instance, or one per group of servers under coordinated prep. */
    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        if (in->lead != i) continue;
        const job_t *jb = &s->jobs[in->job];
        double ns = in->nservers > 0 ? in->nservers : 1;
        b += 4 * n * (future ? 3 : 1); /* order (and next order, positions) */
        if (s->dataset.shard_items > 1) {
            /* each stream's shard order and read state (shards.c) */
            int per_rank = 0;
            double lanes = scenario_loader(s)->shard_lanes(s, &per_rank);
            b += shards_bytes(n, (double)s->dataset.shard_items,
                              per_rank ? lanes * (double)jb->gpus : lanes);
            if (s->loader.reader == READER_STREAM)
                b += shards_stream_bytes(n, (double)s->dataset.shard_items);
            double B = (double)s->loader.shuffle_buffer;
            if (B > 0) b += 4 * (n + (B < n ? B : n)); /* the output order and the buffer */
        }
        b += scenario_loader(s)->state_bytes(s, jb, in->cpus / ns, (int)ns);
        b += 2 * 8 * (double)loader_staged_batches(s, jb); /* loader windows */
        b += 52 * (double)t->ninst + 256;                  /* per-consumer times, stream struct */
        b += 2 * (double)jb->gpus;                         /* each GPU rank's server */
    }
    /* Metrics of the model and the simulator, per instance and per server,
     * and the engine's own per-server accumulators. */
    b += 2 * (double)t->ninst * (double)s->epochs * sizeof(epoch_metrics_t);
    b += 3 * servers * (double)s->epochs * sizeof(server_metrics_t);
    return b >= (double)SIZE_MAX ? SIZE_MAX : (size_t)b;
}

/* The lowest memory limit at `dir` or above it (limits nest: an ancestor's
 * binds a child's processes too); 0 for none. Unlimited reads as "max" (v2)
 * or as a value near 2^63 (v1). */
static double cgroup_walk(const char *root, const char *dir, const char *file) {
    char rel[2048];
    if (snprintf(rel, sizeof rel, "%s", dir[0] == '/' ? dir : "/") >= (int)sizeof rel) return 0;
    double low = 0;
    for (;;) {
        char path[4096];
        const int root_dir = !strcmp(rel, "/");
        snprintf(path, sizeof path, "%s%s/%s", root, root_dir ? "" : rel, file);
        FILE *fp = fopen(path, "r");
        if (fp) {
            unsigned long long v = 0;
            if (fscanf(fp, "%llu", &v) == 1 && v > 0 && (double)v < 0x1p62 &&
                (low == 0 || (double)v < low))
                low = (double)v;
            fclose(fp);
        }
        if (root_dir) break;
        char *slash = strrchr(rel, '/');
        slash[slash == rel ? 1 : 0] = 0; /* the parent: "/a/b" to "/a", "/a" to "/" */
    }
    return low;
}

/* This process's memory cgroup limit, v2 (memory.max) or v1
 * (memory.limit_in_bytes), from the cgroup /proc/self/cgroup names, at the
 * usual mount points; 0 for none. Without it a sweep or run inside a
 * container or a job slot would be killed by the kernel, not refused. */
static double cgroup_limit(void) {
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (!f) return 0;
    char line[4096];
    double low = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c1 = *c2 = 0;
        const char *ctrls = c1 + 1, *dir = c2 + 1;
        double v = 0;
        if (!strcmp(line, "0") && !ctrls[0]) {
            v = cgroup_walk("/sys/fs/cgroup", dir, "memory.max");
        } else {
            char list[256];
            snprintf(list, sizeof list, "%s", ctrls);
            for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save))
                if (!strcmp(tok, "memory"))
                    v = cgroup_walk("/sys/fs/cgroup/memory", dir, "memory.limit_in_bytes");
        }
        if (v > 0 && (low == 0 || v < low)) low = v;
    }
    fclose(f);
    return low;
}

size_t sim_memory_available(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double have = pages > 0 && page > 0 ? (double)pages * (double)page : (double)SIZE_MAX;
    const int res[] = {RLIMIT_AS, RLIMIT_DATA};
    for (int i = 0; i < 2; i++) {
        struct rlimit rl;
        if (getrlimit(res[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
            (double)rl.rlim_cur < have)
            have = (double)rl.rlim_cur;
    }
    double cg = cgroup_limit();
    if (cg > 0 && cg < have) have = cg;
    return have >= (double)SIZE_MAX ? SIZE_MAX : (size_t)have;
}

int sim_memory_check(const scenario_t *s, const topology_t *t) {
    return sim_memory_check_n(s, t, 1);
}

int sim_memory_check_n(const scenario_t *s, const topology_t *t, int copies) {
    double one = (double)sim_memory_bytes(s, t), need = one * (copies > 1 ? copies : 1);
    size_t have = sim_memory_available();
    if (need <= (double)have) return 0;
    src_pos_t at = s->origin[schema_find(SCOPE_SCENARIO, "dataset.items")];
    const double gib = 1024.0 * 1024 * 1024;
    char times[96] = "";
    if (copies > 1)
        snprintf(times, sizeof times, " (%.1f GiB each, %d at once: fewer --threads help)",
                 one / gib, copies);
    /* Sampling answers where the items are what does not fit: offered
     * (more items than the threshold once passed where fewer were refused). */
    char sample[160] = "";
    if (s->dataset.items > 1000000 && s->sampling.above_items >= s->dataset.items)
        snprintf(sample, sizeof sample,
                 ", or a sampled simulation: --set sim.sample_above_items=1000000 (lru or minio "
                 "caches over loose items)");
    diag_error(at,
               "simulating %lld items (cache %s, %lld server%s) needs %.1f GiB of memory%s, this "
               "machine has %.1f GiB; use fewer items or servers, --model-only%s",
               (long long)s->dataset.items, scenario_cache(s)->name, (long long)s->server.count,
               s->server.count == 1 ? "" : "s", need / gib, times, (double)have / gib, sample);
    return EXIT_INPUT;
}
