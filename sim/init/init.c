/* init: see init.h. */
#include "init.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "diag.h"
#include "gpu_rates.h"
#include "init_data.h"
#include "init_yaml.h"
#include "run.h"
#include "schema.h"
#include "self_check.h"
#include "text.h"

typedef struct {
    const char *loader, *storage, *data, *items, *item_kb, *gpus, *servers, *cpus, *cache_gb;
    const char *gpu, *model, *rate, *batch, *name, *out, *host;
    int force;
} init_opts_t;

#define STR(flag, what, field, text)                                                               \
    {                                                                                              \
        .name = flag, .type = OPT_STR, .arg = what, .offset = offsetof(init_opts_t, field),        \
        .help = text                                                                               \
    }

static const option_t init_options[] = {
    STR("--loader", "pytorch|pool", loader,
        "pytorch: torch's DataLoader (default); pool: a DALI-like pool of prep cores,\n"
        "with CoorDL's MinIO cache as a variant"),
    STR("--storage", "local|nfs|s3", storage,
        "where the training set lives: a local disk (a copy on each server; default),\n"
        "NFS or an S3-like object store (one for every server)"),
    STR("--data", "DIR", data,
        "the training set's folder: its files are counted and their sizes measured\n"
        "(hidden names skipped); or give --items and --item-kb"),
    STR("--items", "N", items, "files in the training set (dataset.items)"),
    STR("--item-kb", "KB", item_kb, "their mean size in KB, 1 KB = 1000 bytes (dataset.item_kb)"),
    STR("--gpus", "N", gpus, "GPUs per server (server.gpus; default 8); the job trains on all"),
    STR("--servers", "M", servers, "servers (server.count; default 1)"),
    STR("--cpus", "N", cpus, "cores per server for data loading (server.cpus; default 24)"),
    STR("--cache-gb", "GB", cache_gb,
        "DRAM per server left for caching the data (server.cache_gb; default 64)"),
    STR("--gpu", "NAME", gpu,
        "the GPU (e.g. v100): with --model, the job trains at the published rate of\n"
        "that row (stallsim help gpus lists them, each with its source)"),
    STR("--model", "NAME", model, "the DNN (e.g. resnet50)"),
    STR("--gpu-items-per-s", "R", rate,
        "items/s one GPU trains at when fed instantly: needed without a published\n"
        "row, and overrides one"),
    STR("--batch", "N", batch, "batch per GPU (default: the published row's, else 256)"),
    STR("--name", "NAME", name, "the scenario's name (default my-job)"),
    STR("--host", "FILE", host,
        "a host profile (the PyTorch probe's or calibrate's): written as host:, and the\n"
        "keys it measures are left out (the scenario's would override them)"),
    {.name = "--output",
     .alias = "-o",
     .type = OPT_STR,
     .arg = "FILE",
     .offset = offsetof(init_opts_t, out),
     .help = "write the scenario here, atomically, where no file has that name (default:\n"
             "stdout)"},
    {.name = "--force",
     .type = OPT_FLAG,
     .offset = offsetof(init_opts_t, force),
     .help = "with --output: replace a file of that name"},
    {0},
};
static const option_t *const init_tables[] = {init_options, NULL};

const command_t init_command = {
    .name = "init",
    .synopsis = "[--data DIR | --items N --item-kb KB] [options]",
    .about = "Writes a commented starter scenario (check it, run it, then edit the lines marked\n"
             "EDIT) from a few flags; the file passes `stallsim check` as written.",
    .tables = init_tables,
    .footer = "Example: stallsim init --data /data/train --gpu v100 --model resnet50 -o job.yaml\n",
};

static const char *const choices_loader[] = {"pytorch", "pool"};
static const char *const choices_storage[] = {"local", "nfs", "s3"};

static int choice(const char *flag, const char *v, const char *const *names, int n, int *out) {
    for (int i = 0; i < n; i++)
        if (strcmp(v, names[i]) == 0) return *out = i, 0;
    char msg[160];
    snprintf(msg, sizeof msg, "%s: expected %s%s%s%s%s, got '%%s'", flag, names[0],
             n > 2 ? ", " : " or ", names[1], n > 2 ? " or " : "", n > 2 ? names[2] : "");
    return options_error("init", msg, v);
}

