/* memory: see memory.h. */
#include "memory.h"

#include <stdio.h>
#include <stdlib.h>

#include "checkpoint.h"
#include "diag.h"
#include "kinds.h"
#include "loader.h"
#include "schema.h"

double memory_shm_process(const scenario_t *s, const job_t *j) {
    const loader_ops_t *l = scenario_loader(s);
    return l->shm_bytes ? l->shm_bytes(s, j, 0, NULL, 0) : 0;
}

double memory_process_own(const scenario_t *s, const job_t *j) {
    const loader_ops_t *l = scenario_loader(s);
    if (j->host_mem_gb > 0 || !l->process_bytes) return j->host_mem_gb * GIB;
    return l->process_bytes(s, j);
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

memory_parts_t memory_peak(const scenario_t *s, const topology_t *t, int v) {
    memory_parts_t m = {0};
    const loader_ops_t *l = scenario_loader(s);
    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        if (v < in->first_server || v >= in->first_server + in->nservers) continue;
        const job_t *j = &s->jobs[in->job];
        m.procs += in->gpus_per_server;
        const double pinned = l->pinned_bytes ? l->pinned_bytes(s, j, NULL, 0) : 0;
        m.pinned += in->gpus_per_server * pinned;
        m.processes += in->gpus_per_server * (memory_process_own(s, j) + pinned);
        if (l->proc_bytes) m.workers += in->gpus_per_server * l->proc_bytes(s, j, NULL, 0);
        m.staged += checkpoint_staged_bytes(s, in);
    }
    m.shm = memory_shm_peak(s, t, v);
    if (scenario_cache(s)->holds_memory && m.procs > 0) m.cache = s->server.cache_gb * 1e9;
    m.total = m.processes + m.workers + m.shm + m.cache + m.staged;
    return m;
}

/* Whether server.cache_gb was left unset (no layer gave it, nor a host
 * profile: 0): a page cache then has what the processes leave, as the
 * kernel gives it, not nothing. */
static int cache_size_unset(const scenario_t *s) {
    const int row = schema_find(SCOPE_SCENARIO, "server.cache_gb");
    return !(s->server.cache_gb > 0) && row >= 0 && !s->explicit_key[row];
}

double memory_cache_bytes(const scenario_t *s, const topology_t *t) {
    const cache_ops_t *c = scenario_cache(s);
    if (!c->room || !(s->server.mem_gb > 0)) return scenario_cache_bytes(s);
    const double C = cache_size_unset(s) ? s->server.mem_gb * GIB : scenario_cache_bytes(s);
    double room = C;
    for (int v = 0; v < (int)s->server.count; v++) {
        if (!first_on(t, v)) continue;
        const double r = c->room(C, s->server.mem_gb * GIB, memory_peak(s, t, v).total);
        if (r < room) room = r;
    }
    return room;
}

memory_server_t memory_server(const scenario_t *s, const topology_t *t, int v) {
    memory_server_t m = {memory_shm_peak(s, t, v), memory_peak(s, t, v).total, 0};
    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        if (v < in->first_server || v >= in->first_server + in->nservers) continue;
        const job_t *j = &s->jobs[in->job];
        /* The loader's own GPU buffers where it says (DALI's queues), else
         * the prepared batches the training process keeps on the GPU. */
        const loader_ops_t *l = scenario_loader(s);
        const double g = j->gpu_mem_gb * 1e9 + (l->gpu_bytes ? l->gpu_bytes(s, j, NULL, 0)
                                                             : scenario_job_gpu_input_bytes(s, j));
        if (g > m.gpu) m.gpu = g;
    }
    return m;
}

int memory_shown(const scenario_t *s) {
    return memory_counted(s) || s->server.shm_mb > 0;
}

int memory_counted(const scenario_t *s) {
    const loader_ops_t *l = scenario_loader(s);
    int given = s->server.mem_gb > 0;
    for (int i = 0; i < s->njobs && !given; i++)
        given = memory_process_own(s, &s->jobs[i]) > 0 ||
                (l->proc_bytes && l->proc_bytes(s, &s->jobs[i], NULL, 0) > 0);
    return given;
}

