/* sweep_html: `stallsim sweep --html FILE`, one self-contained page of a
 * sweep's curves (inline SVG, no script, nothing fetched; html.h's style).
 * For every axis that takes two or more values (the variants run count as
 * one), the last epoch's epoch time, GPU utilisation and hit rate against
 * that axis, one line per combination of the other axes' values (the first
 * SWEEP_HTML_SERIES drawn, the rest counted in a note). A point is the
 * configuration's last epoch, from the simulator where it ran, else the
 * model; with several jobs the slowest job's epoch time and the mean GPU
 * utilisation and hit rate. The page is drawn from the sweep's CSV (the
 * finished file, resumed rows included), so it shows what the CSV holds.
 *
 * Use: sweep_html_write(out, grid, first, end, scenario, csv, len). */
#ifndef STALLSIM_SWEEP_HTML_H
#define STALLSIM_SWEEP_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sweep_grid.h"

#define SWEEP_HTML_SERIES 8
#define SWEEP_HTML_CELLS  1000000 /* configurations x variants the page draws at most */

/* csv: the sweep's CSV (header and rows) of configurations [first, end).
 * 0, or -1 without memory or with a CSV that is not the sweep's. */
int sweep_html_write(FILE *out, const sweep_grid_t *g, int64_t first, int64_t end,
                     const char *scenario, const char *csv, size_t len);

#endif
