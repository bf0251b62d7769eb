/* advise_out: see advise_plan.h. */
#include "advise_plan.h"

#include <math.h>
#include <string.h>

#include "sweep_describe.h"

#define PARETO_TEXT_ROWS 25 /* a longer front is thinned in the text table (all in JSON, CSV) */

static const char *obj_name(const advise_plan_t *p) {
    return p->per_useful ? ADVISE_USEFUL : p->obj_axis < 0 ? "cost" : p->grid.axes[p->obj_axis].key;
}

static double obj_shown(const advise_plan_t *p, const advise_point_t *pt) {
    return p->maximize ? -pt->objective : pt->objective;
}

static void fmt_obj(const advise_plan_t *p, const advise_point_t *pt, char *buf, size_t n) {
    if (p->per_useful)
        snprintf(buf, n, "$%.4g", pt->objective);
    else if (p->obj_axis < 0)
        snprintf(buf, n, "$%.2f", pt->cost);
    else
        snprintf(buf, n, "%.6g", obj_shown(p, pt));
}

static void text_point(FILE *f, const char *what, const advise_point_t *pt) {
    fprintf(f, "%s: gpu %.1f%%, epoch %.1f s, bottleneck %s", what, 100 * pt->util, pt->epoch_s,
            bottleneck_names[pt->bottleneck]);
}

/* What an alternative saves against the recommendation, in the objective's terms. */
static void saving(const advise_plan_t *p, const advise_point_t *rec, const advise_point_t *alt,
                   char *buf, size_t n) {
    double d = obj_shown(p, rec) - obj_shown(p, alt);
    const char *key = obj_name(p);
    if (d == 0)
        snprintf(buf, n,
                 p->obj_axis < 0 ? "costs the same as the recommendation"
                                 : "needs the same %s as the recommendation",
                 key);
    else if (p->obj_axis < 0)
        snprintf(buf, n, "costs $%.4g %s than the recommendation%s", fabs(d),
                 d > 0 ? "less" : "more", p->per_useful ? " a useful epoch" : "");
    else if (p->maximize)
        snprintf(buf, n, "feeds %.6g %s %s than the recommendation", fabs(d),
                 d < 0 ? "more" : "fewer", key);
    else
        snprintf(buf, n, "needs %.6g %s %s than the recommendation", fabs(d),
                 d > 0 ? "less" : "more", key);
}

/* The target, the search and the scenario as given. */
static void text_head(FILE *f, const advise_plan_t *p) {
    const advise_search_t *s = &p->main;
    fprintf(f, "stallsim advise -- %s, variant %s\n", p->o->a.file,
            s->variant >= 0 ? p->doc->variants[s->variant].name : "(none)");
    fputs("target:", f);
    for (int k = 0; k < p->ntargets; k++)
        fprintf(f, "%s %s", k ? " and" : "", p->targets[k].text);
    int first = 0;
    for (int k = 0; k < p->ntargets; k++)
        first |= advise_metric_first(p->targets[k].metric);
    fprintf(f, " (model, the run's %s, the worst job); %s %s\n",
            first ? "first epoch for the start-up's metrics, else its last" : "last epoch",
            p->maximize ? "maximize" : "minimize", obj_name(p));
    fprintf(f, "searched %lld configurations with the model: %lld meet the target",
            (long long)p->grid.size, (long long)s->nok);
    if (s->nover)
        fprintf(f,
                "; %lld left out, past a memory limit (server.shm_mb or server.mem_gb): "
                "their processes would die, of a bus error (/dev/shm full) at the first "
                "batches or by the OOM killer",
                (long long)s->nover);
    fputc('\n', f);
    if (p->have_given && p->given.over_limit)
        fputs("the scenario as given: past a memory limit (server.shm_mb or server.mem_gb), its "
              "processes would die (stallsim check says which limit and by how much)\n",
              f);
    else if (p->have_given)
        text_point(f, "the scenario as given (model)", &p->given), fputc('\n', f);
    if (p->per_useful && p->have_given)
        fprintf(f,
                "the scenario as given: %s $%.4g (model); job 0's Young/Daly interval %.0f steps "
                "(model, as given), a candidate of %s\n",
                ADVISE_USEFUL, p->given.objective, p->young_daly,
                p->useful_vary[0] ? p->useful_vary : "none: the interval is not searched");
    if (p->given_advice && p->given_advice[0])
        fprintf(f, "what to change, as given (the first job; the model's search, simulated):\n%s",
                p->given_advice);
}

