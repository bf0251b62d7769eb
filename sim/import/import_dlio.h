/* import_dlio: a DLIO benchmark (MLPerf Storage) workload as a stallsim
 * scenario, so that its users can ask what-if questions without hours of
 * real runs. It reads the workload's dataset, reader and train sections and
 * writes a scenario whose every line says which DLIO key it comes from.
 *
 *   import_dlio_opts_t o = {.accelerators = 8, .hosts = 1};
 *   rc = import_dlio("unet3d_h100.yaml", &o, stdout);   // 0, or EXIT_INPUT
 *
 * DLIO describes neither the storage nor the host: the scenario says so and
 * leaves them to the user (server.storage.*, or a host profile). */
#ifndef STALLSIM_IMPORT_DLIO_H
#define STALLSIM_IMPORT_DLIO_H

#include <stdio.h>

typedef struct {
    int accelerators; /* per host: DLIO takes it from the MPI launch */
    int hosts;
    int cpus;        /* cores per host; 0 = accelerators x (read_threads + 1) */
    double cache_gb; /* page cache per host for the data set; 0 = none */
} import_dlio_opts_t;

/* Writes the scenario to out. 0, or EXIT_INPUT after errors on stderr that
 * name the workload's file, line, column and key. */
int import_dlio(const char *path, const import_dlio_opts_t *o, FILE *out);

#endif
