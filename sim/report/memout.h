/* memout: each server's memory at its peak in `run`'s outputs, where the
 * scenario counts memory (memory_shown: server.mem_gb, a process's or a
 * worker's memory, or server.shm_mb given; nothing otherwise, so outputs
 * without memory are as before). One table of columns (shm_peak_mb,
 * rss_peak_mb, gpu_mem_peak_mb: MiB, from memory.h's memory_server: out.h's
 * fields) is written as text, CSV, JSON and HTML alike:
 *
 *   memout_text(out, v, nv);                  // a table after the memory lines
 *   if (memout_any(v, nv)) memout_csv_names(out);  // ",shm_peak_mb,..."
 *   memout_csv_values(out, &v[k], server);    // ",12.5,..." (empty when not shown)
 *   memout_json(&j, &v[k]);                   // ,\n   "memory_servers": [...] in the variant
 *   memout_html(out, v, nv);                  // <h2>Memory by server</h2><table>... */
#ifndef STALLSIM_MEMOUT_H
#define STALLSIM_MEMOUT_H

#include <stdio.h>

#include "out.h"
#include "run.h"

/* 1 when some variant shows its servers' memory. */
int memout_any(const variant_run_t *v, int nv);
void memout_text(FILE *out, const variant_run_t *v, int nv);
void memout_csv_names(FILE *out);
void memout_csv_values(FILE *out, const variant_run_t *v, int server);
void memout_json(out_json_t *j, const variant_run_t *v);
void memout_html(FILE *out, const variant_run_t *v, int nv);

#endif
