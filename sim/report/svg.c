/* svg: see svg.h. */
#include "svg.h"

#include <math.h>
#include <string.h>

enum { LEFT = 72, RIGHT = 24, TOP = 34, BOTTOM = 62, LEGEND_ROW = 20 };

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

const char *svg_color(int k) {
    int n = (int)(sizeof palette / sizeof palette[0]);
    return palette[((k % n) + n) % n];
}

void html_put_text(FILE *out, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        case '\'':
            fputs("&#39;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

/* A step of 1, 2 or 5 times a power of ten giving about `n` ticks over span. */
static double nice_step(double span, int n) {
    if (!(span > 0) || !isfinite(span)) return 1;
    double raw = span / n, p = pow(10, floor(log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
}

static void tick_label(char *b, size_t n, double v, int percent) {
    if (percent)
        snprintf(b, n, "%.0f%%", 100 * v);
    else if (fabs(v) < 1e-12)
        snprintf(b, n, "0");
    else
        snprintf(b, n, "%.4g", v);
}

typedef struct {
    int w, h, plot_w, plot_h, legend_rows;
    double y_max;
} frame_t;

/* Legend entries in rows under the chart: about 7 px a character. */
static int legend_rows(int width, int n, const svg_series_t *s) {
    int rows = n ? 1 : 0, x = LEFT;
    for (int i = 0; i < n; i++) {
        int w = 26 + 7 * (int)strlen(s[i].label);
        if (x + w > width - RIGHT && x > LEFT) rows++, x = LEFT;
        x += w;
    }
    return rows;
}

static void begin(FILE *out, const svg_chart_t *c, frame_t *f, int nseries, const svg_series_t *s,
                  double data_max) {
    f->w = c->width > 0 ? c->width : 640;
    int base_h = c->height > 0 ? c->height : 320;
    f->legend_rows = legend_rows(f->w, nseries, s);
    f->h = base_h + LEGEND_ROW * f->legend_rows;
    f->plot_w = f->w - LEFT - RIGHT;
    f->plot_h = base_h - TOP - BOTTOM;
    double top = c->y_max > 0 ? c->y_max : data_max;
    if (!(top > 0) || !isfinite(top)) top = 1;
    double step = nice_step(top, 5);
    f->y_max = c->y_max > 0 ? c->y_max : ceil(top / step - 1e-9) * step;
    fprintf(out,
            "<svg width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n<title>",
            f->w, f->h, f->w, f->h);
    html_put_text(out, c->title);
    fprintf(out, "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", f->w, f->h);
    fprintf(out, "<text x=\"%d\" y=\"20\" font-size=\"14\" font-weight=\"bold\">", LEFT);
    html_put_text(out, c->title);
    fputs("</text>\n", out);
    /* y axis: grid lines and labels */
    step = nice_step(f->y_max, 5);
    for (int k = 0; k * step <= f->y_max * (1 + 1e-9); k++) {
        double v = k * step;
        double y = TOP + f->plot_h - v / f->y_max * f->plot_h;
        char lab[32];
        tick_label(lab, sizeof lab, v, c->y_percent);
        fprintf(out,
                "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
                "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                LEFT, y, LEFT + f->plot_w, y, LEFT - 6, y + 4, lab);
    }
    fprintf(out,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>"
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333333\"/>\n",
            LEFT, TOP, LEFT, TOP + f->plot_h, LEFT, TOP + f->plot_h, LEFT + f->plot_w,
            TOP + f->plot_h);
    fprintf(out, "<text transform=\"translate(16,%d) rotate(-90)\" text-anchor=\"middle\">",
            TOP + f->plot_h / 2);
    html_put_text(out, c->y_label);
    fprintf(out, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", LEFT + f->plot_w / 2,
            TOP + f->plot_h + 48);
    html_put_text(out, c->x_label);
    fputs("</text>\n", out);
}

static void end(FILE *out, const frame_t *f, int nseries, const svg_series_t *s, int lines) {
    int x = LEFT, row = 0, y0 = f->h - LEGEND_ROW * f->legend_rows + 4;
    for (int i = 0; i < nseries; i++) {
        int w = 26 + 7 * (int)strlen(s[i].label);
        if (x + w > f->w - RIGHT && x > LEFT) row++, x = LEFT;
        int y = y0 + row * LEGEND_ROW;
        if (lines)
            fprintf(out,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
                    "stroke-width=\"3\"/>",
                    x, y + 6, x + 16, y + 6, s[i].color);
        else
            fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\"/>", x, y,
                    s[i].color);
        fprintf(out, "<text x=\"%d\" y=\"%d\">", x + 20, y + 11);
        html_put_text(out, s[i].label);
        fputs("</text>\n", out);
        x += w;
    }
    fputs("</svg>\n", out);
}

void svg_stacked_bars(FILE *out, const svg_chart_t *c, int nbars, const char *const *bar_labels,
                      const char *const *group_labels, int nseg, const svg_series_t *seg,
                      const double *values) {
    double top = 0;
    int groups = 0;
    for (int b = 0; b < nbars; b++) {
        double sum = 0;
        for (int k = 0; k < nseg; k++)
            sum += values[b * nseg + k] > 0 ? values[b * nseg + k] : 0;
        if (sum > top) top = sum;
        groups += group_labels && (b == 0 || strcmp(group_labels[b], group_labels[b - 1]) != 0);
    }
    frame_t f;
    begin(out, c, &f, nseg, seg, top);
    int gaps = groups > 1 ? groups - 1 : 0;
    double slot = f.plot_w / (double)(nbars + gaps + 1);
    double bw = slot * 0.7, x = LEFT + slot * 0.5;
    for (int b = 0; b < nbars; b++) {
        int new_group =
            group_labels && (b == 0 || strcmp(group_labels[b], group_labels[b - 1]) != 0);
        if (new_group && b > 0) x += slot;
        double y = TOP + f.plot_h;
        for (int k = 0; k < nseg; k++) {
            double v = values[b * nseg + k] > 0 ? values[b * nseg + k] : 0;
            double h = v / f.y_max * f.plot_h;
            if (h <= 0) continue;
            y -= h;
            fprintf(out,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", x,
                    y, bw, h, seg[k].color);
        }
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", x + bw / 2,
                TOP + f.plot_h + 15);
        html_put_text(out, bar_labels[b]);
        fputs("</text>\n", out);
        if (new_group) {
            fprintf(out, "<text x=\"%.1f\" y=\"%d\" font-weight=\"bold\">", x, TOP + f.plot_h + 30);
            html_put_text(out, group_labels[b]);
            fputs("</text>\n", out);
        }
        x += slot;
    }
    end(out, &f, nseg, seg, 0);
}

void svg_lines(FILE *out, const svg_chart_t *c, int npoints, const double *x,
               const char *const *x_labels, int nseries, const svg_series_t *series,
               const double *y) {
    double top = 0, xmin = INFINITY, xmax = -INFINITY;
    for (int i = 0; i < nseries * npoints; i++)
        if (isfinite(y[i]) && y[i] > top) top = y[i];
    for (int i = 0; x && i < npoints; i++) {
        if (x[i] < xmin) xmin = x[i];
        if (x[i] > xmax) xmax = x[i];
    }
    frame_t f;
    begin(out, c, &f, nseries, series, top);
    /* x positions: categories evenly, or a linear axis with nice ticks. */
    double lo = 0, hi = 1;
    if (x) {
        double step = nice_step(xmax - xmin, 6);
        lo = floor(xmin / step + 1e-9) * step;
        hi = ceil(xmax / step - 1e-9) * step;
        if (hi <= lo) hi = lo + step;
        for (int k = 0; lo + k * step <= hi * (1 + 1e-12) + 1e-12; k++) {
            double v = lo + k * step, px = LEFT + (v - lo) / (hi - lo) * f.plot_w;
            char lab[32];
            tick_label(lab, sizeof lab, v, 0);
            fprintf(out,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333333\"/>"
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
                    px, TOP + f.plot_h, px, TOP + f.plot_h + 5, px, TOP + f.plot_h + 18, lab);
        }
    } else {
        int every = npoints > 12 ? (npoints + 11) / 12 : 1;
        for (int i = 0; i < npoints; i += every) {
            double px = LEFT + (i + 0.5) / npoints * f.plot_w;
            fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", px,
                    TOP + f.plot_h + 18);
            html_put_text(out, x_labels[i]);
            fputs("</text>\n", out);
        }
    }
    for (int s = 0; s < nseries; s++) {
        const double *ys = y + (size_t)s * npoints;
        int open = 0;
        for (int i = 0; i <= npoints; i++) {
            int have = i < npoints && isfinite(ys[i]);
            if (!have) {
                if (open)
                    fprintf(out, "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\"/>\n",
                            series[s].color);
                open = 0;
                continue;
            }
            double px = x ? LEFT + (x[i] - lo) / (hi - lo) * f.plot_w
                          : LEFT + (i + 0.5) / npoints * f.plot_w;
            double py = TOP + f.plot_h - (ys[i] > 0 ? ys[i] : 0) / f.y_max * f.plot_h;
            fprintf(out, open ? " %.1f,%.1f" : "<polyline points=\"%.1f,%.1f", px, py);
            open = 1;
        }
        for (int i = 0; i < npoints; i++) {
            if (!isfinite(ys[i])) continue;
            double px = x ? LEFT + (x[i] - lo) / (hi - lo) * f.plot_w
                          : LEFT + (i + 0.5) / npoints * f.plot_w;
            double py = TOP + f.plot_h - (ys[i] > 0 ? ys[i] : 0) / f.y_max * f.plot_h;
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n", px, py,
                    series[s].color);
        }
    }
    end(out, &f, nseries, series, 1);
}
