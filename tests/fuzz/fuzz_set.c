/* fuzz_set: libFuzzer target for `--set key=value`: the input is split at
 * newlines into --set arguments (a NUL ends the input: no argument can hold
 * one), parsed, and applied over a fixed scenario with variants. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static scenario_doc_t doc;
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = 0;
    assign_list_t sets = {0};
    int ok = 1;
    for (char *line = text, *next; ok && line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        ok = assign_parse_set(&sets, line) == 0;
    }
    if (ok && scenario_doc_load_mem(&doc, "fuzz.yaml", fuzz_base_yaml, strlen(fuzz_base_yaml)) == 0)
        fuzz_exercise(&doc, &sets);
    scenario_doc_free(&doc);
    assign_list_free(&sets);
    free(text);
    return 0;
}
