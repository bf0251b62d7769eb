/* loader: what a data-loader kind is to stallsim. Each kind is one file
 * (loader_<name>.c) exporting one loader_ops_t that owns its schema rows,
 * how a batch's items are prepared once fetched (the simulator's prep stage),
 * its prep rate and prefetch window for the model, and its state bytes.
 * kinds.c lists the kinds; `loader.kind` picks one.
 *
 * The simulator runs a stream batch by batch: the engine fetches each item
 * (cache, storage, network) and hands it to the loader on two timelines: T
 * (the item ready when fetched) and T_prep (every item in memory,
 * DS-Analyzer's differential run). One call per item, interleaved with the
 * fetch: the out-of-order core overlaps the loader's arithmetic with the
 * fetch's cache misses (a batch-at-a-time stage measured 1.8x slower). */
#ifndef STALLSIM_LOADER_H
#define STALLSIM_LOADER_H

#include <stdint.h>

#include "scenario.h"
#include "schema.h"

enum { PREP_TIMELINES = 2 }; /* 0: T, 1: T_prep */

/* One stream's prep stage: ns servers with `cores` cores each as the
 * scenario gives them (may be fractional: a share of a server). */
typedef struct {
    int ns;
    double cores;
    /* Set by init: each item's CPU time is multiplied by slowdown (a
     * fractional share runs as more, slower cores), and cpu_slots is the
     * number of simulated cores per server, the denominator of cpu_util. */
    double slowdown;
    double cpu_slots;
    void *state;
} prep_t;

/* When an item's prep ends on each timeline (returned in two registers). */
typedef struct {
    double t, mem;
} prep_end_t;

typedef struct {
    const char *name;
    const char *help;
    const key_def_t *keys; /* its own scenario rows (none yet for any kind) */
    int nkeys;

    /* Simulator: init fills slowdown, cpu_slots and the state (0, or -1
     * without memory). item prepares one item that needs `dur` seconds of
     * one core on the stream's server sv, on both timelines at once (one call
     * per item: the hot loop's cost): fetched by `ready` on T, by `ready_mem`
     * on T_prep; it returns when each is done. Items come in issue order,
     * batch by batch; each timeline keeps its own cores. batch_ready turns
     * the time the batch's last item was prepared into the time the batch is
     * ready. */
    int (*init)(prep_t *p);
    prep_end_t (*item)(prep_t *p, int sv, double ready, double ready_mem, double dur);
    double (*batch_ready)(prep_t *p, int tl, double last_item);
    void (*destroy)(prep_t *p);

    /* Model: items/s the stream's cores prepare at item_s core-seconds per item. */
    double (*items_s)(double cores, double item_s);

    /* Memory budget: bytes of one stream's prep state. */
    double (*state_bytes)(double cores, int ns);
} loader_ops_t;

#endif
