/* memout: see memout.h. */
#include "memout.h"
#include "report.h"

#include "memory.h"
#include "svg.h"

/* A server's memory: CSV column, JSON key, text and HTML heading (MiB). */
static const out_field_t mem_fields[] = {
    {"shm_peak_mb", OUT_NUM, "%.6g", NULL, 0, NULL, 15, "%.1f"},
    {"rss_peak_mb", OUT_NUM, "%.6g", NULL, 0, NULL, 15, "%.1f"},
    {"gpu_mem_peak_mb", OUT_NUM, "%.6g", NULL, 0, NULL, 15, "%.1f"},
};
#define NMEM ((int)(sizeof mem_fields / sizeof mem_fields[0]))

static void mem_values(const memory_server_t *m, double *v) {
    v[0] = m->shm / MIB, v[1] = m->rss / MIB, v[2] = m->gpu / MIB;
}

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
    out_text_heads(out, mem_fields, NMEM);
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
            double f[NMEM];
            mem_values(&m, f);
            fprintf(out, "%-*s %6d", w, v[k].scn.variant, sv + 1);
            out_text_values(out, mem_fields, NMEM, f);
            fputc('\n', out);
        }
        if (left) fprintf(out, "%-*s (%d more servers: --format json has each)\n", w, "", left);
    }
}

void memout_csv_names(FILE *out) {
    out_csv_names(out, mem_fields, NMEM, "");
}

void memout_csv_values(FILE *out, const variant_run_t *v, int server) {
    if (!memory_shown(&v->scn)) {
        out_csv_blank(out, mem_fields, NMEM);
        return;
    }
    const memory_server_t m = memory_server(&v->scn, &v->topo, server);
    double f[NMEM];
    mem_values(&m, f);
    out_csv_values(out, mem_fields, NMEM, f);
}

void memout_json(out_json_t *j, const variant_run_t *v) {
    if (!memory_shown(&v->scn)) return;
    out_jbreak(j, "\n   ");
    out_jarr(j, "memory_servers");
    for (int sv = 0; sv < (int)v->scn.server.count; sv++) {
        if (!hosts(&v->topo, sv)) continue;
        const memory_server_t m = memory_server(&v->scn, &v->topo, sv);
        double f[NMEM];
        mem_values(&m, f);
        out_jbreak(j, "\n    ");
        out_jobj(j, NULL);
        out_jint(j, "server", sv);
        out_jfields(j, mem_fields, NMEM, f);
        out_jend(j);
    }
    out_jend(j);
}

void memout_html(FILE *out, const variant_run_t *v, int nv) {
    if (!memout_any(v, nv)) return;
    fputs("<h2>Memory by server</h2>\n<p class=\"note\">At its peak, MiB: /dev/shm, the "
          "processes' resident memory (training processes, workers, /dev/shm, a cache in the "
          "loader), the most one GPU holds.</p>\n<table>\n<tr><th class=\"name\">variant</th>"
          "<th>server</th>",
          out);
    for (int c = 0; c < NMEM; c++)
        fprintf(out, "<th>%s</th>", mem_fields[c].name);
    fputs("</tr>\n", out);
    for (int k = 0; k < nv; k++) {
        if (!memory_shown(&v[k].scn)) continue;
        int shown = 0;
        for (int sv = 0; sv < (int)v[k].scn.server.count && shown < SHOWN_SERVERS; sv++) {
            if (!hosts(&v[k].topo, sv)) continue;
            shown++;
            const memory_server_t m = memory_server(&v[k].scn, &v[k].topo, sv);
            double f[NMEM];
            mem_values(&m, f);
            fputs("<tr><td class=\"name\">", out);
            html_put_text(out, v[k].scn.variant);
            fprintf(out, "</td><td>%d</td>", sv + 1);
            for (int c = 0; c < NMEM; c++)
                fprintf(out, "<td>%.1f</td>", f[c]);
            fputs("</tr>\n", out);
        }
    }
    fputs("</table>\n", out);
}
