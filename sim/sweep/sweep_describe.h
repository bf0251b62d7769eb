/* sweep_describe: a grid's configurations in words, for sweep's and advise's
 * messages: "key=value, key=value" of configuration c, and the notes on the
 * varied keys that a variant run sets itself (variants win over --set and
 * --vary, so varying such a key changes nothing there). */
#ifndef STALLSIM_SWEEP_DESCRIBE_H
#define STALLSIM_SWEEP_DESCRIBE_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"
#include "sweep_grid.h"

/* Configuration c as "key=value, key=value" into buf[n] (cut at n). */
void sweep_config_text(const sweep_grid_t *g, int64_t c, char *buf, size_t n);

/* One "stallsim CMD: note: ..." line on stderr for each varied key (the
 * variant axis aside) that a variant i with runs[i] set sets itself. */
void sweep_note_overrides(const char *cmd, const sweep_grid_t *g, const scenario_doc_t *doc,
                          const int *runs);

#endif
