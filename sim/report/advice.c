/* advice: see advice.h. */
#include "advice.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "model.h"
#include "report.h"
#include "schema.h"

/* Two limits within this fraction of each other both bind: lifting one gains little. */
#define BIND_TOGETHER 0.15
#define MAX_LEVER     65536 /* the most cores, workers or readers the advice names */
#define MAX_RATE      1e9   /* the highest GET/s cap the advice names */
#define STEADY_EPOCHS 32    /* epochs the model runs to find where the hit rates settle */
#define STEADY_TOL    1e-4  /* a hit rate within this of its last epoch's has settled */
#define CAP_GAIN      0.02  /* a cap binds when lifting it shortens the epoch by more */
#define GPU_PREP_SAID 0.01  /* the GPUs' own prep is said past this share of the epoch */

/* Everything the advice works on, allocated once per variant. */
typedef struct {
    scenario_t s;
    topology_t t;
    run_metrics_t r;
    int epoch;     /* the steady epoch (0-based) */
    double target; /* the GPU utilisation aimed at */
    int width;     /* the variant column (report_variant_width) */
} whatif_t;

/* The model's steady epoch of instance 0 for w->s; 0, or -1 when the
 * changed scenario does not build (then no advice is given for it). */
static int model_at(whatif_t *w, epoch_metrics_t *m) {
    if (topology_build(&w->s, &w->t)) return -1;
    w->s.epochs = w->epoch + 1;
    metrics_free(&w->r);
    if (metrics_alloc(&w->r, w->t.ninst, w->epoch + 1)) return -1;
    model_run_from(&w->s, &w->t, &w->r, w->epoch);
    *m = *metrics_at(&w->r, 0, w->epoch);
    return 0;
}

/* The first epoch from which every hit rate (DRAM, the tier's, the other
 * servers') stays where it ends: run's steady epoch looks at the DRAM's
 * alone, and a tier with no DRAM cache would have the cold epoch 1 taken
 * for the steady state. At least `from`. */
static int steady_epoch(whatif_t *w, const scenario_t *base, int from) {
    const int n = from + 2 > STEADY_EPOCHS ? from + 2 : STEADY_EPOCHS;
    w->s = *base;
    w->s.epochs = n;
    metrics_free(&w->r);
    if (topology_build(&w->s, &w->t) || metrics_alloc(&w->r, w->t.ninst, n)) return from;
    model_run(&w->s, &w->t, &w->r);
    const epoch_metrics_t *last = metrics_at(&w->r, 0, n - 1);
    int e = n - 1;
    for (; e > 0; e--) {
        const epoch_metrics_t *m = metrics_at(&w->r, 0, e - 1);
        if (fabs(m->hit_rate - last->hit_rate) >= STEADY_TOL ||
            fabs(m->tier_hit_rate - last->tier_hit_rate) >= STEADY_TOL ||
            fabs(m->remote_hit_rate - last->remote_hit_rate) >= STEADY_TOL)
            break;
    }
    return e > from ? e : from;
}

/* What an epoch takes on w->s: T_prep (prep's limit) or the epoch itself. */
typedef enum { LIMIT_PREP, LIMIT_EPOCH } limit_t;

static double limit_of(whatif_t *w, limit_t which) {
    epoch_metrics_t m;
    if (model_at(w, &m)) return INFINITY;
    return which == LIMIT_PREP ? m.t_prep_s : m.epoch_s;
}

/* The scenario-scope integer key `name` of base when its kinds use it (NULL otherwise). */
static const key_def_t *lever_key(const scenario_t *base, const char *name) {
    int n, i = schema_find(SCOPE_SCENARIO, name);
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    if (i < 0 || k[i].type != KT_INT || !kinds_key_used(base, name)) return NULL;
    return &k[i];
}

/* An integer key's value, or a rate's (a GET/s cap) rounded up. */
/* The loader's own knob (num_workers, threads) as a lever, or NULL. */
static const key_def_t *knob_key(const scenario_t *base) {
    const char *knob = scenario_loader(base)->knob;
    return knob ? lever_key(base, knob) : NULL;
}