/* The recommendation (or why there is none) and the candidates the simulator passed over. */
static void text_recommendation(FILE *f, const advise_plan_t *p) {
    const advise_search_t *s = &p->main;
    char what[4096], ob[64];
    if (s->rec >= 0) {
        const advise_point_t *m = &s->pts[s->rec];
        sweep_config_text(&p->grid, s->rec, what, sizeof what);
        fmt_obj(p, m, ob, sizeof ob);
        fprintf(f, "recommendation: %s (configuration %lld), %s %s\n", what, (long long)s->rec,
                obj_name(p), ob);
        text_point(f, "  model", m);
        const advise_checked_t *k = advise_sim_of(s, s->rec);
        if (k) {
            fputc('\n', f);
            text_point(f, "  simulator", &k->sim);
            if (p->per_useful) fprintf(f, ", %s $%.4g", ADVISE_USEFUL, k->sim.objective);
            fputs(": meets the target\n", f);
        } else {
            fputs(" (model only: not simulated)\n", f);
        }
        const advise_point_t *now = k ? &k->sim : m;
        fprintf(f, "  its bottleneck becomes %s", bottleneck_names[now->bottleneck]);
        if (p->have_given && p->given.over_limit)
            fputs(" (as given: past a memory limit, a crash)", f);
        else if (p->have_given)
            fprintf(f, " (as given: %s, gpu %.1f%%)", bottleneck_names[p->given.bottleneck],
                    100 * p->given.util);
        fputc('\n', f);
    } else if (s->nok) {
        fprintf(f,
                "no recommendation: the simulator found all %d candidates it ran missing the "
                "target\n",
                s->nsims);
    } else if (!p->npareto) {
        fputs("no configuration of the grid meets the target: every one is past a memory limit "
              "(server.shm_mb or server.mem_gb)\n",
              f);
    } else {
        int64_t top = p->pareto[p->npareto - 1]; /* the busiest, the cheapest of those */
        sweep_config_text(&p->grid, top, what, sizeof what);
        fprintf(f,
                "no configuration of the grid meets the target; the busiest GPUs: %s "
                "(configuration %lld)",
                what, (long long)top);
        text_point(f, "", &s->pts[top]);
        fputc('\n', f);
    }
    for (int i = 0; i < s->nsims; i++) {
        const advise_checked_t *k = &s->sims[i];
        if (k->sim.ok || !k->model.ok) continue;
        sweep_config_text(&p->grid, k->c, what, sizeof what);
        fprintf(f,
                "  not recommended: %s (configuration %lld): model gpu %.1f%%, simulator %.1f%% "
                "misses the target\n",
                what, (long long)k->c, 100 * k->model.util, 100 * k->sim.util);
    }
}

