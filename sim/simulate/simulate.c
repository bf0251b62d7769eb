/* simulate: `stallsim run` and `stallsim check`: the scenario's variants
 * built and checked, then (run) simulated with the model beside, with the
 * long-run watch (--max-seconds, progress lines), the Chrome trace
 * (--trace), "what to change" and the report. See simulate.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "simulate.h"
#include "advice_find.h"
#include "atomic_file.h"
#include "diag.h"
#include "readers.h"
#include "report.h"
#include "run.h"
#include "scenario.h"
#include "spread.h"
#include "trace.h"
#include "watchdog.h"

typedef struct {
    run_args_t a; /* first: the shared rows' offsets are into it */
    report_format_t format;
    const char *trace;
    char *trace_target;                      /* the file --trace writes (through a symbolic link) */
    int64_t trace_epochs[2], trace_iters[2]; /* 0: not given */
    const char *trace_only[SCN_MAX_VARIANTS];
    int ntrace_only;
    double max_seconds; /* 0: no bound */
} run_opts_t;

/* The default trace window: small enough to open at once in a browser. */
#define TRACE_DEFAULT_EPOCHS "1"
#define TRACE_DEFAULT_ITERS  "1-20"

static int trace_range_fn(void *field, const char *cmd, const char *value) {
    int64_t *r = field;
    if (trace_parse_range(value, &r[0], &r[1]) == 0) return 0;
    return options_error(cmd,
                         "--trace-epochs/--trace-iters: expected A-B (1 <= A <= B), A or all, "
                         "got '%s'",
                         value);
}

static const option_t run_own_options[] = {
    REPORT_FORMAT_OPTION(offsetof(run_opts_t, format)),
    {.name = "--max-seconds",
     .type = OPT_REAL,
     .arg = "S",
     .offset = offsetof(run_opts_t, max_seconds),
     .real_min = 0,
     .real_min_open = 1,
     .unit = "seconds",
     .help = "stop the simulation (exit 1, nothing written) once it has run S seconds, or\n"
             "earlier when its pace says it would take longer (default: no bound, and a\n"
             "warning when it would take more than an hour)"},
    {.name = "--trace",
     .type = OPT_STR,
     .arg = "FILE.json",
     .offset = offsetof(run_opts_t, trace),
     .help = "also write the simulated timeline as a Chrome trace (ui.perfetto.dev,\n"
             "chrome://tracing): GPUs computing or waiting (fetch or prep), prep cores\n"
             "or workers, requests in flight, cache, staged batches and hit rate;\n"
             "written atomically, only the window below; - writes it to stdout,\n"
             "and the results then go to stderr"},
    {.name = "--trace-epochs",
     .type = OPT_FN,
     .arg = "A-B",
     .offset = offsetof(run_opts_t, trace_epochs),
     .fn = trace_range_fn,
     .help = "the epochs the trace holds, 1-based, inclusive (A-B, A or all;\n"
             "default " TRACE_DEFAULT_EPOCHS ")"},
    {.name = "--trace-iters",
     .type = OPT_FN,
     .arg = "A-B",
     .offset = offsetof(run_opts_t, trace_iters),
     .fn = trace_range_fn,
     .help =
         "the iterations of each traced epoch, 1-based, inclusive (default\n" TRACE_DEFAULT_ITERS
         ": about one event per storage request, ~0.45 MB an iteration\n"
         "of 2048 items read; all covers whole epochs, and may be GBs)"},
    {.name = "--trace-variant",
     .type = OPT_LIST,
     .arg = "NAME",
     .offset = offsetof(run_opts_t, trace_only),
     .count_offset = offsetof(run_opts_t, ntrace_only),
     .max = SCN_MAX_VARIANTS,
     .help = "trace only this variant (repeatable; default: every variant run,\n"
             "one trace process each)"},
    {0},
};

/* ---- a long run's watch: pace, progress and the --max-seconds bound ---- */

typedef struct {
    double t0, max_s, last_line;
    int k, nv, warned;
    const char *variant;
    /* --trace's file while it is written (a full disk is found within half
     * a second, not at the end), and whether it failed (B1). */
    FILE *trace_f;
    const char *trace_name;
    int trace_failed;
} run_watch_t;

/* A trace that cannot be written is dropped as soon as that is seen; the
 * simulation goes on and its results are printed (the trace was what was
 * lost, not them). */