static int64_t key_int(const key_def_t *k, const scenario_t *s) {
    const char *at = (const char *)s + k->offset;
    return k->type == KT_INT ? *(const int64_t *)at : (int64_t)ceil(*(const double *)at);
}

/* The limit with key k at value x. */
static double limit_at(whatif_t *w, const scenario_t *base, const key_def_t *k, int64_t x,
                       limit_t which) {
    char text[32], why[256];
    w->s = *base;
    snprintf(text, sizeof text, "%lld", (long long)x);
    if (schema_store(k, &w->s, text, why, sizeof why)) return INFINITY;
    return limit_of(w, which);
}

/* The least value of key k, from base's up to the key's bound, at which
 * the limit is at most goal; 0 when no value reaches it (another resource
 * binds first, or the key is not what limits). */
static int64_t lever_for(whatif_t *w, const scenario_t *base, const key_def_t *k, double goal,
                         limit_t which) {
    const double bound = k->type == KT_INT ? MAX_LEVER : MAX_RATE;
    const int64_t top = k->max < bound ? (int64_t)k->max : (int64_t)bound;
    int64_t lo = key_int(k, base), hi = lo > 0 ? lo : 1;
    if (limit_at(w, base, k, lo, which) <= goal) return lo;
    while (hi < top) {
        lo = hi;
        hi = hi * 2 < top ? hi * 2 : top;
        if (limit_at(w, base, k, hi, which) <= goal) break;
    }
    if (limit_at(w, base, k, hi, which) > goal) return 0;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (limit_at(w, base, k, mid, which) <= goal)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* base with integer key k at x (0), or -1 when it does not take x. */
static int set_int(scenario_t *s, const key_def_t *k, int64_t x) {
    char text[32], why[256];
    snprintf(text, sizeof text, "%lld", (long long)x);
    return schema_store(k, s, text, why, sizeof why) ? -1 : 0;
}

/* Workers and cores together where neither alone reaches the goal: the
 * fewest workers with all the cores the advice names, then the fewest
 * cores with those workers. 0, or 1 with both in *wk, *c. */
static int prep_both(whatif_t *w, const scenario_t *base, const key_def_t *cpus,
                     const key_def_t *workers, double goal, int64_t *wk, int64_t *c) {
    scenario_t *t = malloc(sizeof *t);
    *wk = *c = 0;
    if (!t) return 0;
    *t = *base;
    if (!set_int(t, cpus, cpus->max < MAX_LEVER ? (int64_t)cpus->max : MAX_LEVER))
        *wk = lever_for(w, t, workers, goal, LIMIT_PREP);
    *t = *base;
    if (*wk > 0 && !set_int(t, workers, *wk)) *c = lever_for(w, t, cpus, goal, LIMIT_PREP);
    free(t);
    return *wk > 0 && *c > 0;
}

/* Prep the training GPUs do themselves (prep.decode gpu, prep.on_gpu) is
 * not shortened by cores: where it is what binds, the lever is to move it
 * to the CPU (when its CPU costs are given, so the model can price it) with
 * the cores that then reach the goal. 1 with the text in buf, else 0. */
static int gpu_prep_lever(whatif_t *w, const scenario_t *base, double goal, char *buf, size_t n) {
    const key_def_t *cpus = lever_key(base, "server.cpus");
    const int on_gpu = base->prep.on_gpu, decode = base->prep.decode == DECODE_GPU;
    const int priced = base->prep.decode_ms_per_mb > 0 || base->prep.decode_ms_per_item > 0;
    if (!cpus || !(on_gpu || decode) || (decode && !priced)) return 0;
    scenario_t *c = malloc(sizeof *c);
    if (!c) return 0;
    *c = *base;
    c->prep.decode = DECODE_CPU;
    c->prep.on_gpu = 0;
    int64_t k = lever_for(w, c, cpus, goal, LIMIT_PREP);
    free(c);
    if (k <= 0) return 0;
    snprintf(buf, n, "prep on the CPU (%s%s%s) with %lld cores a server (%lld now)",
             decode ? "prep.decode: cpu" : "", decode && on_gpu ? ", " : "",
             on_gpu ? "prep.on_gpu: false" : "", (long long)k, (long long)base->server.cpus);
    return 1;
}

/* What prep needs for the goal: cores a server, else the loader's workers,
 * else both; 1 when the text names an amount ("72 cores a server"), 0 when
 * it is advice in words (the GIL's bound, a faster prep). */
static int prep_lever(whatif_t *w, const scenario_t *base, double goal, char *buf, size_t n) {
    const key_def_t *cpus = lever_key(base, "server.cpus"), *workers = knob_key(base);
    int64_t c = cpus ? lever_for(w, base, cpus, goal, LIMIT_PREP) : 0;
    int64_t wk = !c && workers ? lever_for(w, base, workers, goal, LIMIT_PREP) : 0;
    char cores[96] = "", wks[96] = "";
    if (!c && !wk && cpus && workers) prep_both(w, base, cpus, workers, goal, &wk, &c);
    if (c > 0)
        snprintf(cores, sizeof cores, "%lld cores a server (%.1f per GPU; %lld now)", (long long)c,
                 (double)c / (double)base->server.gpus, (long long)base->server.cpus);
    if (wk > 0)
        snprintf(wks, sizeof wks, "%lld %s (%s; %lld now)", (long long)wk,
                 scenario_loader(base)->knob_unit, workers->name,
                 (long long)key_int(workers, base));
    if (c > 0 || wk > 0) {
        snprintf(buf, n, "%s%s%s", wks, c > 0 && wk > 0 ? " with " : "", cores);
        return 1;
    }
    if (gpu_prep_lever(w, base, goal, buf, n)) return 1;
    if (scenario_hw_decode_share(base) > 0)
        snprintf(buf, n,
                 "a faster hardware JPEG decoder or a prep.hw_decoder_load that balances it "
                 "with the SMs, or its CPU costs given (prep.decode_ms_per_mb) to price prep "
                 "on the CPU");
    else if (base->prep.decode == DECODE_GPU || base->prep.on_gpu)
        snprintf(buf, n,
                 "a faster prep on the GPU (a hardware JPEG decoder), or its CPU costs given "
                 "(prep.decode_ms_per_mb) to price prep on the CPU");
    else if (!scenario_loader(base)->prep_bound ||
             !scenario_loader(base)->prep_bound(base, &base->jobs[0], buf, n))
        snprintf(buf, n, "a prep faster than more cores can make it");
    return 0;
}

/* The sentence that ends the advice: amounts read "About 72 cores a server
 * reach 90%."; advice in words "For 90%: worker processes ...". */
static void lever_sentence(FILE *out, const char *a, int a_amount, const char *b, int b_amount,
                           double target) {
    if (!b && a_amount)
        fprintf(out, "About %s reach %.0f%%.\n", a, 100 * target);
    else if (!b)
        fprintf(out, "For %.0f%%: %s.\n", 100 * target, a);
    else if (a_amount && b_amount)
        fprintf(out, "About %s and %s together reach %.0f%%.\n", a, b, 100 * target);
    else
        fprintf(out, "For %.0f%%, both: %s; and %s.\n", 100 * target, a, b);
}

/* 5500 as "5,500": a cap as its documentation writes it. */
static const char *grouped(char *b, size_t n, double v) {
    char d[32];
    int len = snprintf(d, sizeof d, "%.0f", v), o = 0;
    for (int i = 0; i < len && o + 2 < (int)n; i++) {
        if (i && (len - i) % 3 == 0) b[o++] = ',';
        b[o++] = d[i];
    }
    b[o] = 0;
    return b;
}

/* The storage kind's request-rate cap (a key in GET/s) when it is set, or NULL. */
static const key_def_t *get_cap(const scenario_t *st, double *cap) {
    int nk;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &nk);
    for (int i = 0; i < nk; i++)
        if (k[i].type == KT_REAL && strcmp(k[i].unit, "GET/s") == 0 &&
            kinds_key_used(st, k[i].name)) {
            *cap = *(const double *)((const char *)st + k[i].offset);
            if (*cap > 0) return &k[i];
        }
    return NULL;
}

