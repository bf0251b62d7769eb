/* init: `stallsim init`, a commented starter scenario from a few flags.
 *
 * The flags are checked against the key schema's own bounds (--items as
 * dataset.items, ...); --data DIR measures the training set on disk
 * (init_data.h); --gpu and --model pick a published rate (gpu_rates.h). The
 * text (init_yaml.h) is then built as `stallsim check` builds a scenario,
 * every variant, and is written only when it passes: to stdout, or with -o
 * atomically to a file that does not exist yet (--force replaces one).
 * Exit 0, or 2 for bad flags (the reason on stderr), 1 when it cannot write. */
#ifndef STALLSIM_INIT_H
#define STALLSIM_INIT_H

#include "options.h"

extern const command_t init_command;
int init_main(int argc, char **argv);

#endif
