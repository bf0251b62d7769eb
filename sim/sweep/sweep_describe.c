/* sweep_describe: see sweep_describe.h. */
#include "sweep_describe.h"

#include <stdio.h>
#include <string.h>

void sweep_config_text(const sweep_grid_t *g, int64_t c, char *buf, size_t n) {
    int idx[SWEEP_MAX_AXES];
    size_t used = 0;
    sweep_grid_point(g, c, idx);
    buf[0] = 0;
    for (int a = 0; a < g->naxes && used < n; a++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s=%s", a ? ", " : "", g->axes[a].key,
                                 g->axes[a].values[idx[a]]);
}

void sweep_note_overrides(const char *cmd, const sweep_grid_t *g, const scenario_doc_t *doc,
                          const int *runs) {
    for (int a = 0; a < g->naxes; a++) {
        const sweep_axis_t *ax = &g->axes[a];
        for (int i = 0; i < doc->nvariants && !ax->is_variant; i++) {
            const assign_list_t *l = &doc->variants[i].set;
            for (size_t j = 0; j < l->n && runs[i]; j++)
                if (strcmp(l->v[j].key, ax->key) == 0)
                    fprintf(stderr,
                            "stallsim %s: note: variant '%s' sets %s itself, so --vary %s does "
                            "not change it there\n",
                            cmd, doc->variants[i].name, ax->key, ax->key);
        }
    }
}
