/* memory: see memory.h. */
#include "memory.h"

#include <stdio.h>

#include "diag.h"
#include "kinds.h"
#include "loader.h"
#include "schema.h"

double memory_shm_process(const scenario_t *s, const job_t *j) {
    const loader_ops_t *l = scenario_loader(s);
    return l->shm_bytes ? l->shm_bytes(s, j, 0, NULL, 0) : 0;
}

/* Training processes of server v: each instance's GPUs there. */
static int processes_on(const topology_t *t, int v) {
    int n = 0;
    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        if (v >= in->first_server && v < in->first_server + in->nservers) n += in->gpus_per_server;
    }
    return n;
}

double memory_shm_peak(const scenario_t *s, const topology_t *t, int v) {
    double bytes = 0;
    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        if (v >= in->first_server && v < in->first_server + in->nservers)
            bytes += in->gpus_per_server * memory_shm_process(s, &s->jobs[in->job]);
    }
    return bytes;
}

/* The first instance on server v: the job its message names. */
static const instance_t *first_on(const topology_t *t, int v) {
    for (int i = 0; i < t->ninst; i++)
        if (v >= t->inst[i].first_server && v < t->inst[i].first_server + t->inst[i].nservers)
            return &t->inst[i];
    return NULL;
}

/* The first server past server.shm_mb, or -1. */
static int shm_over(const scenario_t *s, const topology_t *t) {
    if (!(s->server.shm_mb > 0) || !scenario_loader(s)->shm_bytes) return -1;
    for (int v = 0; v < (int)s->server.count; v++)
        if (memory_shm_peak(s, t, v) > s->server.shm_mb * MIB && first_on(t, v)) return v;
    return -1;
}

int memory_fits(const scenario_t *s, const topology_t *t) {
    return shm_over(s, t) < 0;
}

int memory_check(const scenario_t *s, const topology_t *t) {
    const double limit = s->server.shm_mb * MIB;
    const loader_ops_t *l = scenario_loader(s);
    const int v = shm_over(s, t);
    if (v >= 0) {
        const double peak = memory_shm_peak(s, t, v);
        const instance_t *in = first_on(t, v);
        const int procs = processes_on(t, v);
        char note[256] = "";
        l->shm_bytes(s, &s->jobs[in->job], limit / procs, note, sizeof note);
        /* One message: a server past it is like every other. */
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "server.shm_mb")],
                   "server %d: the loaders' worker processes would hold %.1f MiB of /dev/shm (%d "
                   "training process%s, job '%s': %s), but server.shm_mb is %g: they die with "
                   "\"Bus error ... out of shared memory\" at the first batches. Raise the "
                   "container's shared memory (docker run --shm-size, a Memory emptyDir on "
                   "/dev/shm), or lower the loader's batches in flight",
                   v + 1, peak / MIB, procs, procs == 1 ? "" : "es", s->jobs[in->job].name, note,
                   s->server.shm_mb);
        return EXIT_INPUT;
    }
    return 0;
}
