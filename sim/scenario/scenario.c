/* scenario: building and validating the effective scenario (see scenario.h). */
#include "scenario.h"

#include <libgen.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu_rates.h"
#include "intern.h"
#include "schema.h"

static int has_prefix_section(const char *key) {
    /* A key the user wrote as a value that is really a section, e.g. `server: 4`. */
    int n;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    size_t len = strlen(key);
    for (int i = 0; i < n; i++)
        if (strncmp(k[i].name, key, len) == 0 && k[i].name[len] == '.') return 1;
    return 0;
}

static void job_defaults(job_t *j) {
    int n;
    const key_def_t *k = schema_keys(SCOPE_JOB, &n);
    char why[256];
    memset(j, 0, sizeof *j);
    for (int i = 0; i < n; i++)
        if (k[i].def) schema_store(&k[i], j, k[i].def, why, sizeof why);
}

static int store_checked(const key_def_t *k, void *base, const assign_t *a, const char *shown) {
    char why[512];
    if (!a->is_scalar) {
        diag_error(a->pos, "key '%s': expected a %s, got a mapping or list", shown,
                   k->type == KT_STRING ? "string" : "single value");
        return -1;
    }
    if (schema_store(k, base, a->value, why, sizeof why)) {
        diag_error(a->pos, "key '%s': %s, got '%s'", shown, why, a->value);
        return -1;
    }
    return 0;
}

static void unknown_key(const assign_t *a, const char *shown) {
    char buf[SCN_STR * 2];
    const char *near = schema_suggest(shown, buf, sizeof buf);
    if (near && strcmp(near, shown) != 0) /* never the input itself (jobs..gpus) */
        diag_error(a->keypos,
                   "unknown key '%s'; did you mean '%s'? (stallsim help keys lists them all)",
                   shown, near);
    else
        diag_error(a->keypos, "unknown key '%s' (stallsim help keys lists them all)", shown);
}

static int apply_job(scenario_t *s, const assign_t *a) {
    const char *rest = a->key + 5; /* after "jobs." */
    /* Digits only: strtol took "jobs. 0.gpus" and "jobs.+0.gpus" as job 0. */
    int all = !isdigit((unsigned char)rest[0]);
    char *end = (char *)rest;
    long idx = all ? 0 : strtol(rest, &end, 10);
    const char *jkey = all ? rest : (*end == '.' ? end + 1 : NULL);
    int row = jkey ? schema_find(SCOPE_JOB, jkey) : -1;
    if (!jkey || (!all && (idx < 0 || idx >= SCN_MAX_JOBS)) || (row < 0 && strchr(jkey, '.'))) {
        diag_error(a->pos,
                   "key '%s': expected jobs.N.KEY with N in [0, %d) (digits only) or jobs.KEY "
                   "for every job",
                   a->key, SCN_MAX_JOBS);
        return -1;
    }
    if (row < 0) {
        unknown_key(a, a->key);
        return -1;
    }
    int n;
    const key_def_t *k = &schema_keys(SCOPE_JOB, &n)[row];
    if (all) {
        if (s->njobs == 0) {
            diag_error(a->pos, "key '%s': there are no jobs to set it on", a->key);
            return -1;
        }
        for (int j = 0; j < s->njobs; j++) {
            if (store_checked(k, &s->jobs[j], a, a->key)) return -1;
            s->jobs[j].origin[row] = a->pos;
        }
        return 0;
    }
    while (s->njobs <= idx) {
        job_defaults(&s->jobs[s->njobs]);
        s->jobs[s->njobs].made_at = a->pos, s->jobs[s->njobs].made_by = (int)idx;
        s->njobs++;
    }
    if (store_checked(k, &s->jobs[idx], a, a->key)) return -1;
    s->jobs[idx].origin[row] = a->pos;
    return 0;
}

static int apply(scenario_t *s, const assign_t *a) {
    if (strncmp(a->key, "jobs.", 5) == 0) return apply_job(s, a);
    if (strcmp(a->key, "jobs") == 0) {
        diag_error(a->pos, "key 'jobs': expected a list of jobs (- name: ..., gpus: ...)");
        return -1;
    }
    if (strcmp(a->key, "variants") == 0 || strncmp(a->key, "variants.", 9) == 0) {
        diag_error(a->pos,
                   "variants are named at the top level of the scenario file, not set here");
        return -1;
    }
    int row = schema_find(SCOPE_SCENARIO, a->key);
    if (row < 0) {
        if (has_prefix_section(a->key))
            diag_error(a->pos, "key '%s' is a section: expected a mapping of its keys (e.g. %s.…)",
                       a->key, a->key);
        else
            unknown_key(a, a->key);
        return -1;
    }
    int n;
    const key_def_t *k = &schema_keys(SCOPE_SCENARIO, &n)[row];
    if (store_checked(k, s, a, a->key)) return -1;
    s->origin[row] = a->pos;
    s->explicit_key[row] = s->layer;
    return 0;
}

/* The assignments of one layer (SCN_LAYER_*: which one set a key is kept). */
static int apply_list(scenario_t *s, const assign_list_t *l, unsigned char layer) {
    int errors = 0;
    s->layer = layer;
    for (size_t i = 0; l && i < l->n; i++)
        errors += apply(s, &l->v[i]) != 0;
    return errors;
}

