/* checkpoint: see checkpoint.h. */
#include "checkpoint.h"

#include <math.h>
#include <stdlib.h>

#include "burst.h"
#include "diag.h"
#include "kinds.h"
#include "storage.h"
#include "tier.h"

static int on(const job_t *j) {
    return j->checkpoint.gb > 0 && j->checkpoint.every_steps > 0;
}

int checkpoint_async(const job_t *j) {
    return on(j) && j->checkpoint.mode == CKPT_ASYNC;
}

double checkpoint_staged_bytes(const scenario_t *s, const instance_t *in) {
    const job_t *j = &s->jobs[in->job];
    return checkpoint_async(j) ? j->checkpoint.gb * 1e9 / (double)in->nservers : 0;
}

double checkpoint_stage_one(const scenario_t *s, const instance_t *in) {
    double rate = (double)in->gpus_per_server * s->jobs[in->job].checkpoint.stage_gb_s * 1e9;
    /* the GPUs' copies all land in the server's memory */
    if (s->server.mem_gbps > 0) rate = fmin(rate, s->server.mem_gbps * 1e9);
    return checkpoint_staged_bytes(s, in) / rate;
}

void checkpoint_stage(const scenario_t *s, const topology_t *t, double *secs) {
    for (int i = 0; i < t->ninst; i++)
        secs[i] = checkpoint_stage_one(s, &t->inst[i]);
}

double checkpoint_count(const job_t *j, double before, double steps) {
    if (!on(j)) return 0;
    const double k = (double)j->checkpoint.every_steps;
    return floor((before + steps) / k) - floor(before / k);
}

/* S3 takes at most this many parts an upload; boto3's s3transfer
 * (ChunksizeAdjuster) raises the part size of a larger file to fit. */
#define MAX_PARTS 10000.0

/* Write requests one file of `bytes` takes on the kind: its multipart
 * parts where the kind has a part size, else one. */
static double parts_of(const scenario_t *s, double bytes) {
    const storage_ops_t *ops = scenario_storage(s);
    const double part = ops->write_part_bytes ? ops->write_part_bytes(s) : 0;
    if (!(part > 0) || bytes <= part) return 1;
    return fmin(ceil(bytes / part), MAX_PARTS);
}

/* Instance i's ranks each write their share as `writers` files, each in
 * its parts (equal ones, the part size at most), `writers` requests in
 * flight. */
void checkpoint_plan(const scenario_t *s, const topology_t *t, int i, burst_plan_t *p,
                     burst_who_t *w) {
    const job_t *j = &s->jobs[t->inst[i].job];
    const int64_t ranks = (int64_t)t->inst[i].gpus_per_server * t->inst[i].nservers;
    const double writers = (double)j->checkpoint.writers;
    const double file = j->checkpoint.gb * 1e9 / (double)ranks / writers;
    const double parts = parts_of(s, file);
    /* a disk's writeback sends a file's requests at once, up to its queue */
    const double together = scenario_storage(s)->write_parts_together
                                ? fmin(parts, (double)s->server.storage.queue_depth)
                                : 1;
    *p = (burst_plan_t){.bodies = writers * parts,
                        .body_bytes = file / parts,
                        .threads = j->checkpoint.writers * (int64_t)together,
                        .write = 1};
    *w = (burst_who_t){on(j) ? ranks : 0, 1};
}

int checkpoint_to_tier(const scenario_t *s, const job_t *j) {
    return on(j) && j->checkpoint.to == CKPT_TO_TIER && tier_on(s);
}

/* One instance's burst at a time, the others sending nothing, each on its
 * target's devices (the tier's scenario made once where a job writes there). */
static int each(const scenario_t *s, const topology_t *t, double *secs, int sim) {
    burst_plan_t *p = calloc((size_t)t->ninst, sizeof *p);
    burst_who_t *w = calloc((size_t)t->ninst, sizeof *w);
    burst_t *out = calloc((size_t)t->ninst, sizeof *out);
    scenario_t *tier = NULL;
    int rc = p && w && out ? 0 : EXIT_RUNTIME;
    for (int i = 0; rc == 0 && i < t->ninst; i++) {
        const job_t *j = &s->jobs[t->inst[i].job];
        secs[i] = 0;
        if (!on(j)) continue;
        if (checkpoint_to_tier(s, j) && !tier && (tier = malloc(sizeof *tier)))
            tier_scenario(tier, s);
        const scenario_t *to = checkpoint_to_tier(s, j) ? tier : s;
        if (!to) {
            rc = EXIT_RUNTIME;
            break;
        }
        for (int k = 0; k < t->ninst; k++)
            w[k] = (burst_who_t){0, 1};
        checkpoint_plan(to, t, i, &p[i], &w[i]);
        if (sim)
            rc = burst_sim(to, t, p, w, out);
        else
            burst_model(to, t, p, w, out);
        secs[i] = out[i].seconds;
    }
    free(p), free(w), free(out), free(tier);
    return rc;
}

int checkpoint_sim(const scenario_t *s, const topology_t *t, double *secs) {
    return each(s, t, secs, 1);
}

void checkpoint_model(const scenario_t *s, const topology_t *t, double *secs) {
    if (each(s, t, secs, 0) != 0)
        for (int i = 0; i < t->ninst; i++)
            secs[i] = 0;
}
