/* main: the stallsim command line. Parses the command and its options, then
 * hands over: scenario files to scenario_* and topology_build, the numbers to
 * model_run and sim_run, the results to report_write. Exit codes: 0 success,
 * 1 runtime failure, 2 bad usage or bad input. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "measure.h"
#include "report.h"
#include "run.h"
#include "scenario.h"
#include "schema.h"
#include "sweep.h"

static const char usage[] =
    "usage: stallsim COMMAND [options]\n"
    "\n"
    "Predicts data stalls in DNN training: how long GPUs wait for input data.\n"
    "\n"
    "commands:\n"
    "  run SCENARIO        simulate each variant's epochs, with the analytical model beside\n"
    "  sweep SCENARIO      run a grid of configurations (--vary key=values) into one CSV\n"
    "  check SCENARIO      validate a scenario (every variant) without running it\n"
    "  calibrate           measure this host's rates and write a host profile\n"
    "  measure SCENARIO    run the scenario's input pipeline for real on this host (--data DIR)\n"
    "  help keys           every scenario key: type, unit, default, bounds, meaning\n"
    "\n"
    "  --help              this text (COMMAND --help: that command's options)\n"
    "  --version           print the version\n";

static const char run_usage[] =
    "usage: stallsim run SCENARIO [options]\n"
    "       stallsim check SCENARIO [--set key=value]...\n"
    "\n"
    "  --set key=value     override a scenario key (dotted path, e.g. server.cpus=12,\n"
    "                      jobs.0.gpus=4; repeatable; variants still override these)\n"
    "  --epochs N          shorthand for --set epochs=N\n"
    "  --variant NAME      run only this variant (repeatable; default: all, in file order)\n"
    "  --format FMT        text (default), csv or json\n"
    "  --model-only        the analytical model alone, no simulation\n"
    "\n"
    "Results go to stdout, errors to stderr (file:line:col: error: ...).\n";

typedef struct {
    const char *file;
    assign_list_t sets;
    report_format_t format;
    int model_only;
    const char *only[SCN_MAX_VARIANTS];
    int nonly;
} run_opts_t;

static int usage_error(const char *cmd, const char *fmt, const char *arg) {
    fprintf(stderr, "stallsim %s: ", cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(stallsim %s --help for usage)\n", cmd);
    return EXIT_INPUT;
}

static int parse_run_opts(const char *cmd, int argc, char **argv, run_opts_t *o) {
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
#define OPT(name)                                                                                  \
    (strcmp(a, name) == 0 || (strncmp(a, name "=", sizeof name) == 0 && (val = a + sizeof name)))
#define NEED()                                                                                     \
    do {                                                                                           \
        if (!val) {                                                                                \
            if (i + 1 >= argc) return usage_error(cmd, "option %s needs a value", a);              \
            val = argv[++i];                                                                       \
        }                                                                                          \
    } while (0)
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(run_usage, stdout);
            exit(EXIT_OK);
        } else if (OPT("--set")) {
            NEED();
            if (assign_parse_set(&o->sets, val)) return EXIT_INPUT;
        } else if (OPT("--epochs")) {
            NEED();
            if (assign_parse_key(&o->sets, "epochs", val)) return EXIT_INPUT;
        } else if (OPT("--variant")) {
            NEED();
            if (o->nonly == SCN_MAX_VARIANTS) return usage_error(cmd, "too many --variant%s", "");
            o->only[o->nonly++] = val;
        } else if (OPT("--format")) {
            NEED();
            if (strcmp(val, "text") == 0)
                o->format = FORMAT_TEXT;
            else if (strcmp(val, "csv") == 0)
                o->format = FORMAT_CSV;
            else if (strcmp(val, "json") == 0)
                o->format = FORMAT_JSON;
            else
                return usage_error(cmd, "--format: expected text, csv or json, got '%s'", val);
        } else if (strcmp(a, "--model-only") == 0) {
            o->model_only = 1;
        } else if (a[0] == '-' && a[1]) {
            return usage_error(cmd, "unknown option '%s'", a);
        } else if (!o->file) {
            o->file = a;
        } else {
            return usage_error(cmd, "unexpected argument '%s' (one scenario file per run)", a);
        }
#undef OPT
#undef NEED
    }
    if (!o->file) return usage_error(cmd, "missing the scenario file%s", "");
    return 0;
}

static int cmd_run(int argc, char **argv, int check_only) {
    const char *cmd = check_only ? "check" : "run";
    run_opts_t o;
    int rc = parse_run_opts(cmd, argc, argv, &o);
    if (rc) {
        assign_list_free(&o.sets);
        return rc;
    }
    scenario_doc_t doc;
    rc = scenario_doc_load(&doc, o.file);
    int idx[SCN_MAX_VARIANTS + 1], nv = 0;
    if (!rc) rc = run_select(&doc, cmd, o.only, o.nonly, idx, &nv);
    variant_run_t *runs = rc ? NULL : calloc((size_t)nv, sizeof *runs);
    if (!rc && !runs) rc = EXIT_RUNTIME;
    /* Validate every variant before running any: a typo in the last must not cost a long run. */
    for (int k = 0; k < nv && !rc; k++)
        rc = run_build(&doc, &o.sets, idx[k], !o.model_only, &runs[k]);
    if (!rc && check_only) {
        printf("%s: ok (%d variant%s)\n", o.file, nv, nv == 1 ? "" : "s");
    } else if (!rc) {
        for (int k = 0; k < nv && !rc; k++)
            rc = run_execute(&runs[k], !o.model_only);
        if (rc == EXIT_RUNTIME) fprintf(stderr, "stallsim run: out of memory\n");
        if (!rc) report_write(stdout, o.format, o.file, runs, nv);
        /* A full disk or closed pipe must not pass for a complete result. */
        if (!rc && (fflush(stdout) != 0 || ferror(stdout))) {
            fprintf(stderr, "stallsim %s: cannot write the results to stdout: %s\n", cmd,
                    strerror(errno));
            rc = EXIT_RUNTIME;
        }
    }
    for (int k = 0; runs && k < nv; k++)
        run_release(&runs[k]);
    free(runs);
    scenario_doc_free(&doc);
    assign_list_free(&o.sets);
    return rc;
}

static int cmd_help(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "keys") == 0) {
        int md = argc >= 3 && strcmp(argv[2], "--markdown") == 0;
        schema_print_reference(stdout, md);
        return EXIT_OK;
    }
    if (argc >= 2) {
        fprintf(stderr, "stallsim help: unknown topic '%s' (try: stallsim help keys)\n", argv[1]);
        return EXIT_INPUT;
    }
    fputs(usage, stdout);
    return EXIT_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_INPUT;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage, stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("stallsim %s\n", STALLSIM_VERSION);
        return EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1, 0);
    if (strcmp(cmd, "sweep") == 0) return sweep_main(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0) return cmd_run(argc - 1, argv + 1, 1);
    if (strcmp(cmd, "help") == 0) return cmd_help(argc - 1, argv + 1);
    if (strcmp(cmd, "calibrate") == 0) return calibrate_main(argc - 1, argv + 1);
    if (strcmp(cmd, "measure") == 0) return measure_main(argc - 1, argv + 1);
    fprintf(stderr, "stallsim: unknown command '%s'\n\n%s", cmd, usage);
    return EXIT_INPUT;
}
