/* fuzz_common: what the libFuzzer targets share: take a loaded scenario
 * document as far as a valid one goes (build every variant, place the jobs,
 * run the model, size the simulation and, when small, simulate and write the
 * report), so bytes that get through validation exercise everything after it.
 * Host profiles named by a fuzzed `host:` key are not opened: the fuzzer must
 * not read the machine's files (a FIFO would block it). */
#ifndef STALLSIM_FUZZ_COMMON_H
#define STALLSIM_FUZZ_COMMON_H

#include "scenario.h"

/* The fixed scenario the profile and --set targets build on (two variants). */
extern const char fuzz_base_yaml[];

void fuzz_exercise(scenario_doc_t *doc, const assign_list_t *sets);

#endif
