/* binding: see binding.h. */
#include "binding.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "model.h"
#include "schema.h"
#include "topology.h"

/* The loader's own knob (num_workers, threads): a lift names it by this. */
#define KNOB      "<knob>"
#define LIFT_KEYS 10

/* A resource and the keys that size it: a capacity (times the factor) or a
 * cost (over it). A key a scenario's kinds do not use, or set to 0 (no
 * cap), lifts nothing. */
typedef struct {
    const char *key;
    int cost; /* 1: a cost, divided; 0: a capacity, multiplied */
} lift_key_t;

typedef struct {
    int bn;
    lift_key_t keys[LIFT_KEYS];
} lift_t;

static const lift_t lifts[] = {
    {BN_PREP, {{"server.cpus", 0}, {KNOB, 0}}},
    {BN_GIL,
     {{"loader.gil_read_ms", 1},
      {"loader.gil_decode_share", 1},
      {"loader.gil_transform_share", 1},
      {"loader.gil_switch_ms", 1}}},
    {BN_MEM_BW, {{"server.mem_gbps", 0}}},
    {BN_LOADER,
     {{"loader.collate_ms_per_item", 1},
      {"loader.share_ms_per_item", 1},
      {"loader.transfer_ms_per_item", 1},
      {"loader.pin_ms_per_item", 1},
      {"loader.worker_start_ms", 1},
      {"loader.worker_init_ms", 1},
      {"loader.worker_warmup_ms", 1},
      {"loader.threads_collate_ms_per_item", 1}}},
    {BN_STORAGE_BW,
     {{"server.storage.read_mb_s", 0},
      {"server.storage.peak_mb_s", 0},
      {"server.storage.seq_mb_s", 0},
      {"server.storage.max_mb_s", 0}}},
    {BN_STORAGE_IOPS,
     {{"server.storage.read_iops", 0},
      {"server.storage.seek_full_ms", 1},
      {"server.storage.seek_track_ms", 1}}},
    {BN_REQ_RATE, {{"server.storage.max_get_s", 0}, {"server.storage.prefix_get_s", 0}}},
    {BN_IN_FLIGHT,
     {{"server.storage.queue_depth", 0},
      {"server.storage.ncq", 0},
      {"server.storage.reader_threads", 0},
      {"server.storage.connections_per_process", 0},
      {"server.storage.connections_per_server", 0},
      {"server.storage.conn_mb_s", 0},
      {"loader.reader_threads", 0},
      {"loader.open_shards", 0},
      {KNOB, 0}}},
    {BN_NETWORK, {{"server.network.gbit_s", 0}}},
    {BN_TIER,
     {{"server.tier.read_mb_s", 0}, {"server.tier.read_iops", 0}, {"server.tier.queue_depth", 0}}},
};
enum { NLIFTS = sizeof lifts / sizeof lifts[0] };

const char *binding_key(const scenario_t *s, const char *name) {
    return strcmp(name, BINDING_KNOB) == 0 ? scenario_loader(s)->knob : name;
}

/* Key `name` of s scaled by f (within its bounds): 1 when it changed. */
static int scale_key(scenario_t *s, const char *name, double f) {
    name = binding_key(s, name);
    if (!name || !kinds_key_used(s, name)) return 0;
    int n, i = schema_find(SCOPE_SCENARIO, name);
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    if (i < 0 || (k[i].type != KT_INT && k[i].type != KT_REAL)) return 0;
    double x = schema_number(&k[i], s);
    if (!(x > 0)) return 0;
    double y = x * f;
    if (k[i].type == KT_INT) y = f >= 1 ? ceil(y) : floor(y);
    if (y > k[i].max) y = k[i].max;
    if (y < k[i].min) y = k[i].min;
    if (y == x) return 0;
    char text[40], why[256];
    snprintf(text, sizeof text, k[i].type == KT_INT ? "%.0f" : "%.17g", y);
    return schema_store(&k[i], s, text, why, sizeof why) == 0;
}

int binding_lift(const scenario_t *s, int bn, double factor, scenario_t *out) {
    *out = *s;
    int changed = 0;
    for (int l = 0; l < NLIFTS; l++) {
        if (lifts[l].bn != bn) continue;
        for (int k = 0; k < LIFT_KEYS && lifts[l].keys[k].key; k++)
            changed +=
                scale_key(out, lifts[l].keys[k].key, lifts[l].keys[k].cost ? 1 / factor : factor);
    }
    return changed;
}

/* A side of the split binds only where its stall is at least this share
 * of the epoch. */
#define SIDE_MIN 0.01
/* Lifted "for good": capacities this many times, costs over it. */
#define FOR_GOOD 1e6

