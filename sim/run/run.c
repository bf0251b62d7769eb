/* run: see run.h. */
#include "run.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "budget.h"
#include "diag.h"
#include "kinds.h"
#include "memory.h"
#include "model.h"
#include "mrc.h"
#include "schema.h"
#include "server_sample.h"
#include "sim.h"
#include "text.h"

static int set_fn(void *sets, const char *cmd, const char *value) {
    (void)cmd;
    return assign_parse_set(sets, value);
}

static int epochs_fn(void *sets, const char *cmd, const char *value) {
    (void)cmd;
    return assign_parse_key(sets, "epochs", value);
}

const option_t run_scenario_options[] = {
    {.name = "--set",
     .type = OPT_FN,
     .arg = "key=value",
     .offset = offsetof(run_args_t, sets),
     .fn = set_fn,
     .help = "override a scenario key (dotted path, e.g. server.cpus=12,\n"
             "jobs.0.gpus=4; repeatable; variants still override these)"},
    {.name = "--epochs",
     .type = OPT_FN,
     .arg = "N",
     .offset = offsetof(run_args_t, sets),
     .fn = epochs_fn,
     .help = "shorthand for --set epochs=N"},
    {.name = "--variant",
     .type = OPT_LIST,
     .arg = "NAME",
     .offset = offsetof(run_args_t, only),
     .count_offset = offsetof(run_args_t, nonly),
     .max = SCN_MAX_VARIANTS,
     .help = "run only this variant (repeatable; default: all, in file order)"},
    {0},
};

const option_t run_model_only_option[] = {
    {.name = "--model-only",
     .type = OPT_FLAG,
     .offset = offsetof(run_args_t, model_only),
     .help = "the analytical model alone, no simulation"},
    {0},
};

int run_select(const scenario_doc_t *doc, const char *cmd, const char *const *only, int nonly,
               int *idx, int *n) {
    *n = 0;
    if (nonly == 0) {
        if (doc->nvariants == 0) idx[(*n)++] = -1;
        for (int i = 0; i < doc->nvariants; i++)
            idx[(*n)++] = i;
        return 0;
    }
    for (int k = 0; k < nonly; k++) {
        int found = -1;
        for (int i = 0; i < doc->nvariants; i++)
            if (strcmp(doc->variants[i].name, only[k]) == 0) found = i;
        if (found < 0) {
            fprintf(stderr, "stallsim %s: ", cmd);
            text_put_escaped(stderr, doc->path);
            fputs(": no variant named '", stderr);
            text_put_escaped(stderr, only[k]);
            fputs("'; it has:", stderr);
            for (int i = 0; i < doc->nvariants; i++)
                fprintf(stderr, " %s", doc->variants[i].name);
            fprintf(stderr, "%s\n", doc->nvariants ? "" : " none");
            return EXIT_INPUT;
        }
        idx[(*n)++] = found;
    }
    return 0;
}

/* sim.sample_rate, lowered so the sample holds about sim.sample_items_max. */
static double sample_rate(const scenario_t *s) {
    double cap = (double)s->sampling.items_max / (double)s->dataset.items;
    return s->sampling.rate < cap ? s->sampling.rate : cap;
}

/* sim.servers: whether the simulator samples the servers (server_sample.h),
 * decided by the memory check under auto: every server when that fits. */
static int sample_servers(variant_run_t *v, int simulations) {
    scenario_t *s = &v->scn;
    s->sampling.servers_sampled = 0;
    const int mode = s->sampling.servers_mode;
    if (mode == SERVERS_EXACT || s->sampling.server_sample >= s->server.count) return 0;
    const char *why = server_sample_unfit(s, &v->topo);
    if (mode == SERVERS_SAMPLED && why) {
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "sim.servers")],
                   "sim.servers: sampled: these servers are not alike enough to sample (%s); "
                   "expected auto or exact",
                   why);
        return EXIT_INPUT;
    }
    if (why) return 0;
    if (mode == SERVERS_AUTO &&
        (double)sim_memory_bytes(s, &v->topo) * simulations <= (double)sim_memory_available())
        return 0;
    s->sampling.servers_sampled = (int)s->sampling.server_sample;
    return 0;
}

double run_memory_bytes(const variant_run_t *v) {
    return run_sampled(&v->scn, &v->topo)
               ? mrc_memory_bytes(&v->scn, &v->topo, sample_rate(&v->scn), 1)
               : (double)sim_memory_bytes(&v->scn, &v->topo);
}

int run_build(const scenario_doc_t *doc, const assign_list_t *sets, int variant, int simulations,
              variant_run_t *v) {
    return run_build_fitting(doc, sets, variant, simulations, v, NULL);
}

int run_build_fitting(const scenario_doc_t *doc, const assign_list_t *sets, int variant,
                      int simulations, variant_run_t *v, int *over_limit) {
    return run_build_over(doc, sets, NULL, variant, simulations, v, over_limit);
}

