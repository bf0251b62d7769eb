/* startup: the phase before a job's first step where its ranks (or their
 * loader workers) resolve the dataset: LIST pages of its objects, a HEAD or
 * stat of each, an index download (startup.* keys). The requests go to the
 * storage kind as reads do, against the same caps, connections and 503s,
 * every job of the scenario launching at once: a request storm is many
 * resolvers asking the same store together.
 *
 * startup_sim replays the requests one by one on fresh devices of the
 * scenario's storage kind; startup_model is its closed form. Both fill one
 * startup_t per job instance; run.c's model and simulator rows carry it in
 * their first epoch (epoch_metrics_t.startup_s). */
#ifndef STALLSIM_STARTUP_H
#define STALLSIM_STARTUP_H

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

typedef struct {
    double seconds;   /* launch to the last of the instance's resolvers done */
    double requests;  /* requests its resolvers sent (each page, HEAD, GET) */
    double throttled; /* of those, refused (503/429) and retried */
    int approximate;  /* model: a rate cap binds, whose refusals it does not replay */
} startup_t;

/* What one resolver asks, in order: its LIST pages one after another, then
 * the index and the HEADs with startup.threads in flight. */
typedef struct {
    double objects;    /* the dataset's objects: its shards, or its items */
    double pages;      /* LIST pages of 1000 keys */
    double metadata;   /* index downloads: 0 or 1 */
    double heads;      /* HEADs (stats) */
    double page_bytes; /* one LIST page's answer */
} startup_plan_t;

void startup_plan(const scenario_t *s, startup_plan_t *p);
/* Resolvers of job instance i (0 when startup.resolve is none). */
int64_t startup_resolvers(const scenario_t *s, const topology_t *t, int i);

/* out[t->ninst]. The simulator's returns 0, or EXIT_RUNTIME without memory
 * (after a message). Above STARTUP_SIM_MAX requests it replays none and
 * gives the model's figures, flagged approximate. */
#define STARTUP_SIM_MAX 5e6
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
