/* measure: the `stallsim measure` command: runs a scenario's training input
 * pipeline for real on this host (pipeline.h) over a folder of JPEGs and
 * reports the same per-epoch metrics as `stallsim run`, with the stalls split
 * by DS-Analyzer's differential runs (T, T_prep with every item in memory,
 * T_gpu the emulated GPU's own time).
 *
 *   stallsim measure SCENARIO --data DIR [--set key=value]... [--epochs N]
 *       [--variant NAME]... [--format text|csv|json]
 *       [--cache page-warm|page-cold|page-cold-epoch] [--minio-size SIZE]
 *       [--io-threads N] [--url BASE]
 *
 * Use: return measure_main(argc, argv) with argv[0] = "measure". Returns the
 * process exit code: 0 done, 1 runtime failure, 2 bad usage or input.
 */
#ifndef STALLSIM_MEASURE_H
#define STALLSIM_MEASURE_H

#include "options.h"

int measure_main(int argc, char **argv);
/* Its flags and usage text (`stallsim help measure`). */
extern const command_t measure_command;

#endif