int run_build_over(const scenario_doc_t *doc, const assign_list_t *sets, const assign_list_t *over,
                   int variant, int simulations, variant_run_t *v, int *over_limit) {
    int rc = scenario_build_over(doc, sets, variant, over, &v->scn);
    if (!rc) rc = topology_build(&v->scn, &v->topo);
    if (!rc) rc = kinds_check(&v->scn, &v->topo);
    if (!rc && over_limit) *over_limit = !memory_fits(&v->scn, &v->topo);
    if (!rc && !over_limit) rc = memory_check(&v->scn, &v->topo);
    if (!rc && simulations > 0 && !run_sampled(&v->scn, &v->topo))
        rc = sample_servers(v, simulations);
    /* Refuse a simulation this machine cannot hold before allocating any of it. */
    if (!rc && simulations > 0 && !run_sampled(&v->scn, &v->topo))
        rc = sim_memory_check_n(&v->scn, &v->topo, simulations);
    if (!rc && simulations > 0 && run_sampled(&v->scn, &v->topo)) {
        double need = mrc_memory_bytes(&v->scn, &v->topo, sample_rate(&v->scn), 1) * simulations;
        double have = (double)sim_memory_available(), gib = 1024.0 * 1024 * 1024;
        if (need > have) {
            diag_error(v->scn.origin[schema_find(SCOPE_SCENARIO, "dataset.items")],
                       "a sampled simulation of %lld items (sim.sample_rate %g) needs %.1f GiB of "
                       "memory, this machine has %.1f GiB; lower sim.sample_rate or "
                       "sim.sample_items_max, or --model-only",
                       (long long)v->scn.dataset.items, v->scn.sampling.rate, need / gib,
                       have / gib);
            rc = EXIT_INPUT;
        }
    }
    return rc;
}

int run_sampled(const scenario_t *s, const topology_t *t) {
    return s->dataset.items > s->sampling.above_items && !mrc_inexact(s, t);
}

typedef struct {
    const mrc_t *m;
    const topology_t *t;
    double err; /* the largest 3 standard errors so far */
} sample_ctx_t;

static double sample_hits(void *ctx, int i, int e, double *hu) {
    sample_ctx_t *c = ctx;
    double h = mrc_profile(c->m, c->t, 0, i, e, hu);
    double reads = c->m->reads[(size_t)c->t->inst[i].stream * (size_t)c->m->epochs + (size_t)e];
    double err = reads > 0 ? 3 * sqrt(h * (1 - h) / reads) : 1;
    if (err > c->err) c->err = err;
    return h;
}

/* The hits from a hash-sampled replay, the timings from the model given them. */
static int execute_sampled(variant_run_t *v) {
    mrc_t m;
    uint64_t cap = (uint64_t)memory_cache_bytes(&v->scn, &v->topo);
    if (mrc_run_sampled(&v->scn, &v->topo, &cap, 1, sample_rate(&v->scn), &m)) {
        fprintf(stderr, "stallsim: cannot allocate the sampled replay of %lld items\n",
                (long long)v->scn.dataset.items);
        return EXIT_RUNTIME;
    }
    sample_ctx_t c = {&m, &v->topo, 0};
    model_run_hits(&v->scn, &v->topo, sample_hits, &c, &v->sim);
    v->sampled = m.rate;
    v->sample_err = c.err;
    mrc_free(&m);
    return 0;
}

int run_execute(variant_run_t *v, int simulate) {
    return run_execute_observed(v, simulate, NULL, NULL);
}

int run_execute_observed(variant_run_t *v, int simulate, const sim_watch_t *watch,
                         const sim_observer_t *obs) {
    v->sampled = v->sample_err = 0;
    int ns = (int)v->scn.server.count, epochs = (int)v->scn.epochs;
    if (metrics_alloc(&v->model, v->topo.ninst, epochs) || metrics_alloc_servers(&v->model, ns))
        return EXIT_RUNTIME;
    model_run(&v->scn, &v->topo, &v->model);
    if (model_steady(&v->scn, &v->topo, 0, &v->steady, &v->steady_from)) return EXIT_RUNTIME;
    int rc = 0;
    if (simulate) {
        if (metrics_alloc(&v->sim, v->topo.ninst, epochs) || metrics_alloc_servers(&v->sim, ns))
            return EXIT_RUNTIME;
        rc = run_sampled(&v->scn, &v->topo)
                 ? execute_sampled(v)
                 : sim_run_observed(&v->scn, &v->topo, &v->sim, watch, obs);
    }
    if (!rc) binding_name(v);
    return rc;
}

void run_release(variant_run_t *v) {
    free(v->advice);
    v->advice = NULL;
    metrics_free(&v->model);
    metrics_free(&v->sim);
}