/* The last value of `key` over the layers, or NULL. */
static const assign_t *find_last(const assign_list_t *const *layers, int nl, const char *key) {
    const assign_t *found = NULL;
    for (int i = 0; i < nl; i++)
        for (size_t j = 0; layers[i] && j < layers[i]->n; j++)
            if (strcmp(layers[i]->v[j].key, key) == 0) found = &layers[i]->v[j];
    return found;
}

int scenario_host_path(const scenario_doc_t *doc, const char *host, char *path, size_t n) {
    /* Relative to the scenario's folder first: scenarios travel with their profiles. */
    if (host[0] != '/' && doc->path) {
        char *copy = strdup(doc->path);
        if (!copy) return EXIT_RUNTIME;
        snprintf(path, n, "%s/%s", dirname(copy), host);
        free(copy);
        if (access(path, R_OK) != 0) snprintf(path, n, "%s", host);
    } else {
        snprintf(path, n, "%s", host);
    }
    return 0;
}

/* The file a path key (host, prices) names, loaded as a layer of defaults. */
static int load_layer(const scenario_doc_t *doc, const assign_t *a, assign_list_t *out) {
    char path[SCN_PATH * 2 + 2];
    const char *file = a->value;
    int host = strcmp(a->key, "host") == 0;
    if (scenario_host_path(doc, file, path, sizeof path)) return EXIT_RUNTIME;
    if (access(path, R_OK) != 0) {
        if (host)
            diag_error(a->pos,
                       "key 'host': cannot read host profile '%s' (looked beside the scenario and "
                       "in the working directory); write one with `stallsim calibrate --out %s`",
                       file, file);
        else
            diag_error(a->pos,
                       "key 'prices': cannot read price file '%s' (looked beside the scenario and "
                       "in the working directory)",
                       file);
        return EXIT_INPUT;
    }
    /* Positions in the file outlive this build: one lasting name per file. */
    const char *display = intern(path);
    if (!display) return EXIT_RUNTIME;
    return host ? scenario_profile_load(path, display, out)
                : scenario_prices_load(path, display, out);
}

static void default_names(scenario_t *s, const scenario_doc_t *doc) {
    if (!s->name[0]) {
        char *copy = strdup(doc->path ? doc->path : "scenario");
        if (copy) {
            const char *b = basename(copy);
            snprintf(s->name, sizeof s->name, "%.*s", (int)strcspn(b, "."), b);
            free(copy);
        }
    }
    for (int j = 0; j < s->njobs; j++)
        if (!s->jobs[j].name[0])
            snprintf(s->jobs[j].name, sizeof s->jobs[j].name, "%s",
                     s->jobs[j].model[0] ? s->jobs[j].model : "job");
}

static src_pos_t section_pos(const scenario_doc_t *doc, const char *key) {
    /* Missing keys are reported at a sibling in the same section, else at the file's top. */
    const char *dot = strrchr(key, '.');
    size_t len = dot ? (size_t)(dot - key + 1) : 0;
    for (size_t i = 0; len && i < doc->base.n; i++)
        if (strncmp(doc->base.v[i].key, key, len) == 0) return doc->base.v[i].keypos;
    src_pos_t top = {doc->path, 1, 1};
    return top;
}

/* Whether no key of job j was given (it exists only because a later one was named). */
static int job_bare(const job_t *jb, int n) {
    for (int i = 0; i < n; i++)
        if (jb->origin[i].file) return 0;
    return 1;
}

static int check_required(const scenario_t *s, const scenario_doc_t *doc) {
    int errors = 0, n;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    for (int i = 0; i < n; i++)
        if (!k[i].def && !s->explicit_key[i]) {
            diag_error(section_pos(doc, k[i].name), "missing required key '%s' (%s)", k[i].name,
                       k[i].help);
            errors++;
        }
    if (s->njobs == 0) {
        src_pos_t top = {doc->path, 1, 1};
        diag_error(top, "missing required key 'jobs': a list of at least one job, e.g. "
                        "jobs: [{name: resnet18, gpus: 8, gpu_items_per_s: 2200}]");
        errors++;
    }
    const key_def_t *jk = schema_keys(SCOPE_JOB, &n);
    for (int j = 0; j < s->njobs; j++) {
        src_pos_t where = {doc->path, 1, 1};
        for (int i = 0; i < n; i++)
            if (s->jobs[j].origin[i].file) where = s->jobs[j].origin[i];
        const job_t *jb = &s->jobs[j];
        if (jb->made_at.file && jb->made_by > j && job_bare(jb, n)) {
            /* Jobs a key made by naming a later one: one error for the run,
             * at that key (jobs.63.gpus once printed one for each key of jobs
             * 1 to 62, at the scenario's line 1). */
            int last = j;
            while (last + 1 < jb->made_by && job_bare(&s->jobs[last + 1], n))
                last++;
            diag_error(jb->made_at,
                       "jobs %d to %d have none of their required keys: this key names job %d, "
                       "and jobs are numbered 0, 1, ... without gaps",
                       j, last, jb->made_by);
            errors++;
            j = last;
            continue;
        }
        for (int i = 0; i < n; i++)
            if (!jk[i].def && !jb->origin[i].file) {
                diag_error(where, "missing required key 'jobs.%d.%s' (%s)", j, jk[i].name,
                           jk[i].help);
                errors++;
            }
    }
    return errors;
}

src_pos_t scenario_job_pos(const scenario_t *s, int j, const char *key) {
    int row = schema_find(SCOPE_JOB, key);
    src_pos_t p = s->jobs[j].origin[row];
    if (!p.file)
        for (int i = 0; i < SCN_MAX_KEYS; i++)
            if (s->jobs[j].origin[i].file) p = s->jobs[j].origin[i];
    return p;
}