/* The Pareto front, thinned to PARETO_TEXT_ROWS. */
static void text_pareto(FILE *f, const advise_plan_t *p) {
    const advise_search_t *s = &p->main;
    char ob[64];
    fprintf(f, "\nPareto front (%s vs GPU utilisation; model, simulator where run):\n",
            obj_name(p));
    fprintf(f, "%10s ", "config");
    for (int a = 0; a < p->grid.naxes; a++)
        fprintf(f, " %16s", p->grid.axes[a].key);
    fprintf(f, " %12s %8s %8s %10s %s\n",
            p->per_useful     ? "usd/useful"
            : p->obj_axis < 0 ? "cost_usd"
                              : "objective",
            "gpu", "gpu_sim", "epoch_s", "bottleneck");
    int64_t step = p->npareto > PARETO_TEXT_ROWS
                       ? (p->npareto + PARETO_TEXT_ROWS - 2) / (PARETO_TEXT_ROWS - 1)
                       : 1;
    int64_t shown = 0;
    for (int64_t i = 0; i < p->npareto; i++) {
        int64_t c = p->pareto[i];
        const advise_checked_t *k = advise_sim_of(s, c);
        if (i % step && i != p->npareto - 1 && c != s->rec && !k) continue;
        shown++;
        int idx[SWEEP_MAX_AXES];
        sweep_grid_point(&p->grid, c, idx);
        const advise_point_t *pt = &s->pts[c];
        fprintf(f, "%10lld ", (long long)c);
        for (int a = 0; a < p->grid.naxes; a++)
            fprintf(f, " %16s", p->grid.axes[a].values[idx[a]]);
        char sim[16] = "-";
        if (k) snprintf(sim, sizeof sim, "%.1f%%", 100 * k->sim.util);
        fmt_obj(p, pt, ob, sizeof ob);
        fprintf(f, " %12s %7.1f%% %8s %10.1f %s%s\n", ob, 100 * pt->util, sim, pt->epoch_s,
                bottleneck_names[pt->bottleneck], c == s->rec ? "  <- recommended" : "");
    }
    if (shown < p->npareto)
        fprintf(f, "(%lld of the front's %lld points shown; --format csv has all)\n",
                (long long)shown, (long long)p->npareto);
}

/* What each alternative needs, and what it saves. */
static void text_alternatives(FILE *f, const advise_plan_t *p) {
    const advise_search_t *s = &p->main;
    char what[4096];
    if (p->nalts) fputs("\nAlternatives of another kind (the same grid and target):\n", f);
    for (int i = 0; i < p->nalts; i++) {
        const advise_search_t *a = &p->alts[i];
        fprintf(f, "  %s: ", a->name);
        if (a->rec < 0) {
            fprintf(f, "%s\n",
                    a->nok ? "no candidate the simulator confirmed"
                           : "no configuration meets the target");
            continue;
        }
        sweep_config_text(&p->grid, a->rec, what, sizeof what);
        const advise_checked_t *k = advise_sim_of(a, a->rec);
        fprintf(f, "%s; gpu %.1f%%%s", what, 100 * (k ? k->sim.util : a->pts[a->rec].util),
                k ? " (simulator)" : " (model)");
        if (s->rec >= 0) {
            char sv[128];
            saving(p, &s->pts[s->rec], &a->pts[a->rec], sv, sizeof sv);
            fprintf(f, ": %s", sv);
        }
        fputc('\n', f);
    }
}

static void write_text(FILE *f, const advise_plan_t *p) {
    text_head(f, p);
    fputc('\n', f);
    text_recommendation(f, p);
    text_pareto(f, p);
    text_alternatives(f, p);
}

/* A point's fields, in JSON's order; the CSV has no target_metric, and the
 * simulator's columns start at cost_usd. */
static const out_field_t point_fields[] = {
    {"objective", OUT_NUM, "%.9g", NULL, 0, NULL, 0, NULL},
    {"cost_usd", OUT_NUM, "%.6f", NULL, 0, NULL, 0, NULL},
    {"gpu_util", OUT_NUM, "%.6f", NULL, 0, NULL, 0, NULL},
    {"epoch_s", OUT_NUM, "%.9g", NULL, 0, NULL, 0, NULL},
    {"target_metric", OUT_NUM, "%.9g", NULL, OUT_SKIP_CSV, NULL, 0, NULL},
    {"meets_target", OUT_BOOL, "%d", NULL, 0, NULL, 0, NULL},
    {"bottleneck", OUT_NAME, NULL, bottleneck_names, 0, NULL, 0, NULL},
};
#define NPOINT_FIELDS ((int)(sizeof point_fields / sizeof *point_fields))

