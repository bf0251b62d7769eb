/* advice_find: see advice_find.h. */
#include "advice_find.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "diag.h"
#include "kinds.h"
#include "memory.h"
#include "model.h"
#include "schema.h"

#define KNOB        BINDING_KNOB
#define LEVERS      10
#define GROUP       3    /* keys a lever turns together */
#define STEPS       12   /* resources the search moves through, each round */
#define ROUNDS      5    /* searches proven, at most */
#define KNEE_UP     1.05 /* a guided step aims this far past the shortfall */
#define UTIL_MIN    0.05 /* a guided step turns a lever by at most target / this */
#define GUIDED_GAIN 0.01 /* a guided step that gains less is taken back */
#define DOUBLINGS   16   /* a lever goes at most this many doublings above its value */
#define BISECTIONS  48   /* halvings of a factor: far below one unit of any key */
#define KNEE        0.01 /* doubling a lever that saves less than this is past its knee */
#define TARGET_MAX  0.995
#define SHOWN       0.005  /* a utilisation this far below the target prints as it */
#define TRIM        0.0005 /* utilisation a trimmed key may give back */
#define FROM_ZERO   1      /* a key at 0 (a cache, num_workers) grows from this */

/* The user's keys that lift each resource, the cheapest to turn first; "a+b"
 * turns both by one factor (where each alone saves little: workers and the
 * cores they run on); "k=v" switches k to v (prep on the CPU). */
static const struct {
    int bn;
    const char *keys[LEVERS];
} levers[] = {
    {BN_PREP,
     {KNOB, "server.cpus", "jobs.0.cpus", KNOB "+server.cpus", "jobs.0.cpus+server.cpus",
      "prep.decode=cpu+server.cpus", "prep.on_gpu=false+server.cpus"}},
    {BN_MEM_BW, {"server.mem_gbps"}},
    {BN_CHECKPOINT,
     {"jobs.0.checkpoint.every_steps", "jobs.0.checkpoint.writers", "server.storage.max_mb_s",
      "server.storage.read_mb_s"}},
    {BN_LOADER, {"loader.persistent_workers=true", KNOB, "server.cpus", KNOB "+server.cpus"}},
    {BN_STORAGE_BW,
     {"server.storage.read_mb_s", "server.storage.peak_mb_s", "server.storage.max_mb_s",
      "server.cache_gb"}},
    {BN_STORAGE_IOPS, {"server.storage.read_iops", "dataset.shard_items", "server.cache_gb"}},
    {BN_REQ_RATE,
     {"server.storage.prefixes", "dataset.shard_items", "server.storage.max_get_s",
      "server.storage.prefix_get_s"}},
    {BN_IN_FLIGHT,
     {KNOB, "loader.reader_threads", "server.storage.reader_threads",
      "server.storage.connections_per_process", "server.storage.connections_per_server",
      "server.storage.queue_depth", KNOB "+server.storage.queue_depth",
      "loader.reader_threads+server.storage.queue_depth", "loader.open_shards",
      "loader.open_shards+server.storage.reader_threads"}},
    {BN_NETWORK, {"server.network.gbit_s"}},
    {BN_TIER, {"server.tier.read_mb_s", "server.tier.queue_depth", "server.tier.cache_gb"}},
};
enum { NLEVERS = sizeof levers / sizeof levers[0] };

/* The search's state: the configuration so far and what it set. */
typedef struct {
    scenario_t s;
    int E;
    double target;
    advice_t *a;
} search_t;

/* A lever: keys turned together by one factor from their values x0. */
typedef struct {
    const key_def_t *k[GROUP];
    double x0[GROUP];
    char to[GROUP][16]; /* a switch's value ("" for a key scaled) */
    int n;
} group_t;

/* Job 0's keys as levers: its rows with their offsets from the scenario
 * (schema_store writes at base + offset), named as --set names them. */
static const char *const job_lever_names[][2] = {
    {"cpus", "jobs.0.cpus"},
    {"checkpoint.every_steps", "jobs.0.checkpoint.every_steps"},
    {"checkpoint.writers", "jobs.0.checkpoint.writers"}};