static void trace_watch(run_watch_t *w) {
    if (!w->trace_f || w->trace_failed) return;
    errno = 0;
    if (fflush(w->trace_f) == 0 && !ferror(w->trace_f)) return;
    w->trace_failed = 1;
    fprintf(stderr,
            "stallsim run: --trace %s: cannot write it (%s); the trace is lost, the simulation "
            "goes on and its results are printed\n",
            w->trace_name, errno ? strerror(errno) : "write error");
}

static double now_s(void) {
    return watchdog_now();
}

/* --max-seconds covers the whole command (loading, checks, the simulation,
 * the trace), on the clock (watchdog.h). The simulator's progress callback
 * (below) only reaches a long run's projection; a single batch can take
 * minutes, and loading 10^9 items has no batches at all. The trace's
 * temporary file, the one file run writes, is removed first. */

/* The pace is the work done so far, variants counted as equal shares; after
 * two seconds it is steady enough to project the whole run from. */
static int run_progress(void *ctx, double done) {
    run_watch_t *w = ctx;
    trace_watch(w);
    double t = now_s() - w->t0, share = ((double)w->k + done) / w->nv;
    double total = share > 0 ? t / share : INFINITY;
    if (w->max_s > 0 && (t > w->max_s || (t >= 2 && total > w->max_s))) {
        fprintf(stderr,
                "stallsim run: stopped after %.0f s at %.0f%% of the simulation (variant %s, %d "
                "of %d): at this pace it would take about %.0f s in all, more than --max-seconds "
                "%g; nothing was written (fewer epochs or items, or --model-only, answer "
                "sooner)\n",
                t, 100 * share, w->variant, w->k + 1, w->nv, total, w->max_s);
        return 1;
    }
    if (t < 2) return 0;
    if (!w->warned && w->max_s <= 0 && total > 3600) {
        w->warned = 1;
        fprintf(stderr,
                "stallsim run: warning: at this pace the simulation takes about %.1f h; "
                "--max-seconds bounds it, --model-only answers in a second\n",
                total / 3600);
    }
    /* A line every 10 s on a run of more than 30 s: it is alive, and how far. */
    if (total > 30 && t - w->last_line >= 10) {
        w->last_line = t;
        fprintf(stderr,
                "stallsim run: %.0f%% (variant %s, %d of %d), %.0f s elapsed, about %.0f s left\n",
                100 * share, w->variant, w->k + 1, w->nv, t, total - t);
    }
    return 0;
}

static const option_t *const run_tables[] = {run_scenario_options, run_own_options,
                                             run_model_only_option, NULL};
/* check takes run's flags (a run command line can be checked as it is). */
static const option_t *const check_tables[] = {run_scenario_options, run_own_options,
                                               run_model_only_option, NULL};

const command_t run_command = {
    .name = "run",
    .synopsis = "SCENARIO [options]",
    .about = "Simulates each variant's epochs item by item, with the analytical model beside.",
    .tables = run_tables,
    .positional = "SCENARIO",
    .positional_offset = offsetof(run_opts_t, a.file),
    .footer = "Results go to stdout, errors to stderr (file:line:col: error: ...).\n",
};

const command_t check_command = {
    .name = "check",
    .synopsis = "SCENARIO [options]",
    .about = "Validates the scenario and every variant it runs (keys, bounds, the placement of\n"
             "the jobs, each kind's own checks and, unless --model-only, whether this machine\n"
             "can hold the simulation) without running anything.",
    .tables = check_tables,
    .positional = "SCENARIO",
    .positional_offset = offsetof(run_opts_t, a.file),
    .footer = "Prints 'FILE: ok (N variants)', or the errors on stderr and exits 2. It takes\n"
              "run's flags so that a run command line can be checked as it is; --format\n"
              "changes nothing here.\n",
};

