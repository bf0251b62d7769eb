/* import_dlio: see import_dlio.h. DLIO's key names moved between versions
 * (record_length / record_length_bytes, epoch / epochs, ...): each field
 * lists the names it accepts, the first found wins. */
#include "import_dlio.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "scenario.h"
#include "text.h"

typedef struct {
    const assign_list_t *a;
    const char *file;
    int errors;
} workload_t;

static const assign_t *find(const workload_t *w, const char *const *names, const char **used) {
    for (int i = 0; names[i]; i++)
        for (size_t j = 0; j < w->a->n; j++)
            if (strcmp(w->a->v[j].key, names[i]) == 0) {
                if (used) *used = names[i];
                return &w->a->v[j];
            }
    return NULL;
}

/* A number from the first of names present, in [lo, inf) (strictly above lo
 * when open); *v = def when none is and def >= 0, else an error. */
static int number(workload_t *w, const char *const *names, double lo, int open, double def,
                  double *v, const char **used) {
    const assign_t *a = find(w, names, used);
    if (!a) {
        if (def >= 0) {
            *v = def;
            if (used) *used = NULL;
            return 0;
        }
        src_pos_t top = {w->file, 1, 1};
        diag_error(top, "DLIO workload: missing required key '%s'", names[0]);
        w->errors++;
        return -1;
    }
    char *end = NULL;
    double x = a->is_scalar ? strtod(a->value, &end) : NAN;
    if (!a->is_scalar || end == a->value || *end || !isfinite(x) || x < lo || (open && x == lo)) {
        diag_error(a->pos, "key '%s': expected a number %s %g, got '%s'", a->key,
                   open ? ">" : ">=", lo, a->is_scalar ? a->value : "a list or mapping");
        w->errors++;
        return -1;
    }
    *v = x;
    return 0;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* A name safe as a bare YAML scalar and in the output's columns. */
static void clean_name(char *out, size_t n, const char *in) {
    size_t k = 0;
    for (; in && *in && k + 1 < n; in++)
        out[k++] =
            isalnum((unsigned char)*in) || *in == '_' || *in == '-' || *in == '.' ? *in : '_';
    out[k] = '\0';
    if (!k) snprintf(out, n, "dlio");
}

/* What the scenario is written from: DLIO's values and the keys they came
 * under (NULL: absent). */
typedef struct {
    double files, per_file, len, sd, resize, batch, threads, compute, epochs, pre, prefetch;
    const char *k_len, *k_sd, *k_resize, *k_epochs, *k_pre, *k_prefetch, *k_compute, *k_files;
    const char *k_loader;
    const assign_t *loader, *model, *format;
} dlio_t;

/* DLIO's values into d; w->errors counts what is wrong. */
static void read_workload(workload_t *w, const char *path, dlio_t *d) {
    number(w, NAMES("dataset.num_files_train"), 0, 1, -1, &d->files, &d->k_files);
    number(w, NAMES("dataset.num_samples_per_file"), 0, 1, 1, &d->per_file, NULL);
    number(w, NAMES("dataset.record_length", "dataset.record_length_bytes"), 0, 1, -1, &d->len,
           &d->k_len);
    number(w,
           NAMES("dataset.record_length_stdev", "dataset.record_length_std",
                 "dataset.record_length_bytes_stdev"),
           0, 0, 0, &d->sd, &d->k_sd);
    number(w, NAMES("dataset.record_length_resize", "dataset.record_length_bytes_resize"), 0, 1, 0,
           &d->resize, &d->k_resize);
    number(w, NAMES("reader.batch_size"), 0, 1, -1, &d->batch, NULL);
    number(w, NAMES("reader.read_threads"), 0, 0, 1, &d->threads, NULL);
    number(w, NAMES("reader.prefetch_size"), 0, 0, 0, &d->prefetch, &d->k_prefetch);
    number(w, NAMES("reader.preprocess_time", "reader.preprocess_time.mean"), 0, 0, 0, &d->pre,
           &d->k_pre);
    number(w, NAMES("train.computation_time", "train.computation_time.mean"), 0, 0, -1, &d->compute,
           &d->k_compute);
    number(w, NAMES("train.epochs", "train.epoch"), 0, 1, 1, &d->epochs, &d->k_epochs);
    double items = d->files * d->per_file;
    if (!w->errors &&
        (items > 4e9 || d->batch != floor(d->batch) || d->epochs != floor(d->epochs) ||
         d->files != floor(d->files) || d->per_file != floor(d->per_file) ||
         d->threads != floor(d->threads) || d->epochs > 1000 || d->threads > 4096)) {
        src_pos_t top = {path, 1, 1};
        diag_error(top,
                   "DLIO workload: counts must be whole numbers within stallsim's bounds "
                   "(%.0f samples of at most 4e9; epochs at most 1000; read_threads at most "
                   "4096)",
                   items);
        w->errors++;
    }
    d->loader = find(w, NAMES("reader.data_loader"), &d->k_loader);
    d->model = find(w, NAMES("model.name", "model"), NULL);
    d->format = find(w, NAMES("dataset.format"), NULL);
    /* A list or a null is no loader: it once became `kind: pool` silently. */
    if (d->loader && (!d->loader->is_scalar || !d->loader->value[0] ||
                      !strcmp(d->loader->value, "~") || !strcmp(d->loader->value, "null"))) {
        diag_error(d->loader->pos,
                   "key 'reader.data_loader': expected a loader name (pytorch, tensorflow, dali, "
                   "...), got '%s'",
                   d->loader->is_scalar ? d->loader->value : "a list or mapping");
        w->errors++;
    }
    if (d->format && !d->format->is_scalar) {
        diag_error(d->format->pos, "key 'dataset.format': expected a format name, got a list or "
                                   "mapping");
        w->errors++;
    }
}

/* A workload's text as it goes into a comment: control characters (a line
 * break would end the comment and write keys) as \xNN. */
static const char *shown(char *buf, size_t n, const char *s) {
    text_escape(buf, n, s);
    return buf;
}

/* The scenario, each value commented with the DLIO key it comes from. */
static void write_scenario(FILE *out, const char *path, const import_dlio_opts_t *o,
                           const dlio_t *d) {
    const double files = d->files, per_file = d->per_file, len = d->len, sd = d->sd;
    const double resize = d->resize, batch = d->batch, threads = d->threads;
    const double compute = d->compute, epochs = d->epochs, pre = d->pre, prefetch = d->prefetch;
    const char *k_len = d->k_len, *k_sd = d->k_sd, *k_resize = d->k_resize;
    const char *k_epochs = d->k_epochs, *k_pre = d->k_pre, *k_prefetch = d->k_prefetch;
    const char *k_compute = d->k_compute;
    const assign_t *loader = d->loader, *model = d->model, *format = d->format;
    const double items = files * per_file;
    const int torch = !loader || strstr(loader->value, "pytorch") != NULL;
    char name[64];
    clean_name(name, sizeof name, model && model->is_scalar ? model->value : NULL);
    int acc = o->accelerators, hosts = o->hosts, th = (int)threads;
    int cpus = o->cpus ? o->cpus : acc * (th + 1);
    double cv = sd / len;
    char e_path[512], e_loader[256], e_format[256];
    shown(e_path, sizeof e_path, path);
    shown(e_loader, sizeof e_loader, loader ? loader->value : "(absent: pytorch)");
    shown(e_format, sizeof e_format, format && format->is_scalar ? format->value : "");
    fprintf(
        out,
        "# stallsim scenario from the DLIO workload %s (`stallsim import dlio`).\n"
        "# Each value names the DLIO key it comes from. DLIO describes neither the storage\n"
        "# nor the host: until server.storage.* (or host:, from `stallsim calibrate`) say\n"
        "# what yours are, stallsim's defaults stand in and the times are theirs.\n"
        "name: dlio-%s\n"
        "epochs: %.0f                  # train.%s\n"
        "dataset:\n"
        "  items: %.0f             # dataset.num_files_train x num_samples_per_file (%.0f x %.0f)\n"
        "  item_kb: %.9g         # dataset.%s / 1000: one sample\n"
        "  item_kb_cv: %.6g        # %s / %s\n",
        e_path, name, epochs, k_epochs ? k_epochs + 6 : "epochs (absent: DLIO's 1)", items, files,
        per_file, len / 1e3, k_len + 8, cv, k_sd ? k_sd + 8 : "(no stdev)", k_len + 8);
    if (per_file > 1)
        fprintf(out,
                "  shard_items: %.0f         # dataset.num_samples_per_file: a file's samples are "
                "read\n"
                "                            # one after another, one request a file (record "
                "shards)\n",
                per_file);
    fprintf(out,
            "server:\n"
            "  count: %d                  # hosts (--hosts)\n"
            "  gpus: %d                   # accelerators per host (--accelerators: DLIO's MPI "
            "ranks)\n"
            "  cpus: %d                  # --cpus (default: accelerators x (read_threads + 1))\n"
            "  cache_gb: %.6g             # --cache-gb: MLPerf Storage sizes the data set past "
            "the hosts' memory\n",
            hosts, acc, cpus, o->cache_gb);
    if (!torch)
        fprintf(out,
                "  storage: {queue_depth: %d}   # reader.read_threads x accelerators: reads in "
                "flight\n",
                th * acc > 0 ? th * acc : 1);
    fprintf(out,
            "prep:                       # DLIO reads and does not decode\n"
            "  decode_ms_per_mb: 0\n"
            "  decode_ms_per_item: %.9g   # reader.%s x 1000\n"
            "  augment_ms: 0\n",
            pre * 1e3, k_pre ? k_pre + 7 : "preprocess_time (absent: 0)");
    if (resize > 0)
        fprintf(out, "  out_kb: %.9g          # dataset.%s / 1000: a sample in memory\n",
                resize / 1e3, k_resize + 8);
    fprintf(out, "loader:\n  cache: %s\n",
            o->cache_gb > 0 ? "lru            # the page cache" : "none           # --cache-gb 0");
    if (torch) {
        fprintf(out,
                "  kind: pytorch               # reader.data_loader: %s\n"
                "  num_workers: %d              # reader.read_threads\n",
                e_loader, th);
        if (k_prefetch && prefetch >= 1)
            fprintf(out, "  prefetch_factor: %.0f          # reader.prefetch_size\n", prefetch);
    } else {
        fprintf(out, "  kind: pool                  # reader.data_loader: %s\n", e_loader);
    }
    fprintf(out,
            "jobs:\n"
            "  - name: %s\n"
            "    model: %s\n"
            "    gpus: %d                  # every accelerator of every host: one data-parallel "
            "job\n"
            "    batch_per_gpu: %.0f         # reader.batch_size\n"
            "    compute_s_per_batch: %.9g  # train.%s: a step's compute on one accelerator\n",
            name, name, acc * hosts, batch, compute, k_compute + 6);
    if (!torch && k_prefetch && prefetch >= 1)
        fprintf(out, "    prefetch_batches: %.0f      # reader.prefetch_size\n", prefetch);
    if (format && format->is_scalar)
        fprintf(out,
                "# dataset.format %s: the format's own decode is not modelled (DLIO's "
                "is not either).\n",
                e_format);
}

int import_dlio(const char *path, const import_dlio_opts_t *o, FILE *out) {
    assign_list_t a = {0};
    int rc = scenario_flat_load(path, path, &a);
    if (rc) {
        assign_list_free(&a);
        return rc;
    }
    workload_t w = {&a, path, 0};
    dlio_t d = {.sd = 0, .resize = 0, .pre = 0, .prefetch = 0};
    read_workload(&w, path, &d);
    if (w.errors) {
        assign_list_free(&a);
        return EXIT_INPUT;
    }
    write_scenario(out, path, o, &d);
    assign_list_free(&a);
    return 0;
}