static void cap_text(char *buf, size_t n, const key_def_t *k, double cap, int64_t need) {
    char a[32], b[32];
    snprintf(buf, n,
             "%s GET/s (%s; the store's cap of %s GET/s binds: spread the objects over more "
             "prefixes or read record shards, dataset.shard_mb)",
             grouped(a, sizeof a, (double)need), k->name, grouped(b, sizeof b, cap));
}

/* The requests in flight that reach the goal on st: the storage kind's
 * readers, else the loader's workers (one read in flight each); 0 when
 * neither alone does, else 1 with the key and its value in *k, *x. */
static int in_flight(whatif_t *w, const scenario_t *st, double goal, const key_def_t **k,
                     int64_t *x) {
    const key_def_t *readers = lever_key(st, "server.storage.reader_threads"),
                    *workers = knob_key(st);
    *k = readers, *x = readers ? lever_for(w, st, readers, goal, LIMIT_EPOCH) : 0;
    if (*x == 0) *k = workers, *x = workers ? lever_for(w, st, workers, goal, LIMIT_EPOCH) : 0;
    return *x > 0;
}

static void in_flight_text(char *buf, size_t n, const scenario_t *st, const key_def_t *k,
                           int64_t x) {
    const int gets = scenario_storage(st)->slots_are_connections;
    if (strcmp(k->name, "server.storage.reader_threads") == 0)
        snprintf(buf, n, "%lld %s in flight a server (%s; %lld now)", (long long)x,
                 gets ? "GETs" : "reads", k->name, (long long)key_int(k, st));
    else
        snprintf(buf, n, "%lld %s (%s; %lld now: one %s in flight each)", (long long)x,
                 scenario_loader(st)->knob_unit, k->name, (long long)key_int(k, st),
                 gets ? "GET" : "read");
}

