/* simulate: the `stallsim run` and `stallsim check` commands. Both build
 * and check every variant the scenario runs before running any (run_build,
 * the batch and trace checks); check stops there, run simulates each
 * variant with the analytical model beside (run_execute), writes the trace
 * --trace asks for, finds "what to change" and prints the report
 * (report_write). --max-seconds bounds the whole command.
 *
 * Use: return run_main(argc, argv) with argv[0] = "run" (check_main,
 * "check"); 0 done, 1 runtime failure, 2 bad usage or input. */
#ifndef STALLSIM_SIMULATE_H
#define STALLSIM_SIMULATE_H

#include "options.h"

/* Their flags and usage text (`stallsim help run`, `stallsim help check`). */
extern const command_t run_command, check_command;

int run_main(int argc, char **argv);
int check_main(int argc, char **argv);

#endif