static src_pos_t key_pos(const scenario_t *s, const scenario_doc_t *doc, const char *key) {
    src_pos_t p = s->origin[schema_find(SCOPE_SCENARIO, key)];
    if (!p.file) p = section_pos(doc, key);
    return p;
}

/* jobs.N.gpu with jobs.N.model: the published rate of that row of the
 * table, unless a rate is given (which overrides it, and the report says
 * so). Without a rate of its own a job whose GPU or model the table lacks is
 * refused, listing what it has. */
static int published_rates(scenario_t *s) {
    int errors = 0, n = 0, rc = 0;
    const gpu_rate_t *rows = NULL;
    for (int j = 0; j < s->njobs; j++) {
        job_t *jb = &s->jobs[j];
        jb->rate_row = NULL;
        jb->rate_given = jb->gpu_items_per_s > 0 || jb->compute_s_per_batch > 0;
        if (!jb->gpu[0]) continue;
        if (!rows && !rc) rows = gpu_rates_builtin(&n, &rc);
        if (!rows) return 1; /* the table's own errors are printed */
        jb->rate_row = jb->model[0] ? gpu_rate_find(rows, n, jb->gpu, jb->model) : NULL;
        if (jb->rate_row && !jb->rate_given) jb->gpu_items_per_s = jb->rate_row->items_per_s;
        if (jb->rate_row || jb->rate_given) continue;
        char known[1024];
        int gpu_known = 0;
        for (int i = 0; i < n; i++)
            gpu_known |= gpu_rates_name_eq(rows[i].gpu, jb->gpu);
        gpu_rates_names(rows, n, gpu_known ? jb->gpu : NULL, known, sizeof known);
        if (!jb->model[0])
            diag_error(scenario_job_pos(s, j, "gpu"),
                       "job '%s': jobs.%d.gpu '%s' picks a published rate with jobs.%d.model, "
                       "which is not given (models with a rate on %s: %s)",
                       jb->name, j, jb->gpu, j, jb->gpu, gpu_known ? known : "none");
        else
            diag_error(
                scenario_job_pos(s, j, gpu_known ? "model" : "gpu"),
                "job '%s': no published rate for %s '%s'%s%s in the GPU rate table "
                "(stallsim help gpus); %s: %s. Give the rate instead: jobs.%d.gpu_items_per_s",
                jb->name, gpu_known ? "model" : "GPU", gpu_known ? jb->model : jb->gpu,
                gpu_known ? " on " : "", gpu_known ? jb->gpu : "",
                gpu_known ? "its models there" : "the GPUs it has", known, j);
        errors++;
    }
    return errors;
}

static double batch_out_bytes(const scenario_t *s, const job_t *j) {
    return (double)(j->gpus * j->batch_per_gpu) * scenario_job_out_item_bytes(s, j);
}

/* A GPU decode has its costs given, and jobs sharing one coordinated
 * stream share its pipeline (each pipeline kind checks its own costs:
 * pipeline_check, in kinds_check). */
static int check_pipelines(const scenario_t *s, const scenario_doc_t *doc) {
    int errors = 0;
    if (s->prep.decode == DECODE_GPU) {
        /* No built-in rate: a GPU decode unmeasured here must be given; the
         * hybrid path's only where some images take it. */
        const char *need[] = {"dataset.megapixels", "prep.huffman_ms_per_mb",
                              "prep.gpu_decode_ms_per_mp"};
        const double have[] = {s->dataset.megapixels, s->prep.huffman_ms_per_mb,
                               s->prep.gpu_decode_ms_per_mp};
        const int n = scenario_hw_decode_share(s) < 1 ? 3 : 1;
        for (int i = 0; i < n; i++)
            if (have[i] <= 0) {
                diag_error(key_pos(s, doc, "prep.decode"),
                           "prep.decode gpu needs %s (> 0): calibrate measures it only on a "
                           "host with a GPU and nvJPEG; otherwise give it explicitly: there is "
                           "no built-in value",
                           need[i]);
                errors++;
            }
    }
    for (int j = 0; j < s->njobs; j++) {
        const job_t *jb = &s->jobs[j];
        if (s->loader.prep == PREP_COORDINATED && j > 0 &&
            (jb->prep.pipeline != s->jobs[0].prep.pipeline ||
             scenario_job_out_item_bytes(s, jb) != scenario_job_out_item_bytes(s, &s->jobs[0]))) {
            diag_error(scenario_job_pos(s, j, "prep.pipeline"),
                       "coordinated prep hands the same prepared batches to every job: job '%s' "
                       "must use the prep.pipeline and prep.out_kb of job '%s'",
                       jb->name, s->jobs[0].name);
            errors++;
        }
    }
    return errors;
}

/* Shards given by size hold the items of mean size that fit, whole (a
 * writer closes a shard when the next item would pass the size). */
static int derive_shards(scenario_t *s, const scenario_doc_t *doc) {
    if (s->dataset.shard_mb <= 0) return 0;
    if (s->explicit_key[schema_find(SCOPE_SCENARIO, "dataset.shard_items")]) {
        diag_error(key_pos(s, doc, "dataset.shard_mb"),
                   "dataset.shard_mb: give shards by items (dataset.shard_items) or by size "
                   "(dataset.shard_mb), not both");
        return 1;
    }
    double k = floor(s->dataset.shard_mb * 1e6 / scenario_item_bytes_mean(s));
    s->dataset.shard_items = k < 1 ? 1 : k > 4e9 ? 4000000000 : (int64_t)k;
    return 0;
}

