/* sweep: see sweep.h. */
#include "sweep.h"

#include <stddef.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "report.h"
#include "valid.h"
#include "run.h"
#include "scenario.h"
#include "atomic_file.h"
#include "grid_run.h"
#include "sweep_curve.h"
#include "sweep_describe.h"
#include "sweep_grid.h"
#include "sweep_merge.h"
#include "sweep_html.h"
#include "sweep_out.h"
#include "text.h"
#include "topology.h"

#ifndef STALLSIM_VERSION
#define STALLSIM_VERSION "0.0.0"
#endif

typedef struct {
    run_args_t a;        /* first, then g: the shared rows' offsets are into them */
    sweep_grid_args_t g; /* --vary, --tie */
    const char *out;
    const char *html;               /* --html: the page of the curves, or NULL */
    char *out_target, *html_target; /* what -o and --html write (through a link) */
    int threads;
    int threads_default; /* --threads not given: the online CPUs */
    int shard_i, shard_n;
    int dry_run;
    int no_curve;
} sweep_opts_t;
_Static_assert(offsetof(sweep_opts_t, g) == offsetof(sweep_grid_cmd_t, g),
               "sweep_grid_options' offsets");

/* A file the sweep reads besides the scenario, as named and as found. */
typedef struct {
    char *named, *path;
    const char *what; /* "the host profile", "the price file" */
} input_t;

/* Everything a worker needs to build and run configuration c; read-only once built. */
typedef struct {
    const sweep_opts_t *o;
    scenario_doc_t *doc;
    sweep_grid_t grid;
    int variant_axis;               /* -1 when `variant` is not varied */
    int vsel[SCN_MAX_VARIANTS + 1]; /* the variants run per configuration otherwise (-1 = none) */
    int nvsel;
    int64_t first, end; /* this shard */
    int at_once;        /* simulations held at once: one per worker thread (0: model only) */
    int64_t *rows;      /* per configuration of the shard */
    /* The files the configurations load (host profiles, price files): -o
     * must not be one of them. */
    input_t *inputs;
    int ninputs;
    /* -o - with --html: the header and rows as written, for the page. */
    FILE *copy;
    char *copy_buf;
    size_t copy_len;
    sweep_curve_t *curve; /* a cache-size sweep answered from one curve, or NULL */
} plan_t;

static int usage_error(const char *fmt, const char *arg) {
    return options_error("sweep", fmt, arg);
}