static void point_values(const advise_plan_t *p, const advise_point_t *pt, double *v) {
    v[0] = obj_shown(p, pt), v[1] = pt->cost, v[2] = pt->util, v[3] = pt->epoch_s;
    v[4] = pt->lead, v[5] = pt->ok, v[6] = pt->bottleneck;
}

static void json_point(out_json_t *j, const char *key, const advise_plan_t *p,
                       const advise_point_t *pt) {
    double v[NPOINT_FIELDS];
    point_values(p, pt, v);
    out_jrecord(j, key, point_fields, NPOINT_FIELDS, v);
}

static void json_config(out_json_t *j, const char *key, const advise_plan_t *p,
                        const advise_search_t *s, int64_t c) {
    int idx[SWEEP_MAX_AXES];
    sweep_grid_point(&p->grid, c, idx);
    out_jobj(j, key);
    out_jint(j, "config", (long long)c);
    out_jobj(j, "values");
    for (int a = 0; a < p->grid.naxes; a++)
        out_jstr(j, p->grid.axes[a].key, p->grid.axes[a].values[idx[a]]);
    out_jend(j);
    json_point(j, "model", p, &s->pts[c]);
    const advise_checked_t *k = advise_sim_of(s, c);
    if (k)
        json_point(j, "sim", p, &k->sim);
    else
        out_jnull(j, "sim");
    out_jend(j);
}

/* An array whose elements stand each on its own line. */
static void json_list_open(out_json_t *j, const char *key) {
    out_jbreak(j, "\n  ");
    out_jarr(j, key);
}
static void json_list_close(out_json_t *j) {
    out_jbreak(j, "\n  ");
    out_jend(j);
}

static void json_alternatives(out_json_t *j, const advise_plan_t *p) {
    const advise_search_t *s = &p->main;
    json_list_open(j, "alternatives");
    for (int i = 0; i < p->nalts; i++) {
        const advise_search_t *a = &p->alts[i];
        out_jbreak(j, "\n    ");
        out_jobj(j, NULL);
        out_jstr(j, "name", a->name);
        out_jint(j, "meet_target", (long long)a->nok);
        if (a->rec >= 0)
            json_config(j, "recommendation", p, a, a->rec);
        else
            out_jnull(j, "recommendation");
        if (a->rec >= 0 && s->rec >= 0)
            out_jnum(j, "saves", "%.9g",
                     obj_shown(p, &s->pts[s->rec]) - obj_shown(p, &a->pts[a->rec]));
        out_jend(j);
    }
    json_list_close(j);
}

/* The target, the objective and how many configurations met it. */
static void json_head(out_json_t *j, const advise_plan_t *p) {
    const advise_search_t *s = &p->main;
    out_jbreak(j, "\n  ");
    out_jint(j, "format_version", 1);
    out_jbreak(j, "\n  ");
    out_jstr(j, "scenario", p->o->a.file);
    out_jbreak(j, "\n  ");
    out_jstr(j, "variant", s->variant >= 0 ? p->doc->variants[s->variant].name : "");
    out_jbreak(j, "\n  ");
    out_jarr(j, "targets");
    for (int k = 0; k < p->ntargets; k++) {
        out_jobj(j, NULL);
        out_jstr(j, "metric", advise_metric_name(p->targets[k].metric));
        out_jstr(j, "op", p->targets[k].ge ? ">=" : "<=");
        out_jnum(j, "value", "%.9g", p->targets[k].value);
        out_jend(j);
    }
    out_jend(j);
    out_jbreak(j, "\n  ");
    out_jobj(j, "objective");
    out_jstr(j, "key", obj_name(p));
    out_jstr(j, "direction", p->maximize ? "maximize" : "minimize");
    if (p->per_useful) out_jnum(j, "young_daly_steps", "%.9g", p->young_daly);
    out_jend(j);
    const long long n[] = {(long long)p->grid.size, (long long)s->nok, (long long)s->nover};
    const char *names[] = {"configurations", "meet_target", "past_memory_limit"};
    for (int k = 0; k < 3; k++) {
        out_jbreak(j, "\n  ");
        out_jint(j, names[k], n[k]);
    }
}

