/* fuzz_profile: libFuzzer target for host profiles: any bytes as a profile
 * (`profile_version: 1`, `scenario:` mapping), its values applied beneath a
 * fixed scenario as a profile's are, then built and run. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static scenario_doc_t doc;
    assign_list_t profile = {0};
    if (scenario_profile_load_mem(data, size, "fuzz-host.yaml", &profile) == 0 &&
        scenario_doc_load_mem(&doc, "fuzz.yaml", fuzz_base_yaml, strlen(fuzz_base_yaml)) == 0) {
        /* The profile goes under the scenario's own keys: prepend it to the base layer. */
        assign_list_t merged = {0};
        for (size_t i = 0; i < profile.n; i++) {
            const assign_t *a = &profile.v[i];
            if (assign_push(&merged, a->key, a->value, a->pos, a->keypos, a->is_scalar)) break;
        }
        for (size_t i = 0; i < doc.base.n; i++) {
            const assign_t *a = &doc.base.v[i];
            if (assign_push(&merged, a->key, a->value, a->pos, a->keypos, a->is_scalar)) abort();
        }
        assign_list_free(&doc.base);
        doc.base = merged;
        fuzz_exercise(&doc, NULL);
    }
    scenario_doc_free(&doc);
    assign_list_free(&profile);
    return 0;
}
