/* calibrate: see calibrate.h. Owns the command line and the data set (the
 * --data sample or a generated, temporary one), runs every benchmark of the
 * registry (bench.h) on it and hands the results to the profile writer. */
#include "calibrate.h"

#include <errno.h>
#include <gsl/gsl_version.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "atomic_file.h"
#include "bench.h"
#include "cleanup.h"
#include "clock.h"
#include "decode_bench.h"
#include "fileset.h"
#include "jpeg_gen.h"
#include "profile.h"
#include "progress.h"

typedef struct {
    const char *data, *out, *videos;
    int quick, threads, files;
    int seed;
} options;

static const option_t calibrate_options[] = {
    {.name = "--data",
     .type = OPT_STR,
     .arg = "DIR",
     .offset = offsetof(options, data),
     .help = "JPEGs to measure (ImageFolder tree, searched recursively);\n"
             "default: generate a photograph-like set in a temporary folder\n"
             "($TMPDIR, else /var/tmp) and remove it afterwards"},
    {.name = "--videos",
     .type = OPT_STR,
     .arg = "DIR",
     .offset = offsetof(options, videos),
     .help = "videos whose decode and seek to time (*.mp4 *.mkv *.webm *.avi\n"
             "*.mov *.m4v in DIR, the first 8 by name); default: encode\n"
             "test videos from the generated photographs"},
    {.name = "--out",
     .type = OPT_STR,
     .arg = "FILE",
     .offset = offsetof(options, out),
     .help = "write the profile to FILE (atomically); default: stdout"},
    {.name = "--quick",
     .type = OPT_FLAG,
     .offset = offsetof(options, quick),
     .help = "fewer files and items (under 30 s); still 5 repetitions"},
    {.name = "--threads",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(options, threads),
     .min = 1,
     .max = 256,
     .help = "most threads for the CPU augment scaling curve and the\n"
             "memory-bandwidth run (default: the online cores)"},
    {.name = "--files",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(options, files),
     .min = 2,
     .max = 1000000,
     .help = "files to generate, or to sample from --data\n(default 1000, quick 200)"},
    {.name = "--seed",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(options, seed),
     .min = 0,
     .max = 2147483647L,
     .help = "seed of the generated images, orders and crops (default 1)"},
    {0},
};

static const option_t *const calibrate_tables[] = {calibrate_options, NULL};

const command_t calibrate_command = {
    .name = "calibrate",
    .synopsis =
        "[--data DIR] [--videos DIR] [--out FILE] [--quick] [--threads N] [--files N] [--seed N]",
    .about = "Measures this host and writes a host profile (YAML) for scenarios' `host:`.",
    .tables = calibrate_tables,
    .footer = "Progress goes to stderr. Exit: 0 done, 1 runtime failure, 2 bad usage.\n",
};