static void write_json(FILE *f, const advise_plan_t *p) {
    const advise_search_t *s = &p->main;
    out_json_t j;
    out_json_begin(&j, f);
    out_jobj(&j, NULL);
    json_head(&j, p);
    out_jbreak(&j, "\n  ");
    if (p->have_given && p->given.over_limit) {
        out_jobj(&j, "given");
        out_jbool(&j, "past_memory_limit", 1);
        out_jend(&j);
    } else if (p->have_given) {
        json_point(&j, "given", p, &p->given);
    } else {
        out_jnull(&j, "given");
    }
    out_jbreak(&j, "\n  ");
    if (s->rec >= 0)
        json_config(&j, "recommendation", p, s, s->rec);
    else
        out_jnull(&j, "recommendation");
    json_list_open(&j, "simulated");
    for (int i = 0; i < s->nsims; i++) {
        out_jbreak(&j, "\n    ");
        json_config(&j, NULL, p, s, s->sims[i].c);
    }
    json_list_close(&j);
    json_list_open(&j, "pareto");
    for (int64_t i = 0; i < p->npareto; i++) {
        out_jbreak(&j, "\n    ");
        json_config(&j, NULL, p, s, p->pareto[i]);
    }
    json_list_close(&j);
    json_alternatives(&j, p);
    out_jbreak(&j, "\n");
    out_jend(&j);
    fputc('\n', f);
}

static void csv_row(FILE *f, const advise_plan_t *p, const advise_search_t *s, const char *role,
                    int64_t c) {
    int idx[SWEEP_MAX_AXES];
    sweep_grid_point(&p->grid, c, idx);
    fputs(role, f);
    fputc(',', f);
    out_csv_field(f, s == &p->main ? "" : s->name);
    fprintf(f, ",%lld", (long long)c);
    for (int a = 0; a < p->grid.naxes; a++) {
        fputc(',', f);
        out_csv_field(f, p->grid.axes[a].values[idx[a]]);
    }
    const advise_checked_t *k = advise_sim_of(s, c);
    double v[NPOINT_FIELDS];
    point_values(p, &s->pts[c], v);
    out_csv_values(f, point_fields, NPOINT_FIELDS, v);
    if (k) {
        point_values(p, &k->sim, v);
        out_csv_values(f, point_fields + 1, NPOINT_FIELDS - 1, v + 1);
    } else {
        out_csv_blank(f, point_fields + 1, NPOINT_FIELDS - 1);
    }
    fputc('\n', f);
}

static void write_csv(FILE *f, const advise_plan_t *p) {
    fputs("role,alternative,config", f);
    for (int a = 0; a < p->grid.naxes; a++) {
        fputc(',', f);
        out_csv_field(f, p->grid.axes[a].key);
    }
    out_csv_names(f, point_fields, NPOINT_FIELDS, "");
    out_csv_names(f, point_fields + 1, NPOINT_FIELDS - 1, "sim_");
    fputc('\n', f);
    const advise_search_t *s = &p->main;
    if (s->rec >= 0) csv_row(f, p, s, "recommendation", s->rec);
    for (int i = 0; i < s->nsims; i++)
        if (s->sims[i].c != s->rec && s->sims[i].model.ok && !s->sims[i].sim.ok)
            csv_row(f, p, s, "rejected", s->sims[i].c);
    for (int64_t i = 0; i < p->npareto; i++)
        csv_row(f, p, s, "pareto", p->pareto[i]);
    for (int i = 0; i < p->nalts; i++)
        if (p->alts[i].rec >= 0) csv_row(f, p, &p->alts[i], "alternative", p->alts[i].rec);
}

void advise_write(FILE *f, const advise_plan_t *p) {
    if (p->o->format == FORMAT_JSON)
        write_json(f, p);
    else if (p->o->format == FORMAT_CSV)
        write_csv(f, p);
    else
        write_text(f, p);
}
