/* self_check: see self_check.h. */
#include "self_check.h"

#include <stdio.h>
#include <stdlib.h>

#include "diag.h"
#include "run.h"

int self_check(const char *text, size_t len, const char *cmd, const char *why) {
    char name[64];
    snprintf(name, sizeof name, "(stallsim %s's output)", cmd);
    scenario_doc_t doc;
    int rc = scenario_doc_load_mem(&doc, name, text, len);
    int idx[SCN_MAX_VARIANTS + 1], nv = 0;
    if (!rc) rc = run_select(&doc, cmd, NULL, 0, idx, &nv);
    variant_run_t *v = rc ? NULL : calloc(1, sizeof *v);
    if (!rc && !v) rc = EXIT_RUNTIME;
    assign_list_t none = {0};
    for (int k = 0; k < nv && !rc; k++)
        rc = run_build(&doc, &none, idx[k], 0, v);
    free(v);
    scenario_doc_free(&doc);
    if (rc == EXIT_INPUT) fprintf(stderr, "stallsim %s: %s\n", cmd, why);
    return rc;
}
