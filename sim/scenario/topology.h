/* topology: where each job instance runs, derived once from a scenario.
 *
 * Job entries with count > 1 become that many instances. Instances are placed
 * first-fit on servers in order: a job of at most server.gpus GPUs lands on
 * one server; a larger one takes whole servers. Each instance gets its prep
 * cores (pinned, or an equal share of what its servers have left). The model
 * and the simulator both read this, so they agree on placement by design. */
#ifndef STALLSIM_TOPOLOGY_H
#define STALLSIM_TOPOLOGY_H

#include "scenario.h"

#define TOPO_MAX_INSTANCES 1024

typedef struct {
    char name[SCN_STR + 16];
    int job;          /* index into scenario_t.jobs */
    int first_server; /* servers [first_server, first_server + nservers) */
    int nservers;
    int gpus_per_server; /* this instance's GPUs on each of its servers */
    double cpus;         /* prep cores of this instance (all its servers together) */
    /* Its fetch+prep stream: one per instance, or under coordinated prep one
     * per group of instances on the same servers. lead is the group's first
     * instance, stream the group's index in order of leads. */
    int lead, stream;
} instance_t;

typedef struct {
    int ninst;
    instance_t inst[TOPO_MAX_INSTANCES];
    int jobs_on_server_max; /* most instances sharing one server */
    int nstreams;
} topology_t;

/* Returns 0, or EXIT_INPUT after an error when the jobs do not fit. */
int topology_build(const scenario_t *s, topology_t *t);

#endif
