/* readers: see readers.h. */
#include "readers.h"

#include <math.h>

#include "diag.h"
#include "kinds.h"
#include "schema.h"

int readers_split(const scenario_t *s, const job_t *j, readers_split_t *r) {
    if (s->dataset.shard_items <= 1) return 0;
    int per_rank = 0;
    const uint32_t lanes = scenario_loader(s)->shard_lanes(s, &per_rank);
    if (!per_rank) return 0; /* one stream's lanes: every lane takes the next shard */
    r->shards = (int64_t)ceil((double)s->dataset.items / (double)s->dataset.shard_items);
    r->readers = j->gpus * (int64_t)lanes;
    r->idle = r->shards < r->readers ? r->readers - r->shards : 0;
    r->most = (r->shards + r->readers - 1) / r->readers;
    r->tail = r->shards % r->readers;
    return 1;
}

void readers_warn_idle(const scenario_t *s) {
    const char *key = s->dataset.shard_mb > 0 ? "dataset.shard_mb" : "dataset.shard_items";
    const src_pos_t at = s->origin[schema_find(SCOPE_SCENARIO, key)];
    for (int k = 0; k < s->njobs; k++) {
        readers_split_t r;
        if (!readers_split(s, &s->jobs[k], &r) || r.idle == 0) continue;
        diag_warning(
            at,
            "job '%s': %lld shards for %lld readers (%lld GPUs x %lld each): %lld "
            "workers idle, and the busiest reads %lld shard(s); cut at least %lld "
            "shards (dataset.shard_items <= %lld)",
            s->jobs[k].name, (long long)r.shards, (long long)r.readers, (long long)s->jobs[k].gpus,
            (long long)(r.readers / s->jobs[k].gpus), (long long)r.idle, (long long)r.most,
            (long long)r.readers,
            (long long)(s->dataset.items / r.readers > 0 ? s->dataset.items / r.readers : 1));
    }
}