/* s with each '%' doubled, for text that goes into options_error's format
 * (a name of the GPU table, a reason from the schema). */
static const char *no_pct(char *buf, size_t n, const char *s) {
    size_t used = 0;
    for (; *s && used + 2 < n; s++) {
        if (*s == '%') buf[used++] = '%';
        buf[used++] = *s;
    }
    buf[used] = 0;
    return buf;
}

/* A flag's value checked and stored as its scenario key would be. */
static int key_value(const char *flag, key_scope_t scope, const char *key, const char *text,
                     void *base) {
    int n;
    const key_def_t *k = &schema_keys(scope, &n)[schema_find(scope, key)];
    char why[256], safe[512], msg[768];
    if (!schema_store(k, base, text, why, sizeof why)) return 0;
    snprintf(msg, sizeof msg, "%s: %s (%s%s), got '%%s'", flag, no_pct(safe, sizeof safe, why),
             scope == SCOPE_JOB ? "jobs.N." : "", key);
    return options_error("init", msg, text);
}

/* The dataset: measured under --data, or given. */
static int dataset_flags(const init_opts_t *o, scenario_t *s, init_data_t *d, init_spec_t *sp) {
    if (o->data && (o->items || o->item_kb))
        return options_error("init",
                             "--data measures the files: leave out --items and "
                             "--item-kb%s",
                             "");
    if (!o->data && !(o->items && o->item_kb))
        return options_error("init",
                             "the dataset: give --data DIR (its files are measured), "
                             "or --items N and --item-kb KB%s",
                             "");
    if (o->data) {
        int rc = init_data_walk(o->data, d);
        if (rc) return rc;
        char n[64], kb[64], cv[64];
        snprintf(n, sizeof n, "%lld", (long long)d->files);
        snprintf(kb, sizeof kb, "%.6g", d->mean_bytes / 1e3);
        snprintf(cv, sizeof cv, "%.4g", d->cv);
        rc = key_value("--data", SCOPE_SCENARIO, "dataset.items", n, s);
        if (!rc) rc = key_value("--data", SCOPE_SCENARIO, "dataset.item_kb", kb, s);
        if (!rc) rc = key_value("--data", SCOPE_SCENARIO, "dataset.item_kb_cv", cv, s);
        sp->measured = d;
        return rc;
    }
    int rc = key_value("--items", SCOPE_SCENARIO, "dataset.items", o->items, s);
    if (!rc) rc = key_value("--item-kb", SCOPE_SCENARIO, "dataset.item_kb", o->item_kb, s);
    s->dataset.item_kb_cv = 0.6;
    return rc;
}

/* The GPU rate: a published row, or --gpu-items-per-s (which overrides one). */
static int rate_flags(const init_opts_t *o, job_t *j, init_spec_t *sp) {
    if (o->rate) {
        int rc = key_value("--gpu-items-per-s", SCOPE_JOB, "gpu_items_per_s", o->rate, j);
        if (rc) return rc;
        if (!(j->gpu_items_per_s > 0))
            return options_error("init", "--gpu-items-per-s: expected a rate > 0, got '%s'",
                                 o->rate);
        sp->rate = j->gpu_items_per_s;
    }
    int rc = o->gpu ? key_value("--gpu", SCOPE_JOB, "gpu", o->gpu, j) : 0;
    if (!rc && o->model) rc = key_value("--model", SCOPE_JOB, "model", o->model, j);
    if (rc || !o->gpu) {
        if (!rc && !o->rate)
            rc = options_error("init",
                               "the GPU rate: give --gpu and --model for a published "
                               "one (stallsim help gpus), or --gpu-items-per-s R%s",
                               "");
        return rc;
    }
    int n;
    const gpu_rate_t *rows = gpu_rates_builtin(&n, &rc);
    if (!rows) return rc;
    sp->row = o->model ? gpu_rate_find(rows, n, o->gpu, o->model) : NULL;
    if (sp->row || o->rate) return 0;
    char names[1024], known[2048], msg[2400];
    int gpu_known = 0;
    for (int i = 0; i < n; i++)
        gpu_known |= gpu_rates_name_eq(rows[i].gpu, o->gpu);
    gpu_rates_names(rows, n, gpu_known ? o->gpu : NULL, names, sizeof names);
    no_pct(known, sizeof known, names);
    if (!o->model) {
        snprintf(msg, sizeof msg,
                 "--gpu '%%s' picks a published rate with --model (models with a rate on it: "
                 "%s), or give --gpu-items-per-s R",
                 gpu_known ? known : "none");
        return options_error("init", msg, o->gpu);
    }
    snprintf(msg, sizeof msg,
             "%s: no published rate for %s '%%s' in the GPU rate table (stallsim help gpus; %s: "
             "%s); give --gpu-items-per-s R instead",
             gpu_known ? "--model" : "--gpu", gpu_known ? "model" : "GPU",
             gpu_known ? "its models on that GPU" : "the GPUs it has", known);
    return options_error("init", msg, gpu_known ? o->model : o->gpu);
}