/* The trace flags make sense together and with a simulation. */
static int trace_flags_check(const char *cmd, run_opts_t *o) {
    int window = o->trace_epochs[0] || o->trace_iters[0] || o->ntrace_only;
    if (!o->trace && window)
        return options_error(cmd,
                             "--trace-epochs, --trace-iters and --trace-variant shape the trace: "
                             "add --trace FILE.json%s",
                             "");
    if (o->trace && o->a.model_only)
        return options_error(cmd, "--trace writes the simulator's timeline: drop --model-only%s",
                             "");
    if (o->trace && !o->trace[0]) return options_error(cmd, "--trace: expected a file name%s", "");
    /* Checked before any work: a folder that is missing, a link to a device. */
    if (o->trace && atomic_is_stdout(o->trace)) o->trace = "-";
    if (o->trace && strcmp(o->trace, "-") != 0) {
        char err[512];
        if (!(o->trace_target = atomic_target(o->trace, err, sizeof err))) {
            fprintf(stderr, "stallsim %s: --trace %s\n", cmd, err);
            return EXIT_INPUT;
        }
        o->trace = o->trace_target;
    }
    if (!o->trace_epochs[0])
        trace_parse_range(TRACE_DEFAULT_EPOCHS, &o->trace_epochs[0], &o->trace_epochs[1]);
    if (!o->trace_iters[0])
        trace_parse_range(TRACE_DEFAULT_ITERS, &o->trace_iters[0], &o->trace_iters[1]);
    return 0;
}

/* Whether variant k is traced: all run, or those --trace-variant names
 * (each must be one the run runs). */
static int trace_wanted(const run_opts_t *o, const char *name) {
    if (!o->trace) return 0;
    if (!o->ntrace_only) return 1;
    for (int i = 0; i < o->ntrace_only; i++)
        if (strcmp(o->trace_only[i], name) == 0) return 1;
    return 0;
}