/* s with its prep free (decode and augment costs 0, prep on the CPU, the
 * thread loader's lock and the loader's own costs gone): Ts, DS-Analyzer's
 * missing third run. 0, or -1 where it changes nothing. */
static int prep_free(const scenario_t *s, scenario_t *out) {
    scenario_t *t = malloc(sizeof *t);
    if (!t) return -1;
    binding_lift(s, BN_GIL, FOR_GOOD, t);
    binding_lift(t, BN_LOADER, FOR_GOOD, out);
    free(t);
    out->prep.decode_ms_per_mb = out->prep.decode_ms_per_item = out->prep.augment_ms = 0;
    out->prep.decode = DECODE_CPU;
    out->prep.on_gpu = 0;
    return 0;
}

/* The model's epoch e of every instance of t's scenario l, into T. */
static int model_epochs(scenario_t *l, int e, double *T) {
    topology_t *t = malloc(sizeof *t);
    run_metrics_t r = {0};
    int rc = -1;
    l->epochs = e + 1;
    if (t && !topology_build(l, t) && !metrics_alloc(&r, t->ninst, e + 1)) {
        model_run_from(l, t, &r, e);
        for (int i = 0; i < t->ninst; i++)
            T[i] = metrics_at(&r, i, e)->epoch_s;
        rc = 0;
    }
    metrics_free(&r);
    free(t);
    return rc;
}

/* The model's epoch e of every instance of s with resource bn doubled (or,
 * for BN_GPU, prep free), into T[0..ninst); 0, or -1 where nothing lifts
 * or it does not build. */
static int lifted_epochs(const scenario_t *s, int bn, int e, double *T) {
    scenario_t *l = malloc(sizeof *l);
    int rc = -1;
    if (l && (bn == BN_GPU ? !prep_free(s, l) : binding_lift(s, bn, 2, l) > 0))
        rc = model_epochs(l, e, T);
    free(l);
    return rc;
}

/* The side a row is on: -1 the GPUs (its producer's label stands), 0 prep,
 * 1 fetch. Only a side with a stall of its own; a fetch-dominated row is
 * fetch-bound (PyTorch's workers read and prepare in turn, so freeing prep
 * also frees their reads: that saving named prep a row with 32 % fetch and
 * 7 % prep stall). A row with the larger prep stall is still fetch-bound
 * where removing fetch saves more than removing prep: the fetch stall is
 * that saving by DS-Analyzer's definition (T - T_prep), prep's is the
 * model's (T - Ts, prep free: `prep_gain`); there storage alone would hold
 * the epoch longer than prep alone does (the two limits overlap). */
static int side_of(const epoch_metrics_t *m, double prep_gain) {
    /* the producer named the checkpoints (metrics_derive): neither side */
    if (m->bottleneck == BN_GPU || m->bottleneck == BN_CHECKPOINT || !(m->epoch_s > 0)) return -1;
    const double gpu_prep = m->gpu_prep_s / m->epoch_s;
    if (m->gpu_util + gpu_prep >= METRICS_GPU_BOUND) return -1;
    const double f = m->fetch_stall_s / m->epoch_s, p = m->prep_stall_s / m->epoch_s;
    if (f < SIDE_MIN && p < SIDE_MIN) return -1;
    if (f < SIDE_MIN) return 0;
    if (p < SIDE_MIN || f > p) return 1;
    return f >= prep_gain;
}

/* Row m's side needs prep's gain: a fetch stall of its own, and a prep stall
 * at least as large. */
static int needs_prep_gain(const epoch_metrics_t *m) {
    return side_of(m, 0) >= 0 && m->fetch_stall_s >= SIDE_MIN * m->epoch_s &&
           m->prep_stall_s >= m->fetch_stall_s;
}

/* gain[b * ninst + i] for the lifts of the resources b where want[b]. */
static void lift_gains(const scenario_t *s, int ninst, int e, const double *T0, const int *want,
                       double *gain) {
    double *T = malloc(sizeof *T * (size_t)ninst);
    for (int b = 0; T && b < BN__COUNT; b++) {
        if (!want[b] || lifted_epochs(s, b, e, T)) continue;
        for (int i = 0; i < ninst; i++)
            if (T0[i] > 0 && isfinite(T[i])) gain[b * ninst + i] = 1 - T[i] / T0[i];
    }
    free(T);
}

/* The resources' lifted epochs at epoch e for the rows row[k * ninst + i]
 * (nsrc sources): gain[bn * ninst + i], the share of T0[i] that lifting bn
 * saves instance i (0 where it saves nothing, or where no row's side needs
 * it: a sweep's model pays for one side's lifts, not both);
 * gain[BN_GPU * ninst + i] is prep's removal's. */
