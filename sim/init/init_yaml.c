/* init_yaml: see init_yaml.h. */
#include "init_yaml.h"

#include <stdarg.h>
#include <string.h>

#include "scenario.h"

/* One line: indent, the YAML text, and its comment from column 33. */
static void line(FILE *out, int indent, const char *comment, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void line(FILE *out, int indent, const char *comment, const char *fmt, ...) {
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    int n = fprintf(out, "%*s%s", indent, "", text);
    if (comment && comment[0]) fprintf(out, "%*s# %s", n < 32 ? 32 - n : 1, "", comment);
    fputc('\n', out);
}

/* Whether the host profile (init --host) gives key: its value then comes
 * from there, and a line here would override the measurement. */
static int from_host(const init_spec_t *s, const char *key) {
    for (size_t i = 0; s->host && i < s->host->n; i++)
        if (strcmp(s->host->v[i].key, key) == 0) return 1;
    return 0;
}

/* line() for the scenario key `key` (its last part written at indent),
 * or a comment in its place where the host profile gives it. */
static void kv(FILE *out, const init_spec_t *s, int indent, const char *key, const char *comment,
               const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void kv(FILE *out, const init_spec_t *s, int indent, const char *key, const char *comment,
               const char *fmt, ...) {
    const char *leaf = strrchr(key, '.') ? strrchr(key, '.') + 1 : key;
    if (from_host(s, key)) {
        line(out, indent, NULL, "# %s: from the host profile", leaf);
        return;
    }
    char value[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    line(out, indent, comment, "%s: %s", leaf, value);
}

/* A name as a YAML double-quoted string (the schema refused control
 * characters: only quotes and backslashes need escaping). */
static const char *quoted(char *buf, size_t n, const char *s) {
    size_t used = 0;
    buf[used++] = '"';
    for (; *s && used + 3 < n; s++) {
        if (*s == '"' || *s == '\\') buf[used++] = '\\';
        buf[used++] = *s;
    }
    buf[used++] = '"';
    buf[used] = 0;
    return buf;
}

static void header(FILE *out, const init_spec_t *s) {
    fprintf(out,
            "# A starter scenario, written by:\n#   %s\n"
            "# Edit the lines marked EDIT; every key: `stallsim help keys` or\n"
            "# docs/reference/keys.md. Check it with `stallsim check FILE`, run it with\n"
            "# `stallsim run FILE`. [paper] = Mohan et al., VLDB 2021; [doc] = AWS's S3\n"
            "# performance guidelines; [est] = an estimate: measure your own.\n",
            s->cmdline);
    if (!s->host_path)
        fprintf(out,
                "# The prep costs, the cores and the storage rates are built-in defaults or\n"
                "# estimates until you measure your host where the data lives:\n"
                "#   %s --data DIR --out host.yaml\n"
                "# then write this file again with --host host.yaml: the keys the profile\n"
                "# measures are then left out here, so that it supplies them.\n",
                s->loader == INIT_PYTORCH ? "python3 python/probe.py" : "stallsim calibrate");
    char q[SCN_PATH + 8];
    line(out, 0, NULL, "name: %s", quoted(q, sizeof q, s->name));
    line(out, 0, NULL, "seed: 1");
    line(out, 0, "epoch 1 starts with a cold cache", "epochs: 3");
    if (s->host_path)
        line(out, 0, "measured: keys it gives are left out", "host: %s",
             quoted(q, sizeof q, s->host_path));
}

static void dataset(FILE *out, const init_spec_t *s) {
    char c[256];
    fputs("dataset:\n", out);
    if (s->data) {
        snprintf(c, sizeof c, "measured: the files under %.180s", s->data);
        line(out, 2, c, "items: %lld", (long long)s->items);
        line(out, 2, "measured: their mean size (1 KB = 1000 bytes)", "item_kb: %.6g", s->item_kb);
        line(out, 2, "measured: std / mean of their sizes", "item_kb_cv: %.4g", s->item_kb_cv);
        if (s->measured->skipped)
            fprintf(out, "  # (%lld hidden names and links to folders were skipped)\n",
                    (long long)s->measured->skipped);
        if (s->measured->other_files)
            fprintf(out, "  # (%lld files of other kinds than the items were skipped: %.3g GB)\n",
                    (long long)s->measured->other_files, s->measured->other_bytes / 1e9);
        if (s->measured->empty || s->measured->unreadable)
            fprintf(out, "  # (%lld empty files and %lld unreadable entries were skipped)\n",
                    (long long)s->measured->empty, (long long)s->measured->unreadable);
        return;
    }
    line(out, 2, "EDIT: files in the training set (--items)", "items: %lld", (long long)s->items);
    line(out, 2, "EDIT: their mean size, KB (--item-kb)", "item_kb: %.6g", s->item_kb);
    line(out, 2, "EDIT: spread of sizes, std / mean [est]", "item_kb_cv: %.4g", s->item_kb_cv);
}

#define ST "server.storage."

static void storage(FILE *out, const init_spec_t *s) {
    static const char *const mine[] = {
        ST "kind",           ST "first_byte_ms", ST "first_byte_p99_ms",
        ST "conn_mb_s",      ST "max_get_s",     ST "max_mb_s",
        ST "reader_threads", ST "read_mb_s",     ST "latency_ms",
        ST "queue_depth",    ST "shared"};
    int all = 1;
    for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
        all &= from_host(s, mine[i]);
    if (all) {
        line(out, 2, NULL, "# storage: from the host profile");
        return;
    }
    line(out, 2, s->servers > 1 ? "each server's copy, or one for all" : NULL, "storage:");
    if (s->storage == INIT_S3) {
        kv(out, s, 4, ST "kind", "an S3-like object store", "object");
        kv(out, s, 4, ST "first_byte_ms", "[doc] small objects: about 100-200 ms", "100");
        kv(out, s, 4, ST "first_byte_p99_ms", "[est] the top of that range as the tail", "200");
        kv(out, s, 4, ST "conn_mb_s", "[doc] 85-90 MB/s per connection", "85");
        kv(out, s, 4, ST "max_get_s", "[doc] GET requests per second per prefix", "5500");
        kv(out, s, 4, ST "max_mb_s", "[est] EDIT: a 25 Gbit/s NIC", "3125");
        if (s->loader == INIT_POOL)
            kv(out, s, 4, ST "reader_threads", "EDIT: GETs in flight per server", "64");
        kv(out, s, 4, ST "shared", "one store for every server", "true");
        return;
    }
    kv(out, s, 4, ST "kind", "per-request latency, bandwidth, queue depth", "fixed");
    if (s->storage == INIT_NFS) {
        kv(out, s, 4, ST "read_mb_s", "[est] EDIT: a 10 Gbit/s NFS link", "1250");
        kv(out, s, 4, ST "latency_ms", "[est] EDIT: one NFS read's latency", "0.5");
        kv(out, s, 4, ST "queue_depth", "[est] EDIT: reads in flight", "64");
        kv(out, s, 4, ST "shared", "one NFS server for every server", "true");
        return;
    }
    kv(out, s, 4, ST "read_mb_s", "[paper] EDIT: a SATA SSD, as DS-Analyzer", "525");
    kv(out, s, 4, ST "latency_ms", "[est] EDIT: a SATA SSD's random read", "0.1");
    kv(out, s, 4, ST "queue_depth", "[est] EDIT: SATA's NCQ depth", "32");
    kv(out, s, 4, ST "shared", "a copy of the data on each server", "false");
}

static void server(FILE *out, const init_spec_t *s) {
    fputs("server:\n", out);
    line(out, 2, "servers (--servers)", "count: %lld", (long long)s->servers);
    line(out, 2, "GPUs per server (--gpus)", "gpus: %lld", (long long)s->gpus);
    if (s->cpus_given)
        line(out, 2, "cores per server for data loading (--cpus)", "cpus: %lld",
             (long long)s->cpus);
    else
        kv(out, s, 2, "server.cpus", "EDIT: cores per server for data loading", "%lld",
           (long long)s->cpus);
    line(out, 2, "EDIT: DRAM per server for the cache, GB", "cache_gb: %.6g", s->cache_gb);
    storage(out, s);
    if (s->servers > 1) {
        line(out, 2, NULL, "network:");
        kv(out, s, 4, "server.network.gbit_s", "[est] EDIT: between servers, Gbit/s", "40");
    }
}

static void job(FILE *out, const init_spec_t *s) {
    char c[256], q[300];
    fputs("jobs:\n", out);
    line(out, 2, NULL, "- name: %s", quoted(q, sizeof q, s->model ? s->model : "my-job"));
    if (s->model)
        line(out, 4, s->gpu ? NULL : "for the reader", "model: %s", quoted(q, sizeof q, s->model));
    if (s->gpu && s->row && !s->rate) {
        snprintf(c, sizeof c, "PUBLISHED: %.6g items/s per GPU at batch %lld (%.40s)",
                 s->row->items_per_s, (long long)s->row->batch, s->row->precision);
        line(out, 4, c, "gpu: %s", quoted(q, sizeof q, s->gpu));
        fprintf(out,
                "%32s# source: `stallsim help gpus`; a gpu_items_per_s\n"
                "%32s# given here overrides it\n",
                "", "");
    } else if (s->gpu) {
        line(out, 4, s->row ? "the published rate is overridden below" : "for the reader",
             "gpu: %s", quoted(q, sizeof q, s->gpu));
    }
    snprintf(c, sizeof c, "all %lld servers' GPUs, data-parallel", (long long)s->servers);
    line(out, 4, s->servers > 1 ? c : "GPUs the job trains on, data-parallel", "gpus: %lld",
         (long long)(s->gpus * s->servers));
    line(out, 4,
         s->row && !s->rate ? "EDIT: your batch (the row's by default)" : "EDIT: batch per GPU",
         "batch_per_gpu: %lld", (long long)s->batch);
    if (s->rate)
        line(out, 4, "items/s ONE GPU trains at, fed instantly", "gpu_items_per_s: %.6g", s->rate);
}

#define LD "loader."

static void loader(FILE *out, const init_spec_t *s) {
    fputs("loader:\n", out);
    if (s->loader == INIT_PYTORCH) {
        line(out, 2, "torch.utils.data.DataLoader", "kind: pytorch");
        line(out, 2, "the OS page cache", "cache: lru");
        kv(out, s, 2, LD "num_workers", "EDIT: DataLoader(num_workers=...), per GPU", "8");
        kv(out, s, 2, LD "prefetch_factor", "EDIT: DataLoader(prefetch_factor=...)", "2");
        kv(out, s, 2, LD "persistent_workers", "EDIT: DataLoader(persistent_workers=...)", "false");
        kv(out, s, 2, LD "pin_memory", "EDIT: DataLoader(pin_memory=...)", "true");
        return;
    }
    line(out, 2, "a DALI-like pool of prep cores", "kind: pool");
    line(out, 2, "the OS page cache", "cache: lru");
    line(out, 2, "each job its own prep cores (DALI)", "prep: partitioned");
    line(out, 2, "each server caches for itself", "dist_cache: local");
}

static void variants(FILE *out, const init_spec_t *s) {
    fputs("variants:\n", out);
    if (s->loader == INIT_PYTORCH) {
        line(out, 2, "the first is the baseline", "as-written: {}");
        line(out, 2, "what-if: twice the workers", "workers-x2: {loader.num_workers: 16}");
        return;
    }
    line(out, 2, "the first is the baseline", "dali: {}");
    if (s->servers > 1)
        line(out, 2, "CoorDL: MinIO caches, partitioned across servers",
             "coordl: {loader.cache: minio, loader.dist_cache: partitioned}");
    else
        line(out, 2, "CoorDL: its MinIO cache", "coordl: {loader.cache: minio}");
}

void init_yaml_write(FILE *out, const init_spec_t *s) {
    header(out, s);
    dataset(out, s);
    server(out, s);
    job(out, s);
    loader(out, s);
    variants(out, s);
}