enum { NJOB_LEVERS = sizeof job_lever_names / sizeof job_lever_names[0] };
static key_def_t job_keys[NJOB_LEVERS];
static pthread_once_t job_once = PTHREAD_ONCE_INIT;

static void job_keys_init(void) {
    int n;
    const key_def_t *k = schema_keys(SCOPE_JOB, &n);
    for (int j = 0; j < NJOB_LEVERS; j++) {
        int i = schema_find(SCOPE_JOB, job_lever_names[j][0]);
        if (i < 0) continue;
        job_keys[j] = k[i];
        job_keys[j].name = job_lever_names[j][1];
        job_keys[j].offset += offsetof(scenario_t, jobs);
    }
}

/* The row of lever key `name`, scenario or job 0's; NULL where none. */
static const key_def_t *find_key(const char *name) {
    if (strncmp(name, "jobs.0.", 7) == 0) {
        pthread_once(&job_once, job_keys_init);
        for (size_t j = 0; j < sizeof job_keys / sizeof job_keys[0]; j++)
            if (job_keys[j].name && strcmp(job_keys[j].name, name) == 0) return &job_keys[j];
        return NULL;
    }
    int n, i = schema_find(SCOPE_SCENARIO, name);
    return i < 0 ? NULL : &schema_keys(SCOPE_SCENARIO, &n)[i];
}

/* Caps a 0 turns off: no lever where off (from 0 the others grow from 1:
 * num_workers 0, the training process alone, to workers). */
static int is_cap(const char *name) {
    static const char *const caps[] = {"server.storage.max_get_s",
                                       "server.storage.prefix_get_s",
                                       "server.storage.max_mb_s",
                                       "server.storage.read_iops",
                                       "server.tier.read_iops",
                                       "server.mem_gbps",
                                       "jobs.0.cpus",
                                       "jobs.0.checkpoint.every_steps",
                                       "server.storage.connections_per_process",
                                       "server.storage.connections_per_server"};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        if (strcmp(name, caps[i]) == 0) return 1;
    return 0;
}

/* Lever key `name` of s, or NULL where s's kinds do not use it or it cannot
 * grow (a cap of 0 is none; loose data alone takes shards). */
static const key_def_t *lever(const scenario_t *s, const char *name) {
    name = binding_key(s, name);
    const key_def_t *k = name ? find_key(name) : NULL;
    if (!k || (k->type != KT_INT && k->type != KT_REAL)) return NULL;
    if (strncmp(name, "jobs.", 5) != 0 && !kinds_key_used(s, name)) return NULL;
    if (strcmp(name, "dataset.shard_items") == 0)
        return s->dataset.shard_items <= 1 && s->dataset.shard_mb <= 0 ? k : NULL;
    if (!(schema_number(k, s) > 0) && is_cap(name)) return NULL;
    return k;
}

/* Switch `name` to `to` as a lever of s: the key used by s's kinds and
 * not at that value already; prep moved to the CPU only where its CPU costs
 * are given (else the model would price it free). */
static const key_def_t *switch_lever(const scenario_t *s, const char *name, const char *to) {
    int n, i = schema_find(SCOPE_SCENARIO, name);
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    char now[48];
    if (i < 0 || !kinds_key_used(s, name)) return NULL;
    schema_format(&k[i], s, now, sizeof now);
    if (strcmp(now, to) == 0) return NULL;
    if (strncmp(name, "prep.", 5) == 0 && !(s->prep.decode_ms_per_mb > 0) &&
        !(s->prep.decode_ms_per_item > 0))
        return NULL;
    return &k[i];
}

/* The group "a+b" of s: 0, or -1 where a key of it is no lever here. */
static int group_of(const scenario_t *s, const char *spec, group_t *g) {
    char buf[160];
    snprintf(buf, sizeof buf, "%s", spec);
    memset(g, 0, sizeof *g);
    for (char *tok = strtok(buf, "+"); tok && g->n < GROUP; tok = strtok(NULL, "+")) {
        char *eq = strchr(tok, '=');
        if (eq) *eq = 0;
        const key_def_t *k = eq ? switch_lever(s, tok, eq + 1) : lever(s, tok);
        if (!k) return -1;
        g->k[g->n] = k;
        if (eq)
            snprintf(g->to[g->n], sizeof g->to[g->n], "%s", eq + 1);
        else
            g->x0[g->n] = schema_number(k, s);
        g->n++;
    }
    return g->n > 0 ? 0 : -1;
}