/* The store's limit per key prefix, where the kind has one and it is set:
 * its rate key (unit "GET/s a prefix") and the prefixes' key (unit
 * "prefixes"); 0 otherwise. */
static int prefix_keys(const scenario_t *st, const key_def_t **rate, const key_def_t **pre) {
    int nk;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &nk);
    *rate = *pre = NULL;
    for (int i = 0; i < nk; i++) {
        if (!kinds_key_used(st, k[i].name)) continue;
        if (k[i].type == KT_REAL && strcmp(k[i].unit, "GET/s a prefix") == 0) *rate = &k[i];
        if (k[i].type == KT_INT && strcmp(k[i].unit, "prefixes") == 0) *pre = &k[i];
    }
    return *rate && *pre && *(const double *)((const char *)st + (*rate)->offset) > 0;
}

/* Where a prefix's rate binds (lifting it shortens the epoch), what lifts
 * it to the goal: more prefixes, or record shards of enough items (one
 * request each), each the fewest the model needs; with st's requests in
 * flight, or with the fewest that reach the goal when those bind next. 1
 * with the text in buf, else 0 (the prefixes do not bind). */
static int prefix_lever(whatif_t *w, const scenario_t *st, double Ts, double goal, char *buf,
                        size_t n) {
    const key_def_t *rate, *pre, *fk;
    if (!prefix_keys(st, &rate, &pre)) return 0;
    const double r = *(const double *)((const char *)st + rate->offset);
    char why[256], a[32];
    w->s = *st;
    if (schema_store(rate, &w->s, "0", why, sizeof why) ||
        !(limit_of(w, LIMIT_EPOCH) < (1 - CAP_GAIN) * Ts))
        return 0;
    scenario_t *t = malloc(sizeof *t);
    if (!t) return 0;
    *t = *st;
    int64_t x = 0, p = lever_for(w, t, pre, goal, LIMIT_EPOCH);
    /* Shards only where the data are loose and sized by items. */
    const key_def_t *sk = st->dataset.shard_items <= 1 && st->dataset.shard_mb <= 0
                              ? lever_key(st, "dataset.shard_items")
                              : NULL;
    int64_t sh = sk ? lever_for(w, t, sk, goal, LIMIT_EPOCH) : 0;
    char fl[160] = "";
    if (!p) {
        /* The connections bind next: the fewest in flight that reach the
         * goal with the prefixes lifted, then the prefixes with those. */
        scenario_t *lifted = malloc(sizeof *lifted);
        if (lifted) {
            *lifted = *st;
            if (!schema_store(rate, lifted, "0", why, sizeof why) &&
                in_flight(w, lifted, goal, &fk, &x) && !set_int(t, fk, x)) {
                in_flight_text(fl, sizeof fl, st, fk, x);
                p = lever_for(w, t, pre, goal, LIMIT_EPOCH);
            }
            free(lifted);
        }
    }
    free(t);
    if (!p && !sh) return 0;
    char ptext[320] = "", stext[160] = "";
    if (p)
        snprintf(ptext, sizeof ptext,
                 "%lld prefixes (%s; %lld now: %s GET/s a prefix binds, %s)%s%s", (long long)p,
                 pre->name, (long long)key_int(pre, st), grouped(a, sizeof a, r), rate->name,
                 p && *fl ? " with " : "", p ? fl : "");
    else
        snprintf(ptext, sizeof ptext, "(%s GET/s a prefix binds, %s) ", grouped(a, sizeof a, r),
                 rate->name);
    if (sh) snprintf(stext, sizeof stext, "shards of >= %lld items (%s)", (long long)sh, sk->name);
    snprintf(buf, n, "%s%s%s", ptext, p && sh ? " or " : "", stext);
    return 1;
}