/* prep.scaling: "THREADS:SPEEDUP, ..." into the parsed curve. The points
 * start at 1:1 (the speed-up is relative to one thread), thread counts rise
 * strictly, speed-ups are finite and positive; at least two points, so the
 * last marginal gain (the extrapolation's slope) is defined. */
static int parse_scaling(scenario_t *s, const scenario_doc_t *doc) {
    s->prep.scaling_n = 0;
    const char *p = s->prep.scaling;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p) return 0;
    src_pos_t at = key_pos(s, doc, "prep.scaling");
    int n = 0;
    for (;;) {
        char elem[64];
        size_t len = strcspn(p, ",");
        snprintf(elem, sizeof elem, "%.*s", (int)(len < 63 ? len : 63), p);
        char *end;
        double t = strtod(p, &end), v = NAN;
        int ok = end != p && *end == ':' && isfinite(t) && t == floor(t) && t >= 1 && t <= 65536;
        if (ok) {
            const char *q = end + 1;
            v = strtod(q, &end);
            while (*end == ' ' || *end == '\t')
                end++;
            ok = end != q && (*end == ',' || !*end);
        }
        if (!ok) {
            diag_error(at,
                       "key 'prep.scaling': point %d '%s': expected THREADS:SPEEDUP with THREADS "
                       "an integer in [1, 65536] (e.g. \"1:1, 2:1.9, 4:3.4\")",
                       n + 1, elem);
            return 1;
        }
        if (!isfinite(v) || v <= 0) {
            diag_error(at,
                       "key 'prep.scaling': point %d '%s': the speed-up must be a finite "
                       "number > 0",
                       n + 1, elem);
            return 1;
        }
        if (n == SCN_MAX_CURVE) {
            diag_error(at, "key 'prep.scaling': more than %d points", SCN_MAX_CURVE);
            return 1;
        }
        if (n == 0 && (t != 1 || v != 1)) {
            diag_error(at,
                       "key 'prep.scaling': point 1 '%s': the curve starts at 1:1 (speed-ups are "
                       "relative to one thread)",
                       elem);
            return 1;
        }
        if (n > 0 && t <= s->prep.scaling_threads[n - 1]) {
            diag_error(at,
                       "key 'prep.scaling': point %d '%s': thread counts must rise (the point "
                       "before has %g threads)",
                       n + 1, elem, s->prep.scaling_threads[n - 1]);
            return 1;
        }
        s->prep.scaling_threads[n] = t;
        s->prep.scaling_speedup[n] = v;
        n++;
        if (!*end) break;
        p = end + 1;
        while (*p == ' ' || *p == '\t')
            p++;
    }
    if (n < 2) {
        diag_error(at, "key 'prep.scaling': give at least two points (1:1 and one more): the "
                       "curve's last marginal gain extends it past its last point");
        return 1;
    }
    s->prep.scaling_n = n;
    return 0;
}

/* Rules that involve more than one key. */
/* A GPU with no item of its own (DistributedSampler would pad the epoch
 * with repeats) is not a training run either predictor models: the model's
 * rates would be off by the idle GPUs (100 items on 512 GPUs: 2.5 ms
 * against the simulator's 25.3 ms). Fewer items than one global batch is
 * one partial batch, which both follow (gap.h flags what they disagree on). */
static int check_items_per_gpu(const scenario_t *s, const scenario_doc_t *doc) {
    int errors = 0;
    for (int j = 0; j < s->njobs; j++)
        if (s->dataset.items < s->jobs[j].gpus) {
            diag_error(key_pos(s, doc, "dataset.items"),
                       "dataset.items = %lld is fewer than the %lld GPUs of job '%s': every GPU "
                       "needs at least one item an epoch (use fewer GPUs or more items)",
                       (long long)s->dataset.items, (long long)s->jobs[j].gpus, s->jobs[j].name);
            errors++;
            errors++;
        }
    return errors;
}

int scenario_check_batches(const scenario_t *s, const scenario_doc_t *doc) {
    int errors = 0;
    for (int j = 0; j < s->njobs; j++)
        if (s->dataset.items < s->jobs[j].gpus * s->jobs[j].batch_per_gpu) {
            /* One partial step an epoch is no training run: refused, not
             * simulated as if it were one. */
            diag_error(
                key_pos(s, doc, "dataset.items"),
                "dataset.items = %lld is fewer than the %lld items of one global batch of job "
                "'%s' (%lld GPUs x batch_per_gpu %lld): an epoch would be one partial step "
                "(use fewer GPUs, a smaller batch or more items)",
                (long long)s->dataset.items,
                (long long)(s->jobs[j].gpus * s->jobs[j].batch_per_gpu), s->jobs[j].name,
                (long long)s->jobs[j].gpus, (long long)s->jobs[j].batch_per_gpu);
            errors++;
        }
    return errors ? EXIT_INPUT : 0;
}

/* The data's rules: items and shards the simulator can hold, and the
 * memory-bandwidth bound's two keys together. Returns the errors. */