/* Key i of g at factor f: its value times f; a key at 0 (no cache, no
 * workers) stays there at 1 and grows from FROM_ZERO at 2. */
static double value_at(const group_t *g, int i, double f) {
    if (g->x0[i] > 0) return g->x0[i] * f;
    return f > 1 ? FROM_ZERO * f / 2 : 0;
}

/* s with key k at x (rounded up to a whole value): 0, or -1 out of range. */
/* The most steps between job 0's checkpoints the advice proposes: one an
 * epoch at least (past it a short run would simply never checkpoint, which
 * its failures would not forgive: goodput.h weighs those). */
static double checkpoint_every_max(const scenario_t *s) {
    const job_t *j = &s->jobs[0];
    return ceil((double)s->dataset.items / (double)(j->gpus * j->batch_per_gpu));
}

static int set_key(scenario_t *s, const key_def_t *k, double x) {
    char text[48], why[256];
    x = ceil(x);
    if (x > k->max) return -1;
    if (strcmp(k->name, "jobs.0.checkpoint.every_steps") == 0 && x > checkpoint_every_max(s))
        return -1;
    snprintf(text, sizeof text, "%.0f", x);
    if (strcmp(k->name, "dataset.shard_items") == 0) s->dataset.shard_mb = 0;
    return schema_store(k, s, text, why, sizeof why) ? -1 : 0;
}

/* s with group g at factor f (a switch on past 1): 0, or -1 out of range. */
static int set_group(scenario_t *s, const group_t *g, double f) {
    char why[256];
    for (int i = 0; i < g->n; i++) {
        if (!g->to[i][0] ? set_key(s, g->k[i], value_at(g, i, f))
                         : f > 1 && schema_store(g->k[i], s, g->to[i], why, sizeof why))
            return -1;
    }
    return 0;
}

/* The model's epoch E of instance 0 of s into *m: 0, or -1 where s does
 * not pass its kinds' checks or its memory (a configuration that would
 * not run is no answer). */
static int model_at(const scenario_t *s0, int E, epoch_metrics_t *m) {
    scenario_t *s = malloc(sizeof *s);
    topology_t *t = malloc(sizeof *t);
    run_metrics_t r = {0};
    int rc = -1;
    if (s && t) {
        *s = *s0;
        s->epochs = E + 1;
        diag_mute(1);
        if (!topology_build(s, t) && !kinds_check(s, t) && memory_fits(s, t) &&
            !metrics_alloc(&r, t->ninst, E + 1)) {
            model_run_from(s, t, &r, E);
            *m = *metrics_at(&r, 0, E);
            rc = 0;
        }
        diag_mute(0);
    }
    metrics_free(&r);
    free(s);
    free(t);
    return rc;
}

/* The model's GPU utilisation of s at E with g at factor f (0 where it does not run). */
static double util_at(const search_t *q, const group_t *g, double f) {
    scenario_t *s = malloc(sizeof *s);
    epoch_metrics_t m;
    double u = 0;
    if (s) {
        *s = q->s;
        if (!set_group(s, g, f) && !model_at(s, q->E, &m)) u = m.gpu_util;
    }
    free(s);
    return u;
}

/* Whether factors a < b give the same whole values of g. */
static int same_values(const group_t *g, double a, double b) {
    for (int i = 0; i < g->n; i++)
        if (g->to[i][0] ? (a > 1) != (b > 1) : ceil(value_at(g, i, a)) != ceil(value_at(g, i, b)))
            return 0;
    return 1;
}

