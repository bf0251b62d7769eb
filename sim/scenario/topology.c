/* topology: see topology.h. */
#include "topology.h"

#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pinned cores are the cores of the servers a copy runs on (jobs.N.cpus over
 * its servers, as placed): more than a server has would prepare on cores
 * that are not there (an epoch faster than its cores allow), and pinning all
 * of a server's cores leaves its unpinned copies none (an epoch of inf). */
static int check_pinned(const scenario_t *s, const topology_t *t, const double *pinned) {
    const int row = schema_find(SCOPE_JOB, "cpus");
    for (int k = 0; k < (int)s->server.count; k++) {
        int by = -1, unpinned = -1;
        for (int i = 0; i < t->ninst; i++) {
            const instance_t *in = &t->inst[i];
            if (k < in->first_server || k >= in->first_server + in->nservers) continue;
            if (s->jobs[in->job].cpus > 0 && by < 0) by = i;
            if (s->jobs[in->job].cpus == 0 && unpinned < 0) unpinned = i;
        }
        if (by < 0) continue;
        const job_t *jb = &s->jobs[t->inst[by].job];
        const double have = (double)s->server.cpus;
        if (pinned[k] > have * (1 + 1e-12)) {
            diag_error(jb->origin[row],
                       "the jobs pin %.4g prep cores on server %d (job '%s' and any beside it; "
                       "a copy's jobs.N.cpus spread over its servers), but it has server.cpus = "
                       "%lld",
                       pinned[k], k + 1, t->inst[by].name, (long long)s->server.cpus);
            return EXIT_INPUT;
        }
        if (unpinned >= 0 && pinned[k] >= have) {
            diag_error(jb->origin[row],
                       "the jobs pin all %lld prep cores of server %d (job '%s' and any beside "
                       "it), leaving none for job '%s' there: pin fewer, or pin that job too",
                       (long long)s->server.cpus, k + 1, t->inst[by].name, t->inst[unpinned].name);
            return EXIT_INPUT;
        }
    }
    return 0;
}

int topology_build(const scenario_t *s, topology_t *t) {
    memset(t, 0, sizeof *t);
    int S = (int)s->server.count;
    int *free_gpus = calloc((size_t)S, sizeof *free_gpus);
    int *njobs = calloc((size_t)S, sizeof *njobs);
    double *pinned = calloc((size_t)S, sizeof *pinned);
    if (!free_gpus || !njobs || !pinned) {
        free(free_gpus), free(njobs), free(pinned);
        return EXIT_RUNTIME;
    }
    for (int i = 0; i < S; i++)
        free_gpus[i] = (int)s->server.gpus;
    int rc = 0;
    for (int j = 0; j < s->njobs && !rc; j++) {
        const job_t *jb = &s->jobs[j];
        for (int c = 0; c < jb->count; c++) {
            if (t->ninst == TOPO_MAX_INSTANCES) {
                src_pos_t p = jb->origin[0];
                diag_error(p, "more than %d job instances", TOPO_MAX_INSTANCES);
                rc = EXIT_INPUT;
                break;
            }
            instance_t *in = &t->inst[t->ninst];
            in->job = j;
            if (jb->count > 1)
                snprintf(in->name, sizeof in->name, "%s#%d", jb->name, c + 1);
            else
                snprintf(in->name, sizeof in->name, "%s", jb->name);
            int need = (int)((jb->gpus + s->server.gpus - 1) / s->server.gpus);
            in->gpus_per_server = need > 1 ? (int)s->server.gpus : (int)jb->gpus;
            int found = -1;
            for (int sv = 0; sv + need <= S && found < 0; sv++) {
                int ok = 1;
                for (int k = sv; k < sv + need; k++)
                    ok &= free_gpus[k] >= in->gpus_per_server;
                if (ok) found = sv;
            }
            if (found < 0) {
                src_pos_t p = {0};
                for (int k = 0; k < SCN_MAX_KEYS && !p.file; k++)
                    p = jb->origin[k];
                diag_error(p, "job '%s' (%lld GPUs) does not fit on the servers' free GPUs",
                           in->name, (long long)jb->gpus);
                rc = EXIT_INPUT;
                break;
            }
            in->first_server = found;
            in->nservers = need;
            for (int k = found; k < found + need; k++) {
                free_gpus[k] -= in->gpus_per_server;
                njobs[k]++;
                pinned[k] += (double)jb->cpus / need;
            }
            t->ninst++;
        }
    }
    if (!rc && s->loader.prep != PREP_COORDINATED) rc = check_pinned(s, t, pinned);
    if (!rc) {
        /* Unpinned instances share what pinned ones leave on their servers. */
        for (int i = 0; i < t->ninst; i++) {
            instance_t *in = &t->inst[i];
            const job_t *jb = &s->jobs[in->job];
            if (s->loader.prep == PREP_COORDINATED) {
                in->cpus = (double)s->server.cpus * in->nservers;
                continue;
            }
            if (jb->cpus > 0) {
                in->cpus = (double)jb->cpus;
                continue;
            }
            double cores = 0;
            for (int k = in->first_server; k < in->first_server + in->nservers; k++) {
                int unpinned = 0;
                for (int o = 0; o < t->ninst; o++) {
                    const instance_t *q = &t->inst[o];
                    if (s->jobs[q->job].cpus == 0 && k >= q->first_server &&
                        k < q->first_server + q->nservers)
                        unpinned++;
                }
                cores += ((double)s->server.cpus - pinned[k]) / unpinned;
            }
            in->cpus = cores;
        }
        for (int k = 0; k < S; k++)
            if (njobs[k] > t->jobs_on_server_max) t->jobs_on_server_max = njobs[k];
        for (int i = 0; i < t->ninst; i++) {
            instance_t *in = &t->inst[i];
            in->lead = i;
            if (s->loader.prep == PREP_COORDINATED)
                for (int o = 0; o < i && in->lead == i; o++)
                    if (t->inst[o].first_server == in->first_server) in->lead = t->inst[o].lead;
            in->stream = in->lead == i ? t->nstreams++ : t->inst[in->lead].stream;
        }
    }
    free(free_gpus), free(njobs), free(pinned);
    return rc;
}