/* What storage needs for the goal (prep free in st): the store's prefixes
 * where their rate binds; the requests in flight; a GET/s cap raised where
 * one binds (with more requests in flight when those bind next); else the
 * bytes per second. */
static void fetch_lever(whatif_t *w, const scenario_t *st, double bytes, double Ts, double goal,
                        char *buf, size_t n) {
    if (prefix_lever(w, st, Ts, goal, buf, n)) return;
    double cap = 0;
    const key_def_t *k = get_cap(st, &cap), *fk;
    scenario_t *lifted = k ? malloc(sizeof *lifted) : NULL;
    char why[256], capt[256], fl[160];
    int64_t x = 0, y = 0;
    int said = 1;
    if (lifted) {
        *lifted = *st;
        if (schema_store(k, lifted, "0", why, sizeof why)) free(lifted), lifted = NULL;
    }
    if (lifted) w->s = *lifted;
    const int binds = lifted && limit_of(w, LIMIT_EPOCH) < (1 - CAP_GAIN) * Ts;
    if (!binds && in_flight(w, st, goal, &fk, &x)) {
        in_flight_text(buf, n, st, fk, x);
    } else if (binds && (y = lever_for(w, st, k, goal, LIMIT_EPOCH)) > 0) {
        cap_text(buf, n, k, cap, y);
    } else if (lifted && in_flight(w, lifted, goal, &fk, &x)) {
        /* Both: the requests in flight that reach the goal uncapped, then the cap they need. */
        snprintf(why, sizeof why, "%lld", (long long)x);
        *lifted = *st;
        if (schema_store(fk, lifted, why, why, sizeof why) == 0 &&
            (y = lever_for(w, lifted, k, goal, LIMIT_EPOCH)) > 0) {
            in_flight_text(fl, sizeof fl, st, fk, x);
            cap_text(capt, sizeof capt, k, cap, y);
            size_t used = (size_t)snprintf(buf, n, "%s and ", fl);
            if (used < n) snprintf(buf + used, n - used, "%s", capt);
        } else {
            said = 0;
        }
    } else {
        said = 0;
    }
    if (!said)
        snprintf(buf, n, "%.2f GB/s of storage reads %s (%.2f now)", bytes / goal / 1e9,
                 st->server.storage.shared ? "in all" : "a server", Ts > 0 ? bytes / Ts / 1e9 : 0);
    free(lifted);
}

