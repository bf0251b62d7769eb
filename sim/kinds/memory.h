/* memory: what each server's processes hold in memory, by component, from
 * the kinds' own figures, and the limits they must fit before a run starts.
 * /dev/shm, where PyTorch's worker processes put every collated batch
 * (loader_ops_t.shm_bytes): a server whose loaders would hold more than
 * server.shm_mb is refused with the bus error its workers would die of.
 * The server's memory (server.mem_gb): the training processes
 * (jobs.N.host_mem_gb or the probe's loader_ops_t.process_bytes, and the
 * batches they pin: loader_ops_t.pinned_bytes), their loaders' worker processes
 * (loader_ops_t.proc_bytes), /dev/shm (a tmpfs: its pages are charged to
 * the cgroup that wrote them) and a cache held in the loader's own memory
 * (cache_ops_t.holds_memory; the page cache is reclaimed, not counted): a
 * server past it is refused with the OOM kill it would meet. The page cache
 * has what they leave (memory_cache_bytes), the size the simulator and the
 * model give it.
 *
 *   double mib = memory_shm_peak(s, t, server) / MIB;
 *   memory_parts_t m = memory_peak(s, t, server);   // m.total, by component
 *   if (memory_check(s, t)) ... refused (EXIT_INPUT, errors printed) */
#ifndef STALLSIM_MEMORY_H
#define STALLSIM_MEMORY_H

#include "scenario.h"
#include "topology.h"

/* server.shm_mb counts MiB, as df -m, docker's --shm-size=64m and a tmpfs's
 * size=64m do. */
#define MIB 1048576.0
/* server.mem_gb and jobs.N.host_mem_gb count GiB, as docker's --memory=64g does. */
#define GIB 1073741824.0

/* Bytes of /dev/shm server v's training processes' loaders hold at their peak. */
double memory_shm_peak(const scenario_t *s, const topology_t *t, int v);
/* Server v's memory at its peak, by component (bytes). */
typedef struct {
    double processes; /* the training processes themselves (memory_process_own), with
                         their pinned batches */
    double pinned;    /* of which pinned batches (loader_ops_t.pinned_bytes) */
    double workers;   /* their loaders' worker processes' private pages */
    double shm;       /* /dev/shm */
    double cache;     /* a cache in the loader's own memory */
    double staged;    /* asynchronous checkpoints' state staged in host memory */
    double total;
    int procs; /* training processes on it */
} memory_parts_t;
memory_parts_t memory_peak(const scenario_t *s, const topology_t *t, int v);
/* Bytes each server's cache holds: server.cache_gb, or for a cache that
 * shares the server's memory (cache_ops_t.room: the page cache) under
 * server.mem_gb, what the processes leave of it on the server that leaves
 * the least (every server's cache has one size). */
double memory_cache_bytes(const scenario_t *s, const topology_t *t);
/* Server v's peaks as the outputs give them (bytes): /dev/shm, its
 * processes' resident memory (memory_peak's total), and the most one of
 * its GPUs holds (jobs.N.gpu_mem_gb and the batches of input on it). */
typedef struct {
    double shm, rss, gpu;
} memory_server_t;
memory_server_t memory_server(const scenario_t *s, const topology_t *t, int v);
/* 1 when the outputs show each server's memory: memory_counted, or a
 * /dev/shm limit (server.shm_mb) given. */
int memory_shown(const scenario_t *s);
/* 1 when the scenario gives server.mem_gb, a training process's memory, or
 * a loader whose workers hold memory (asked through its proc_bytes): the
 * report then shows the server's memory. */
int memory_counted(const scenario_t *s);
/* Bytes one training process of job j holds itself, its pinned batches
 * aside: jobs.N.host_mem_gb, or where not given what the loader's probe
 * measured (loader_ops_t.process_bytes). */
double memory_process_own(const scenario_t *s, const job_t *j);
/* Bytes of /dev/shm one training process of job j holds at its peak. */
double memory_shm_process(const scenario_t *s, const job_t *j);
/* 0, or EXIT_INPUT after an error naming the first server past a limit. */
int memory_check(const scenario_t *s, const topology_t *t);
/* 1 when every server is within its limits (memory_check without a word:
 * advise leaves a configuration past them out rather than stop). */
int memory_fits(const scenario_t *s, const topology_t *t);

#endif