static int check_data(const scenario_t *s, const scenario_doc_t *doc) {
    int errors = 0;
    /* The simulator holds item sizes below 4 GB: a size distribution whose
     * tail reaches past that would be clamped there, and the simulator would
     * read fewer bytes than the model. Refused when the expected number of
     * such items reaches 1 in 100 (lognormal of the given mean and cv). */
    double mean = scenario_item_bytes_mean(s), cv = s->dataset.item_kb_cv;
    double sigma = sqrt(log1p(cv * cv)), mu = log(mean) - sigma * sigma / 2;
    double over = cv > 0 ? 0.5 * erfc((log(SCN_ITEM_BYTES_MAX) - mu) / (sigma * sqrt(2)))
                         : mean > SCN_ITEM_BYTES_MAX;
    if ((double)s->dataset.items * over >= 0.01) {
        diag_error(key_pos(s, doc, "dataset.item_kb_cv"),
                   "dataset.item_kb = %g with item_kb_cv = %g puts %.3g of %lld items above 4 GB, "
                   "the largest item stallsim simulates; lower the mean or the cv",
                   s->dataset.item_kb, cv, (double)s->dataset.items * over,
                   (long long)s->dataset.items);
        errors++;
    }
    /* A shard is one read of the sum of its items: the simulator holds it
     * below 4 GB too (2 GB of mean, for the spread of its items). */
    double shard_mean = mean * (double)s->dataset.shard_items;
    if (s->dataset.shard_items > 1 && shard_mean > SCN_ITEM_BYTES_MAX / 2) {
        diag_error(key_pos(s, doc, "dataset.shard_items"),
                   "dataset.shard_items = %lld of %g KB makes shards of %.3g GB; stallsim reads a "
                   "shard whole and holds it below 2 GB on average: use fewer items a shard",
                   (long long)s->dataset.shard_items, s->dataset.item_kb, shard_mean / 1e9);
        errors++;
    }
    /* The memory-bandwidth bound takes both keys: one given alone (the
     * other never set, here or in the host profile) would bound nothing. */
    const char *bw = "server.mem_gbps", *mb = "prep.mem_mb_per_item";
    int bw_set = s->origin[schema_find(SCOPE_SCENARIO, bw)].file != NULL;
    int mb_set = s->origin[schema_find(SCOPE_SCENARIO, mb)].file != NULL;
    /* (alone it still bounds an asynchronous checkpoint's staging) */
    int stages = 0;
    for (int j = 0; j < s->njobs; j++)
        stages |= s->jobs[j].checkpoint.mode == CKPT_ASYNC && s->jobs[j].checkpoint.gb > 0;
    if ((s->server.mem_gbps > 0 && !mb_set && !stages) ||
        (s->prep.mem_mb_per_item > 0 && !bw_set)) {
        int alone_bw = s->server.mem_gbps > 0 && !mb_set;
        diag_error(key_pos(s, doc, alone_bw ? bw : mb),
                   "%s = %g bounds prep cores only with %s, which is not given: give both "
                   "(calibrate writes both), or set %s: 0",
                   alone_bw ? bw : mb, alone_bw ? s->server.mem_gbps : s->prep.mem_mb_per_item,
                   alone_bw ? mb : bw, alone_bw ? mb : bw);
        errors++;
    }
    return errors;
}

/* The jobs' rules against the cluster and the loader's prep. */
static int check_consistency(const scenario_t *s, const scenario_doc_t *doc) {
    int errors = check_data(s, doc);
    int64_t gpus_used = 0, instances = 0, pinned_cpus = 0;
    for (int j = 0; j < s->njobs; j++) {
        const job_t *jb = &s->jobs[j];
        if ((jb->gpu_items_per_s > 0) == (jb->compute_s_per_batch > 0)) {
            diag_error(
                scenario_job_pos(s, j, "gpu_items_per_s"),
                "job '%s': set exactly one of gpu_items_per_s (> 0) and compute_s_per_batch (> 0)",
                jb->name);
            errors++;
        }
        if (jb->gpus > s->server.gpus && jb->gpus % s->server.gpus != 0) {
            diag_error(scenario_job_pos(s, j, "gpus"),
                       "job '%s': gpus = %lld spans servers, so it must be a multiple of "
                       "server.gpus = %lld",
                       jb->name, (long long)jb->gpus, (long long)s->server.gpus);
            errors++;
        }
        gpus_used += jb->count * jb->gpus;
        instances += jb->count;
        pinned_cpus += jb->count * jb->cpus;
    }
    int64_t gpus_have = s->server.count * s->server.gpus;
    if (s->njobs && gpus_used > gpus_have) {
        diag_error(scenario_job_pos(s, 0, "gpus"),
                   "the jobs use %lld GPUs but the cluster has %lld (server.count %lld x "
                   "server.gpus %lld)",
                   (long long)gpus_used, (long long)gpus_have, (long long)s->server.count,
                   (long long)s->server.gpus);
        errors++;
    }
    if (s->loader.prep == PREP_PER_JOB && s->njobs) {
        if (pinned_cpus > s->server.cpus * s->server.count) {
            diag_error(scenario_job_pos(s, 0, "cpus"),
                       "the jobs pin %lld prep cores but the cluster has %lld",
                       (long long)pinned_cpus, (long long)(s->server.cpus * s->server.count));
            errors++;
        } else if (instances > s->server.cpus * s->server.count) {
            diag_error(key_pos(s, doc, "server.cpus"),
                       "partitioned prep needs at least one core per job: %lld jobs, %lld cores",
                       (long long)instances, (long long)(s->server.cpus * s->server.count));
            errors++;
        }
    }
    if (s->loader.prep == PREP_COORDINATED)
        for (int j = 1; j < s->njobs; j++)
            if (s->jobs[j].gpus != s->jobs[0].gpus ||
                s->jobs[j].batch_per_gpu != s->jobs[0].batch_per_gpu) {
                diag_error(
                    scenario_job_pos(s, j, "batch_per_gpu"),
                    "coordinated prep hands the same batches to every job: job '%s' must use "
                    "the gpus and batch_per_gpu of job '%s'",
                    s->jobs[j].name, s->jobs[0].name);
                errors++;
            }
    if (s->loader.prep == PREP_COORDINATED && s->loader.staging_mb > 0 && s->njobs &&
        s->loader.staging_mb * 1e6 < batch_out_bytes(s, &s->jobs[0])) {
        diag_error(key_pos(s, doc, "loader.staging_mb"),
                   "loader.staging_mb = %g MB holds no batch: one batch of job '%s' needs %.1f MB "
                   "(gpus x batch_per_gpu x prep.out_kb)",
                   s->loader.staging_mb, s->jobs[0].name, batch_out_bytes(s, &s->jobs[0]) / 1e6);
        errors++;
    }
    return errors;
}