static void epoch_gains(const scenario_t *s, int ninst, int e, const double *T0,
                        const epoch_metrics_t *const *row, int nsrc, double *gain) {
    int want[BN__COUNT] = {0}, side[2] = {0};
    for (int b = 0; b < BN__COUNT * ninst; b++)
        gain[b] = 0;
    for (int k = 0; k < nsrc * ninst; k++)
        want[BN_GPU] |= row[k] && needs_prep_gain(row[k]);
    lift_gains(s, ninst, e, T0, want, gain);
    for (int k = 0; k < nsrc * ninst; k++) {
        int sd = row[k] ? side_of(row[k], gain[BN_GPU * ninst + k % ninst]) : -1;
        if (sd >= 0) side[sd] = 1;
    }
    want[BN_GPU] = 0;
    for (int b = BN_PREP; b < BN__COUNT; b++)
        want[b] = side[bottleneck_fetch_side(b)];
    lift_gains(s, ninst, e, T0, want, gain);
}

/* The label on the row's side from the gains: the resource whose lift
 * saves most; else the producer's where it is on that side, else the
 * side's plainest name. */
static int pick(const epoch_metrics_t *m, const double *gain, int ninst, int i) {
    const int side = side_of(m, gain[BN_GPU * ninst + i]);
    if (side < 0) return m->bottleneck;
    int best = bottleneck_fetch_side(m->bottleneck) == side && m->bottleneck != BN_GPU
                   ? m->bottleneck
                   : (side ? BN_STORAGE_BW : BN_PREP);
    double g = BINDING_GAIN;
    for (int b = BN_PREP; b < BN__COUNT; b++)
        if (bottleneck_fetch_side(b) == side && gain[b * ninst + i] > g)
            g = gain[b * ninst + i], best = b;
    return best;
}

int binding_of(const scenario_t *s, int inst, int e, const epoch_metrics_t *m, double T0) {
    if (side_of(m, 0) < 0) return m->bottleneck;
    topology_t *t = malloc(sizeof *t);
    if (!t || topology_build(s, t)) {
        free(t);
        return m->bottleneck;
    }
    const int n = t->ninst;
    free(t);
    double *T0s = calloc((size_t)n, sizeof *T0s), *gain = malloc(sizeof *gain * BN__COUNT * n);
    const epoch_metrics_t **row = calloc((size_t)n, sizeof *row);
    int b = m->bottleneck;
    if (T0s && gain && row && inst < n) {
        T0s[inst] = T0;
        row[inst] = m;
        epoch_gains(s, n, e, T0s, row, 1, gain);
        b = pick(m, gain, n, inst);
    }
    free(T0s);
    free(gain);
    free(row);
    return b;
}

/* Whether any row of epoch e (model or simulator) is off the GPUs. */
static int epoch_wanted(const variant_run_t *v, int e) {
    for (int i = 0; i < v->topo.ninst; i++)
        if (side_of(metrics_at(&v->model, i, e), 0) >= 0 ||
            (v->sim.m && side_of(metrics_at(&v->sim, i, e), 0) >= 0))
            return 1;
    return 0;
}

void binding_name(variant_run_t *v) {
    const int n = v->topo.ninst;
    double *T0 = malloc(sizeof *T0 * (size_t)n), *gain = malloc(sizeof *gain * BN__COUNT * n);
    const epoch_metrics_t **row = calloc(2 * (size_t)n, sizeof *row);
    for (int e = 0; T0 && gain && row && e < v->model.nepochs; e++) {
        if (!epoch_wanted(v, e)) continue;
        for (int i = 0; i < n; i++) {
            T0[i] = metrics_at(&v->model, i, e)->epoch_s;
            row[i] = metrics_at(&v->model, i, e);
            row[n + i] = v->sim.m ? metrics_at(&v->sim, i, e) : NULL;
        }
        epoch_gains(&v->scn, n, e, T0, row, 2, gain);
        for (int i = 0; i < n; i++) {
            epoch_metrics_t *m = metrics_at(&v->model, i, e);
            m->bottleneck = pick(m, gain, n, i);
            if (!v->sim.m) continue;
            m = metrics_at(&v->sim, i, e);
            m->bottleneck = pick(m, gain, n, i);
        }
    }
    free(T0);
    free(gain);
    free(row);
    if (side_of(&v->steady, 0) >= 0)
        v->steady.bottleneck =
            binding_of(&v->scn, 0, v->steady_from, &v->steady, v->steady.epoch_s);
}
