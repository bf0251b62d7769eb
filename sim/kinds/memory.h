/* memory: what each server's processes hold in memory, by component, from
 * the kinds' own figures, and the limits they must fit before a run starts.
 * Today: /dev/shm, where PyTorch's worker processes put every collated batch
 * (loader_ops_t.shm_bytes); a server whose loaders would hold more than
 * server.shm_mb is refused with the bus error its workers would die of.
 *
 *   double mb = memory_shm_peak(s, t, server) / 1e6;
 *   if (memory_check(s, t)) ... refused (EXIT_INPUT, errors printed) */
#ifndef STALLSIM_MEMORY_H
#define STALLSIM_MEMORY_H

#include "scenario.h"
#include "topology.h"

/* server.shm_mb counts MiB, as df -m, docker's --shm-size=64m and a tmpfs's
 * size=64m do. */
#define MIB 1048576.0

/* Bytes of /dev/shm server v's training processes' loaders hold at their peak. */
double memory_shm_peak(const scenario_t *s, const topology_t *t, int v);
/* Bytes of /dev/shm one training process of job j holds at its peak. */
double memory_shm_process(const scenario_t *s, const job_t *j);
/* 0, or EXIT_INPUT after an error naming the first server past a limit. */
int memory_check(const scenario_t *s, const topology_t *t);
/* 1 when every server is within its limits (memory_check without a word:
 * advise leaves a configuration past them out rather than stop). */
int memory_fits(const scenario_t *s, const topology_t *t);

#endif