/* A rate is a divisor: one near zero (server.storage.read_iops = 1e-300)
 * makes an epoch's time overflow or lose every digit the stalls are
 * differences of, and the figures printed would be noise. So each rate key,
 * whatever its kind, must serve the run's demand on it alone (every epoch
 * reading the whole dataset: its bytes, items or objects) within
 * SCN_RUN_MAX_S, where the clock, a double in seconds, still resolves 2 us.
 * A rate key is known by its unit; 0 is "no limit" where a key allows it. */
#define SCN_RUN_MAX_S 1e10

typedef struct {
    const char *unit;
    int demand;   /* 0: bytes, 1: items, 2: objects (a shard is one) */
    double scale; /* the demand's units in one of the key's */
    const char *what;
} rate_unit_t;

static const rate_unit_t rate_units[] = {
    {"MB/s", 0, 1e6, "bytes"},
    {"GB/s", 0, 1e9, "bytes"},
    {"Gbit/s", 0, 1.25e8, "bytes"},
    {"IOPS", 2, 1, "reads"},
    {"GET/s", 2, 1, "GETs"},
    {"items/s", 1, 1, "items"},
    /* an object store's rate a prefix: as if every request went to one */
    {"GET/s a prefix", 2, 1, "GETs"},
};

static const rate_unit_t *rate_unit(const key_def_t *k) {
    if (k->type != KT_REAL) return NULL;
    for (size_t i = 0; i < sizeof rate_units / sizeof rate_units[0]; i++)
        if (strcmp(k->unit, rate_units[i].unit) == 0) return &rate_units[i];
    return NULL;
}

/* 1 (after the error) when `rate` of key `name` at `at` is too slow for the run. */
static int rate_too_slow(const scenario_t *s, const rate_unit_t *u, const char *name, double rate,
                         src_pos_t at) {
    if (!(rate > 0)) return 0;
    double items = (double)s->dataset.items;
    double demand = u->demand == 0   ? scenario_dataset_bytes(s)
                    : u->demand == 1 ? items
                                     : ceil(items / scenario_items_per_read(s));
    double t = demand / u->scale / rate * (double)s->epochs;
    if (t <= SCN_RUN_MAX_S) return 0;
    diag_error(at,
               "key '%s' = %g %s is too slow to simulate: the run's %.3g %s (%lld epochs of "
               "the dataset) would take %.3g s at that rate alone, past stallsim's %.0e s "
               "(about 300 years); give at least %.3g %s",
               name, rate, u->unit, demand * (double)s->epochs, u->what, (long long)s->epochs, t,
               SCN_RUN_MAX_S, 1.005 * demand * (double)s->epochs / u->scale / SCN_RUN_MAX_S,
               u->unit); /* rounded up: the rate given passes */
    return 1;
}

static int check_rates(const scenario_t *s, const scenario_doc_t *doc) {
    int errors = 0, n;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    for (int i = 0; i < n; i++) {
        const rate_unit_t *u = rate_unit(&k[i]);
        double v;
        if (!u) continue;
        memcpy(&v, (const char *)s + k[i].offset, sizeof v);
        errors += rate_too_slow(s, u, k[i].name, v, key_pos(s, doc, k[i].name));
    }
    const key_def_t *jk = schema_keys(SCOPE_JOB, &n);
    for (int j = 0; j < s->njobs; j++)
        for (int i = 0; i < n; i++) {
            const rate_unit_t *u = rate_unit(&jk[i]);
            double v;
            char name[96];
            if (!u) continue;
            memcpy(&v, (const char *)&s->jobs[j] + jk[i].offset, sizeof v);
            snprintf(name, sizeof name, "jobs.%d.%s", j, jk[i].name);
            errors += rate_too_slow(s, u, name, v, scenario_job_pos(s, j, jk[i].name));
        }
    return errors;
}

void scenario_warn_overridden(const scenario_doc_t *doc, const assign_list_t *sets, int variant) {
    const variant_t *var = variant >= 0 ? &doc->variants[variant] : NULL;
    for (size_t i = 0; sets && var && i < sets->n; i++)
        for (size_t j = 0; j < var->set.n; j++)
            if (strcmp(sets->v[i].key, var->set.v[j].key) == 0 &&
                strcmp(sets->v[i].key, "epochs") != 0) {
                diag_warning(sets->v[i].pos,
                             "--set %s has no effect on variant '%s', which sets it to %s "
                             "itself (variants override --set; edit the variant, or run "
                             "another)",
                             sets->v[i].key, var->name, var->set.v[j].value);
                break;
            }
}