/* The bytes instance 0's first server reads from its storage an epoch. */
static double server_bytes(const variant_run_t *v, whatif_t *w) {
    /* The storage of instance 0's first server serves every stream reading
     * through it (each job over S servers reads 1/S of its bytes there), or
     * every stream when the servers share one device. */
    const scenario_t *base = &v->scn;
    double bytes = 0;
    const topology_t *t = &v->topo;
    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i], *me = &t->inst[0];
        int here =
            base->server.storage.shared || (me->first_server >= in->first_server &&
                                            me->first_server < in->first_server + in->nservers);
        if (in->lead == i && here)
            bytes += metrics_at(&w->r, i, w->epoch)->storage_read_bytes /
                     (base->server.storage.shared ? 1 : in->nservers);
    }
    return bytes;
}

/* Seconds as a sentence gives them: whole above 10 s, three figures below
 * (a short epoch printed "0 s" read as no time at all). */
static const char *secs(char *buf, size_t n, double s) {
    snprintf(buf, n, s >= 10 ? "%.0f" : "%.3g", s);
    return buf;
}

/* The share of the epoch the training GPUs spend on their own prep: it is
 * prep, not training (DS-Analyzer's T_gpu excludes it), so say it beside
 * the GPU's busy share, which counts training alone. */
static void gpu_prep_clause(FILE *out, const scenario_t *s, const epoch_metrics_t *m) {
    if (!(m->epoch_s > 0) || m->gpu_prep_s < GPU_PREP_SAID * m->epoch_s) return;
    fprintf(out,
            " training, and %.0f%% on its own prep (decode or augment on the GPU%s: %.1f s an "
            "epoch beside %.1f s of training)",
            100 * m->gpu_prep_s / m->epoch_s,
            scenario_hw_decode_share(s) > 0 ? ", waits on its hardware JPEG decoder included" : "",
            m->gpu_prep_s, m->t_gpu_s);
}