/* Tries the output location now, so a typo costs seconds, not a whole run. */
static int check_out(const char *out) {
    char err[4400];
    atomic_file_t af;
    if (atomic_open(&af, out, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: --out: %s\n", err);
        return -1;
    }
    atomic_abort(&af);
    return 0;
}

static void host_info(calib_results *r) {
    if (gethostname(r->hostname, sizeof r->hostname - 1) != 0)
        snprintf(r->hostname, sizeof r->hostname, "unknown");
    snprintf(r->cpu_model, sizeof r->cpu_model, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            if (strncmp(line, "model name", 10) == 0 && colon) {
                colon += 1 + (colon[1] == ' ');
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(r->cpu_model, sizeof r->cpu_model, "%s", colon);
                break;
            }
        }
        fclose(f);
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    r->online_cores = n > 0 ? (int)n : 1;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* The header's version: Debian 12's TurboJPEG 2.1 has no runtime query. */
    snprintf(r->jpeg_version, sizeof r->jpeg_version, "%s", STALLSIM_TURBOJPEG_VERSION);
    snprintf(r->gsl_version, sizeof r->gsl_version, "%s", gsl_version);
    snprintf(r->yaml_version, sizeof r->yaml_version, "%s", yaml_get_version_string());
}

/* --out must not be one of the --data files it measured: the profile would
 * replace that image (compared as files: another name for it is caught). */
static int out_is_data(const char *out, const file_list *fl) {
    struct stat os, ds;
    if (!out || stat(out, &os) != 0) return 0;
    for (int i = 0; i < fl->n; i++)
        if (stat(fl->v[i].path, &ds) == 0 && ds.st_dev == os.st_dev && ds.st_ino == os.st_ino) {
            fprintf(stderr,
                    "stallsim calibrate: --out %s would write over %s, one of the --data files; "
                    "name another file\n",
                    out, fl->v[i].path);
            return 1;
        }
    return 0;
}

/* The files calibrate measures: --data's JPEGs (a seeded sample of --files),
 * or a generated set in a temporary folder, removed at the end. */
typedef struct {
    char tmpdir[4096];
    int tmp_cleanup;
    file_list fl;
    jpeg_set set;
} workload;

static void workload_free(workload *w) {
    decode_set_free(&w->set);
    fileset_free(&w->fl);
    if (w->tmpdir[0]) fileset_remove_tree(w->tmpdir);
    cleanup_drop(w->tmp_cleanup);
}

/* --data's files: 0, or the exit code. */
static int scan_data(const options *o, calib_results *r, workload *w, int files) {
    char err[512];
    snprintf(r->data, sizeof r->data, "%s", o->data);
    progress("scanning %s", o->data);
    if (fileset_scan(o->data, &w->fl, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: %s\n", err);
        return 2;
    }
    r->files_found = w->fl.n;
    if (out_is_data(o->out, &w->fl)) return 2;
    if (w->fl.non_jpeg) progress("ignoring %d files not named *.jpg/*.jpeg", w->fl.non_jpeg);
    if (w->fl.unreadable) progress("could not list %d entries", w->fl.unreadable);
    if (w->fl.too_deep)
        progress("did not search %d folder(s) more than %d levels down", w->fl.too_deep,
                 FILESET_MAX_DEPTH);
    if (w->fl.n > files) progress("sampling %d of %d files (--files)", files, w->fl.n);
    fileset_sample(&w->fl, files, (unsigned long)o->seed);
    return 0;
}

/* A generated set: 0, or the exit code. */
static int generate_data(const options *o, calib_results *r, workload *w, int files) {
    char err[512];
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/var/tmp";
    snprintf(w->tmpdir, sizeof w->tmpdir, "%s/stallsim-calib-XXXXXX", base);
    if (!mkdtemp(w->tmpdir)) {
        fprintf(stderr, "stallsim calibrate: cannot create a temporary folder in %s: %s\n", base,
                strerror(errno));
        w->tmpdir[0] = '\0';
        return 1;
    }
    /* Ctrl-C or SIGTERM must not leave the generated set behind. */
    w->tmp_cleanup = cleanup_add(w->tmpdir, 1);
    snprintf(r->data, sizeof r->data, "generated: %d photograph-like JPEGs (seed %d) in %s", files,
             o->seed, w->tmpdir);
    progress("generating %d JPEGs in %s", files, w->tmpdir);
    if (jpeg_gen_dataset(w->tmpdir, files, o->seed, r->online_cores, err, sizeof err) != 0 ||
        fileset_scan(w->tmpdir, &w->fl, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: %s\n", err);
        return 1;
    }
    r->files_found = w->fl.n;
    return 0;
}

/* The sizes and dimensions of the files measured, for measured.method. */
static void describe_set(calib_results *r, const jpeg_set *set) {
    double sw = 0, sh = 0, tot = 0;
    r->min_kb = 1e300;
    for (int i = 0; i < set->n; i++) {
        tot += (double)set->v[i].size;
        sw += set->v[i].w;
        sh += set->v[i].h;
        if (set->v[i].size / 1e3 < r->min_kb) r->min_kb = set->v[i].size / 1e3;
        if (set->v[i].size / 1e3 > r->max_kb) r->max_kb = set->v[i].size / 1e3;
    }
    r->total_mb = tot / 1e6;
    r->mean_kb = tot / set->n / 1e3;
    r->mean_w = sw / set->n;
    r->mean_h = sh / set->n;
    progress("%d files, %.1f MB, mean %.1f KB, mean %.0f x %.0f px", set->n, r->total_mb,
             r->mean_kb, r->mean_w, r->mean_h);
}

/* The files found, in memory and decodable: 0, or the exit code. */
static int load_set(const options *o, calib_results *r, workload *w) {
    char err[512];
    int files = o->files ? o->files : o->quick ? 200 : 1000;
    int rc = o->data ? scan_data(o, r, w, files) : generate_data(o, r, w, files);
    if (rc) return rc;
    r->files_non_jpeg = w->fl.non_jpeg;
    /* Every sampled file is held in memory while it is measured: refuse a
     * sample that would not fit (twice, as measure does), before reading it. */
    double listed, avail;
    if (!fileset_fits_twice(&w->fl, &listed, &avail)) {
        fprintf(stderr,
                "stallsim calibrate: %s: the %d sampled files hold %.1f GB, but only %.1f GB of "
                "memory is free; calibrate holds them in memory: use fewer --files\n",
                o->data ? o->data : "generated set", w->fl.n, listed / 1e9, avail / 1e9);
        return o->data ? 2 : 1;
    }
    progress("checking %d files (read + decode once)", w->fl.n);
    if (decode_load(&w->fl, &w->set, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: %s\n", err);
        return 1;
    }
    r->files_bad = w->set.bad;
    r->files_used = w->set.n;
    if (w->set.bad) progress("%d bad files skipped (listed above)", w->set.bad);
    if (w->set.n < 2) {
        fprintf(stderr, "stallsim calibrate: %s: need at least 2 decodable JPEG files, found %d\n",
                o->data ? o->data : "generated set", w->set.n);
        return o->data ? 2 : 1;
    }
    describe_set(r, &w->set);
    return 0;
}

/* Every benchmark of the registry in turn, then their figures judged. */
static int measure(const options *o, calib_results *r, const jpeg_set *set,
                   const video_files *videos) {
    char err[512];
    calib_ctx c = {.set = set,
                   .videos = videos,
                   .quick = o->quick,
                   .reps = r->reps,
                   .threads = r->threads,
                   .seed = (unsigned long)o->seed};
    int rc = 0;
    for (int i = 0; calib_benches[i] && rc == 0; i++)
        if (calib_benches[i]->run(&c, calib_result(r, calib_benches[i]), err, sizeof err) != 0) {
            fprintf(stderr, "stallsim calibrate: %s\n", err);
            rc = 1;
        }
    calib_ctx_free(&c);
    if (rc) return rc;
    /* Say which figures a busy host or a noisy measurement makes doubtful. */
    for (int i = 0; calib_benches[i]; i++)
        if (calib_benches[i]->judge)
            calib_benches[i]->judge(calib_result(r, calib_benches[i]), &r->stability);
    return 0;
}

static int run(const options *o, calib_results *r, const video_files *videos) {
    char err[4400];
    workload w = {.tmp_cleanup = -1};
    double t_start = clock_now();
    stability_begin(&r->stability);
    r->reps = o->quick ? 5 : 7;
    int rc = load_set(o, r, &w);
    if (rc == 0) rc = measure(o, r, &w.set, videos);
    if (rc == 0) {
        r->wall_s = clock_now() - t_start;
        stability_end(&r->stability);
        if (profile_write(o->out, r, err, sizeof err) != 0) {
            fprintf(stderr, "stallsim calibrate: %s\n", err);
            rc = 1;
        } else if (o->out) {
            progress("wrote %s (%.1f s)", o->out, r->wall_s);
        }
    }
    workload_free(&w);
    return rc;
}

int calibrate_main(int argc, char **argv) {
    options o = {.seed = 1};
    int p = options_parse(&calibrate_command, argc, argv, &o);
    if (p == 1) return 0;
    if (p) return 2;
    struct stat st;
    if (o.data && (stat(o.data, &st) != 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "stallsim calibrate: --data %s: no such directory\n", o.data);
        return 2;
    }
    if (o.out && check_out(o.out) != 0) return 2;
    /* --videos' files now: a typo costs seconds, not a whole run. */
    video_files vf = {0};
    char err[4400];
    if (o.videos && video_files_scan(o.videos, 8, &vf, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: %s\n", err);
        return 2;
    }
    calib_results *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "stallsim calibrate: out of memory\n");
        video_files_free(&vf);
        return 1;
    }
    host_info(r);
    r->seed = o.seed;
    r->quick = o.quick;
    r->threads = o.threads ? o.threads : r->online_cores;
    int rc = run(&o, r, o.videos ? &vf : NULL);
    video_files_free(&vf);
    free(r);
    return rc;
}