int scenario_build(const scenario_doc_t *doc, const assign_list_t *sets, int variant,
                   scenario_t *s) {
    return scenario_build_over(doc, sets, variant, NULL, s);
}

int scenario_build_over(const scenario_doc_t *doc, const assign_list_t *sets, int variant,
                        const assign_list_t *over, scenario_t *s) {
    memset(s, 0, sizeof *s);
    int n;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    char why[256];
    for (int i = 0; i < n; i++)
        if (k[i].def && schema_store(&k[i], s, k[i].def, why, sizeof why)) {
            fprintf(stderr, "stallsim: internal error: default of %s: %s\n", k[i].name, why);
            return EXIT_RUNTIME;
        }
    const assign_list_t *var = variant >= 0 ? &doc->variants[variant].set : NULL;
    const assign_list_t *layers[] = {&doc->base, sets, var, over};
    int errors = 0;

    /* The host profile, then the price file: values that are defaults, not
     * the user's explicit choices. */
    const char *files[] = {"host", "prices"};
    assign_list_t defaults[2] = {{0}};
    for (int f = 0; f < 2; f++) {
        const assign_t *a = find_last(layers, 4, files[f]);
        if (!a || !a->value[0]) continue;
        int rc = load_layer(doc, a, &defaults[f]);
        if (rc) {
            assign_list_free(&defaults[0]), assign_list_free(&defaults[1]);
            return rc;
        }
        errors += apply_list(s, &defaults[f], SCN_LAYER_BASE);
        memset(s->explicit_key, 0, sizeof s->explicit_key);
    }
    errors += apply_list(s, &doc->base, SCN_LAYER_BASE);
    errors += apply_list(s, sets, SCN_LAYER_SET);
    errors += apply_list(s, var, SCN_LAYER_VARIANT);
    errors += apply_list(s, over, SCN_LAYER_VARIANT);
    assign_list_free(&defaults[0]), assign_list_free(&defaults[1]);
    if (variant >= 0) snprintf(s->variant, sizeof s->variant, "%s", doc->variants[variant].name);
    default_names(s, doc);
    if (errors) return EXIT_INPUT;
    errors += check_required(s, doc);
    if (errors) return EXIT_INPUT;
    errors += published_rates(s);
    errors += derive_shards(s, doc);
    errors += parse_scaling(s, doc);
    if (errors) return EXIT_INPUT;
    errors += check_consistency(s, doc);
    errors += check_pipelines(s, doc);
    errors += check_rates(s, doc);
    errors += check_items_per_gpu(s, doc);
    return errors ? EXIT_INPUT : 0;
}

double scenario_item_bytes_mean(const scenario_t *s) {
    return s->dataset.item_kb * 1e3;
}

double scenario_shard_items(const scenario_t *s) {
    return s->dataset.shard_items > 1 ? (double)s->dataset.shard_items : 1;
}

double scenario_read_ahead_bytes(const scenario_t *s) {
    return s->server.storage.read_ahead_kb * 1024;
}

/* Linux ramps a file's readahead up (mm/readahead.c, get_init_ra_size and
 * get_next_ra_size): the first window is 4 x the read that missed (rounded
 * up to a power of two of pages) while that is at most 1/32 of the most, 2 x
 * while at most 1/4, else the most; each next one 4 x the last below 1/16
 * of the most, else 2 x, to the most. The read that missed: a tar reader's
 * record (Python's tarfile streams 10 KiB, three pages, rounded to four:
 * 16 KiB; WebDataset reads through it). With 128 KiB the windows go 32, 128
 * KiB; with 8 MiB 64, 256 KiB, 1, 2, 4, 8 MiB. */
double scenario_ra_window(const scenario_t *s, double prev) {
    const double most = scenario_read_ahead_bytes(s), req = 16384;
    if (most <= 0) return 0;
    double w = prev <= 0          ? (req <= most / 32  ? 4 * req
                                     : req <= most / 4 ? 2 * req
                                                       : most)
               : prev < most / 16 ? 4 * prev
                                  : 2 * prev;
    return w < most ? w : most;
}

double scenario_items_per_read(const scenario_t *s) {
    if (s->dataset.shard_items <= 1) return 1;
    if (s->loader.reader != READER_STREAM) return (double)s->dataset.shard_items;
    /* A window, as many items' bytes as it holds: a read of an item's own
     * bytes without readahead. */
    const double ra = scenario_read_ahead_bytes(s);
    return ra > 0 ? ra / scenario_item_bytes_mean(s) : 1;
}

double scenario_cache_bytes(const scenario_t *s) {
    return s->server.cache_gb * 1e9;
}

double scenario_dataset_bytes(const scenario_t *s) {
    return (double)s->dataset.items * scenario_item_bytes_mean(s);
}

double scenario_prep_s(const scenario_t *s, double bytes) {
    double ms = s->prep.decode_ms_per_mb * bytes / 1e6 + s->prep.decode_ms_per_item;
    if (!s->prep.on_gpu) ms += s->prep.augment_ms;
    return ms / 1e3;
}

