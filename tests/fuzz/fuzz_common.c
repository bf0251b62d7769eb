/* fuzz_common: see fuzz_common.h. */
#include "fuzz_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "budget.h"
#include "model.h"
#include "report.h"
#include "sim.h"
#include "topology.h"

const char fuzz_base_yaml[] = "name: fuzz\n"
                              "seed: 5\n"
                              "epochs: 2\n"
                              "dataset: {items: 300, item_kb: 50, item_kb_cv: 0.5}\n"
                              "server: {count: 2, cpus: 4, gpus: 2, cache_gb: 0.005}\n"
                              "jobs: [{name: a, gpus: 2, batch_per_gpu: 8, gpu_items_per_s: 900}]\n"
                              "variants:\n"
                              "  base: {}\n"
                              "  minio: {loader.cache: minio, loader.dist_cache: partitioned}\n";

/* Simulations up to this many item-epochs per stream, in this much memory:
 * enough for every code path, small enough for thousands of runs a second. */
enum { SIM_MAX_ITEM_EPOCHS = 20000 };
#define SIM_MAX_BYTES (64u << 20)

static int names_host(const assign_list_t *l) {
    for (size_t i = 0; l && i < l->n; i++)
        if (strcmp(l->v[i].key, "host") == 0) return 1;
    return 0;
}

static FILE *sink(void) {
    static FILE *f;
    if (!f) f = fopen("/dev/null", "w");
    return f;
}

void fuzz_exercise(scenario_doc_t *doc, const assign_list_t *sets) {
    if (names_host(&doc->base) || names_host(sets)) return;
    for (int v = 0; v < doc->nvariants; v++)
        if (names_host(&doc->variants[v].set)) return;
    int nv = doc->nvariants ? doc->nvariants : 1;
    variant_run_t *runs = calloc((size_t)nv, sizeof *runs);
    if (!runs) abort();
    int ok = 1;
    for (int k = 0; k < nv && ok; k++) {
        variant_run_t *r = &runs[k];
        ok = scenario_build(doc, sets, doc->nvariants ? k : -1, &r->scn) == 0 &&
             topology_build(&r->scn, &r->topo) == 0 && kinds_check(&r->scn, &r->topo) == 0;
        if (!ok) break;
        if (metrics_alloc(&r->model, r->topo.ninst, (int)r->scn.epochs)) abort();
        model_run(&r->scn, &r->topo, &r->model);
        size_t need = sim_memory_bytes(&r->scn, &r->topo);
        double work = (double)r->scn.dataset.items * (double)r->scn.epochs;
        if (need <= SIM_MAX_BYTES && work <= SIM_MAX_ITEM_EPOCHS) {
            if (metrics_alloc(&r->sim, r->topo.ninst, (int)r->scn.epochs)) abort();
            if (sim_run(&r->scn, &r->topo, &r->sim)) abort(); /* memory was checked: must run */
        }
    }
    if (ok && sink()) {
        /* An impossible figure is refused with a message (the semantic
         * fuzzer holds the figures to their invariants); here: no crash. */
        (void)report_write(sink(), FORMAT_TEXT, doc->path, runs, nv, "fuzz");
        (void)report_write(sink(), FORMAT_CSV, doc->path, runs, nv, "fuzz");
        (void)report_write(sink(), FORMAT_JSON, doc->path, runs, nv, "fuzz");
    }
    for (int k = 0; k < nv; k++) {
        metrics_free(&runs[k].model);
        metrics_free(&runs[k].sim);
    }
    free(runs);
}
