/* gpu_rates: see gpu_rates.h. */
#include "gpu_rates.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "text.h"

/* The build writes these from scenarios/gpus/rates.yaml (gpu_rates_embed.cmake). */
extern const unsigned char gpu_rates_yaml[];
extern const size_t gpu_rates_yaml_len;
extern const char gpu_rates_yaml_name[];

/* The fields of a row, in the order `help gpus` shows them; `need` 0 for the
 * optional ones. Offsets into gpu_rate_t of a const char *, except the two
 * numbers. */
enum { F_ITEMS = 2, F_BATCH = 3 };
static const struct {
    const char *name;
    size_t offset;
    int need;
} fields[] = {
    {"gpu", offsetof(gpu_rate_t, gpu), 1},
    {"model", offsetof(gpu_rate_t, model), 1},
    {"items_per_s", offsetof(gpu_rate_t, items_per_s), 1},
    {"batch", offsetof(gpu_rate_t, batch), 1},
    {"precision", offsetof(gpu_rate_t, precision), 1},
    {"source", offsetof(gpu_rate_t, source), 1},
    {"table", offsetof(gpu_rate_t, table), 1},
    {"date", offsetof(gpu_rate_t, date), 1},
    {"url", offsetof(gpu_rate_t, url), 1},
    {"setup", offsetof(gpu_rate_t, setup), 0},
    {"note", offsetof(gpu_rate_t, note), 0},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))

/* An optional field not given points here (never freed). */
static const char none[] = "";

static const char **str_field(gpu_rate_t *r, int f) {
    return (const char **)(void *)((char *)r + fields[f].offset);
}

int gpu_rates_name_eq(const char *a, const char *b) {
    for (;;) {
        while (*a == '-' || *a == '_' || *a == ' ')
            a++;
        while (*b == '-' || *b == '_' || *b == ' ')
            b++;
        if (!*a || !*b) return !*a && !*b;
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
        a++, b++;
    }
}

/* NVDEC engines per GPU, by the names of the rate table's GPUs. A count
 * is a fact of the chip, not a rate, so it lives here rather than in each
 * (gpu, model) row of scenarios/gpus/rates.yaml. Sources (looked up for
 * issue 60; how each was read is said):
 * - Volta (v100*): 1. NVIDIA Video Codec SDK, "NVDEC Application Note",
 *   Table 1 "NVDEC Hardware Capabilities": "Multiple NVDECs" is N for
 *   Volta GPUs, Y from Turing/GA100 on (SDK 11.0 to 13.0,
 *   https://docs.nvidia.com/video-technologies/video-codec-sdk/13.0/nvdec-application-note/index.html).
 * - A100 (GA100, 40 and 80 GB): 5. NVIDIA Multi-Instance GPU User Guide,
 *   "Supported MIG Profiles", A100 table: the full-GPU profile 7g.40gb
 *   (7g.80gb) holds "5 NVDECs /1 JPEG /1 OFA"
 *   (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html;
 *   read in a copy of the A100 80GB table, the page's own excerpt ending at
 *   its A30 table: 4g.24gb, 4 NVDECs).
 * - H100 (SXM5, PCIe) and H200 (GH100): 7. NVIDIA's H100 and H200 NVL
 *   datasheets, "Decoders: 7 NVDEC, 7 JPEG" (read as vendors' spec pages
 *   quote them; the same count as one decoder to each of the 7 MIG slices).
 * Not listed (0: give prep.nvdec_engines): L4, L40S, MI300X and any GPU
 * whose count was not found published. */
static const struct {
    const char *gpu;
    int nvdec;
} nvdec_counts[] = {
    {"v100", 1},      {"v100-16gb", 1}, {"v100-32gb", 1}, {"a100", 5},      {"a100-40gb", 5},
    {"a100-80gb", 5}, {"h100", 7},      {"h100-sxm", 7},  {"h100-pcie", 7}, {"h200", 7},
};

int gpu_nvdec_engines(const char *gpu) {
    for (size_t i = 0; gpu && i < sizeof nvdec_counts / sizeof nvdec_counts[0]; i++)
        if (gpu_rates_name_eq(nvdec_counts[i].gpu, gpu)) return nvdec_counts[i].nvdec;
    return 0;
}

static src_pos_t pos_of(const char *file, const yaml_node_t *n) {
    src_pos_t p = {file, (int)n->start_mark.line + 1, (int)n->start_mark.column + 1};
    return p;
}

/* One field's value into the row; 0, or 1 after an error. */
static int store_field(gpu_rate_t *r, int f, const char *v, src_pos_t at) {
    char why[128], *end;
    if (text_check(v, why, sizeof why)) {
        diag_error(at, "GPU rate table: field '%s': %s", fields[f].name, why);
        return 1;
    }
    if (f == F_ITEMS) {
        errno = 0;
        double x = strtod(v, &end);
        if (end == v || *end || errno || !isfinite(x) || x <= 0 || x > 1e12) {
            diag_error(at,
                       "GPU rate table: field 'items_per_s': expected a number in (0, 1e12], "
                       "got '%s'",
                       v);
            return 1;
        }
        r->items_per_s = x;
        return 0;
    }
    if (f == F_BATCH) {
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || errno || x < 1 || x > 1048576) {
            diag_error(at,
                       "GPU rate table: field 'batch': expected an integer in [1, 1048576], "
                       "got '%s'",
                       v);
            return 1;
        }
        r->batch = x;
        return 0;
    }
    char *copy = strdup(v);
    if (!copy) return -1;
    *str_field(r, f) = copy;
    return 0;
}

