/* advise: see advise.h. */
#include "advise.h"
#include "advise_plan.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "advice.h"
#include "advice_find.h"
#include "cost.h"
#include "model.h"
#include "report.h"
#include "valid.h"
#include "run.h"
#include "scenario.h"
#include "grid_run.h"
#include "sweep_describe.h"
#include "sweep_grid.h"
#include "text.h"
#include "watchdog.h"

/* ---- options ---- */

static int usage_error(const char *fmt, const char *arg) {
    return options_error("advise", fmt, arg);
}

static const option_t advise_own_options[] = {
    {.name = "--target",
     .type = OPT_LIST,
     .arg = "METRIC>=X",
     .offset = offsetof(advise_opts_t, target),
     .count_offset = offsetof(advise_opts_t, ntarget),
     .max = MAX_TARGETS,
     .help = "what a configuration must reach, in the run's last epoch for its worst\n"
             "job: METRIC>=X or METRIC<=X with METRIC one of gpu_util, epoch_s,\n"
             "throughput_items_s, prep_stall_s, fetch_stall_s, hit_rate, cpu_util,\n"
             "storage_util, or startup_s and first_step_s (launch to the first step,\n"
             "in the first epoch) (default gpu_util>=0.9). Repeatable: all must hold."},
    {.name = "--minimize",
     .type = OPT_STR,
     .arg = "cost|cost_per_useful_epoch|KEY",
     .offset = offsetof(advise_opts_t, minimize),
     .help = "what the cheapest means: cost (dollars of the run, from the prices;\n"
             "the default when the scenario is priced), cost_per_useful_epoch (dollars\n"
             "per epoch of training kept across checkpoints and failures, goodput's;\n"
             "searches jobs.0.checkpoint.every_steps too, the Young/Daly interval a\n"
             "candidate; no target by default) or a varied key"},
    {.name = "--maximize",
     .type = OPT_STR,
     .arg = "KEY",
     .offset = offsetof(advise_opts_t, maximize),
     .help = "the most of a varied key that still meets the target\n"
             "(--maximize jobs.0.gpus: the most GPUs the storage feeds)"},
    {.name = "--prices",
     .type = OPT_STR,
     .arg = "FILE",
     .offset = offsetof(advise_opts_t, prices),
     .help = "a price file, read once; its prices override the scenario's"},
    {.name = "--alternative",
     .type = OPT_LIST,
     .arg = "KEY=V[,KEY=V]",
     .offset = offsetof(advise_opts_t, alt),
     .count_offset = offsetof(advise_opts_t, nalt),
     .max = MAX_ALTS,
     .help = "another kind to search the same grid with (dataset.shard_items=1000);\n"
             "the scenario's other variants are searched too. Repeatable."},
    {.name = "--confirm",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(advise_opts_t, confirm),
     .min = 1,
     .max = MAX_SIMS,
     .help = "simulations in all, to confirm the recommendation, Pareto points\n"
             "and alternatives (default 4)"},
    {.name = "--threads",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(advise_opts_t, threads),
     .min = 1,
     .max = 1024,
     .help = "threads evaluating the model (default: the online CPUs); the answer\n"
             "is the same for any N"},
    REPORT_FORMAT_OPTION(offsetof(advise_opts_t, format)),
    WATCHDOG_OPTION(offsetof(advise_opts_t, max_seconds)),
    {0},
};

static const option_t *const advise_tables[] = {sweep_grid_options, advise_own_options,
                                                run_model_only_option, run_scenario_options, NULL};

const command_t advise_command = {
    .name = "advise",
    .synopsis = "SCENARIO --vary key=values... [--target gpu_util>=0.9]\n"
                "                       [--minimize cost|KEY | --maximize KEY] [options]",
    .about = "Searches the grid of the --vary keys for the cheapest configuration that meets the\n"
             "target: the model evaluates every configuration, the simulator confirms the\n"
             "winner (a configuration it finds missing the target is passed over). Prints the\n"
             "recommendation, its bottleneck, the Pareto front (objective vs GPU utilisation)\n"
             "and what the scenario's other variants and each --alternative would need.",
    .tables = advise_tables,
    .positional = "SCENARIO",
    .positional_offset = offsetof(advise_opts_t, a.file),
    .footer = "--variant NAME picks the variant searched (default: the first). With --model-only\n"
              "nothing is simulated and the recommendation is the model's.\n",
};

