/* fuzz_scenario: libFuzzer target for the scenario format: any bytes as a
 * scenario file, then every variant built, validated and (when valid) run. */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static scenario_doc_t doc;
    if (scenario_doc_load_mem(&doc, "fuzz.yaml", data, size) == 0) fuzz_exercise(&doc, NULL);
    scenario_doc_free(&doc);
    return 0;
}
