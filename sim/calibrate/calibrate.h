/* calibrate: the `stallsim calibrate` command: measures this host (storage,
 * JPEG decode, CPU augment, GPU if any) and writes a host profile (see
 * profile.h for its format).
 *
 *   stallsim calibrate [--data DIR] [--out FILE] [--quick] [--threads N]
 *                      [--files N] [--seed N]
 *
 * Use: return calibrate_main(argc, argv) with argv[0] = "calibrate". Returns
 * the process exit code: 0 done, 1 runtime failure, 2 bad usage or input.
 */
#ifndef STALLSIM_CALIBRATE_H
#define STALLSIM_CALIBRATE_H

#include "options.h"

int calibrate_main(int argc, char **argv);
/* Its flags and usage text (`stallsim help calibrate`). */
extern const command_t calibrate_command;

#endif
