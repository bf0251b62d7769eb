/* run: see run.h. */
#include "run.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "kinds.h"
#include "model.h"
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

int run_build(const scenario_doc_t *doc, const assign_list_t *sets, int variant, int simulations,
              variant_run_t *v) {
    int rc = scenario_build(doc, sets, variant, &v->scn);
    if (!rc) rc = topology_build(&v->scn, &v->topo);
    if (!rc) rc = kinds_check(&v->scn, &v->topo);
    /* Refuse a simulation this machine cannot hold before allocating any of it. */
    if (!rc && simulations > 0) rc = sim_memory_check_n(&v->scn, &v->topo, simulations);
    return rc;
}

int run_execute(variant_run_t *v, int simulate) {
    return run_execute_watched(v, simulate, NULL);
}

int run_execute_watched(variant_run_t *v, int simulate, const sim_watch_t *watch) {
    int ns = (int)v->scn.server.count, epochs = (int)v->scn.epochs;
    if (metrics_alloc(&v->model, v->topo.ninst, epochs) || metrics_alloc_servers(&v->model, ns))
        return EXIT_RUNTIME;
    model_run(&v->scn, &v->topo, &v->model);
    if (model_steady(&v->scn, &v->topo, 0, &v->steady, &v->steady_from)) return EXIT_RUNTIME;
    if (!simulate) return 0;
    if (metrics_alloc(&v->sim, v->topo.ninst, epochs) || metrics_alloc_servers(&v->sim, ns))
        return EXIT_RUNTIME;
    return sim_run_watched(&v->scn, &v->topo, &v->sim, watch);
}

void run_release(variant_run_t *v) {
    metrics_free(&v->model);
    metrics_free(&v->sim);
}
