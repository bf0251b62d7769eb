/* main: the stallsim command line, a dispatcher: the command table (each
 * command's entry point and flags live in its own folder), the top-level
 * usage, `help` and its topics, and the check that what a command printed
 * reached stdout. Exit codes: 0 success, 1 runtime failure, 2 bad usage or
 * bad input. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "advise.h"
#include "calibrate.h"
#include "compare.h"
#include "diag.h"
#include "gpu_rates.h"
#include "import.h"
#include "init.h"
#include "kinds.h"
#include "measure.h"
#include "schema.h"
#include "simulate.h"
#include "sweep.h"

static int cmd_help(int argc, char **argv);

/* Every command: its name, what it does, its entry point and its flags. */
static const struct {
    const char *name, *args, *summary;
    int (*main)(int argc, char **argv);
    const command_t *usage;
} commands[] = {
    {"run", "SCENARIO", "simulate each variant's epochs, with the analytical model beside",
     run_main, &run_command},
    {"sweep", "SCENARIO", "run a grid of configurations (--vary key=values) into one CSV",
     sweep_main, &sweep_command},
    {"advise", "SCENARIO", "the cheapest configuration of a grid that meets a target (--vary)",
     advise_main, &advise_command},
    {"check", "SCENARIO", "validate a scenario (every variant) without running it", check_main,
     &check_command},
    {"calibrate", "", "measure this host's rates and write a host profile", calibrate_main,
     &calibrate_command},
    {"measure", "SCENARIO", "run the scenario's input pipeline for real on this host (--data DIR)",
     measure_main, &measure_command},
    {"compare", "MEASURED SCENARIO", "a measured run (stallsim.watch) against the prediction",
     compare_main, &compare_command},
    {"init", "[options]", "a commented starter scenario from a few flags (--data DIR, --gpu)",
     init_main, &init_command},
    {"import", "dlio WORKLOAD", "a DLIO / MLPerf Storage workload as a stallsim scenario",
     import_main, &import_command},
    {"help", "[TOPIC]", "keys, kinds, gpus, measured (a measured profile's keys), COMMAND",
     cmd_help, NULL},
};
#define NCOMMANDS ((int)(sizeof commands / sizeof commands[0]))

static void usage(FILE *out) {
    fputs("usage: stallsim COMMAND [options]\n\n"
          "Predicts data stalls in DNN training: how long GPUs wait for input data.\n\n"
          "commands:\n",
          out);
    for (int i = 0; i < NCOMMANDS; i++) {
        char head[32];
        snprintf(head, sizeof head, "%s %s", commands[i].name, commands[i].args);
        fprintf(out, "  %-19s %s\n", head, commands[i].summary);
    }
    fputs("\n  -h, --help          this text (stallsim help COMMAND: that command's options)\n"
          "  -V, --version       the version and the commit it was built from\n",
          out);
}

/* The kinds of each family and what they are, from the registry. */
static void print_kinds(FILE *out) {
    static const struct {
        kind_family_t family;
        const char *key;
    } fam[] = {{FAMILY_CACHE, "loader.cache"},
               {FAMILY_STORAGE, "server.storage.kind"},
               {FAMILY_LOADER, "loader.kind"},
               {FAMILY_PIPELINE, "jobs[].prep.pipeline"}};
    for (int f = 0; f < (int)(sizeof fam / sizeof fam[0]); f++) {
        fprintf(out, "%s%s:\n", f ? "\n" : "", fam[f].key);
        for (int i = 0; kind_name(fam[f].family, i); i++) {
            int n;
            const key_def_t *k = kind_keys(fam[f].family, i, &n);
            fprintf(out, "  %-11s %s\n", kind_name(fam[f].family, i), kind_help(fam[f].family, i));
            for (int j = 0; j < n; j++)
                fprintf(out, "              key %s\n", k[j].name);
        }
    }
}

static int cmd_help(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "keys") == 0) {
        int md = argc >= 3 && strcmp(argv[2], "--markdown") == 0;
        schema_print_reference(stdout, md);
        return EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "measured") == 0) {
        compare_print_keys(stdout, argc >= 3 && strcmp(argv[2], "--markdown") == 0);
        return EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "kinds") == 0) {
        print_kinds(stdout);
        return EXIT_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "gpus") == 0) {
        int n, rc;
        const gpu_rate_t *rows = gpu_rates_builtin(&n, &rc);
        if (rows) gpu_rates_print(stdout, rows, n, argc >= 3 && !strcmp(argv[2], "--markdown"));
        return rows ? EXIT_OK : rc;
    }
    for (int i = 0; argc >= 2 && i < NCOMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0 && commands[i].usage) {
            options_usage(stdout, commands[i].usage);
            return EXIT_OK;
        }
    if (argc >= 2) {
        fprintf(stderr,
                "stallsim help: unknown topic '%s' (try: stallsim help keys, stallsim help kinds, "
                "stallsim help measured, "
                "stallsim help gpus, stallsim help run)\n",
                argv[1]);
        return EXIT_INPUT;
    }
    usage(stdout);
    return EXIT_OK;
}

/* Whatever a command printed must have reached stdout: a full disk or a
 * closed pipe is a failure (exit 1), never a silent success. */
static int finish(const char *cmd, int rc) {
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    if (rc == EXIT_OK) {
        fprintf(stderr, "stallsim %s: cannot write to stdout: %s\n", cmd, strerror(errno));
        return EXIT_RUNTIME;
    }
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return EXIT_INPUT;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return finish(cmd, EXIT_OK);
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("stallsim %s (commit %s)\n", STALLSIM_VERSION, STALLSIM_COMMIT);
        return finish(cmd, EXIT_OK);
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return finish(cmd, commands[i].main(argc - 1, argv + 1));
    fprintf(stderr, "stallsim: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return EXIT_INPUT;
}
