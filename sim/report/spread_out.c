/* spread_out: see spread_out.h. */
#include "spread_out.h"

#include <math.h>

#include "fig.h"
#include "report.h"
#include "text.h"

/* Signed percent of b against a, one decimal, never "-0.0". */
static const char *pct(char *buf, size_t n, double b, double a) {
    double p = a > 0 ? 100 * (b - a) / a : 0;
    snprintf(buf, n, "%+.1f", fabs(p) < 0.05 ? 0.0 : p);
    return buf;
}

void report_spread_text(FILE *out, const variant_run_t *v, int nv) {
    int head = 0;
    for (int k = 0; k < nv; k++) {
        const spread_t *sp = &v[k].spread;
        if (sp->n == 0) continue;
        if (!head++)
            fprintf(out, "\nprofile spread: the model's total time with the host profile's "
                         "figures moved by their measured spread (each to x(1 +- s), the way "
                         "it slows and the way it speeds the run)\n");
        char t[32], lo[32], hi[32], plo[16], phi[16];
        fprintf(out, "%-*s %s s: %s .. %s s (%s%% .. %s%%) over %d figure%s of ",
                report_variant_width(v, nv), v[k].scn.variant, fig(t, sizeof t, sp->total_s, 1),
                fig(lo, sizeof lo, sp->fast_s, 1), fig(hi, sizeof hi, sp->slow_s, 1),
                pct(plo, sizeof plo, sp->fast_s, sp->total_s),
                pct(phi, sizeof phi, sp->slow_s, sp->total_s), sp->n, sp->n == 1 ? "" : "s");
        text_put_escaped(out, sp->profile);
        fprintf(out, " (widest %s, %.1f%%)\n", sp->key[sp->widest], 100 * sp->rel[sp->widest]);
    }
}

void report_spread_json(out_json_t *j, const variant_run_t *v) {
    const spread_t *sp = &v->spread;
    if (sp->n == 0) return;
    out_jbreak(j, "\n   ");
    out_jobj(j, "profile_spread");
    out_jstr(j, "profile", sp->profile);
    out_jobj(j, "figures");
    for (int i = 0; i < sp->n; i++)
        out_jnum(j, sp->key[i], "%.6g", sp->rel[i]);
    out_jend(j);
    out_jobj(j, "total_s");
    out_jnum(j, "model", "%.9g", sp->total_s);
    out_jnum(j, "fast", "%.9g", sp->fast_s);
    out_jnum(j, "slow", "%.9g", sp->slow_s);
    out_jend(j);
    out_jend(j);
}
