/* init_yaml: the text of a starter scenario, commented line by line, from
 * what `stallsim init` settled (init.c checks the flags first; the written
 * text is checked again as `stallsim check` would before it is kept).
 *
 *   init_spec_t s = {...};
 *   init_yaml_write(f, &s);
 *
 * Each line says where its value came from: a flag, the files measured, a
 * published row (with its source) or an estimate to EDIT; a key the host
 * profile (--host) gives is left out (a comment says so), since the
 * scenario's keys override the profile's. */
#ifndef STALLSIM_INIT_YAML_H
#define STALLSIM_INIT_YAML_H

#include <stdint.h>
#include <stdio.h>

#include "gpu_rates.h"
#include "init_data.h"
#include "scenario.h"

typedef enum { INIT_LOCAL, INIT_NFS, INIT_S3, INIT__STORAGES } init_storage_t;
typedef enum { INIT_PYTORCH, INIT_POOL, INIT__LOADERS } init_loader_t;

typedef struct {
    const char *cmdline;  /* the command as given, escaped: the file's first comment */
    const char *name;     /* scenario name */
    init_loader_t loader; /* --loader */
    init_storage_t storage;
    const char *data;            /* the folder measured (escaped), or NULL: items and size given */
    const init_data_t *measured; /* with data */
    int64_t items;
    double item_kb, item_kb_cv;
    int64_t servers, gpus, cpus, batch;
    double cache_gb;
    const char *gpu, *model;   /* NULL when not given */
    const gpu_rate_t *row;     /* the published row of (gpu, model), or NULL */
    double rate;               /* --gpu-items-per-s; 0: the row's */
    int cpus_given;            /* --cpus: written even where the host profile has cores */
    const char *host_path;     /* --host, or NULL */
    const assign_list_t *host; /* its keys: left out here, the profile gives them */
} init_spec_t;

void init_yaml_write(FILE *out, const init_spec_t *s);

#endif