/* ---- setting up ---- */

static int setup_objective(advise_plan_t *p) {
    const advise_opts_t *o = p->o;
    if (o->minimize && o->maximize) return usage_error("--minimize and --maximize: give one%s", "");
    const char *key = o->maximize ? o->maximize : o->minimize;
    p->maximize = o->maximize != NULL;
    p->obj_axis = -1;
    p->per_useful = !p->maximize && advise_useful_wanted(key);
    if (!key || (!p->maximize && strcmp(key, "cost") == 0) || p->per_useful) return 0;
    int a = sweep_grid_axis(&p->grid, key);
    if (a < 0)
        return usage_error("--minimize/--maximize %s: not a varied key (give it a --vary axis, "
                           "or --minimize cost)",
                           key);
    const sweep_axis_t *ax = &p->grid.axes[a];
    p->obj_value = malloc((size_t)ax->nvalues * sizeof *p->obj_value);
    if (!p->obj_value) return EXIT_RUNTIME;
    for (int v = 0; v < ax->nvalues; v++) {
        char *end;
        p->obj_value[v] = strtod(ax->values[v], &end);
        if (end == ax->values[v] || *end)
            return usage_error("--minimize/--maximize %s: the key's values are not numbers", key);
    }
    p->obj_axis = a;
    return 0;
}

static int add_alternative(advise_plan_t *p, const char *arg) {
    advise_search_t *s = &p->alts[p->nalts];
    memset(s, 0, sizeof *s);
    s->variant = p->variant;
    snprintf(s->name, sizeof s->name, "--alternative %s", arg);
    char *list = strdup(arg);
    if (!list) return EXIT_RUNTIME;
    int rc = 0;
    for (char *item = list, *next; !rc && item; item = next) {
        next = strchr(item, ',');
        if (next) *next++ = 0;
        char *eq = strchr(item, '=');
        if (!eq || eq == item) {
            rc = usage_error("--alternative %s: expected KEY=VALUE[,KEY=VALUE...]", arg);
            break;
        }
        *eq = 0;
        if (sweep_grid_axis(&p->grid, item) >= 0) {
            rc = usage_error("--alternative %s: sets a varied key; an alternative changes what "
                             "the grid does not",
                             arg);
            break;
        }
        static const src_pos_t alt_pos = {"--alternative", 0, 0};
        if (assign_push(&s->extra, item, eq + 1, alt_pos, alt_pos, 1)) rc = EXIT_INPUT;
    }
    free(list);
    if (rc) {
        assign_list_free(&s->extra);
        return rc;
    }
    p->nalts++;
    return 0;
}

static void free_search(advise_search_t *s) {
    free(s->pts);
    free(s->order);
    free(s->sims);
    assign_list_free(&s->extra);
}

/* The variant searched's own settings of a varied key win over --vary: said, as sweep says it. */
static void note_overrides(const advise_plan_t *p, int variant) {
    if (variant < 0) return;
    int runs[SCN_MAX_VARIANTS] = {0};
    runs[variant] = 1;
    sweep_note_overrides("advise", &p->grid, p->doc, runs);
}

/* The variant searched, and the other variants and each --alternative as its alternatives. */
static int setup_searches(advise_plan_t *p) {
    const advise_opts_t *o = p->o;
    scenario_doc_t *doc = p->doc;
    int rc = 0;
    int idx[SCN_MAX_VARIANTS + 1], nv = 0;
    if (!rc && o->a.nonly > 1)
        rc = usage_error("--variant: advise searches one variant; the others are its "
                         "alternatives%s",
                         "");
    if (!rc) rc = run_select(doc, "advise", o->a.only, o->a.nonly, idx, &nv);
    if (!rc) {
        p->variant = nv ? idx[0] : -1;
        p->main.variant = p->variant;
        snprintf(p->main.name, sizeof p->main.name, "%s",
                 p->variant >= 0 ? doc->variants[p->variant].name : "");
        for (int i = 0; i < doc->nvariants && !rc; i++) {
            if (i == p->variant) continue;
            advise_search_t *s = &p->alts[p->nalts++];
            memset(s, 0, sizeof *s);
            s->variant = i;
            snprintf(s->name, sizeof s->name, "variant %s", doc->variants[i].name);
        }
        for (int i = 0; i < o->nalt && !rc; i++)
            rc = add_alternative(p, o->alt[i]);
    }
    return rc;
}

