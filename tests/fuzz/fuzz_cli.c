/* fuzz_cli: libFuzzer target for the sweep command line, the richest one
 * stallsim parses (--vary lists and ranges, --set, --shard, --epochs,
 * --variant, --threads, --model-only, --help, aliases and deprecated flags).
 * The input is split at newlines into the arguments that follow
 * `stallsim sweep BASE --dry-run`: they are parsed, the grid built, and the
 * shard's configurations validated, exactly as a real sweep does before it
 * runs; --dry-run writes nothing.
 *
 * Dropped, so the fuzzer neither reads the machine's files nor spends its
 * time on work that is large by design: a line naming a host profile or a
 * price file, and an input whose ranges hold more than 10^4 values (a
 * 10^8-configuration grid is a valid sweep that takes minutes to check). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_ARGS = 64, MAX_RANGE_VALUES = 10000 };

static char path[64];

static void remove_base(void) {
    unlink(path);
}

static const char *base_file(void) {
    if (path[0]) return path;
    snprintf(path, sizeof path, "/tmp/stallsim-fuzz-cli-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) abort();
    size_t n = strlen(fuzz_base_yaml);
    if (write(fd, fuzz_base_yaml, n) != (ssize_t)n) abort();
    close(fd);
    atexit(remove_base);
    return path;
}

/* Values a range a:b:step anywhere in the line would expand to (0 if none). */
static double range_values(const char *line) {
    double most = 0;
    for (const char *p = line; (p = strchr(p, ':')) != NULL; p++) {
        const char *a = p;
        while (a > line && a[-1] != '=' && a[-1] != ',')
            a--;
        char *end;
        double lo = strtod(a, &end), hi, step;
        if (end != p) continue;
        hi = strtod(p + 1, &end);
        if (*end != ':') continue;
        step = strtod(end + 1, NULL);
        double n = step != 0 ? fabs((hi - lo) / step) + 1 : INFINITY;
        if (!(n <= most)) most = n; /* NaN counts as too many */
    }
    return most;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *text = malloc(size + 1);
    if (!text) abort();
    memcpy(text, data, size);
    text[size] = 0;
    char *argv[MAX_ARGS + 4] = {"sweep", (char *)base_file(), "--dry-run"};
    int argc = 3, keep = 1;
    for (char *line = text, *next; line && argc < MAX_ARGS + 3; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        if (strstr(line, "host") || strstr(line, "prices") || range_values(line) > MAX_RANGE_VALUES)
            keep = 0;
        argv[argc++] = line;
    }
    argv[argc] = NULL;
    if (keep) sweep_main(argc, argv);
    free(text);
    return 0;
}