/* One row (a mapping node) into r; the number of errors, -1 without memory. */
static int parse_row(const char *file, yaml_document_t *doc, yaml_node_t *m, gpu_rate_t *r) {
    src_pos_t at = pos_of(file, m);
    memset(r, 0, sizeof *r);
    r->pos = at;
    if (m->type != YAML_MAPPING_NODE) {
        diag_error(at, "GPU rate table: a row is a mapping of its fields (gpu: ..., model: ..., "
                       "source: ...)");
        return 1;
    }
    int errors = 0, seen[NFIELDS] = {0};
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        const char *key = k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
        int f = 0;
        while (f < NFIELDS && strcmp(fields[f].name, key) != 0)
            f++;
        if (f == NFIELDS || seen[f]) {
            diag_error(pos_of(file, k),
                       "GPU rate table: %s field '%s' (a row has gpu, model, items_per_s, batch, "
                       "precision, source, table, date, url, and optionally setup and note)",
                       f == NFIELDS ? "unknown" : "repeated", key);
            errors++;
            continue;
        }
        seen[f] = 1;
        if (v->type != YAML_SCALAR_NODE) {
            diag_error(pos_of(file, v), "GPU rate table: field '%s': expected a value", key);
            errors++;
            continue;
        }
        int rc = store_field(r, f, (const char *)v->data.scalar.value, pos_of(file, v));
        if (rc < 0) return -1;
        errors += rc;
    }
    for (int f = 0; f < NFIELDS; f++) {
        int empty =
            f != F_ITEMS && f != F_BATCH && seen[f] && *str_field(r, f) && !(*str_field(r, f))[0];
        if (fields[f].need && (!seen[f] || empty)) {
            diag_error(at,
                       "GPU rate table: row without '%s'%s: every figure names its source "
                       "(document, table, date, url), its batch and its precision",
                       fields[f].name, empty ? " (empty)" : "");
            errors++;
        }
        if (!seen[f] && !fields[f].need) *str_field(r, f) = none;
    }
    return errors;
}

void gpu_rates_free(gpu_rate_t *rows, int n) {
    for (int i = 0; rows && i < n; i++)
        for (int f = 0; f < NFIELDS; f++)
            if (f != F_ITEMS && f != F_BATCH && *str_field(&rows[i], f) != none)
                free((void *)*str_field(&rows[i], f));
    free(rows);
}

/* The rows of the `rates:` list; the number of errors, -1 without memory. */
static int parse_rows(const char *file, yaml_document_t *doc, yaml_node_t *seq, gpu_rate_t *rows,
                      int *n) {
    int errors = 0;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top;
         it++) {
        gpu_rate_t *r = &rows[*n];
        int e = parse_row(file, doc, yaml_document_get_node(doc, *it), r);
        (*n)++;
        if (e < 0) return -1;
        errors += e;
        for (int j = 0; !e && j < *n - 1; j++)
            if (rows[j].gpu && rows[j].model && gpu_rates_name_eq(rows[j].gpu, r->gpu) &&
                gpu_rates_name_eq(rows[j].model, r->model)) {
                diag_error(r->pos,
                           "GPU rate table: a second row for %s %s (the first is at line %d): "
                           "one row per GPU and model",
                           r->gpu, r->model, rows[j].pos.line);
                errors++;
                break;
            }
    }
    return errors;
}

/* The `rates:` list of the document's root, or NULL after an error. */
static yaml_node_t *rates_node(const char *file, yaml_document_t *doc) {
    yaml_node_t *root = yaml_document_get_root_node(doc);
    src_pos_t top = {file, 1, 1};
    if (!root || root->type != YAML_MAPPING_NODE) {
        diag_error(root ? pos_of(file, root) : top,
                   "GPU rate table: expected a mapping with one key, rates: (a list of rows)");
        return NULL;
    }
    yaml_node_t *seq = NULL;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        int is_rates =
            k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, "rates") == 0;
        if (!is_rates || v->type != YAML_SEQUENCE_NODE) {
            diag_error(pos_of(file, k), "GPU rate table: expected only rates: with a list of rows");
            return NULL;
        }
        seq = v;
    }
    if (!seq) diag_error(top, "GPU rate table: missing rates: (a list of rows)");
    return seq;
}