/* The grid, the targets, the objective, --set and --prices, the variant
 * searched and its alternatives. */
static int setup(advise_plan_t *p) {
    const advise_opts_t *o = p->o;
    scenario_doc_t *doc = p->doc;
    const char *names[SCN_MAX_VARIANTS];
    for (int i = 0; i < doc->nvariants; i++)
        names[i] = doc->variants[i].name;
    int rc = sweep_grid_build(&p->grid, &o->g, names, doc->nvariants, &o->a.sets);
    for (int a = 0; a < p->grid.naxes && !rc; a++)
        if (p->grid.axes[a].is_variant)
            rc = usage_error("--vary variant=...: advise searches one variant (--variant NAME) "
                             "and the others are its alternatives%s",
                             "");
    if (!rc && p->grid.size > MAX_CONFIGS)
        rc = usage_error("the grid has more than 10^7 configurations%s", "");
    /* Dollars per useful epoch weigh the GPUs' waits already: no target by default. */
    const char *deflt = advise_useful_wanted(o->minimize) ? "gpu_util>=0" : "gpu_util>=0.9";
    p->ntargets = o->ntarget ? o->ntarget : 1;
    for (int k = 0; k < p->ntargets && !rc; k++)
        rc = advise_target_parse(o->ntarget ? o->target[k] : deflt, &p->targets[k]);
    if (!rc) rc = setup_objective(p);
    for (size_t i = 0; i < o->a.sets.n && !rc; i++) {
        const assign_t *a = &o->a.sets.v[i];
        rc = assign_push(&p->base, a->key, a->value, a->pos, a->keypos, 1) ? EXIT_RUNTIME : 0;
    }
    if (!rc && o->prices) {
        /* Loaded once, not at every configuration; its prices act as --set prices.*=... */
        char path[SCN_PATH * 2 + 2];
        rc = scenario_host_path(doc, o->prices, path, sizeof path);
        if (!rc) rc = scenario_prices_load(path, o->prices, &p->base);
    }
    if (!rc) rc = setup_searches(p);
    if (!rc) note_overrides(p, p->variant);
    if (!rc && p->per_useful) rc = advise_useful_setup(p);
    return rc;
}

/* Under a GPU-utilisation target the scenario as given misses: what to
 * change, in its own keys, found and proven as run finds it (advice_find.h). */
static int given_advice(advise_plan_t *p, variant_run_t *v, assign_list_t *sets) {
    const advise_target_t *t = &p->targets[0];
    if (!t->ge || strcmp(advise_metric_name(t->metric), "gpu_util") != 0) return 0;
    double kv;
    if (advise_config_sets(p, &p->main, -1, sets, &kv) || run_build(p->doc, sets, p->variant, 0, v))
        return 0; /* built once already: only memory fails here, and the line is a bonus */
    v->advice = malloc(sizeof *v->advice);
    const int simulate = !p->o->a.model_only;
    int rc = !v->advice || run_execute(v, simulate) ||
             advice_find(p->doc, sets, p->variant, v, t->value, simulate, v->advice);
    size_t len;
    FILE *m = rc ? NULL : open_memstream(&p->given_advice, &len);
    if (m) advice_line(m, v);
    rc = rc || !m || fclose(m);
    run_release(v);
    return rc ? EXIT_RUNTIME : 0;
}

/* The objective cost needs prices (known once a configuration is built);
 * then the scenario as given, what the recommendation changes. */