/* The servers, their GPUs, cores and cache, and the job's batch. */
static int server_flags(const init_opts_t *o, scenario_t *s, job_t *j, const init_spec_t *sp) {
    char batch[32];
    snprintf(batch, sizeof batch, "%lld", (long long)(sp->row && !sp->rate ? sp->row->batch : 256));
    const struct {
        const char *flag, *value, *def, *key;
        key_scope_t scope;
        void *base;
    } f[] = {
        {"--gpus", o->gpus, "8", "server.gpus", SCOPE_SCENARIO, s},
        {"--servers", o->servers, "1", "server.count", SCOPE_SCENARIO, s},
        {"--cpus", o->cpus, "24", "server.cpus", SCOPE_SCENARIO, s},
        {"--cache-gb", o->cache_gb, "64", "server.cache_gb", SCOPE_SCENARIO, s},
        {"--name", o->name, "my-job", "name", SCOPE_SCENARIO, s},
        {"--batch", o->batch, batch, "batch_per_gpu", SCOPE_JOB, j},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        int rc = key_value(f[i].flag, f[i].scope, f[i].key, f[i].value ? f[i].value : f[i].def,
                           f[i].base);
        if (rc) return rc;
    }
    return 0;
}

/* The command line as given, for the file's first comment, less where it
 * was written (-o, --force: the same flags write the same bytes anywhere);
 * arguments with a space or a quote quoted, control characters as \xHH
 * (never a line break in a comment). */
static char *command_line(int argc, char **argv) {
    size_t cap = 64;
    for (int i = 0; i < argc; i++)
        cap += 4 * strlen(argv[i]) + 3;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    size_t used = (size_t)snprintf(buf, cap, "stallsim");
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) {
            i++;
            continue;
        }
        if (!strcmp(argv[i], "--force") || !strncmp(argv[i], "--output=", 9)) continue;
        char shown[4096];
        text_escape(shown, sizeof shown, argv[i]);
        int quote = !shown[0] || strpbrk(shown, " '\"#") != NULL;
        used += (size_t)snprintf(buf + used, cap - used, quote ? " '%s'" : " %s", shown);
    }
    return buf;
}

/* Before any work (a data folder may take minutes to walk): -o names a
 * file that can be written, and one that does not exist unless --force. */
static int out_check(const init_opts_t *o) {
    char err[1024];
    struct stat st;
    if (!o->out || atomic_is_stdout(o->out)) return 0;
    char *target = atomic_target(o->out, err, sizeof err);
    if (!target) return options_error("init", "--output: %s", err);
    free(target);
    if (!o->force && lstat(o->out, &st) == 0)
        return options_error("init", "--output %s exists: --force replaces it", o->out);
    return 0;
}

