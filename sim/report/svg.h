/* svg: small charts as inline SVG for stallsim's HTML pages (html.h, the
 * sweep's page): stacked bars and lines with axes, ticks and a legend.
 * Nothing but SVG elements and attributes: no script, no font or image to
 * fetch, and the same numbers give the same bytes.
 *
 * Use: svg_chart_t c = {title, x_label, y_label, ...}; then
 * svg_stacked_bars(out, &c, ...) or svg_lines(out, &c, ...). Strings are
 * escaped here (html_put_text). */
#ifndef STALLSIM_SVG_H
#define STALLSIM_SVG_H

#include <stdio.h>

typedef struct {
    const char *label;
    const char *color; /* "#rrggbb" */
} svg_series_t;

typedef struct {
    const char *title;
    const char *x_label, *y_label; /* with units: "epoch time (s)" */
    int width, height;             /* pixels; 0: 640 x 320 */
    double y_max;                  /* > 0: the axis ends there (a share: 1); else from the data */
    int y_percent;                 /* values are shares, labelled as percentages */
} svg_chart_t;

/* The palette: series k's colour (k wraps around). */
const char *svg_color(int k);

/* Writes s with &, <, >, " and ' escaped. */
void html_put_text(FILE *out, const char *s);

/* Bars side by side, each a stack of nseg segments (values[bar * nseg +
 * seg], negative drawn as 0); bar_labels under each bar and, when
 * group_labels is not NULL, the group's label under its first bar (a bar
 * whose group label differs from the previous bar's starts a group, with a
 * gap before it). */
void svg_stacked_bars(FILE *out, const svg_chart_t *c, int nbars, const char *const *bar_labels,
                      const char *const *group_labels, int nseg, const svg_series_t *seg,
                      const double *values);

/* Lines: series s has y[s * npoints + i] at point i (NAN: no point). With x
 * NULL the points are categories, evenly spaced and labelled x_labels[i];
 * else at x[i] on a linear axis. */
void svg_lines(FILE *out, const svg_chart_t *c, int npoints, const double *x,
               const char *const *x_labels, int nseries, const svg_series_t *series,
               const double *y);

#endif
