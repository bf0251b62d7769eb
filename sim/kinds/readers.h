/* readers: how a loader whose workers stream their own record shards (as
 * WebDataset and an IterableDataset split them: shard i to reader i mod
 * ranks x workers) spreads a job's shards over its readers, and the warning
 * when some get none: huggingface/datasets#8669 and lerobot's one busy
 * worker, where fewer shards than ranks x workers leave workers idle.
 *
 *   readers_split_t r;  if (readers_split(s, j, &r) && r.idle > 0) ...
 *   readers_warn_idle(s);   (after the scenario is built: one warning a job) */
#ifndef STALLSIM_READERS_H
#define STALLSIM_READERS_H

#include <stdint.h>

#include "scenario.h"

typedef struct {
    int64_t shards;  /* the dataset's record shards */
    int64_t readers; /* ranks x workers that each read their own */
    int64_t idle;    /* readers with no shard */
    int64_t most;    /* shards of the busiest reader */
    int64_t tail;    /* readers in the last round (shards mod readers; 0: even) */
} readers_split_t;

/* 1 and the split when job j's loader splits shards over its readers, else 0. */
int readers_split(const scenario_t *s, const job_t *j, readers_split_t *r);
/* Warns (diag_warning) for each job with idle readers, naming the counts and
 * the fix. */
void readers_warn_idle(const scenario_t *s);

#endif