static void one_variant(FILE *out, const variant_run_t *v, whatif_t *w) {
    const scenario_t *base = &v->scn;
    w->epoch = steady_epoch(w, base, v->steady_from);
    w->s = *base;
    epoch_metrics_t now, free_prep;
    if (model_at(w, &now)) return;
    const double bytes = server_bytes(v, w);
    /* Storage alone: prep (decode and augment on the cores) free. */
    scenario_t *st = malloc(sizeof *st);
    if (!st) return;
    *st = *base;
    st->prep.decode_ms_per_mb = st->prep.decode_ms_per_item = st->prep.augment_ms = 0;
    st->prep.decode = DECODE_CPU; /* the GPU's own prep is prep too (DS-Analyzer) */
    st->prep.on_gpu = 0;
    w->s = *st;
    if (model_at(w, &free_prep)) {
        free(st);
        return;
    }

    const double T = now.epoch_s, Tg = now.t_gpu_s, Tp = now.t_prep_s, Ts = free_prep.epoch_s;
    const double util = T > 0 ? Tg / T : 1, goal = Tg / w->target;
    fprintf(out, "%-*s GPU %.0f%% busy", w->width, base->variant, 100 * util);
    gpu_prep_clause(out, base, &now);
    const int net = free_prep.bottleneck == BN_NETWORK;
    /* With prep free, what is left may be no read at all but the loader's
     * own work (PyTorch's worker start-up, collation, hand-over): prep
     * stall that no storage removes (a 400-item job forking 64 workers an
     * epoch was told "storage would limit you at 13 s" with nothing read). */
    const double own_s = free_prep.t_prep_s - free_prep.t_gpu_s,
                 fetch_s = free_prep.epoch_s - free_prep.t_prep_s, tiny = 0.01 * free_prep.epoch_s;
    const int own = !net && own_s > fetch_s && own_s > tiny;
    /* Nor either: the GPUs alone (only ever the parenthesis below). */
    const int gpus = !net && !own && fetch_s <= tiny;
    const char *fetch = net    ? "the network"
                        : own  ? "the loader's own work"
                        : gpus ? "the GPUs alone"
                               : "storage";
    const char *fetch_cap = net ? "The network" : own ? "The loader's own work" : "Storage";
    const int prep_first = Tp >= Ts;
    const double a = prep_first ? Tp : Ts, b = prep_first ? Ts : Tp;
    char sa[32], sb[32], sg[32];
    if (now.bottleneck == BN_GPU) {
        fputs(": the GPUs bind; more cores or faster storage would not help.\n", out);
    } else if (util >= w->target) {
        fprintf(out,
                ", %.0f%% or more: %s binds next, at %s s an epoch against %s s of GPU "
                "work.\n",
                100 * w->target, prep_first ? "prep" : fetch, secs(sa, sizeof sa, a),
                secs(sg, sizeof sg, Tg));
    } else {
        /* What each needs for the target alone. */
        char cores[512], reads[512];
        const int cores_amount = prep_lever(w, base, goal, cores, sizeof cores);
        const int reads_amount = !net && !own;
        if (net)
            snprintf(reads, sizeof reads, "a faster network (it carries %.1f GB an epoch)",
                     now.network_bytes / 1e9);
        else if (own)
            snprintf(reads, sizeof reads,
                     "less of the loader's own work (worker start-up, collation, hand-over: "
                     "%.1f s an epoch with prep free)",
                     own_s);
        else
            fetch_lever(w, st, bytes, Ts, goal, reads, sizeof reads);
        fprintf(out, ". %s limits you at %s s an epoch", prep_first ? "Prep" : fetch_cap,
                secs(sa, sizeof sa, a));
        if (b > goal) {
            fprintf(out, ", and %s would at %s s", prep_first ? fetch : "prep",
                    secs(sb, sizeof sb, b));
            if (b >= (1 - BIND_TOGETHER) * a)
                fprintf(out,
                        ": the two bind within %.0f%% of each other, so lifting only %s gains at "
                        "most %.0f%%, only %s %.0f%%",
                        100 * (1 - b / a), prep_first ? "prep" : fetch, 100 * (1 - b / T),
                        prep_first ? fetch : "prep", 100 * (1 - a / T > 0 ? 1 - a / T : 0));
            fprintf(out, ". ");
            lever_sentence(out, prep_first ? cores : reads,
                           prep_first ? cores_amount : reads_amount, prep_first ? reads : cores,
                           prep_first ? reads_amount : cores_amount, w->target);
        } else {
            fprintf(out, " (%s: %s s). ", prep_first ? fetch : "prep", secs(sb, sizeof sb, b));
            lever_sentence(out, prep_first ? cores : reads,
                           prep_first ? cores_amount : reads_amount, NULL, 0, w->target);
        }
    }
    free(st);
}

void advice_write_text(FILE *out, const variant_run_t *v, int nv) {
    whatif_t *w = calloc(1, sizeof *w);
    if (!w) return;
    w->target = ADVICE_TARGET;
    w->width = report_variant_width(v, nv);
    fprintf(out,
            "\nwhat to change (model, steady state, for %.0f%% GPU utilisation; the first "
            "job):\n",
            100 * ADVICE_TARGET);
    for (int k = 0; k < nv; k++)
        one_variant(out, &v[k], w);
    metrics_free(&w->r);
    free(w);
}

void advice_line(FILE *out, const variant_run_t *v, double target) {
    whatif_t *w = calloc(1, sizeof *w);
    if (!w) return;
    w->target = target;
    w->width = report_variant_width(v, 1);
    one_variant(out, v, w);
    metrics_free(&w->r);
    free(w);
}
