/* calibrate: see calibrate.h. Orchestrates the benchmarks in order (data,
 * storage, decode, prep traffic, augment, memory bandwidth, GPU) and hands
 * the results to the profile writer; owns the command line and the
 * temporary data set. */
#include "calibrate.h"

#include <dirent.h>
#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
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
#include "cleanup.h"
#include "clock.h"
#include "decode_bench.h"
#include "fileset.h"
#include "jpeg_gen.h"
#include "profile.h"
#include "progress.h"

typedef struct {
    const char *data, *out;
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
    .synopsis = "[--data DIR] [--out FILE] [--quick] [--threads N] [--files N] [--seed N]",
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

static void remove_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[4096];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
                remove_tree(path);
            else
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Keeps a seeded random subset of max files, in their sorted order. */
static void sample_files(file_list *fl, int max, unsigned long seed) {
    if (fl->n <= max) return;
    int *idx = malloc(sizeof *idx * (size_t)fl->n), *pick = malloc(sizeof *pick * (size_t)max);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!idx || !pick || !rng) { /* keep the first max: still a valid (if biased) sample */
        for (int i = max; i < fl->n; i++)
            free(fl->v[i].path);
    } else {
        gsl_rng_set(rng, seed);
        for (int i = 0; i < fl->n; i++)
            idx[i] = i;
        gsl_ran_choose(rng, pick, (size_t)max, idx, (size_t)fl->n, sizeof *idx);
        /* Free the paths left out before compacting, which overwrites slots. */
        char *keep = calloc((size_t)fl->n, 1);
        for (int i = 0; keep && i < max; i++)
            keep[pick[i]] = 1;
        for (int i = 0; keep && i < fl->n; i++)
            if (!keep[i]) free(fl->v[i].path);
        for (int i = 0; i < max; i++)
            fl->v[i] = fl->v[pick[i]]; /* pick is ascending, so pick[i] >= i */
        free(keep);
    }
    fl->n = max;
    free(idx);
    free(pick);
    if (rng) gsl_rng_free(rng);
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

static int run(const options *o, calib_results *r) {
    char err[512], tmpdir[4096] = "";
    int tmp_cleanup = -1;
    file_list fl = {0};
    jpeg_set set = {0};
    aug_image *imgs = NULL;
    int nimg = 0, rc = 1;
    double t_start = clock_now();
    stability_begin(&r->stability);
    int files = o->files ? o->files : o->quick ? 200 : 1000;
    r->reps = o->quick ? 5 : 7;

    if (o->data) {
        snprintf(r->data, sizeof r->data, "%s", o->data);
        progress("scanning %s", o->data);
        if (fileset_scan(o->data, &fl, err, sizeof err) != 0) {
            fprintf(stderr, "stallsim calibrate: %s\n", err);
            rc = 2;
            goto done;
        }
        r->files_found = fl.n;
        if (out_is_data(o->out, &fl)) {
            rc = 2;
            goto done;
        }
        if (fl.non_jpeg) progress("ignoring %d files not named *.jpg/*.jpeg", fl.non_jpeg);
        if (fl.unreadable) progress("could not list %d entries", fl.unreadable);
        if (fl.too_deep)
            progress("did not search %d folder(s) more than %d levels down", fl.too_deep,
                     FILESET_MAX_DEPTH);
        if (fl.n > files) progress("sampling %d of %d files (--files)", files, fl.n);
        sample_files(&fl, files, (unsigned long)o->seed);
    } else {
        const char *base = getenv("TMPDIR");
        if (!base || !*base) base = "/var/tmp";
        snprintf(tmpdir, sizeof tmpdir, "%s/stallsim-calib-XXXXXX", base);
        if (!mkdtemp(tmpdir)) {
            fprintf(stderr, "stallsim calibrate: cannot create a temporary folder in %s: %s\n",
                    base, strerror(errno));
            tmpdir[0] = '\0';
            goto done;
        }
        /* Ctrl-C or SIGTERM must not leave the generated set behind. */
        tmp_cleanup = cleanup_add(tmpdir, 1);
        snprintf(r->data, sizeof r->data, "generated: %d photograph-like JPEGs (seed %d) in %s",
                 files, o->seed, tmpdir);
        progress("generating %d JPEGs in %s", files, tmpdir);
        if (jpeg_gen_dataset(tmpdir, files, o->seed, r->online_cores, err, sizeof err) != 0 ||
            fileset_scan(tmpdir, &fl, err, sizeof err) != 0) {
            fprintf(stderr, "stallsim calibrate: %s\n", err);
            goto done;
        }
        r->files_found = fl.n;
    }
    r->files_non_jpeg = fl.non_jpeg;

    /* Every sampled file is held in memory while it is measured: refuse a
     * sample that would not fit (twice, as measure does), before reading it. */
    double listed, avail;
    if (!fileset_fits_twice(&fl, &listed, &avail)) {
        fprintf(stderr,
                "stallsim calibrate: %s: the %d sampled files hold %.1f GB, but only %.1f GB of "
                "memory is free; calibrate holds them in memory: use fewer --files\n",
                o->data ? o->data : "generated set", fl.n, listed / 1e9, avail / 1e9);
        rc = o->data ? 2 : 1;
        goto done;
    }
    progress("checking %d files (read + decode once)", fl.n);
    if (decode_load(&fl, &set, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: %s\n", err);
        goto done;
    }
    r->files_bad = set.bad;
    r->files_used = set.n;
    if (set.bad) progress("%d bad files skipped (listed above)", set.bad);
    if (set.n < 2) {
        fprintf(stderr, "stallsim calibrate: %s: need at least 2 decodable JPEG files, found %d\n",
                o->data ? o->data : "generated set", set.n);
        rc = o->data ? 2 : 1;
        goto done;
    }
    char **paths = malloc(sizeof *paths * (size_t)set.n);
    long *sizes = malloc(sizeof *sizes * (size_t)set.n);
    if (!paths || !sizes) {
        free(paths);
        free(sizes);
        fprintf(stderr, "stallsim calibrate: out of memory\n");
        goto done;
    }
    double sw = 0, sh = 0, tot = 0;
    r->min_kb = 1e300;
    for (int i = 0; i < set.n; i++) {
        paths[i] = (char *)set.v[i].path;
        sizes[i] = set.v[i].size;
        tot += (double)set.v[i].size;
        sw += set.v[i].w;
        sh += set.v[i].h;
        if (set.v[i].size / 1e3 < r->min_kb) r->min_kb = set.v[i].size / 1e3;
        if (set.v[i].size / 1e3 > r->max_kb) r->max_kb = set.v[i].size / 1e3;
    }
    r->total_mb = tot / 1e6;
    r->mean_kb = tot / set.n / 1e3;
    r->mean_w = sw / set.n;
    r->mean_h = sh / set.n;
    progress("%d files, %.1f MB, mean %.1f KB, mean %.0f x %.0f px", set.n, r->total_mb, r->mean_kb,
             r->mean_w, r->mean_h);

    progress("storage: %d passes per queue depth, warm and cold", r->reps);
    int src = storage_bench(paths, sizes, set.n, r->reps, o->seed, &r->storage, err, sizeof err);
    free(paths);
    free(sizes);
    if (src != 0) {
        fprintf(stderr, "stallsim calibrate: storage: %s\n", err);
        goto done;
    }
    if (!r->storage.eviction_ok)
        progress("WARNING: cold reads were not verified cold (see measured.method)");
    progress("storage model: %.1f MB/s, %.3f ms latency (%s fit), best queue depth %d",
             r->storage.read_mb_s, r->storage.latency_ms, r->storage.fit_method,
             r->storage.queue_depth);

    if (decode_bench(&set, r->reps, &r->decode, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: decode: %s\n", err);
        goto done;
    }
    progress("decode model: %.3f ms/MB * size + %.3f ms (free fit r2 %.3f; %s)",
             r->decode.model_ms_per_mb, r->decode.model_ms_per_item, r->decode.fit.r2,
             cost_method_words(r->decode.model_method));

    nimg = set.n < 32 ? set.n : 32;
    imgs = calloc((size_t)nimg, sizeof *imgs);
    if (!imgs) goto done;
    for (int i = 0; i < nimg; i++) {
        unsigned char *px;
        if (decode_rgb(&set.v[i], &px, err, sizeof err) != 0) {
            fprintf(stderr, "stallsim calibrate: %s\n", err);
            goto done;
        }
        imgs[i] = (aug_image){px, set.v[i].w, set.v[i].h};
    }
    /* The traffic the image_train pipeline's buffers move per item, over
     * every sampled file (counted, not timed). */
    if (prep_traffic_count(&set, (unsigned long)o->seed, &r->traffic) != 0) {
        fprintf(stderr, "stallsim calibrate: prep traffic: out of memory\n");
        goto done;
    }
    progress("prep traffic: %.3f MB per item (buffer bytes read + written: JPEG %.3f, RGB %.3f, "
             "crop rows %.3f, output %.3f)",
             r->traffic.mb_per_item, r->traffic.jpeg_read_mb, r->traffic.rgb_write_mb,
             r->traffic.crop_read_mb, r->traffic.out_write_mb);
    int items = o->quick ? 200 : 1000;
    if (augment_bench(imgs, nimg, items, r->threads, r->reps, o->seed, &r->augment, err,
                      sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: %s\n", err);
        goto done;
    }

    /* Arrays far past any last-level cache; quick keeps them smaller. */
    if (membw_bench(r->threads, o->quick ? 64 : 256, r->reps, &r->membw, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: %s\n", err);
        goto done;
    }

    if (eval_bench(imgs, nimg, o->quick ? 40 : 400, r->reps, &r->eval, err, sizeof err) != 0 ||
        audio_bench(o->quick ? 4 : 8, r->reps, (unsigned long)o->seed, &r->audio, err,
                    sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: %s\n", err);
        goto done;
    }

    int g = gpu_bench(imgs, nimg, o->quick ? 64 : 256, r->reps, o->seed, o->quick, &r->gpu);
    if (g == 1)
        fprintf(stderr, "calibrate: no GPU measured: %s; writing a CPU-only profile\n",
                r->gpu.reason);
    else if (g < 0)
        fprintf(stderr, "calibrate: GPU measurement failed: %s; writing a CPU-only profile\n",
                r->gpu.reason);

    if (gpu_decode_bench(&set, o->quick ? 32 : 128, r->reps, &r->nvjpeg) != 0)
        fprintf(stderr,
                "calibrate: GPU decode not measured: %s; a scenario with prep.decode gpu must "
                "give prep.gpu_decode_ms_per_mp and prep.huffman_ms_per_mb itself\n",
                r->nvjpeg.reason);

    r->wall_s = clock_now() - t_start;
    /* Say which figures a busy host or a noisy measurement makes doubtful. */
    stability_t *st = &r->stability;
    for (int q = 0; q < STORAGE_NQD; q++)
        if (r->storage.cold[q].qd == r->storage.queue_depth)
            stability_figure(st, "storage MB/s (cold, best queue depth)", r->storage.cold[q].mb_s);
    stability_figure(st, "decode ms/item", r->decode.ms_per_item);
    stability_figure(st, "augment ms/item (one thread)", r->augment.ms_per_item);
    stability_figure(st, "memory GB/s (all threads)", r->membw.curve[r->membw.npoints - 1].gb_s);
    stability_beyond_cache(st, "memory GB/s", 3 * r->membw.array_mb, r->membw.llc_kb);
    stability_figure(st, "eval transform ms/item", r->eval.ms_per_item);
    stability_figure(st, "audio pipeline ms per audio second", r->audio.ms_per_audio_s);
    if (r->gpu.available) {
        stability_figure(st, "GPU augment ms/item", r->gpu.augment_ms);
        stability_figure(st, "host-to-device GB/s (pinned)", r->gpu.h2d_pinned_gb_s);
        stability_figure(st, "SGEMM TFLOP/s", r->gpu.sgemm_tflops);
    }
    stability_end(st);
    if (profile_write(o->out, r, err, sizeof err) != 0) {
        fprintf(stderr, "stallsim calibrate: %s\n", err);
        goto done;
    }
    if (o->out) progress("wrote %s (%.1f s)", o->out, r->wall_s);
    rc = 0;
done:
    for (int i = 0; imgs && i < nimg; i++)
        free((void *)imgs[i].px);
    free(imgs);
    decode_set_free(&set);
    fileset_free(&fl);
    if (tmpdir[0]) remove_tree(tmpdir);
    cleanup_drop(tmp_cleanup);
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
    calib_results *r = calloc(1, sizeof *r);
    if (!r) {
        fprintf(stderr, "stallsim calibrate: out of memory\n");
        return 1;
    }
    host_info(r);
    r->seed = o.seed;
    r->quick = o.quick;
    r->threads = o.threads ? o.threads : r->online_cores;
    int rc = run(&o, r);
    free(r);
    return rc;
}