/* The first server past server.mem_gb, or -1. */
static int mem_over(const scenario_t *s, const topology_t *t) {
    if (!(s->server.mem_gb > 0)) return -1;
    for (int v = 0; v < (int)s->server.count; v++)
        if (memory_peak(s, t, v).total > s->server.mem_gb * GIB && first_on(t, v)) return v;
    return -1;
}

/* The first server past server.shm_mb, or -1. */
static int shm_over(const scenario_t *s, const topology_t *t) {
    if (!(s->server.shm_mb > 0) || !scenario_loader(s)->shm_bytes) return -1;
    for (int v = 0; v < (int)s->server.count; v++)
        if (memory_shm_peak(s, t, v) > s->server.shm_mb * MIB && first_on(t, v)) return v;
    return -1;
}

int memory_fits(const scenario_t *s, const topology_t *t) {
    return shm_over(s, t) < 0 && mem_over(s, t) < 0;
}

/* The largest value of the loader's own knob (num_workers) under which
 * every server fits its limits, or -1: the lever in the user's key. */
static int64_t knob_fit(const scenario_t *s, const topology_t *t) {
    const loader_ops_t *l = scenario_loader(s);
    if (!l->knob || !l->knob_values || !l->knob_set) return -1;
    int64_t v[64], best = -1;
    scenario_t *w = malloc(sizeof *w);
    if (!w) return -1;
    int n = l->knob_values(s, v, 64);
    for (int i = 0; i < n; i++) {
        *w = *s;
        l->knob_set(w, v[i]);
        if (memory_fits(w, t)) best = v[i];
    }
    free(w);
    return best;
}

/* Server v past server.mem_gb: what holds it and what the kernel does. */
static void mem_error(const scenario_t *s, const topology_t *t, int v) {
    const memory_parts_t m = memory_peak(s, t, v);
    const instance_t *in = first_on(t, v);
    const job_t *j = &s->jobs[in->job];
    const loader_ops_t *l = scenario_loader(s);
    char note[192] = "no worker processes", fit[96] = "", pin[160] = "";
    if (l->proc_bytes) l->proc_bytes(s, j, note, sizeof note);
    if (m.pinned > 0 && l->pinned_bytes) {
        char what[112] = "";
        const double each = l->pinned_bytes(s, j, what, sizeof what);
        snprintf(pin, sizeof pin, " and %.1f MiB pinned each: %s", each / MIB, what);
    }
    const int64_t k = knob_fit(s, t);
    if (k >= 0) snprintf(fit, sizeof fit, " (%s %lld fits)", l->knob, (long long)k);
    diag_error(s->origin[schema_find(SCOPE_SCENARIO, "server.mem_gb")],
               "server %d: its processes would hold %.2f GiB at their peak (%d training "
               "process%s of job '%s' at %.3g GiB each%s: %.2f GiB; their loaders' workers, %s "
               "each: %.2f GiB; /dev/shm %.2f GiB; a cache in the loader's memory %.2f GiB; async "
               "checkpoints' "
               "staged state %.2f GiB), but server.mem_gb is %g: the kernel's OOM killer ends a "
               "process (a DataLoader "
               "worker dies with \"killed by signal: Killed\", or the training process itself). "
               "Raise the container's memory limit, or lower the workers or their batches in "
               "flight%s%s",
               v + 1, m.total / GIB, m.procs, m.procs == 1 ? "" : "es", j->name,
               memory_process_own(s, j) / GIB, pin, m.processes / GIB, note, m.workers / GIB,
               m.shm / GIB, m.cache / GIB, m.staged / GIB, s->server.mem_gb, fit,
               m.staged > 0 ? ", or checkpoint synchronously (jobs.N.checkpoint.mode: sync)" : "");
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
    const int w = mem_over(s, t);
    if (w >= 0) {
        mem_error(s, t, w);
        return EXIT_INPUT;
    }
    return 0;
}