/* The bound is a rate of traffic against the bandwidth: a core preparing
 * items back to back moves mem_mb_per_item every scenario_prep_s of a
 * mean-size item (the image_train pipeline calibrate counts the traffic
 * of), so B cores fill mem_gbps. Never below the last measured point (the
 * curve's last speed-up, or the one core the per-item costs were measured
 * on): a measurement outranks an estimate from two keys. */
double scenario_prep_mem_bound(const scenario_t *s) {
    if (!(s->server.mem_gbps > 0 && s->prep.mem_mb_per_item > 0)) return 0;
    const double t = scenario_prep_s(s, scenario_item_bytes_mean(s));
    if (!(t > 0)) return 0; /* prep costs nothing: no rate of traffic to bound */
    const double b = s->server.mem_gbps * 1e3 * t / s->prep.mem_mb_per_item;
    const int n = s->prep.scaling_n;
    const double measured = n > 0 ? s->prep.scaling_speedup[n - 1] : 1;
    return b > measured ? b : measured;
}

int scenario_prep_cores_shaped(const scenario_t *s) {
    return s->prep.scaling_n > 0 || scenario_prep_mem_bound(s) > 0;
}

double scenario_prep_cores_why(const scenario_t *s, double cores, prep_cores_why_t *why) {
    const int n = s->prep.scaling_n;
    const double *t = s->prep.scaling_threads, *v = s->prep.scaling_speedup;
    const double bound = scenario_prep_mem_bound(s);
    prep_cores_why_t w = {.extrapolated = n > 0 && cores > t[n - 1], .bound = bound};
    double eff = cores;        /* linear; a share of one core runs at its share */
    if (n >= 2 && cores > 1) { /* parse_scaling gives 0 or at least 2 points */
        int i = 1;
        while (i < n && cores > t[i])
            i++;
        if (i < n) {
            eff = v[i - 1] + (v[i] - v[i - 1]) * (cores - t[i - 1]) / (t[i] - t[i - 1]);
        } else {
            double gain = (v[n - 1] - v[n - 2]) / (t[n - 1] - t[n - 2]);
            eff = v[n - 1] + (gain > 0 ? gain : 0) * (cores - t[n - 1]);
        }
    }
    /* Within the measured points (or one core) the bound never binds: it
     * lies at or above them. */
    if (bound > 0 && eff > bound) eff = bound, w.mem_bound = 1;
    if (why) *why = w;
    return eff;
}

double scenario_prep_cores(const scenario_t *s, double cores, int *extrapolated) {
    prep_cores_why_t w;
    double eff = scenario_prep_cores_why(s, cores, &w);
    if (extrapolated) *extrapolated = w.extrapolated;
    return eff;
}

double scenario_prep_cores_total(const scenario_t *s, double total, int ns) {
    if (!scenario_prep_cores_shaped(s) || ns < 1) return total;
    return ns * scenario_prep_cores(s, total / ns, NULL);
}

const char *ckpt_mode_name(int i) {
    static const char *const names[] = {"sync", "async"};
    return i >= 0 && i < CKPT__COUNT ? names[i] : NULL;
}

const char *ckpt_to_name(int i) {
    static const char *const names[] = {"storage", "tier"};
    return i >= 0 && i < CKPT_TO__COUNT ? names[i] : NULL;
}

const char *decode_place_name(int i) {
    static const char *const names[] = {"cpu", "gpu"};
    return i >= 0 && i < DECODE__COUNT ? names[i] : NULL;
}

/* The share of the images the GPU's hardware JPEG decoder takes (DALI's
 * hw_decoder_load, fn.decoders.image; nvJPEG's hardware backend, baseline
 * JPEG): it decodes the bitstream, Huffman included, on its own engine,
 * which runs concurrently with the rest of the GPU (NVIDIA technical blog,
 * "Leveraging the Hardware JPEG Decoder and NVIDIA nvJPEG Library on NVIDIA
 * A100 GPUs"); the CPU's header parse for it is not charged. The rest take
 * the hybrid path. 0 where images decode on the CPU or the GPU has no such
 * engine. */
double scenario_hw_decode_share(const scenario_t *s) {
    return s->prep.decode == DECODE_GPU && s->prep.hw_decode_mp_s > 0 ? s->prep.hw_decoder_load : 0;
}

double scenario_job_out_item_bytes(const scenario_t *s, const job_t *j) {
    const double own = schema_kind_out_bytes(s, j);
    if (own >= 0) return own;
    return j->prep.out_kb > 0 ? j->prep.out_kb * 1e3 : scenario_out_item_bytes(s);
}

double scenario_out_item_bytes(const scenario_t *s) {
    return s->prep.out_kb * 1e3;
}

int64_t scenario_staged_batches(const scenario_t *s, const job_t *j) {
    if (s->loader.prep != PREP_COORDINATED) return j->prefetch_batches;
    if (s->loader.staging_mb > 0) {
        double n = floor(s->loader.staging_mb * 1e6 / batch_out_bytes(s, j));
        return n < 1 ? 1 : n > 1e6 ? 1000000 : (int64_t)n;
    }
    int64_t pf = 1;
    for (int k = 0; k < s->njobs; k++)
        if (s->jobs[k].prefetch_batches > pf) pf = s->jobs[k].prefetch_batches;
    return pf;
}

int scenario_job_instances(const scenario_t *s) {
    int n = 0;
    for (int j = 0; j < s->njobs; j++)
        n += (int)s->jobs[j].count;
    return n;
}