static int check_first(advise_plan_t *p) {
    variant_run_t *v = calloc(1, sizeof *v);
    if (!v) return EXIT_RUNTIME;
    assign_list_t sets = {0};
    double kv;
    int over, rc = advise_config_sets(p, &p->main, 0, &sets, &kv);
    if (!rc) rc = run_build_fitting(p->doc, &sets, p->variant, 0, v, &over);
    if (rc == EXIT_INPUT) {
        char what[4096];
        sweep_config_text(&p->grid, 0, what, sizeof what);
        fprintf(stderr,
                "stallsim advise: configuration 0 (%s) of --vary is invalid: see the "
                "error above\n",
                what);
    }
    if (!rc && p->obj_axis < 0 && !p->maximize && !cost_priced(&v->scn))
        rc = usage_error("nothing to minimise: the scenario has no prices; give --prices "
                         "FILE, or --minimize KEY / --maximize KEY with a varied key%s",
                         "");
    if (!rc && advise_evaluate(p, &p->main, -1, 0, v, &sets, &p->given, NULL) == 0)
        p->have_given = 1;
    if (!rc && p->have_given && !p->given.ok && !p->given.over_limit)
        rc = given_advice(p, v, &sets);
    assign_list_free(&sets);
    free(v);
    return rc;
}

/* The model over the grid for each search, the simulator confirming. */
static int search_all(advise_plan_t *p) {
    p->simulate = !p->o->a.model_only;
    p->sims_left = p->simulate ? (p->o->confirm ? p->o->confirm : 4) : 0;
    int rc = advise_search_model(p, &p->main);
    /* Most of the simulations go to the recommendation; one is kept per alternative when
     * there are enough. */
    if (!rc) {
        int keep = p->sims_left > p->nalts ? p->nalts : 0;
        rc = advise_confirm(p, &p->main, p->sims_left - keep);
    }
    for (int i = 0; i < p->nalts && !rc; i++) {
        rc = advise_search_model(p, &p->alts[i]);
        if (!rc) rc = advise_confirm(p, &p->alts[i], 1);
    }
    if (!rc) rc = advise_pareto(p);
    return rc;
}

static int advise(const advise_opts_t *o, scenario_doc_t *doc) {
    advise_plan_t *p = calloc(1, sizeof *p);
    if (!p) return EXIT_RUNTIME;
    p->o = o;
    p->doc = doc;
    sweep_grid_init(&p->grid);
    p->grid.cmd = "advise";
    int rc = setup(p);
    if (!rc) rc = check_first(p);
    if (!rc) rc = search_all(p);
    if (!rc) advise_write(stdout, p);
    free_search(&p->main);
    for (int i = 0; i < p->nalts; i++)
        free_search(&p->alts[i]);
    assign_list_free(&p->base);
    free(p->obj_value);
    free(p->pareto);
    free(p->given_advice);
    sweep_grid_free(&p->grid);
    free(p);
    return rc;
}

int advise_main(int argc, char **argv) {
    double t0 = watchdog_now(); /* --max-seconds counts from here */
    advise_opts_t o;
    memset(&o, 0, sizeof o);
    int rc = options_parse(&advise_command, argc, argv, &o);
    if (rc) {
        assign_list_free(&o.a.sets);
        return rc == 1 ? EXIT_OK : rc;
    }
    if (!o.a.file) rc = usage_error("missing the scenario file%s", "");
    if (!rc && o.g.nvary == 0)
        rc = usage_error("nothing to search: give at least one --vary key=values%s", "");
    if (!rc && o.threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.threads = n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
    }
    /* Its simulations ran silent and unbounded (NH2). */
    if (!rc) rc = watchdog_start("advise", t0, o.max_seconds, 1);
    scenario_doc_t doc;
    memset(&doc, 0, sizeof doc);
    int loaded = 0;
    if (!rc) {
        rc = scenario_doc_load(&doc, o.a.file);
        loaded = 1;
    }
    if (!rc) rc = advise(&o, &doc);
    /* Every runtime failure below is an allocation that failed (the paths
     * that fail otherwise say so and return EXIT_INPUT): said once, here. */
    if (rc == EXIT_RUNTIME)
        fprintf(stderr, "stallsim advise: out of memory: nothing was advised (fewer --vary values, "
                        "--threads 1, --model-only, or more memory)\n");
    if (loaded) scenario_doc_free(&doc);
    assign_list_free(&o.a.sets);
    return rc;
}
