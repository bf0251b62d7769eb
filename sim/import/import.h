/* import: the `stallsim import dlio WORKLOAD.yaml` command: a DLIO benchmark
 * / MLPerf Storage workload as a stallsim scenario (import_dlio.h does the
 * translation), never a scenario that `check` refuses, to stdout or written
 * atomically to -o.
 *
 * Use: return import_main(argc, argv) with argv[0] = "import"; 0 done,
 * 1 runtime failure, 2 bad usage or input. */
#ifndef STALLSIM_IMPORT_H
#define STALLSIM_IMPORT_H

#include "options.h"

/* Its flags and usage text (`stallsim help import`). */
extern const command_t import_command;

int import_main(int argc, char **argv);

#endif
