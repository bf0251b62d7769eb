/* compare: `stallsim compare MEASURED SCENARIO`, a measured run (the profile
 * `stallsim.watch` writes from the user's own training loop) held against
 * the prediction of the scenario that describes it.
 *
 *   compare_load   reads and checks a measured profile (one key table,
 *                  measured_keys: every key, its type, range and meaning;
 *                  a bad one is file:line:col, the key, what was expected)
 *   compare_main   the command: predicts the scenario through the path
 *                  `run` takes (run_build, run_execute) with its epochs set
 *                  to the measured ones, and prints both side by side in
 *                  text, JSON or HTML: each epoch's time and stall, the
 *                  stall split (when watch ran its differential passes),
 *                  the epoch where they differ most and the input that
 *                  most likely explains it.
 *
 * Use: return compare_main(argc, argv) with argv[0] = "compare"; 0 done,
 * 1 runtime failure, 2 bad usage or input. */
#ifndef STALLSIM_COMPARE_H
#define STALLSIM_COMPARE_H

#include <stdio.h>

#include "diag.h"
#include "options.h"

enum { MEASURED_MAX_EPOCHS = 1000 };

typedef struct {
    long long iterations;
    double items, epoch_s, wait_s, step_s, wait_p50_ms, wait_p90_ms, wait_p99_ms;
    int complete;
    src_pos_t pos; /* where the epoch's first key stands */
} measured_epoch_t;

typedef struct {
    long long version, rank, world_size, batch;
    char tool[64], host[128], date[64], t_prep_method[256];
    int nepochs;
    measured_epoch_t ep[MEASURED_MAX_EPOCHS];
    /* watch's differential passes: per iteration, as given (t), with the
     * items in memory (t_prep), a batch held on the device (t_gpu); 0 ms
     * each when it did not run them. */
    long long diff_iterations;
    double t_ms, t_prep_ms, t_gpu_ms;
    src_pos_t diff_pos; /* the first differential key's, for the errors */
} measured_t;

/* Reads path into *m. 0, or EXIT_INPUT after every error found on stderr. */
int compare_load(const char *path, measured_t *m);
/* The measured profile's keys, one a line (`stallsim help measured`; with
 * markdown, a table). */
void compare_print_keys(FILE *out, int markdown);

int compare_main(int argc, char **argv);
extern const command_t compare_command;

#endif
