/* budget: the memory a simulation will need, checked against what this
 * machine has before anything large is allocated.
 *
 * sim_memory_bytes mirrors the allocations of sim.c (per-item arrays,
 * streams, the metrics) and asks each kind for its own state (state_bytes of
 * the cache policy, storage and loader); whoever changes those keeps it in
 * step (tests/test_memcheck.c
 * holds it against a real run's peak memory). `stallsim run` calls
 * sim_memory_check after topology_build and before sim_run; model-only runs
 * allocate nothing per item and skip it. */
#ifndef STALLSIM_BUDGET_H
#define STALLSIM_BUDGET_H

#include <stddef.h>

#include "scenario.h"
#include "topology.h"

/* Bytes the simulator allocates for this scenario (saturates at SIZE_MAX). */
size_t sim_memory_bytes(const scenario_t *s, const topology_t *t);
/* Physical memory, lowered to RLIMIT_AS / RLIMIT_DATA and to the memory
 * limit of this process's cgroup or any ancestor (v2 memory.max, v1
 * memory.limit_in_bytes) when those are set. */
size_t sim_memory_available(void);
/* 0 when the simulation fits; otherwise prints, at dataset.items,
 * "... needs X GiB of memory, this machine has Y GiB" and returns EXIT_INPUT. */
int sim_memory_check(const scenario_t *s, const topology_t *t);
/* The same for `copies` simulations held at once (a sweep's worker threads). */
int sim_memory_check_n(const scenario_t *s, const topology_t *t, int copies);

#endif
