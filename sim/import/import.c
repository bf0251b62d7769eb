/* import: the `stallsim import` command: its flags, the workload turned into
 * a scenario (import_dlio.h), the scenario checked as `check` would, then
 * written to stdout or, atomically, to -o. See import.h. */
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"
#include "atomic_file.h"
#include "diag.h"
#include "import_dlio.h"
#include "self_check.h"

typedef struct {
    const char *workload, *out;
    int accelerators, hosts, cpus;
    double cache_gb;
} import_opts_t;

static const option_t import_options[] = {
    {.name = "--accelerators",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(import_opts_t, accelerators),
     .min = 1,
     .max = 4096,
     .help = "accelerators (GPUs) per host: DLIO takes them from its MPI launch (default 1)"},
    {.name = "--hosts",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(import_opts_t, hosts),
     .min = 1,
     .max = 4096,
     .help = "hosts (default 1)"},
    {.name = "--cpus",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(import_opts_t, cpus),
     .min = 1,
     .max = 65536,
     .help = "cores per host (default: accelerators x (read_threads + 1))"},
    {.name = "--cache-gb",
     .type = OPT_REAL,
     .arg = "GB",
     .offset = offsetof(import_opts_t, cache_gb),
     .unit = "GB",
     .help = "page cache per host for the data set (default 0: none)"},
    {.name = "--output",
     .alias = "-o",
     .type = OPT_STR,
     .arg = "FILE",
     .offset = offsetof(import_opts_t, out),
     .help = "write the scenario here, atomically (default: stdout)"},
    {0},
};
static const option_t *const import_tables[] = {import_options, NULL};

const command_t import_command = {
    .name = "import",
    .synopsis = "dlio WORKLOAD.yaml [options]",
    .about = "Turns a DLIO benchmark / MLPerf Storage workload (its dataset, reader and train\n"
             "sections) into a stallsim scenario; each line says which DLIO key it comes from.\n"
             "DLIO describes no storage: set server.storage.* or host: in the scenario.",
    .tables = import_tables,
    .positional = "WORKLOAD",
    .positional_offset = offsetof(import_opts_t, workload),
};

/* Before any work: -o is not the workload itself, and can be written. */
static int import_out_check(const import_opts_t *o) {
    struct stat in, st;
    char err[512];
    if (!o->out || atomic_is_stdout(o->out)) return 0;
    if (stat(o->workload, &in) == 0 && stat(o->out, &st) == 0 && in.st_dev == st.st_dev &&
        in.st_ino == st.st_ino) {
        fprintf(stderr, "stallsim import: -o %s is the workload itself; name another file\n",
                o->out);
        return EXIT_INPUT;
    }
    char *target = atomic_target(o->out, err, sizeof err);
    if (!target) {
        fprintf(stderr, "stallsim import: %s\n", err);
        return EXIT_INPUT;
    }
    free(target);
    return 0;
}

/* stdout, or the file -o names, atomically. */
static int import_write(const import_opts_t *o, const char *text, size_t len) {
    if (!o->out || atomic_is_stdout(o->out)) {
        fwrite(text, 1, len, stdout);
        return fflush(stdout) == 0 ? EXIT_OK : EXIT_RUNTIME;
    }
    atomic_file_t af;
    char err[512];
    if (atomic_open(&af, o->out, err, sizeof err)) {
        fprintf(stderr, "stallsim import: %s\n", err);
        return EXIT_RUNTIME;
    }
    fwrite(text, 1, len, af.f);
    if (atomic_commit(&af, err, sizeof err)) {
        fprintf(stderr, "stallsim import: %s\n", err);
        return EXIT_RUNTIME;
    }
    return EXIT_OK;
}

int import_main(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        options_usage(stdout, &import_command);
        return EXIT_OK;
    }
    if (argc < 2 || strcmp(argv[1], "dlio") != 0)
        return options_error("import",
                             "expected the format first: stallsim import dlio "
                             "WORKLOAD.yaml (got '%s')",
                             argc < 2 ? "" : argv[1]);
    import_opts_t o = {.accelerators = 1, .hosts = 1};
    int rc = options_parse(&import_command, argc - 1, argv + 1, &o);
    if (rc) return rc == 1 ? EXIT_OK : rc;
    if (!o.workload) return options_error("import", "missing the workload file%s", "");
    import_dlio_opts_t io = {o.accelerators, o.hosts, o.cpus, o.cache_gb};
    rc = import_out_check(&o);
    char *text = NULL;
    size_t len = 0;
    FILE *m = rc ? NULL : open_memstream(&text, &len);
    if (!rc && !m) rc = EXIT_RUNTIME;
    if (m) {
        rc = import_dlio(o.workload, &io, m);
        if (fclose(m) != 0 && !rc) rc = EXIT_RUNTIME;
    }
    /* As init: never a file that check refuses (a workload once gave 262144
     * GPUs for 1000 items, a 309-digit batch, a cv of 100). */
    if (!rc)
        rc = self_check(text, len, "import",
                        "the scenario this workload makes does not pass check (above): fix the "
                        "workload's values or the flags (--hosts, --accelerators, --cpus)");
    if (!rc) rc = import_write(&o, text, len);
    free(text);
    return rc;
}
