/* html: `stallsim run --format html`, one self-contained page of a run:
 * inline SVG charts and tables, no script, nothing fetched from anywhere.
 * It shows each variant's epoch split (compute, prep stall, fetch stall)
 * per job and epoch as stacked bars, the hit rate per epoch, the
 * bottleneck, and every epoch's figures (simulator where it ran, else the
 * model). The same run gives the same bytes.
 *
 * advice, when not NULL, writes the "what to change" section's body (HTML)
 * for the run; without it the page has an empty slot (a comment) there. */
#ifndef STALLSIM_HTML_H
#define STALLSIM_HTML_H

#include <stdio.h>

#include "run.h"

typedef void (*html_advice_fn)(FILE *out, const variant_run_t *v, int nv);

void html_run_write(FILE *out, const char *path, const variant_run_t *v, int nv,
                    html_advice_fn advice);

/* The page's head (doctype, title, style) and end, shared with the sweep's page. */
void html_begin(FILE *out, const char *title);
void html_end(FILE *out);

#endif
