/* memout: see memout.h. */
#include "memout.h"
#include "report.h"

#include "memory.h"
#include "svg.h"

typedef struct {
    const char *name; /* CSV column, JSON key, text and HTML heading */
    double (*get)(const memory_server_t *m);
} mem_column_t;

static double get_shm(const memory_server_t *m) {
    return m->shm;
}
static double get_rss(const memory_server_t *m) {
    return m->rss;
}
static double get_gpu(const memory_server_t *m) {
    return m->gpu;
}

static const mem_column_t mem_columns[] = {
    {"shm_peak_mb", get_shm},
    {"rss_peak_mb", get_rss},
    {"gpu_mem_peak_mb", get_gpu},
};
#define NMEM ((int)(sizeof mem_columns / sizeof mem_columns[0]))
/* Text and HTML list this many servers; JSON and CSV every one. */
#define SHOWN_SERVERS 32

/* 1 when server sv runs a training process (a server no job uses holds
 * nothing to show). */
static int hosts(const topology_t *t, int sv) {
    for (int i = 0; i < t->ninst; i++)
        if (sv >= t->inst[i].first_server && sv < t->inst[i].first_server + t->inst[i].nservers)
            return 1;
    return 0;
}

int memout_any(const variant_run_t *v, int nv) {
    for (int k = 0; k < nv; k++)
        if (memory_shown(&v[k].scn)) return 1;
    return 0;
}

void memout_text(FILE *out, const variant_run_t *v, int nv) {
    if (!memout_any(v, nv)) return;
    const int w = report_variant_width(v, nv);
    fprintf(out, "\nmemory by server at its peak (MiB)\n%-*s %6s", w, "variant", "server");
    for (int c = 0; c < NMEM; c++)
        fprintf(out, " %15s", mem_columns[c].name);
    fputc('\n', out);
    for (int k = 0; k < nv; k++) {
        if (!memory_shown(&v[k].scn)) continue;
        int shown = 0, left = 0;
        for (int sv = 0; sv < (int)v[k].scn.server.count; sv++) {
            if (!hosts(&v[k].topo, sv)) continue;
            if (shown++ >= SHOWN_SERVERS) {
                left++;
                continue;
            }
            const memory_server_t m = memory_server(&v[k].scn, &v[k].topo, sv);
            fprintf(out, "%-*s %6d", w, v[k].scn.variant, sv + 1);
            for (int c = 0; c < NMEM; c++)
                fprintf(out, " %15.1f", mem_columns[c].get(&m) / MIB);
            fputc('\n', out);
        }
        if (left) fprintf(out, "%-*s (%d more servers: --format json has each)\n", w, "", left);
    }
}

void memout_csv_names(FILE *out) {
    for (int c = 0; c < NMEM; c++)
        fprintf(out, ",%s", mem_columns[c].name);
}

void memout_csv_values(FILE *out, const variant_run_t *v, int server) {
    const int shown = memory_shown(&v->scn);
    const memory_server_t m =
        shown ? memory_server(&v->scn, &v->topo, server) : (memory_server_t){0};
    for (int c = 0; c < NMEM; c++)
        if (shown)
            fprintf(out, ",%.6g", mem_columns[c].get(&m) / MIB);
        else
            fputc(',', out);
}

void memout_json(FILE *out, const variant_run_t *v) {
    if (!memory_shown(&v->scn)) return;
    fprintf(out, ",\n   \"memory_servers\": [");
    int n = 0;
    for (int sv = 0; sv < (int)v->scn.server.count; sv++) {
        if (!hosts(&v->topo, sv)) continue;
        const memory_server_t m = memory_server(&v->scn, &v->topo, sv);
        fprintf(out, "%s\n    {\"server\": %d", n++ ? "," : "", sv);
        for (int c = 0; c < NMEM; c++)
            fprintf(out, ", \"%s\": %.6g", mem_columns[c].name, mem_columns[c].get(&m) / MIB);
        fputc('}', out);
    }
    fprintf(out, "]");
}

void memout_html(FILE *out, const variant_run_t *v, int nv) {
    if (!memout_any(v, nv)) return;
    fputs("<h2>Memory by server</h2>\n<p class=\"note\">At its peak, MiB: /dev/shm, the "
          "processes' resident memory (training processes, workers, /dev/shm, a cache in the "
          "loader), the most one GPU holds.</p>\n<table>\n<tr><th class=\"name\">variant</th>"
          "<th>server</th>",
          out);
    for (int c = 0; c < NMEM; c++)
        fprintf(out, "<th>%s</th>", mem_columns[c].name);
    fputs("</tr>\n", out);
    for (int k = 0; k < nv; k++) {
        if (!memory_shown(&v[k].scn)) continue;
        int shown = 0;
        for (int sv = 0; sv < (int)v[k].scn.server.count && shown < SHOWN_SERVERS; sv++) {
            if (!hosts(&v[k].topo, sv)) continue;
            shown++;
            const memory_server_t m = memory_server(&v[k].scn, &v[k].topo, sv);
            fputs("<tr><td class=\"name\">", out);
            html_put_text(out, v[k].scn.variant);
            fprintf(out, "</td><td>%d</td>", sv + 1);
            for (int c = 0; c < NMEM; c++)
                fprintf(out, "<td>%.1f</td>", mem_columns[c].get(&m) / MIB);
            fputs("</tr>\n", out);
        }
    }
    fputs("</table>\n", out);
}
