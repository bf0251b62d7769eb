/* topology: see topology.h. */
#include "topology.h"

#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
