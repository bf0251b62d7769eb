/* startup: the phase before a job's first step where its ranks (or their
 * loader workers) resolve the dataset: LIST pages of its objects, a HEAD or
 * stat of each, an index download (startup.* keys). The requests go to the
 * storage kind as reads do, against the same caps, connections and 503s,
 * every job of the scenario launching at once: a request storm is many
 * resolvers asking the same store together.
 *
 * startup_sim replays the requests one by one on fresh devices of the
 * scenario's storage kind; startup_model is its closed form (burst.h). Both
 * fill one
 * startup_t per job instance; run.c's model and simulator rows carry it in
 * their first epoch (epoch_metrics_t.startup_s). */
#ifndef STALLSIM_STARTUP_H
#define STALLSIM_STARTUP_H

#include "burst.h"
#include "metrics.h"
#include "scenario.h"
#include "topology.h"

typedef burst_t startup_t;

/* What one resolver asks, in order: its LIST pages one after another, then
 * the index and the HEADs with startup.threads in flight; the dataset's
 * objects are its shards, or its items. */
void startup_plan(const scenario_t *s, burst_plan_t *p);
/* Resolvers of job instance i (0 when startup.resolve is none). */
int64_t startup_resolvers(const scenario_t *s, const topology_t *t, int i);

/* out[t->ninst]. The simulator's returns 0, or EXIT_RUNTIME without memory
 * (after a message); above BURST_SIM_MAX requests it gives the closed
 * form's figures, flagged approximate. */
int startup_sim(const scenario_t *s, const topology_t *t, startup_t *out);
void startup_model(const scenario_t *s, const topology_t *t, startup_t *out);
/* Puts st[r->ninst] into each instance's first epoch. */
void startup_into(run_metrics_t *r, const startup_t *st);

/* A restart that resumes by skipping (startup.resume_by skip, resume_at >
 * 0): 1, and in *skip the scenario whose one epoch is the items skipped,
 * read and prepared with no training step and no start-up of its own; the
 * caller runs it (simulator or model) and startup_resume_into puts each
 * instance's epoch time into r's first epoch as resume_s. Else 0. */
int startup_resume_scenario(const scenario_t *s, scenario_t *skip);
void startup_resume_into(run_metrics_t *r, const run_metrics_t *skip);

#endif