int gpu_rates_parse(const char *name, const char *text, size_t len, gpu_rate_t **rows, int *n) {
    yaml_parser_t parser;
    yaml_document_t doc;
    *rows = NULL, *n = 0;
    if (!yaml_parser_initialize(&parser)) return EXIT_RUNTIME;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        src_pos_t at = {name, (int)parser.problem_mark.line + 1,
                        (int)parser.problem_mark.column + 1};
        diag_error(at, "GPU rate table: %s", parser.problem ? parser.problem : "not YAML");
        yaml_parser_delete(&parser);
        return EXIT_INPUT;
    }
    yaml_parser_delete(&parser);
    int rc = EXIT_INPUT;
    yaml_node_t *seq = rates_node(name, &doc);
    size_t want = seq ? (size_t)(seq->data.sequence.items.top - seq->data.sequence.items.start) : 0;
    gpu_rate_t *r = seq ? calloc(want + 1, sizeof *r) : NULL;
    if (seq && !r) rc = EXIT_RUNTIME;
    if (r) {
        int e = parse_rows(name, &doc, seq, r, n);
        rc = e < 0 ? EXIT_RUNTIME : e ? EXIT_INPUT : 0;
    }
    yaml_document_delete(&doc);
    if (rc) {
        if (r) gpu_rates_free(r, *n);
        *n = 0;
        return rc;
    }
    *rows = r;
    return 0;
}

static struct {
    pthread_once_t once;
    gpu_rate_t *rows;
    int n, rc;
} builtin = {PTHREAD_ONCE_INIT, NULL, 0, 0};

static void load_builtin(void) {
    builtin.rc = gpu_rates_parse(gpu_rates_yaml_name, (const char *)gpu_rates_yaml,
                                 gpu_rates_yaml_len, &builtin.rows, &builtin.n);
}

const gpu_rate_t *gpu_rates_builtin(int *n, int *rc) {
    pthread_once(&builtin.once, load_builtin);
    *n = builtin.n;
    *rc = builtin.rc;
    return builtin.rc ? NULL : builtin.rows;
}

const gpu_rate_t *gpu_rate_find(const gpu_rate_t *rows, int n, const char *gpu, const char *model) {
    for (int i = 0; rows && i < n; i++)
        if (gpu_rates_name_eq(rows[i].gpu, gpu) && gpu_rates_name_eq(rows[i].model, model))
            return &rows[i];
    return NULL;
}

void gpu_rates_names(const gpu_rate_t *rows, int n, const char *gpu, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n && used < size; i++) {
        if (gpu && !gpu_rates_name_eq(rows[i].gpu, gpu)) continue;
        const char *name = gpu ? rows[i].model : rows[i].gpu;
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = (!gpu || gpu_rates_name_eq(rows[j].gpu, gpu)) &&
                  gpu_rates_name_eq(gpu ? rows[j].model : rows[j].gpu, name);
        if (!dup) used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
    }
    if (!buf[0]) snprintf(buf, size, "(none)");
}

void gpu_rate_cite(const gpu_rate_t *r, char *buf, size_t size) {
    snprintf(buf, size, "%s %s: %.6g items/s per GPU at batch %lld (%s); %s; %s; %s; %s", r->gpu,
             r->model, r->items_per_s, (long long)r->batch, r->precision, r->source, r->table,
             r->date, r->url);
}

/* A Markdown cell: '|' would end it. */
static void md_cell(FILE *out, const char *s) {
    fputc(' ', out);
    for (; *s; s++) {
        if (*s == '|') fputc('\\', out);
        fputc(*s, out);
    }
    fputs(" |", out);
}

void gpu_rates_print(FILE *out, const gpu_rate_t *rows, int n, int md) {
    if (md) {
        fputs("| gpu | model | items/s per GPU | batch | precision | source | where | date | url "
              "| setup | note |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
              "--- |\n",
              out);
    } else {
        fputs("Published per-GPU training rates (jobs.N.gpu with jobs.N.model; a rate given in\n"
              "the scenario overrides them). Built from scenarios/gpus/rates.yaml.\n",
              out);
    }
    for (int i = 0; i < n; i++) {
        const gpu_rate_t *r = &rows[i];
        char num[32], batch[32];
        snprintf(num, sizeof num, "%.6g", r->items_per_s);
        snprintf(batch, sizeof batch, "%lld", (long long)r->batch);
        if (md) {
            const char *cells[] = {r->gpu,   r->model, num,    batch,    r->precision, r->source,
                                   r->table, r->date,  r->url, r->setup, r->note};
            fputs("|", out);
            for (size_t c = 0; c < sizeof cells / sizeof cells[0]; c++)
                md_cell(out, cells[c]);
            fputs("\n", out);
            continue;
        }
        fprintf(out, "\n%-10s %-14s %9s items/s  batch %-6s %s\n    %s\n    %s (%s)\n    %s\n",
                r->gpu, r->model, num, batch, r->precision, r->source, r->table, r->date, r->url);
        if (r->setup[0]) fprintf(out, "    setup: %s\n", r->setup);
        if (r->note[0]) fprintf(out, "    note: %s\n", r->note);
    }
    if (!n && !md) fputs("\n(no rows yet)\n", out);
}
