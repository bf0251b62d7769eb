/* valid: see valid.h. */
#include "valid.h"

#include <stdio.h>
#include <string.h>

#include "fig.h"
#include "kinds.h"
#include "report.h"
#include "schema.h"

/* The scenario keys of the resource a bottleneck names, by prefix. */
static const char *const bn_keys[BN__COUNT][4] = {
    [BN_GPU] = {"server.gpus", NULL},
    [BN_PREP] = {"prep.", "server.cpus", "server.mem_gbps", "loader."},
    [BN_STORAGE_BW] = {"server.storage.", "server.tier.", "dataset.", NULL},
    [BN_IN_FLIGHT] = {"server.storage.", "server.tier.", "dataset.", NULL},
    [BN_NETWORK] = {"server.network.", "server.count", "loader.dist_cache", NULL},
};

static int of_resource(const char *name, int bn) {
    for (int p = 0; p < 4 && bn_keys[bn][p]; p++)
        if (strncmp(name, bn_keys[bn][p], strlen(bn_keys[bn][p])) == 0) return 1;
    return 0;
}

static void put_key(const char *name, const char *value, src_pos_t at, int *shown) {
    fprintf(stderr, "%s%s = %s", (*shown)++ ? ", " : "", name, value);
    if (at.file && at.line > 0)
        fprintf(stderr, " (%s:%d:%d)", at.file, at.line, at.col);
    else if (at.file)
        fprintf(stderr, " (%s)", at.file);
}

/* The keys the scenario sets (a file, --set, a host profile) of the
 * resource bottleneck bn names, and every job's rate (the GPUs'). */
static void name_keys(const scenario_t *s, int bn) {
    int n, shown = 0;
    char buf[SCN_PATH];
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    fprintf(stderr, "  the scenario's keys behind it (the %s keys it set): ", bottleneck_names[bn]);
    for (int i = 0; i < n; i++) {
        if (!s->origin[i].file || !of_resource(k[i].name, bn) || !kinds_key_used(s, k[i].name))
            continue;
        schema_format(&k[i], s, buf, sizeof buf);
        put_key(k[i].name, buf, s->origin[i], &shown);
    }
    const key_def_t *jk = schema_keys(SCOPE_JOB, &n);
    const char *rates[] = {"gpu_items_per_s", "compute_s_per_batch", "gpus", "batch_per_gpu"};
    for (int j = 0; j < s->njobs; j++)
        for (int r = 0; r < 4; r++) {
            int i = schema_find(SCOPE_JOB, rates[r]);
            if (i < 0 || !s->jobs[j].origin[i].file) continue;
            char name[96];
            snprintf(name, sizeof name, "jobs.%d.%s", j, rates[r]);
            schema_format(&jk[i], &s->jobs[j], buf, sizeof buf);
            put_key(name, buf, s->jobs[j].origin[i], &shown);
        }
    fprintf(stderr, "%s\n", shown ? "" : "none set; all defaults");
}

static int refuse(const char *cmd, const char *figure, double value, const char *range,
                  const char *where, const scenario_t *s, int bn, int measured) {
    fprintf(stderr,
            "stallsim %s: error: an impossible figure, never printed: %s = %g (%s) "
            "must be %s\n",
            cmd, figure, value, where, range);
    if (s) name_keys(s, bn);
    if (measured)
        fprintf(stderr, "  the measured runs disagree past what their split can hold (the "
                        "stalls are differences of separately timed runs: T - T_prep, T_prep - "
                        "T_gpu): measure again on an idle machine, or with more items\n");
    else
        fprintf(stderr, "  a fault of stallsim's model or simulator for this input, not a "
                        "result: please report it with the scenario and the command\n");
    return EXIT_RUNTIME;
}

/* The resource a figure measures, whose keys are behind it; -1: the row's bottleneck's. */
static int figure_resource(const char *name) {
    static const struct {
        const char *name;
        int bn;
    } by[] = {{"cpu_util", BN_PREP},
              {"t_prep_s", BN_PREP},
              {"prep_stall_s", BN_PREP},
              {"storage_util", BN_STORAGE_BW},
              {"storage_read_bytes", BN_STORAGE_BW},
              {"storage_requests", BN_STORAGE_BW},
              {"hit_rate", BN_STORAGE_BW},
              {"tier_hit_rate", BN_STORAGE_BW},
              {"fetch_stall_s", BN_STORAGE_BW},
              {"remote_hit_rate", BN_NETWORK},
              {"network_bytes", BN_NETWORK},
              {"gpu_util", BN_GPU},
              {"t_gpu_s", BN_GPU}};
    for (size_t i = 0; i < sizeof by / sizeof by[0]; i++)
        if (strcmp(name, by[i].name) == 0) return by[i].bn;
    return -1;
}

int report_valid_row(const epoch_metrics_t *m, const epoch_metrics_t *model, const scenario_t *s,
                     const char *cmd, const char *where, int measured) {
    const char *name;
    double value;
    fig_range_t r;
    if (!report_check_metrics(m, model, &name, &value, &r)) return 0;
    int bn = figure_resource(name);
    if (bn < 0) bn = m->bottleneck >= 0 && m->bottleneck < BN__COUNT ? m->bottleneck : BN_GPU;
    return refuse(cmd, name, value, fig_range_text(r), where, s, bn, measured);
}

/* A server's figures: counts and bytes, each >= 0. */
static int valid_server(const server_metrics_t *m, const variant_run_t *v, const char *cmd,
                        const char *where) {
    const char *name;
    double value;
    if (report_check_server(m, &name, &value))
        return refuse(cmd, name, value, fig_range_text(FIG_NONNEG), where, &v->scn, BN_STORAGE_BW,
                      0);
    return 0;
}

int report_valid_variant(const variant_run_t *v, int from, int steady, const char *cmd) {
    char where[256];
    const char *var = v->scn.variant[0] ? v->scn.variant : "-";
    for (int i = 0; i < v->topo.ninst; i++)
        for (int e = from; e < v->scn.epochs; e++) {
            const epoch_metrics_t *mm = metrics_at(&v->model, i, e);
            snprintf(where, sizeof where, "model, variant %s, job %s, epoch %d", var,
                     v->topo.inst[i].name, e + 1);
            if (report_valid_row(mm, NULL, &v->scn, cmd, where, 0)) return EXIT_RUNTIME;
            if (!v->sim.m) continue;
            snprintf(where, sizeof where, "%s, variant %s, job %s, epoch %d", run_sim_source(v),
                     var, v->topo.inst[i].name, e + 1);
            if (report_valid_row(metrics_at(&v->sim, i, e), mm, &v->scn, cmd, where, 0))
                return EXIT_RUNTIME;
        }
    const run_metrics_t *rs[2] = {&v->model, &v->sim};
    for (int k = 0; k < 2; k++)
        for (int sv = 0; rs[k]->srv && sv < rs[k]->nservers; sv++)
            for (int e = from; e < rs[k]->nepochs; e++) {
                snprintf(where, sizeof where, "%s, variant %s, server %d, epoch %d",
                         k ? "sim" : "model", var, sv + 1, e + 1);
                if (valid_server(server_at(rs[k], sv, e), v, cmd, where)) return EXIT_RUNTIME;
            }
    snprintf(where, sizeof where, "model's steady state, variant %s", var);
    return steady ? report_valid_row(&v->steady, NULL, &v->scn, cmd, where, 0) : 0;
}

int report_valid_runs(const variant_run_t *v, int nv, const char *cmd) {
    for (int k = 0; k < nv; k++)
        if (report_valid_variant(&v[k], 0, 1, cmd)) return EXIT_RUNTIME;
    return 0;
}