/* stdout, or the file -o names: atomically, and not over a file unless --force. */
static int write_out(const init_opts_t *o, const char *text, size_t len) {
    if (!o->out || atomic_is_stdout(o->out)) {
        fwrite(text, 1, len, stdout);
        return 0;
    }
    atomic_file_t af;
    char err[1024];
    if (atomic_open(&af, o->out, err, sizeof err)) {
        fprintf(stderr, "stallsim init: %s\n", err);
        return EXIT_RUNTIME;
    }
    fwrite(text, 1, len, af.f);
    int rc =
        o->force ? atomic_commit(&af, err, sizeof err) : atomic_commit_new(&af, err, sizeof err);
    if (rc == 1) return options_error("init", "--output: %s: --force replaces it", err);
    if (rc) fprintf(stderr, "stallsim init: %s\n", err);
    return rc ? EXIT_RUNTIME : 0;
}

/* --host: the profile's keys, read as a scenario reads them. */
static int host_flag(const init_opts_t *o, assign_list_t *keys, init_spec_t *sp) {
    if (!o->host) return 0;
    struct stat st;
    if (stat(o->host, &st) != 0 || !S_ISREG(st.st_mode))
        return options_error("init",
                             "--host %s: not a readable file (write one with the probe "
                             "or stallsim calibrate --out FILE)",
                             o->host);
    int rc = scenario_profile_load(o->host, o->host, keys);
    if (rc) return rc;
    sp->host = keys, sp->host_path = o->host;
    return 0;
}

static int build_spec(const init_opts_t *o, scenario_t *s, init_data_t *d, init_spec_t *sp) {
    int loader = 0, storage = 0;
    int rc = choice("--loader", o->loader ? o->loader : "pytorch", choices_loader, 2, &loader);
    if (!rc)
        rc = choice("--storage", o->storage ? o->storage : "local", choices_storage, 3, &storage);
    if (!rc) rc = dataset_flags(o, s, d, sp);
    if (!rc) rc = rate_flags(o, &s->jobs[0], sp);
    if (!rc) rc = server_flags(o, s, &s->jobs[0], sp);
    if (rc) return rc;
    sp->loader = (init_loader_t)loader, sp->storage = (init_storage_t)storage;
    sp->name = s->name;
    sp->items = s->dataset.items, sp->item_kb = s->dataset.item_kb;
    sp->item_kb_cv = s->dataset.item_kb_cv;
    sp->servers = s->server.count, sp->gpus = s->server.gpus, sp->cpus = s->server.cpus;
    sp->cache_gb = s->server.cache_gb, sp->batch = s->jobs[0].batch_per_gpu;
    sp->gpu = o->gpu ? s->jobs[0].gpu : NULL, sp->model = o->model ? s->jobs[0].model : NULL;
    sp->cpus_given = o->cpus != NULL;
    return 0;
}

int init_main(int argc, char **argv) {
    init_opts_t o = {0};
    int rc = options_parse(&init_command, argc, argv, &o);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    scenario_t *s = calloc(1, sizeof *s);
    char *cmdline = command_line(argc, argv), data[1024];
    if (!s || !cmdline) {
        free(s), free(cmdline);
        fprintf(stderr, "stallsim init: out of memory\n");
        return EXIT_RUNTIME;
    }
    init_data_t d;
    init_spec_t sp = {.cmdline = cmdline};
    assign_list_t host = {0};
    rc = out_check(&o);
    if (!rc) rc = host_flag(&o, &host, &sp);
    if (!rc) rc = build_spec(&o, s, &d, &sp);
    if (!rc && o.data) text_escape(data, sizeof data, o.data), sp.data = data;
    char *text = NULL;
    size_t len = 0;
    FILE *m = rc ? NULL : open_memstream(&text, &len);
    if (!rc && !m) rc = EXIT_RUNTIME;
    if (m) {
        init_yaml_write(m, &sp);
        if (fclose(m) != 0) rc = EXIT_RUNTIME;
    }
    if (!rc)
        rc = self_check(text, len, "init",
                        "the scenario these flags make does not pass check (above); change the "
                        "flags");
    if (!rc) rc = write_out(&o, text, len);
    free(text), free(cmdline), free(s);
    assign_list_free(&host);
    return rc;
}