static int parse_count(const char *t, long lo, long hi, long *out) {
    char *end;
    long v = strtol(t, &end, 10);
    if (end == t || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* A variable of the scheduler's as a count in [lo, hi]; -1 when unset, -2 when bad. */
static long env_count(const char *name, long lo, long hi) {
    const char *v = getenv(name);
    long x;
    if (!v || !v[0]) return -1;
    return parse_count(v, lo, hi, &x) ? -2 : x;
}

/* --shard auto: I and N from a Slurm array job (SLURM_ARRAY_TASK_ID, _MIN,
 * _STEP, _COUNT: --array=0-15 and 1-16 alike) or a Kubernetes Indexed Job
 * (JOB_COMPLETION_INDEX, 0-based; its completions are not in the
 * environment: --shard auto/N gives them). */
static int shard_auto(int *shard, const char *val) {
    long n = -1, id = env_count("SLURM_ARRAY_TASK_ID", 0, 100000000);
    if (val[4] == '/' && parse_count(val + 5, 1, 1000000, &n))
        return usage_error("--shard auto/N: expected N in [1, 10^6], got '%s'", val);
    if (id != -1) {
        long cnt = env_count("SLURM_ARRAY_TASK_COUNT", 1, 1000000);
        long min = env_count("SLURM_ARRAY_TASK_MIN", 0, 100000000);
        long step = env_count("SLURM_ARRAY_TASK_STEP", 1, 100000000);
        if (min == -1) min = 0;
        if (step == -1) step = 1;
        long i = id >= 0 && min >= 0 && step > 0 && (id - min) % step == 0 ? (id - min) / step : -1;
        if (id < 0 || cnt < 1 || min < 0 || step < 1 || i < 0 || i >= cnt || (n > 0 && n != cnt))
            return usage_error("--shard auto: the Slurm array's variables do not name a task of "
                               "an array --array=A-B[:S] (SLURM_ARRAY_TASK_ID, _MIN, _STEP, "
                               "_COUNT)%s; give --shard I/N",
                               n > 0 && n != cnt ? ", or its count is not the N given" : "");
        shard[0] = (int)i + 1, shard[1] = (int)cnt;
        return 0;
    }
    long k = env_count("JOB_COMPLETION_INDEX", 0, 999999);
    if (k == -1)
        return usage_error("--shard auto: this is neither a Slurm array job (SLURM_ARRAY_TASK_ID, "
                           "SLURM_ARRAY_TASK_COUNT) nor a Kubernetes Indexed Job "
                           "(JOB_COMPLETION_INDEX): give --shard I/N%s",
                           "");
    if (k < 0 || n < 1 || k >= n)
        return usage_error("--shard auto: JOB_COMPLETION_INDEX=%s needs the Job's completions: "
                           "--shard auto/N, with the index below N",
                           getenv("JOB_COMPLETION_INDEX"));
    shard[0] = (int)k + 1, shard[1] = (int)n;
    return 0;
}

static int shard_fn(void *field, const char *cmd, const char *val) {
    (void)cmd;
    int *shard = field; /* shard_i, then shard_n */
    long si, sn;
    if (!strncmp(val, "auto", 4) && (!val[4] || val[4] == '/')) return shard_auto(shard, val);
    const char *slash = strchr(val, '/');
    char num[32];
    if (!slash || (size_t)(slash - val) >= sizeof num)
        return usage_error("--shard: expected I/N (e.g. 2/8), got '%s'", val);
    memcpy(num, val, (size_t)(slash - val));
    num[slash - val] = 0;
    if (parse_count(slash + 1, 1, 1000000, &sn) || parse_count(num, 1, sn, &si))
        return usage_error("--shard: expected I/N with 1 <= I <= N <= 10^6, got '%s'", val);
    shard[0] = (int)si, shard[1] = (int)sn;
    return 0;
}

static const option_t sweep_own_options[] = {
    {.name = "--output",
     .alias = "-o",
     .type = OPT_STR,
     .arg = "FILE",
     .offset = offsetof(sweep_opts_t, out),
     .help = "the CSV; FILE.partial while running, FILE.meta.json beside it;\n"
             "- writes the CSV to stdout (no metadata, no resuming)"},
    {.name = "--html",
     .type = OPT_STR,
     .arg = "FILE",
     .offset = offsetof(sweep_opts_t, html),
     .help = "also write one self-contained HTML page (inline SVG) of the curves:\n"
             "the last epoch's time, GPU utilisation and hit rate vs each varied\n"
             "axis, one line per combination of the others; atomically, at the end"},
    {.name = "--threads",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(sweep_opts_t, threads),
     .min = 1,
     .max = 1024,
     .help = "worker threads (default: the online CPUs); output is the same for any N"},
    {.name = "--jobs",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(sweep_opts_t, threads),
     .min = 1,
     .max = 1024,
     .help = "",
     .deprecated = "--jobs is deprecated (it is easily taken for the scenario's jobs); use "
                   "--threads"},
    {.name = "--no-curve",
     .type = OPT_FLAG,
     .offset = offsetof(sweep_opts_t, no_curve),
     .help = "simulate every cache size of a --vary server.cache_gb sweep instead\n"
             "of answering it from one cache-size curve"},
    {.name = "--shard",
     .type = OPT_FN,
     .arg = "I/N",
     .offset = offsetof(sweep_opts_t, shard_i),
     .fn = shard_fn,
     .help = "only the I-th of N contiguous blocks of configurations (1 <= I <= N);\n"
             "auto: I and N from a Slurm array job, auto/N from a Kubernetes Indexed\n"
             "Job of N completions (docs/scaling-out.md); merge with --merge"},
    {.name = "--dry-run",
     .type = OPT_FLAG,
     .offset = offsetof(sweep_opts_t, dry_run),
     .help = "validate the grid (the shard's configurations, each value once) and print\n"
             "its size and rows on stdout; run nothing, write nothing (-o not needed)"},
    {0},
};

static const option_t *const sweep_tables[] = {sweep_grid_options, sweep_own_options,
                                               run_model_only_option, run_scenario_options, NULL};

const command_t sweep_command = {
    .name = "sweep",
    .synopsis = "SCENARIO --vary key=v1,v2,... [--vary key=start:end:step]... -o OUT.csv\n"
                "                      [options]",
    .about = "Runs every configuration of the grid (the cartesian product of the --vary keys) and\n"
             "writes one CSV row per configuration x variant x job x epoch x source (model, sim).\n"
             "The grid's columns are named by the keys as given (server.cpus).",
    .tables = sweep_tables,
    .positional = "SCENARIO",
    .positional_offset = offsetof(sweep_opts_t, a.file),
    .footer = "Interrupted and rerun with the same arguments, a sweep resumes where it stopped.\n"
              "Shards merge to the whole grid, byte for byte:\n"
              "  stallsim sweep --merge -o OUT.csv PART.csv...   (any order; each finished)\n",
};

static int parse_opts(int argc, char **argv, sweep_opts_t *o) {
    memset(o, 0, sizeof *o);
    o->shard_i = o->shard_n = 1;
    int rc = options_parse(&sweep_command, argc, argv, o);
    if (rc) return rc == 1 ? -1 : rc;
    if (o->threads == 0) { /* not given */
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o->threads = n > 0 ? (int)n : 1;
        o->threads_default = 1;
    }
    if (!o->a.file) return usage_error("missing the scenario file%s", "");
    if (!o->out && !o->dry_run) return usage_error("missing -o OUT.csv (where the rows go)%s", "");
    if (o->g.nvary == 0)
        return usage_error("nothing to sweep: give at least one --vary key=values%s", "");
    return 0;
}

/* -o and --html are checked before any work (a missing folder, a link to a
 * device) and replaced by the files they write: a symbolic link is written
 * through, never replaced. */
static int resolve_outputs(sweep_opts_t *o) {
    char err[512];
    if (o->dry_run) return 0;
    if (atomic_is_stdout(o->out)) o->out = "-";
    if (strcmp(o->out, "-") != 0) {
        if (!(o->out_target = atomic_target(o->out, err, sizeof err))) {
            fprintf(stderr, "stallsim sweep: -o %s\n", err);
            return EXIT_INPUT;
        }
        o->out = o->out_target;
    }
    if (o->html) {
        if (!(o->html_target = atomic_target(o->html, err, sizeof err))) {
            fprintf(stderr, "stallsim sweep: --html %s\n", err);
            return EXIT_INPUT;
        }
        o->html = o->html_target;
    }
    return 0;
}

/* ---- the arguments' fingerprint: what decides the rows, --jobs and -o aside ---- */

static void fnv(uint64_t *h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ b[i]) * 1099511628211ULL;
}

static void fnv_str(uint64_t *h, const char *s) {
    fnv(h, s, strlen(s) + 1); /* the NUL separates fields */
}

static int args_hash(const sweep_opts_t *o, const plan_t *p, uint64_t *out) {
    uint64_t h = 14695981039346656037ULL;
    fnv_str(&h, "stallsim sweep " STALLSIM_VERSION);
    /* The inputs' content as this run read it (once: a pipe too), not their
     * paths: `sweep <(cat a.yaml)` and `<(cat b.yaml)` share a path, and an
     * edited host profile keeps its own. */
    uint64_t file;
    if (scenario_file_hash(o->a.file, &file)) return -1;
    fnv(&h, &file, sizeof file);
    for (int i = 0; i < p->ninputs; i++) {
        if (scenario_file_hash(p->inputs[i].path, &file)) return -1;
        fnv_str(&h, p->inputs[i].named);
        fnv(&h, &file, sizeof file);
    }
    for (size_t i = 0; i < o->a.sets.n; i++) {
        fnv_str(&h, o->a.sets.v[i].key);
        fnv_str(&h, o->a.sets.v[i].value);
    }
    for (int i = 0; i < o->g.nvary; i++)
        fnv_str(&h, o->g.vary[i]);
    for (int i = 0; i < o->g.ntie; i++) {
        fnv_str(&h, "--tie");
        fnv_str(&h, o->g.tie[i]);
    }
    for (int i = 0; i < o->a.nonly; i++)
        fnv_str(&h, o->a.only[i]);
    int64_t v[4] = {o->a.model_only, o->shard_i, o->shard_n, p->grid.size};
    fnv(&h, v, sizeof v);
    if (p->curve) fnv_str(&h, "curve"); /* its rows differ from --no-curve's */
    *out = h;
    return 0;
}

/* ---- one configuration ---- */

static void config_prefix(void *ctx, int64_t c, char *buf, size_t n) {
    const plan_t *p = ctx;
    int idx[SWEEP_MAX_AXES];
    sweep_grid_point(&p->grid, c, idx);
    size_t used = (size_t)snprintf(buf, n, "%lld,", (long long)c);
    /* A string value (a name) is a CSV field like any other: quoted when it must be. */
    for (int a = 0; a < p->grid.naxes && used < n; a++)
        if (!p->grid.axes[a].is_variant) {
            used += out_csv_quote(buf + used, n - used, p->grid.axes[a].values[idx[a]]);
            if (used < n) used += (size_t)snprintf(buf + used, n - used, ",");
        }
}

/* --set, then this configuration's values (as if given by --set after them). */
static int config_sets(const plan_t *p, int64_t c, assign_list_t *l) {
    const assign_list_t *layers[1] = {&p->o->a.sets};
    return grid_sets(&p->grid, layers, 1, c, l);
}

/* The variants configuration idx runs, as indices into doc->variants (-1 = none). */
static int config_variants(const plan_t *p, const int *idx, int *v) {
    if (p->variant_axis < 0) {
        memcpy(v, p->vsel, (size_t)p->nvsel * sizeof *v);
        return p->nvsel;
    }
    const char *name = p->grid.axes[p->variant_axis].values[idx[p->variant_axis]];
    for (int i = 0; i < p->doc->nvariants; i++)
        if (strcmp(p->doc->variants[i].name, name) == 0) v[0] = i;
    return 1;
}

/* Builds configuration c (its one variant) into v: the curve's builder. */
static int build_config(void *ctx, int64_t c, variant_run_t *v) {
    const plan_t *p = ctx;
    int idx[SWEEP_MAX_AXES], vars[SCN_MAX_VARIANTS + 1];
    grid_worker_t w = {.v = v};
    sweep_grid_point(&p->grid, c, idx);
    config_variants(p, idx, vars);
    const assign_list_t *layers[1] = {&p->o->a.sets};
    int rc = grid_build(p->doc, &p->grid, layers, 1, c, vars[0], 0, &w);
    assign_list_free(&w.sets);
    return rc;
}

/* Runs configuration c and returns its CSV rows in *buf (malloc'ed). */
static int run_config(const plan_t *p, grid_worker_t *w, int64_t c, char **buf, size_t *len) {
    variant_run_t *v = w->v;
    int idx[SWEEP_MAX_AXES], vars[SCN_MAX_VARIANTS + 1];
    char prefix[8192];
    sweep_grid_point(&p->grid, c, idx);
    config_prefix((void *)p, c, prefix, sizeof prefix);
    int nv = config_variants(p, idx, vars);
    int rc = config_sets(p, c, &w->sets);
    FILE *m = rc ? NULL : open_memstream(buf, len);
    if (!rc && !m) rc = EXIT_RUNTIME;
    if (p->curve && !rc) rc = sweep_curve_config(p->curve, c, v, m, prefix);
    for (int k = 0; k < nv && !rc && !p->curve; k++) {
        rc = run_build(p->doc, &w->sets, vars[k], p->o->a.model_only ? 0 : 1, v);
        if (!rc) rc = run_execute(v, !p->o->a.model_only);
        if (!rc) rc = report_valid_runs(v, 1, "sweep"); /* no row of it written otherwise */
        /* The rows of `stallsim run --format csv`, in its order. */
        for (int i = 0; !rc && i < v->topo.ninst; i++)
            for (int e = 0; e < v->scn.epochs; e++) {
                const char *job = v->topo.inst[i].name;
                report_csv_row(m, prefix, v->scn.variant, job, e + 1, "model",
                               metrics_at(&v->model, i, e), NULL);
                if (v->sim.m)
                    report_csv_row(m, prefix, v->scn.variant, job, e + 1, run_sim_source(v),
                                   metrics_at(&v->sim, i, e), metrics_at(&v->model, i, e));
            }
        run_release(v);
    }
    if (m && fclose(m)) rc = EXIT_RUNTIME;
    if (rc && m) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

static void describe_config(const plan_t *p, int64_t c) {
    char what[4096];
    sweep_config_text(&p->grid, c, what, sizeof what);
    fprintf(stderr, "stallsim sweep: configuration %lld (", (long long)c);
    text_put_escaped(stderr, what);
    fprintf(stderr, ") of --vary is invalid: see the error above\n");
}

/* Notes a file a configuration loads (`host:`, `prices:`), once. */
static int note_input(plan_t *p, const char *named, const char *what) {
    if (!named[0] || p->ninputs >= 1024) return 0; /* beyond 1024 distinct files: not checked */
    for (int i = 0; i < p->ninputs; i++)
        if (strcmp(p->inputs[i].named, named) == 0 && p->inputs[i].what == what) return 0;
    char path[SCN_PATH * 2 + 2];
    if (scenario_host_path(p->doc, named, path, sizeof path)) return EXIT_RUNTIME;
    input_t *in = realloc(p->inputs, (size_t)(p->ninputs + 1) * sizeof *in);
    if (!in) return EXIT_RUNTIME;
    p->inputs = in;
    in += p->ninputs;
    in->named = strdup(named);
    in->path = strdup(path);
    in->what = what;
    if (!in->named || !in->path) {
        free(in->named), free(in->path);
        return EXIT_RUNTIME;
    }
    p->ninputs++;
    return 0;
}

static void free_inputs(plan_t *p) {
    for (int i = 0; i < p->ninputs; i++)
        free(p->inputs[i].named), free(p->inputs[i].path);
    free(p->inputs);
    p->inputs = NULL;
    p->ninputs = 0;
}

/* Each worker thread holds one simulation: the largest of the shard, times
 * the threads, must fit in this machine's memory. Said before anything
 * runs, with the --threads that would fit. */
static int check_threads_memory(const plan_t *p, double largest, int64_t where) {
    double have = (double)sim_memory_available();
    const double gib = 1024.0 * 1024 * 1024;
    if (p->curve) { /* the replay and three simulations, not one per size */
        double replay, need = sweep_curve_memory(p->curve, largest, &replay);
        if (need <= have) return 0;
        fprintf(stderr,
                "stallsim sweep: the cache-size curve's replay (%.1f GiB) and the simulations "
                "that confirm it (at most %.1f GiB each) on --threads %d need %.1f GiB, this "
                "machine has %.1f GiB; fewer --threads, --no-curve, or --model-only\n",
                replay / gib, largest / gib, p->o->threads, need / gib, have / gib);
        return EXIT_INPUT;
    }
    if (p->at_once <= 1 || largest * p->at_once <= have) return 0;
    char what[4096];
    sweep_config_text(&p->grid, where, what, sizeof what);
    long fits = (long)(have / largest);
    fprintf(stderr,
            "stallsim sweep: --threads %d%s runs %d simulations at once, and the largest "
            "(configuration %lld: ",
            p->o->threads, p->o->threads_default ? " (the default: the online CPUs)" : "",
            p->at_once, (long long)where);
    text_put_escaped(stderr, what);
    fprintf(stderr,
            ") needs %.1f GiB: %.1f GiB in all, this machine has %.1f GiB; --threads %ld fits "
            "(or --model-only)\n",
            largest / gib, largest * p->at_once / gib, have / gib, fits);
    return EXIT_INPUT;
}

/* Builds configuration c and checks it; a configuration of this shard also
 * counts its rows and its simulations' memory. */
static int validate_one(plan_t *p, int64_t c, variant_run_t *v, double *largest, int64_t *where,
                        int64_t *seed) {
    int idx[SWEEP_MAX_AXES], vars[SCN_MAX_VARIANTS + 1];
    assign_list_t sets = {0};
    sweep_grid_point(&p->grid, c, idx);
    int nv = config_variants(p, idx, vars);
    int rc = config_sets(p, c, &sets);
    int64_t rows = 0;
    int mine = c >= p->first && c < p->end;
    for (int k = 0; k < nv && !rc; k++) {
        /* One simulation of each of the shard's must fit alone (run_build
         * checks it, sampled or not); the largest, once a thread, below. */
        const int sims = mine && p->at_once > 0;
        rc = run_build(p->doc, &sets, vars[k], sims, v);
        if (!rc) rc = note_input(p, v->scn.host, "the host profile");
        if (!rc) rc = note_input(p, v->scn.prices_file, "the price file");
        if (!rc && sims) {
            double one = run_memory_bytes(v);
            if (one > *largest) *largest = one, *where = c;
        }
        if (rc == EXIT_INPUT) describe_config(p, c);
        if (rc) break;
        rows += (int64_t)v->topo.ninst * v->scn.epochs *
                (p->o->a.model_only ? 1
                 : p->curve         ? sweep_curve_rows(p->curve, c)
                                    : 2);
        if (c == 0 && k == 0) *seed = v->scn.seed;
    }
    if (mine && !rc) p->rows[c - p->first] = rows;
    assign_list_free(&sets);
    return rc;
}

/* Builds every configuration of this shard before any runs, and counts its
 * rows. Each of the shard's simulations must fit in memory alone, and the
 * largest once per worker thread. The rest of the grid is checked value by
 * value (each axis value once, the other axes at the shard's first point):
 * a bad value anywhere stops every shard alike, while the work stays the
 * shard's size plus the axes' lengths (a 1e8-point grid in 1000 shards no
 * longer builds 1e8 configurations in each). A value bad only in
 * combination with another is found by the shard that holds it. */
static int validate(plan_t *p, int64_t *seed) {
    variant_run_t *v = malloc(sizeof *v);
    if (!v) return EXIT_RUNTIME;
    int rc = 0;
    double largest = 0;
    int64_t where = p->first;
    if (p->first > 0) rc = validate_one(p, 0, v, &largest, &where, seed); /* the seed */
    for (int64_t c = p->first; c < p->end && !rc; c++)
        rc = validate_one(p, c, v, &largest, &where, seed);
    if (p->end - p->first < p->grid.size) {
        int base[SWEEP_MAX_AXES];
        int64_t stride[SWEEP_MAX_AXES];
        sweep_grid_point(&p->grid, p->first < p->grid.size ? p->first : 0, base);
        /* A tied axis moves with its leader: it has no stride of its own. */
        int64_t next = 1;
        for (int a = p->grid.naxes - 1; a >= 0; a--) {
            stride[a] = p->grid.axes[a].tied_to >= 0 ? 0 : next;
            if (p->grid.axes[a].tied_to < 0) next *= p->grid.axes[a].nvalues;
        }
        for (int a = 0; a < p->grid.naxes && !rc; a++)
            for (int i = 0; i < p->grid.axes[a].nvalues && !rc && p->grid.axes[a].tied_to < 0;
                 i++) {
                int64_t c = 0;
                for (int b = 0; b < p->grid.naxes; b++)
                    c += (b == a ? i : base[b]) * stride[b];
                if (c < p->first || c >= p->end) rc = validate_one(p, c, v, &largest, &where, seed);
            }
    }
    free(v);
    if (!rc) rc = check_threads_memory(p, largest, where);
    return rc;
}

/* The variants run, for the notes on the varied keys they set themselves. */
static void note_overrides(const plan_t *p) {
    int run[SCN_MAX_VARIANTS] = {0};
    for (int k = 0; k < p->nvsel; k++)
        if (p->vsel[k] >= 0) run[p->vsel[k]] = 1;
    if (p->variant_axis >= 0) {
        const sweep_axis_t *ax = &p->grid.axes[p->variant_axis];
        for (int v = 0; v < ax->nvalues; v++)
            for (int i = 0; i < p->doc->nvariants; i++)
                if (strcmp(p->doc->variants[i].name, ax->values[v]) == 0) run[i] = 1;
    }
    sweep_note_overrides("sweep", &p->grid, p->doc, run);
}

static int select_variants(plan_t *p) {
    const sweep_opts_t *o = p->o;
    p->variant_axis = -1;
    for (int a = 0; a < p->grid.naxes; a++)
        if (p->grid.axes[a].is_variant) p->variant_axis = a;
    if (p->variant_axis >= 0 && o->a.nonly)
        return usage_error("--variant and --vary variant=... both pick variants; use one%s", "");
    p->nvsel = 0;
    if (p->variant_axis >= 0) return 0; /* each configuration runs its own */
    return run_select(p->doc, "sweep", o->a.only, o->a.nonly, p->vsel, &p->nvsel);
}

/* ---- the sweep as a whole ---- */

/* Every variant the sweep runs (indices into doc->variants, -1 = none): the
 * `variant` axis's values, else those --variant selected. */
static int swept_variants(const plan_t *p, int *vars) {
    if (p->variant_axis < 0) {
        memcpy(vars, p->vsel, (size_t)p->nvsel * sizeof *vars);
        return p->nvsel;
    }
    const sweep_axis_t *ax = &p->grid.axes[p->variant_axis];
    int n = 0;
    for (int v = 0; v < ax->nvalues; v++)
        for (int i = 0; i < p->doc->nvariants; i++)
            if (strcmp(p->doc->variants[i].name, ax->values[v]) == 0) vars[n++] = i;
    return n;
}

static int same_file(const char *a, const struct stat *b) {
    struct stat st;
    return stat(a, &st) == 0 && st.st_dev == b->st_dev && st.st_ino == b->st_ino;
}

/* The CSV, its partial file and its metadata must not be the scenario, a
 * host profile or a price file the sweep reads: the finished CSV would
 * replace it. Compared as files (device and inode), so another name for the
 * same file (a link, ./x, an absolute path) is caught too. */
static int refuse_html(const plan_t *p);

static int refuse_inputs(const plan_t *p) {
    const char *out = p->o->out;
    if (p->o->html && refuse_html(p)) return EXIT_INPUT;
    if (strcmp(out, "-") == 0) return 0;
    const char *suffix[] = {"", ".partial", ".meta.json"};
    for (int i = -1; i < p->ninputs; i++) {
        const char *in_path = i < 0 ? p->o->a.file : p->inputs[i].path;
        struct stat in;
        if (stat(in_path, &in) != 0) continue;
        for (int k = 0; k < 3; k++) {
            char path[SCN_PATH * 2 + 16];
            snprintf(path, sizeof path, "%s%s", out, suffix[k]);
            if (same_file(path, &in)) {
                fprintf(
                    stderr,
                    "stallsim sweep: -o %s would write over %s, an input of this sweep (%s%s%s); "
                    "name another file\n",
                    out, path, i < 0 ? "the scenario" : p->inputs[i].what, i < 0 ? "" : " ",
                    i < 0 ? "" : p->inputs[i].path);
                return EXIT_INPUT;
            }
        }
    }
    return 0;
}

/* --html may be neither an input nor one of the CSV's files, nor a device
 * or FIFO (the page replaces it by a rename); and the page has a size. */
static int refuse_html(const plan_t *p) {
    const char *html = p->o->html, *out = p->o->out;
    struct stat hs;
    int exists = stat(html, &hs) == 0;
    if (!html[0] || (exists && !S_ISREG(hs.st_mode))) {
        fprintf(stderr,
                "stallsim sweep: --html %s: not a regular file (the page replaces it by a "
                "rename); name a file\n",
                html);
        return EXIT_INPUT;
    }
    const char *suffix[] = {"", ".partial", ".meta.json"};
    for (int k = 0; k < 3 && strcmp(out, "-") != 0; k++) {
        char path[SCN_PATH * 2 + 16];
        snprintf(path, sizeof path, "%s%s", out, suffix[k]);
        if (strcmp(path, html) == 0 || (exists && same_file(path, &hs))) {
            fprintf(stderr,
                    "stallsim sweep: --html %s is %s, the sweep's own output; name another "
                    "file\n",
                    html, path);
            return EXIT_INPUT;
        }
    }
    for (int i = -1; i < p->ninputs && exists; i++) {
        const char *in_path = i < 0 ? p->o->a.file : p->inputs[i].path;
        if (same_file(in_path, &hs)) {
            fprintf(stderr,
                    "stallsim sweep: --html %s would write over %s, an input of this sweep "
                    "(%s); name another file\n",
                    html, in_path, i < 0 ? "the scenario" : p->inputs[i].what);
            return EXIT_INPUT;
        }
    }
    int nvar = p->variant_axis >= 0 ? 1 : (p->nvsel > 0 ? p->nvsel : 1);
    if ((double)(p->end - p->first) * nvar > SWEEP_HTML_CELLS) {
        fprintf(stderr,
                "stallsim sweep: --html draws at most %d configurations x variants, this sweep "
                "has %lld x %d; draw a shard (--shard) or a smaller grid\n",
                SWEEP_HTML_CELLS, (long long)(p->end - p->first), nvar);
        return EXIT_INPUT;
    }
    return 0;
}

/* The page, from the finished CSV (or, for -o -, the rows as written). */
static int write_html(const plan_t *p) {
    char *csv = NULL;
    size_t len = 0;
    char err[512];
    int rc = 0;
    if (p->copy) {
        if (fflush(p->copy)) return EXIT_RUNTIME;
        /* open_memstream's buffer: header then rows */
    } else {
        FILE *f = fopen(p->o->out, "rb");
        if (!f) {
            fprintf(stderr, "stallsim sweep: --html: cannot read %s back\n", p->o->out);
            return EXIT_RUNTIME;
        }
        FILE *m = open_memstream(&csv, &len);
        char buf[65536];
        size_t n;
        while (m && (n = fread(buf, 1, sizeof buf, f)) > 0)
            fwrite(buf, 1, n, m);
        int bad = ferror(f) || !m;
        fclose(f);
        if (m && fclose(m)) bad = 1;
        if (bad) {
            free(csv);
            return EXIT_RUNTIME;
        }
    }
    atomic_file_t af;
    if (atomic_open(&af, p->o->html, err, sizeof err)) {
        fprintf(stderr, "stallsim sweep: %s\n", err);
        free(csv);
        return EXIT_RUNTIME;
    }
    const char *text = p->copy ? p->copy_buf : csv;
    size_t tlen = p->copy ? p->copy_len : len;
    if (sweep_html_write(af.f, &p->grid, p->first, p->end, p->o->a.file, text, tlen)) {
        atomic_abort(&af);
        rc = EXIT_RUNTIME;
    } else if (atomic_commit(&af, err, sizeof err)) {
        fprintf(stderr, "stallsim sweep: %s\n", err);
        rc = EXIT_RUNTIME;
    }
    free(csv);
    return rc;
}

/* ---- metadata ---- */

typedef struct {
    const plan_t *p;
    int argc;
    char **argv;
    int64_t seed, rows;
} meta_t;

#define LINE "\n  " /* each top-level member of the metadata on its own line */

static void meta_axes(out_json_t *j, const plan_t *p) {
    out_jbreak(j, LINE);
    out_jarr(j, "axes");
    for (int a = 0; a < p->grid.naxes; a++) {
        const sweep_axis_t *ax = &p->grid.axes[a];
        out_jbreak(j, "\n    ");
        out_jobj(j, NULL);
        out_jstr(j, "key", ax->key);
        out_jstr(j, "column", ax->column);
        if (ax->tied_to >= 0) out_jstr(j, "tied_to", p->grid.axes[ax->tied_to].key);
        out_jint(j, "count", ax->nvalues);
        out_jarr(j, "values");
        for (int v = 0; v < ax->nvalues && ax->nvalues <= 1000; v++)
            out_jstr(j, NULL, ax->values[v]);
        out_jend(j);
        out_jend(j);
    }
    out_jbreak(j, LINE);
    out_jend(j);
}

/* The metadata file's members after its status (sweep_out.h). */
static void meta_members(void *ctx, out_json_t *j) {
    const meta_t *m = ctx;
    const plan_t *p = m->p;
    char shard[32];
    snprintf(shard, sizeof shard, "%d/%d", p->o->shard_i, p->o->shard_n);
    out_jbreak(j, LINE);
    out_jstr(j, "stallsim_version", STALLSIM_VERSION);
    out_jbreak(j, LINE);
    out_jstr(j, "scenario", p->o->a.file);
    out_jbreak(j, LINE);
    out_jint(j, "seed", (long long)m->seed);
    out_jbreak(j, LINE);
    out_jarr(j, "command_line");
    out_jstr(j, NULL, "stallsim");
    for (int i = 0; i < m->argc; i++)
        out_jstr(j, NULL, m->argv[i]);
    out_jend(j);
    out_jbreak(j, LINE);
    out_jbool(j, "model_only", p->o->a.model_only);
    out_jbreak(j, LINE);
    out_jint(j, "grid_size", (long long)p->grid.size);
    out_jbreak(j, LINE);
    out_jstr(j, "shard", shard);
    out_jbreak(j, LINE);
    out_jarr(j, "configs");
    out_jint(j, NULL, (long long)p->first);
    out_jint(j, NULL, (long long)p->end);
    out_jend(j);
    out_jbreak(j, LINE);
    out_jint(j, "rows", (long long)m->rows);
    meta_axes(j, p);
    /* The effective configuration of each variant the sweep runs (host
     * profile, --set and defaults applied; each row's --vary values are in
     * its columns), so readers need not re-read the scenario. */
    out_jbreak(j, LINE);
    out_jobj(j, "effective");
    int vars[SCN_MAX_VARIANTS + 1], nv = swept_variants(p, vars);
    variant_run_t *v = malloc(sizeof *v);
    for (int k = 0; k < nv && v; k++) {
        if (run_build(p->doc, &p->o->a.sets, vars[k], 0, v)) break; /* validated already */
        out_jbreak(j, "\n    ");
        report_json_config(j, v->scn.variant, &v->scn);
    }
    free(v);
    out_jbreak(j, LINE);
    out_jend(j);
}

/* ---- the grid runner's in-order writer ---- */

typedef struct {
    const plan_t *p;
    sweep_out_t *out;
    int64_t from; /* the first configuration this run (resumed: not the shard's first) */
    int tty;
    double t0, shown;
} writer_t;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void progress(int64_t done, int64_t total, int64_t ran, double t0, int last) {
    double el = now_s() - t0, rate = el > 0 ? (double)ran / el : 0;
    long eta = rate > 0 ? (long)((double)(total - done) / rate + 0.5) : 0;
    fprintf(stderr, "\rstallsim sweep: %lld/%lld configurations, %.1f/s, %ld:%02ld:%02ld left ",
            (long long)done, (long long)total, rate, eta / 3600, eta / 60 % 60, eta % 60);
    if (last) fputc('\n', stderr);
}

static int write_config(void *ctx, int64_t c, const char *buf, size_t len) {
    writer_t *w = ctx;
    const plan_t *p = w->p;
    int rc = sweep_out_write(w->out, buf, len);
    if (!rc && p->copy && fwrite(buf, 1, len, p->copy) != len) rc = EXIT_RUNTIME;
    if (w->tty && (now_s() - w->shown >= 0.2 || c + 1 == p->end)) {
        progress(c + 1 - p->first, p->end - p->first, c + 1 - w->from, w->t0, c + 1 == p->end);
        w->shown = now_s();
    }
    return rc;
}

static int run_step(void *ctx, grid_worker_t *gw, int64_t c, char **buf, size_t *len) {
    const writer_t *w = ctx;
    return run_config(w->p, gw, c, buf, len);
}

static int execute(const plan_t *p, sweep_out_t *out, int64_t from) {
    writer_t w = {.p = p, .out = out, .from = from, .tty = isatty(STDERR_FILENO), .t0 = now_s()};
    grid_run_spec_t spec = {.first = from,
                            .end = p->end,
                            .threads = p->o->threads,
                            .chunk = 1,
                            .run = run_step,
                            .deliver = write_config,
                            .ctx = &w};
    int64_t failed_at;
    int rc = grid_run(&spec, &failed_at);
    if (rc && w.tty) fputc('\n', stderr);
    return rc;
}

static char *csv_header(const plan_t *p) {
    char *extra = NULL, *head = NULL;
    size_t len = 0, hlen = 0;
    FILE *f = open_memstream(&extra, &len);
    if (!f) return NULL;
    fputs("config,", f);
    for (int a = 0; a < p->grid.naxes; a++)
        if (!p->grid.axes[a].is_variant) fprintf(f, "%s,", p->grid.axes[a].column);
    if (fclose(f)) {
        free(extra);
        return NULL;
    }
    f = open_memstream(&head, &hlen);
    if (f) {
        report_csv_header(f, extra);
        if (fclose(f)) free(head), head = NULL;
    }
    free(extra);
    return head;
}

static int sweep(const sweep_opts_t *o, scenario_doc_t *doc, int argc, char **argv) {
    plan_t p;
    memset(&p, 0, sizeof p);
    p.o = o;
    p.doc = doc;
    sweep_grid_init(&p.grid);
    const char *names[SCN_MAX_VARIANTS];
    for (int i = 0; i < doc->nvariants; i++)
        names[i] = doc->variants[i].name;
    int rc = sweep_grid_build(&p.grid, &o->g, names, doc->nvariants, &o->a.sets);
    if (!rc) rc = select_variants(&p);
    /* Contiguous blocks, so shards concatenated in order are the whole grid in order. */
    p.first = p.grid.size * (o->shard_i - 1) / o->shard_n;
    p.end = p.grid.size * o->shard_i / o->shard_n;
    if (!rc && !(p.rows = calloc((size_t)(p.end - p.first) + 1, sizeof *p.rows))) {
        fprintf(stderr, "stallsim sweep: out of memory for %lld configurations: use --shard\n",
                (long long)(p.end - p.first));
        rc = EXIT_RUNTIME;
    }
    int64_t seed = 0, rows = 0;
    /* Each worker thread holds one simulation: the memory budget counts them all. */
    int64_t todo = p.end - p.first;
    p.at_once = o->a.model_only ? 0 : (int)(o->threads < todo ? o->threads : todo > 0 ? todo : 1);
    if (!rc && !o->a.model_only && !o->no_curve)
        rc = sweep_curve_plan(&p.grid, p.nvsel, o->threads, build_config, &p, &p.curve);
    if (!rc) rc = validate(&p, &seed);
    for (int64_t c = p.first; c < p.end; c++)
        rows += p.rows ? p.rows[c - p.first] : 0;
    if (!rc && o->dry_run) {
        printf("%lld configurations in the grid; this shard: ", (long long)p.grid.size);
        if (p.end > p.first)
            printf("configurations %lld to %lld, %lld rows; nothing run\n", (long long)p.first,
                   (long long)p.end - 1, (long long)rows);
        else
            printf("none; nothing run\n");
        free(p.rows);
        free_inputs(&p);
        sweep_curve_free(p.curve);
        sweep_grid_free(&p.grid);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_RUNTIME;
    }
    if (!rc) rc = refuse_inputs(&p);
    if (!rc) note_overrides(&p);
    uint64_t hash = 0;
    if (!rc && args_hash(o, &p, &hash)) rc = EXIT_INPUT; /* after the loader's message */
    char *header = rc ? NULL : csv_header(&p);
    meta_t meta = {&p, argc, argv, seed, rows};
    if (!rc && !header) rc = EXIT_RUNTIME;

    sweep_out_t out;
    memset(&out, 0, sizeof out);
    out.fd = -1;
    int64_t from = p.first;
    int complete = 0;
    if (!rc) {
        sweep_out_spec_t spec = {o->out, header,        hash, p.first,      p.end,
                                 p.rows, config_prefix, &p,   meta_members, &meta};
        rc = sweep_out_open(&out, &spec, &from, &complete);
    }
    if (!rc && o->html && out.stream) {
        p.copy = open_memstream(&p.copy_buf, &p.copy_len);
        if (!p.copy || fputs(header, p.copy) < 0) rc = EXIT_RUNTIME;
    }
    if (!rc && complete)
        fprintf(stderr, "stallsim sweep: %s is complete already (same arguments); nothing to do\n",
                o->out);
    else if (!rc && (!p.curve || (rc = sweep_curve_run(p.curve)) == 0) &&
             (rc = execute(&p, &out, from)) == 0)
        rc = sweep_out_finish(&out);
    if (!rc && o->html) rc = write_html(&p);
    if (p.copy) fclose(p.copy);
    free(p.copy_buf);
    /* Only a partial file can be resumed: a grid that did not fit in memory
     * once said "rerun to resume" for a dry run that writes nothing. */
    if (rc == EXIT_RUNTIME && from < p.end && out.fd >= 0)
        fprintf(stderr, "stallsim sweep: stopped; rerun the same command to resume\n");
    sweep_out_close(&out);
    free(header);
    free(p.rows);
    free_inputs(&p);
    sweep_curve_free(p.curve);
    sweep_grid_free(&p.grid);
    return rc;
}

int sweep_main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "--merge")) return sweep_merge_main(argc - 1, argv + 1);
    sweep_opts_t o;
    int rc = parse_opts(argc, argv, &o);
    if (!rc) rc = resolve_outputs(&o);
    scenario_doc_t doc;
    memset(&doc, 0, sizeof doc);
    int loaded = 0;
    if (!rc) {
        rc = scenario_doc_load(&doc, o.a.file);
        loaded = 1;
    }
    if (!rc) rc = sweep(&o, &doc, argc, argv);
    if (loaded) scenario_doc_free(&doc);
    assign_list_free(&o.a.sets);
    free(o.out_target);
    free(o.html_target);
    return rc < 0 ? EXIT_OK : rc;
}