static int same_file(const char *a, const char *b) {
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* The trace may not replace the scenario, a host profile or a price file
 * the run reads (compared as files), nor a device or FIFO (the finished file
 * replaces the target by a rename). */
static int trace_target_check(const char *cmd, const run_opts_t *o, const scenario_doc_t *doc,
                              const variant_run_t *runs, int nv) {
    struct stat st;
    if (strcmp(o->trace, "-") == 0) return 0;
    if (stat(o->trace, &st) == 0 && !S_ISREG(st.st_mode)) {
        fprintf(stderr,
                "stallsim %s: --trace %s: not a regular file (the trace replaces it by a "
                "rename); name a file\n",
                cmd, o->trace);
        return EXIT_INPUT;
    }
    if (same_file(o->trace, o->a.file)) {
        fprintf(stderr, "stallsim %s: --trace %s is the scenario itself; name another file\n", cmd,
                o->trace);
        return EXIT_INPUT;
    }
    for (int k = 0; k < nv; k++) {
        const char *named[2] = {runs[k].scn.host, runs[k].scn.prices_file};
        const char *what[2] = {"the host profile", "the price file"};
        for (int i = 0; i < 2; i++) {
            char path[SCN_PATH * 2 + 2];
            if (!named[i][0] || scenario_host_path(doc, named[i], path, sizeof path)) continue;
            if (same_file(o->trace, path)) {
                fprintf(stderr,
                        "stallsim %s: --trace %s would write over %s, %s this run reads; "
                        "name another file\n",
                        cmd, o->trace, path, what[i]);
                return EXIT_INPUT;
            }
        }
    }
    for (int i = 0; i < o->ntrace_only; i++) {
        int found = 0;
        for (int k = 0; k < nv; k++)
            found |= strcmp(runs[k].scn.variant, o->trace_only[i]) == 0;
        if (!found) {
            fprintf(stderr, "stallsim %s: --trace-variant %s: not a variant this run runs\n", cmd,
                    o->trace_only[i]);
            return EXIT_INPUT;
        }
    }
    /* A sampled run replays hits, item by item for a share of them, with no
     * timeline: its trace would be empty (B5). */
    for (int k = 0; k < nv; k++)
        if (trace_wanted(o, runs[k].scn.variant) && run_sampled(&runs[k].scn, &runs[k].topo)) {
            fprintf(stderr,
                    "stallsim %s: --trace: variant %s is a sampled run (%lld items, more than "
                    "sim.sample_above_items %lld): it replays a share of the items for the hit "
                    "rates and has no timeline to trace; --set sim.sample_above_items=%lld "
                    "simulates it item by item%s\n",
                    cmd, runs[k].scn.variant, (long long)runs[k].scn.dataset.items,
                    (long long)runs[k].scn.sampling.above_items,
                    (long long)runs[k].scn.dataset.items,
                    nv > 1 ? ", or --trace-variant names another variant" : "");
            return EXIT_INPUT;
        }
    /* A server-sampled run's timeline has its sampled servers only, the
     * store's load from repeated reads: no trace of the cluster. */
    for (int k = 0; k < nv; k++)
        if (trace_wanted(o, runs[k].scn.variant) && runs[k].scn.sampling.servers_sampled > 0) {
            fprintf(stderr,
                    "stallsim %s: --trace: variant %s simulates %d of its %lld servers "
                    "(sim.servers): its timeline is the sample's, not the cluster's; --set "
                    "sim.servers=exact traces every server where memory allows%s\n",
                    cmd, runs[k].scn.variant, runs[k].scn.sampling.servers_sampled,
                    (long long)runs[k].scn.server.count,
                    nv > 1 ? ", or --trace-variant names another variant" : "");
            return EXIT_INPUT;
        }
    /* A window past the run would give an empty trace: said instead. */
    int64_t epochs = 0, iters = 0;
    for (int k = 0; k < nv; k++) {
        if (!trace_wanted(o, runs[k].scn.variant)) continue;
        if (runs[k].scn.epochs > epochs) epochs = runs[k].scn.epochs;
        for (int j = 0; j < runs[k].scn.njobs; j++) {
            const job_t *jb = &runs[k].scn.jobs[j];
            int64_t m = jb->gpus * jb->batch_per_gpu, n = (runs[k].scn.dataset.items + m - 1) / m;
            if (n > iters) iters = n;
        }
    }
    if (o->trace_epochs[0] > epochs || o->trace_iters[0] > iters) {
        fprintf(stderr,
                "stallsim %s: --trace-%s %lld: the traced variants run %lld %s; the trace would "
                "be empty\n",
                cmd, o->trace_epochs[0] > epochs ? "epochs" : "iters",
                (long long)(o->trace_epochs[0] > epochs ? o->trace_epochs[0] : o->trace_iters[0]),
                (long long)(o->trace_epochs[0] > epochs ? epochs : iters),
                o->trace_epochs[0] > epochs ? "epochs" : "iterations an epoch at most");
        return EXIT_INPUT;
    }
    return 0;
}

/* Runs every variant, the traced ones with the trace's observer, and
 * commits the trace file. */
static int run_traced(const char *cmd, const run_opts_t *o, variant_run_t *runs, int nv,
                      run_watch_t *w, const sim_watch_t *watch) {
    atomic_file_t af = {.f = stdout, .cleanup = -1};
    char err[512];
    int stream = strcmp(o->trace, "-") == 0;
    if (!stream && atomic_open(&af, o->trace, err, sizeof err)) {
        fprintf(stderr, "stallsim %s: %s\n", cmd, err);
        return EXIT_RUNTIME;
    }
    if (!stream) watchdog_tmp(af.tmp);
    trace_window_t win = {o->trace_epochs[0], o->trace_epochs[1], o->trace_iters[0],
                          o->trace_iters[1]};
    trace_t *t = trace_open(af.f, &win, o->a.file);
    int rc = t ? 0 : EXIT_RUNTIME;
    w->trace_f = af.f, w->trace_name = stream ? "-" : o->trace;
    for (int k = 0; k < nv && !rc; k++) {
        /* Once the trace failed, the other variants run untraced. */
        int traced = !w->trace_failed && trace_wanted(o, runs[k].scn.variant);
        const sim_observer_t *obs = traced ? trace_variant(t, &runs[k]) : NULL;
        if (traced && !obs) rc = EXIT_RUNTIME;
        w->k = k, w->variant = runs[k].scn.variant;
        if (!rc) rc = run_execute_observed(&runs[k], 1, watch, obs);
        if (traced && trace_variant_end(t) && !rc && !ferror(af.f)) rc = EXIT_RUNTIME;
        if (!rc) trace_watch(w);
    }
    if (rc == EXIT_RUNTIME) fprintf(stderr, "stallsim %s: out of memory\n", cmd);
    if (t && trace_close(t) && !rc) trace_watch(w);
    w->trace_f = NULL;
    if (stream) return rc;
    watchdog_tmp(NULL); /* before the rename or unlink frees it */
    if (rc || w->trace_failed) {
        atomic_abort(&af);
        return rc;
    }
    if (atomic_commit(&af, err, sizeof err)) {
        fprintf(stderr, "stallsim %s: %s; the results are printed\n", cmd, err);
        w->trace_failed = 1;
    }
    return 0;
}

static int cmd_run(int argc, char **argv, int check_only) {
    const command_t *c = check_only ? &check_command : &run_command;
    const char *cmd = c->name;
    double t0 = now_s(); /* --max-seconds counts from here */
    run_opts_t o;
    memset(&o, 0, sizeof o);
    int rc = options_parse(c, argc, argv, &o);
    if (!rc && !o.a.file) rc = options_error(cmd, "missing the scenario file%s", "");
    if (!rc) rc = trace_flags_check(cmd, &o);
    if (!rc) rc = watchdog_start(cmd, t0, o.max_seconds, 0);
    if (rc) {
        assign_list_free(&o.a.sets);
        free(o.trace_target);
        return rc == 1 ? EXIT_OK : rc;
    }
    scenario_doc_t doc;
    rc = scenario_doc_load(&doc, o.a.file);
    int idx[SCN_MAX_VARIANTS + 1], nv = 0;
    if (!rc) rc = run_select(&doc, cmd, o.a.only, o.a.nonly, idx, &nv);
    variant_run_t *runs = rc ? NULL : calloc((size_t)nv, sizeof *runs);
    if (!rc && !runs) rc = EXIT_RUNTIME;
    /* Validate every variant before running any: a typo in the last must not
     * cost a long run. Every bad variant is reported, not just the first (an
     * error they share prints once). */
    diag_drop_repeats(1);
    for (int k = 0; k < nv && rc != EXIT_RUNTIME && runs; k++) {
        int one = run_build(&doc, &o.a.sets, idx[k], !o.a.model_only, &runs[k]);
        if (!one) one = scenario_check_batches(&runs[k].scn, &doc);
        if (!one) scenario_warn_overridden(&doc, &o.a.sets, idx[k]);
        if (!one) readers_warn_idle(&runs[k].scn);
        if (one && rc != EXIT_RUNTIME) rc = one;
    }
    diag_drop_repeats(0);
    if (!rc && o.trace) rc = trace_target_check(cmd, &o, &doc, runs, nv);
    if (!rc && check_only) {
        printf("%s: ok (%d variant%s)\n", o.a.file, nv, nv == 1 ? "" : "s");
    } else if (!rc) {
        run_watch_t w = {.t0 = t0, .max_s = o.max_seconds, .nv = nv};
        sim_watch_t watch = {run_progress, &w};
        if (o.trace) rc = run_traced(cmd, &o, runs, nv, &w, &watch);
        for (int k = 0; k < nv && !rc && !o.trace; k++) {
            w.k = k, w.variant = runs[k].scn.variant;
            rc = run_execute_observed(&runs[k], !o.a.model_only, &watch, NULL);
        }
        /* "What to change", proven by the simulator before it is printed. */
        /* CSV has no advice column: its proofs would be simulations for nothing. */
        if (!rc && o.format != FORMAT_CSV)
            rc = advice_find_all(&doc, &o.a.sets, idx, runs, nv, !o.a.model_only);
        /* The prediction's sensitivity to the host profile's spread (spread.h). */
        for (int k = 0; k < nv && !rc; k++) {
            rc = spread_load(&doc, &runs[k].scn, &runs[k].spread);
            if (!rc) rc = spread_apply(&runs[k].scn, &runs[k].topo, &runs[k].spread);
        }
        if (rc == SIM_STOPPED)
            rc = EXIT_RUNTIME;
        else if (rc == EXIT_RUNTIME && !o.trace)
            fprintf(stderr, "stallsim run: out of memory\n");
        /* --trace - holds stdout: the results go to stderr. */
        int to_err = o.trace && strcmp(o.trace, "-") == 0;
        if (!rc) rc = report_write(to_err ? stderr : stdout, o.format, o.a.file, runs, nv, cmd);
        if (!rc && w.trace_failed) rc = EXIT_RUNTIME; /* the results printed, the trace lost */
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
    assign_list_free(&o.a.sets);
    free(o.trace_target);
    return rc;
}

int check_main(int argc, char **argv) {
    return cmd_run(argc, argv, 1);
}

int run_main(int argc, char **argv) {
    return cmd_run(argc, argv, 0);
}
