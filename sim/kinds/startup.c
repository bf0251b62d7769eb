/* startup: see startup.h. */
#include "startup.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kinds.h"
#include "storage.h"

/* A ListObjectsV2 page's XML is about 350 bytes a key (key, ETag, size,
 * date, storage class), 1000 keys a page. */
#define LIST_KEY_BYTES 350.0
#define LIST_PAGE_KEYS 1000.0

void startup_plan(const scenario_t *s, burst_plan_t *p) {
    const double objects = ceil((double)s->dataset.items / scenario_items_per_read(s));
    *p = (burst_plan_t){.pages = s->startup.list ? ceil(objects / LIST_PAGE_KEYS) : 0,
                        .page_bytes = LIST_KEY_BYTES * fmin(objects, LIST_PAGE_KEYS),
                        .page_objects = LIST_PAGE_KEYS,
                        .bodies = s->startup.metadata_mb > 0 ? 1 : 0,
                        .body_bytes = s->startup.metadata_mb * 1e6,
                        .heads = s->startup.head_each ? objects : 0,
                        .threads = s->startup.threads};
}

int64_t startup_resolvers(const scenario_t *s, const topology_t *t, int i) {
    const int64_t ranks = (int64_t)t->inst[i].gpus_per_server * t->inst[i].nservers;
    const loader_ops_t *l = scenario_loader(s);
    const int64_t w = l->worker_procs ? l->worker_procs(s) : 0;
    switch (s->startup.resolve) {
    case RESOLVE_ONE_RANK:
        return 1;
    case RESOLVE_EVERY_RANK:
        return ranks;
    case RESOLVE_EVERY_WORKER:
        return ranks * (w > 0 ? w : 1);
    default:
        return 0;
    }
}

/* Every instance's plan (the same) and resolvers, a rank's in rank order. */
static int startup_burst(const scenario_t *s, const topology_t *t, burst_plan_t **plan,
                         burst_who_t **who) {
    *plan = calloc((size_t)t->ninst, sizeof **plan);
    *who = calloc((size_t)t->ninst, sizeof **who);
    if (!*plan || !*who) return -1;
    for (int i = 0; i < t->ninst; i++) {
        startup_plan(s, &(*plan)[i]);
        const int64_t ranks = (int64_t)t->inst[i].gpus_per_server * t->inst[i].nservers;
        const int64_t n = startup_resolvers(s, t, i);
        (*who)[i] = (burst_who_t){n, s->startup.resolve == RESOLVE_ONE_RANK ? 0 : n / ranks};
    }
    return 0;
}

int startup_sim(const scenario_t *s, const topology_t *t, startup_t *out) {
    burst_plan_t *plan;
    burst_who_t *who;
    int rc = startup_burst(s, t, &plan, &who) ? EXIT_RUNTIME : burst_sim(s, t, plan, who, out);
    free(plan), free(who);
    return rc;
}

void startup_model(const scenario_t *s, const topology_t *t, startup_t *out) {
    burst_plan_t *plan;
    burst_who_t *who;
    if (startup_burst(s, t, &plan, &who) == 0)
        burst_model(s, t, plan, who, out);
    else /* no memory: no start-up figure, rather than one half made */
        for (int i = 0; i < t->ninst; i++)
            out[i] = (startup_t){.approximate = 1};
    free(plan), free(who);
}

int startup_resume_scenario(const scenario_t *s, scenario_t *skip) {
    if (s->startup.resume_by != RESUME_SKIP || !(s->startup.resume_at > 0)) return 0;
    *skip = *s;
    skip->epochs = 1;
    skip->dataset.items = (int64_t)ceil(s->startup.resume_at * (double)s->dataset.items);
    skip->startup.resolve = RESOLVE_NONE;
    skip->startup.resume_at = 0;
    for (int j = 0; j < skip->njobs; j++) {
        /* no step: the GPUs take each batch at once */
        job_t *jb = &skip->jobs[j];
        jb->gpu_items_per_s = 0, jb->compute_s_per_batch = 1e-9, jb->train_cpu_ms = 0;
    }
    return 1;
}

void startup_resume_into(run_metrics_t *r, const run_metrics_t *skip) {
    for (int i = 0; i < r->ninst; i++)
        metrics_at(r, i, 0)->resume_s = metrics_at(skip, i, 0)->epoch_s;
}

void startup_into(run_metrics_t *r, const startup_t *st) {
    for (int i = 0; i < r->ninst; i++) {
        epoch_metrics_t *m = metrics_at(r, i, 0);
        m->startup_s = st[i].seconds;
        m->startup_first_s = st[i].first_s;
        m->startup_lists = st[i].pages, m->startup_gets = st[i].bodies;
        m->startup_heads = st[i].heads;
        m->startup_requests = st[i].requests;
        m->startup_throttled = st[i].throttled;
        m->startup_approximate = st[i].approximate;
    }
}