/* The least factor of g from 1 that reaches the target, or 0. */
static double reach(const search_t *q, const group_t *g) {
    double lo = 1, hi = 2;
    for (int d = 0; d < DOUBLINGS; d++, lo = hi, hi *= 2)
        if (util_at(q, g, hi) >= q->target) break;
    if (util_at(q, g, hi) < q->target) return 0;
    /* lo misses (the search runs below the target), hi reaches: bisect to
     * adjacent whole values. */
    for (int b = 0; b < BISECTIONS && !same_values(g, lo, hi); b++) {
        double mid = (lo + hi) / 2;
        if (util_at(q, g, mid) >= q->target)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* Where doubling g stops paying (KNEE): the factor there, and the GPU
 * utilisation it adds in *gain. */
static double knee(const search_t *q, const group_t *g, double *gain) {
    double f = 1, u0 = util_at(q, g, 1), u = u0;
    for (int d = 0; d < DOUBLINGS; d++) {
        double u2 = util_at(q, g, 2 * f);
        if (!(u2 > u * (1 + KNEE))) break;
        f *= 2, u = u2;
    }
    *gain = u - u0;
    return f;
}

/* Records key k at `to` in the advice and in the search's configuration. */
static void take_key(search_t *q, const key_def_t *k, const char *to) {
    advice_t *a = q->a;
    int i = 0;
    while (i < a->n && strcmp(a->key[i], k->name) != 0)
        i++;
    if (i == ADVICE_MAX_SETS) return;
    if (i == a->n) {
        snprintf(a->key[i], sizeof a->key[i], "%s", k->name);
        schema_format(k, &q->s, a->was[i], sizeof a->was[i]);
        a->n++;
    }
    char why[256];
    if (schema_store(k, &q->s, to, why, sizeof why)) return;
    schema_format(k, &q->s, a->value[i], sizeof a->value[i]);
}

static void take(search_t *q, const group_t *g, double f) {
    char text[48];
    for (int i = 0; i < g->n; i++) {
        snprintf(text, sizeof text, "%.0f", ceil(value_at(g, i, f)));
        take_key(q, g->k[i], g->to[i][0] ? g->to[i] : text);
    }
}

/* One step on resource bn: 1 where a lever reached the target, 0 where one
 * moved it closer, -1 where none lifts it. */
static int step(search_t *q, int bn) {
    group_t best = {0}, g;
    double best_f = 0, best_gain = KNEE / 2;
    for (int l = 0; l < NLEVERS; l++) {
        if (levers[l].bn != bn) continue;
        for (int j = 0; j < LEVERS && levers[l].keys[j]; j++) {
            if (group_of(&q->s, levers[l].keys[j], &g)) continue;
            double f = reach(q, &g), gain;
            if (f > 0) {
                take(q, &g, f);
                return 1;
            }
            if ((f = knee(q, &g, &gain)) > 1 && gain > best_gain)
                best = g, best_f = f, best_gain = gain;
        }
    }
    if (best.n == 0) return -1;
    take(q, &best, best_f);
    return 0;
}

/* Each key set back as far toward its old value as the model allows
 * without losing more than TRIM of the GPU utilisation found: a lever
 * turned with another (workers with the queue depth) may have gone past
 * what it needs. */
static void trim(search_t *q) {
    epoch_metrics_t m;
    if (model_at(&q->s, q->E, &m)) return;
    /* Down to the aim where it was reached, else to what was found. */
    const double keep = m.gpu_util >= q->target ? q->target : m.gpu_util - TRIM;
    for (int i = 0; i < q->a->n; i++) {
        const key_def_t *k = find_key(q->a->key[i]);
        if (!k || (k->type != KT_INT && k->type != KT_REAL)) continue;
        double lo = atof(q->a->was[i]), hi = schema_number(k, &q->s);
        if (!(lo < hi)) continue;
        group_t g = {.k = {k}, .x0 = {1}, .n = 1};
        while (ceil(hi) - ceil(lo) > 1 && hi > 1.01 * lo) {
            double mid = ceil((lo + hi) / 2);
            if (util_at(q, &g, mid) >= keep)
                hi = mid;
            else
                lo = mid;
        }
        char text[48];
        snprintf(text, sizeof text, "%.0f", ceil(hi));
        take_key(q, k, text);
    }
}

/* Searches with the model from q->s toward q->target: -1 reached, else the
 * resource that stops it (BN_GPU where the GPUs do, or where a configuration
 * would not run: every step takes one that ran, so only s itself). */
static int search(search_t *q) {
    for (int n = 0; n < STEPS; n++) {
        epoch_metrics_t m;
        if (model_at(&q->s, q->E, &m)) return BN_GPU;
        if (m.gpu_util >= q->target) return -1;
        int bn = binding_of(&q->s, 0, q->E, &m, m.epoch_s);
        if (bn == BN_GPU) return BN_GPU;
        int r = step(q, bn);
        if (getenv("STALLSIM_ADVICE_TRACE"))
            fprintf(stderr, "advice: util %.3f aim %.3f binds %s -> step %d (%d keys)\n",
                    m.gpu_util, q->target, bottleneck_names[bn], r, q->a->n);
        if (r < 0) return bn;
        if (r > 0) return -1;
    }
    epoch_metrics_t m;
    if (model_at(&q->s, q->E, &m)) return BN_GPU;
    return m.gpu_util >= q->target ? -1 : binding_of(&q->s, 0, q->E, &m, m.epoch_s);
}

/* The advice's keys as the layer set last. */
static int advice_sets(const advice_t *a, assign_list_t *over) {
    memset(over, 0, sizeof *over);
    for (int i = 0; i < a->n; i++)
        if (assign_parse_key(over, a->key[i], a->value[i])) return -1;
    return 0;
}

/* Builds and simulates the advice as the user would run it: fills sim_util,
 * epoch_s and then_binds. 0, -1 where it does not build or fit. */
static int prove(const scenario_doc_t *doc, const assign_list_t *sets, int variant, advice_t *a) {
    assign_list_t over;
    variant_run_t *pv = calloc(1, sizeof *pv);
    int rc = -1, over_limit = 0;
    diag_mute(1);
    if (pv && !advice_sets(a, &over)) {
        if (!run_build_over(doc, sets, &over, variant, 1, pv, &over_limit) && !over_limit &&
            !run_execute(pv, 1)) {
            const epoch_metrics_t *m = metrics_at(&pv->sim, 0, a->epoch);
            a->sim_util = m->gpu_util, a->epoch_s = m->epoch_s, a->then_binds = m->bottleneck;
            rc = 0;
        }
        run_release(pv);
        assign_list_free(&over);
    }
    diag_mute(0);
    free(pv);
    a->proofs++;
    return rc;
}

/* The model's view of the configuration found (no simulator). */
static void model_result(search_t *q) {
    epoch_metrics_t m;
    if (model_at(&q->s, q->E, &m)) return;
    q->a->model_util = m.gpu_util;
    q->a->epoch_s = m.epoch_s;
    q->a->then_binds = binding_of(&q->s, 0, q->E, &m, m.epoch_s);
}

/* Trims what the search found and proves it; where the simulator falls
 * short of the target with it trimmed, proves it untrimmed (the model is
 * most optimistic at the edge a trim goes to) and keeps that. 0, or -1
 * where the configuration does not build or fit. */
static int trimmed_proof(const scenario_doc_t *doc, const assign_list_t *sets, int variant,
                         search_t *q, int simulate, int trimmed) {
    advice_t *a = q->a, *was = malloc(sizeof *was);
    scenario_t *s = malloc(sizeof *s);
    int rc = -1;
    if (was && s) {
        *was = *a, *s = q->s;
        if (trimmed) trim(q);
        model_result(q);
        rc = simulate && a->n > 0 ? prove(doc, sets, variant, a) : 0;
        if (!rc && simulate && a->n > 0 && a->sim_util < a->target - ADVICE_TOL &&
            memcmp(was->value, a->value, sizeof a->value) != 0) {
            was->proofs = a->proofs;
            *a = *was, q->s = *s;
            model_result(q);
            rc = prove(doc, sets, variant, a);
        }
    }
    if (rc) a->sim_util = NAN;
    free(was);
    free(s);
    return rc;
}

/* Where the model is content and the simulator is not, a step the
 * simulator guides: the first lever of what binds in its run, turned by the
 * shortfall's ratio. 0, or -1 where that resource has no lever here. */
static int sim_step(search_t *q, double ratio) {
    group_t g;
    const int bn = q->a->then_binds;
    for (int l = 0; l < NLEVERS; l++)
        for (int j = 0; levers[l].bn == bn && j < LEVERS && levers[l].keys[j]; j++)
            if (!group_of(&q->s, levers[l].keys[j], &g)) {
                take(q, &g, ratio);
                return 0;
            }
    return -1;
}

/* The search and its proofs: the model's search proven; where the
 * simulator falls short, the model aims higher by the shortfall once, then
 * the simulator guides (sim_step), untrimmed, for the rounds left. */
static void refine(const scenario_doc_t *doc, const assign_list_t *sets, int variant, search_t *q,
                   int simulate) {
    advice_t *a = q->a, *was = malloc(sizeof *was);
    scenario_t *s = malloc(sizeof *s);
    int guided = 0;
    for (int round = 0; was && s && round < ROUNDS; round++) {
        if (!guided) a->stop = search(q);
        if (trimmed_proof(doc, sets, variant, q, simulate, !guided) || !simulate || a->n == 0)
            break;
        if (guided && a->sim_util < was->sim_util + GUIDED_GAIN) {
            /* The simulator's own lever gained nothing: not asked for. */
            *a = *was, q->s = *s;
            break;
        }
        if (a->sim_util >= a->target - ADVICE_TOL || round == ROUNDS - 1) break;
        if (round == 0 && a->stop < 0) {
            q->target = fmin(TARGET_MAX, q->target + (a->target - a->sim_util));
            continue;
        }
        *was = *a, *s = q->s;
        if (sim_step(q, fmin(2, KNEE_UP * a->target / fmax(a->sim_util, UTIL_MIN)))) break;
        guided = 1;
    }
    free(was);
    free(s);
}

/* The state before any change: what the run said of the judged epoch. */
static void now_of(const variant_run_t *v, advice_t *a) {
    const epoch_metrics_t *m = metrics_at(v->sim.m ? &v->sim : &v->model, 0, a->epoch);
    a->util = m->gpu_util;
    a->binds = m->bottleneck;
    a->status = m->bottleneck == BN_GPU        ? ADVICE_GPU
                : a->util >= a->target - SHOWN ? ADVICE_MET
                                               : ADVICE_SHORT;
}

int advice_find(const scenario_doc_t *doc, const assign_list_t *sets, int variant,
                const variant_run_t *v, double target, int simulate, advice_t *a) {
    memset(a, 0, sizeof *a);
    a->target = target, a->stop = -1, a->sim_util = NAN;
    a->epoch = (int)v->scn.epochs - 1;
    now_of(v, a);
    if (a->status != ADVICE_SHORT) return 0;
    search_t *q = malloc(sizeof *q);
    if (!q) return EXIT_RUNTIME;
    q->s = v->scn, q->E = a->epoch, q->a = a;
    /* Where the simulator already runs slower than the model, the model
     * aims higher by the difference from the start. */
    const double model_now = metrics_at(&v->model, 0, a->epoch)->gpu_util;
    q->target = fmin(TARGET_MAX, target + fmax(0, model_now - a->util));
    refine(doc, sets, variant, q, simulate);
    const double got = isfinite(a->sim_util) ? a->sim_util : a->model_util;
    a->status = a->n > 0 && got >= target - ADVICE_TOL ? ADVICE_FOUND : ADVICE_SHORT;
    if (a->status == ADVICE_FOUND) a->stop = -1;
    /* Short where the model saw the GPUs bind: the simulator's word stands. */
    if (a->status == ADVICE_SHORT && (a->stop < 0 || (a->stop == BN_GPU && isfinite(a->sim_util))))
        a->stop = a->then_binds;
    free(q);
    return 0;
}

int advice_find_all(const scenario_doc_t *doc, const assign_list_t *sets, const int *idx,
                    variant_run_t *runs, int nv, int simulate) {
    for (int k = 0; k < nv; k++) {
        runs[k].advice = malloc(sizeof *runs[k].advice);
        if (!runs[k].advice ||
            advice_find(doc, sets, idx[k], &runs[k], ADVICE_TARGET, simulate, runs[k].advice))
            return EXIT_RUNTIME;
    }
    return 0;
}
