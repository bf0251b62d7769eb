/* profile: see profile.h. */
#include "profile.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "atomic_file.h"
#include "bench.h"
#include "scenario.h"
#include "schema.h"

/* A key's mapping headers are written once: a rank that puts a key of
 * another mapping between two of one would open that mapping again. */
static void check_opened(char (*opened)[SCN_STR], int *n, const char *name, size_t len) {
    for (int i = 0; i < *n; i++)
        if (strlen(opened[i]) == len && strncmp(opened[i], name, len) == 0)
            abort(); /* two keys of one mapping with another's rank between them */
    if (*n < PROFILE_MAX_KEYS) snprintf(opened[(*n)++], SCN_STR, "%.*s", (int)len, name);
}

/* The keys in rank order (ties as given), written as nested YAML under
 * `scenario:`: for each, the mapping headers that differ from the previous
 * key's, then the leaf; each named by the schema row of its scenario_t
 * field (so a renamed key cannot leave profiles behind). */
static void scenario_keys(FILE *f, profile_keys *k) {
    for (int i = 1; i < k->n; i++) /* insertion sort: stable, and n is small */
        for (int j = i; j > 0 && k->v[j - 1].rank > k->v[j].rank; j--) {
            profile_key_t t = k->v[j];
            k->v[j] = k->v[j - 1], k->v[j - 1] = t;
        }
    char opened[PROFILE_MAX_KEYS][SCN_STR];
    char prev[SCN_STR] = "";
    int nopened = 0;
    for (int i = 0; i < k->n; i++) {
        const char *name = k->v[i].key;
        if (schema_find(SCOPE_SCENARIO, name) < 0)
            abort(); /* a key without a row: a programming error the tests catch */
        int depth = 0;
        const char *p = name, *q = prev;
        /* Skip the leading components both keys share. */
        for (;;) {
            const char *dp = strchr(p, '.'), *dq = strchr(q, '.');
            if (!dp || !dq || dp - p != dq - q || strncmp(p, q, (size_t)(dp - p)) != 0) break;
            p = dp + 1, q = dq + 1, depth++;
        }
        for (const char *dot; (dot = strchr(p, '.')); p = dot + 1, depth++) {
            check_opened(opened, &nopened, name, (size_t)(dot - name));
            fprintf(f, "%*s%.*s:\n", 2 * (depth + 1), "", (int)(dot - p), p);
        }
        fprintf(f, "%*s%s: %s\n", 2 * (depth + 1), "", p, k->v[i].value);
        snprintf(prev, SCN_STR, "%s", name);
    }
}

/* measured.host, .stability and .method: calibrate's own, with the lines
 * benchmarks add to method. */
static void measured_head(prof_t *o, const calib_results *r) {
    FILE *f = o->f;
    fprintf(f, "measured:\n  host:\n");
    prof_str(o, 4, "hostname", r->hostname);
    prof_str(o, 4, "cpu_model", r->cpu_model);
    prof_int(o, 4, "online_cores", r->online_cores);
    prof_str(o, 4, "date", r->date);
    prof_str(o, 4, "libjpeg_turbo", r->jpeg_version);
    prof_str(o, 4, "gsl", r->gsl_version);
    prof_str(o, 4, "libyaml", r->yaml_version);
    const stability_t *st = &r->stability;
    fprintf(f, "  stability:\n");
    prof_num(o, 4, "load_avg_1m_at_start", st->load1);
    prof_int(o, 4, "online_cores", st->cores);
    if (st->host_known) {
        prof_num(o, 4, "other_processes_cpu_share", st->other_share);
        prof_num(o, 4, "steal_share", st->steal_share);
    }
    fprintf(f, "    max_spread: %s\n", prof_n(o, STABILITY_MAX_SPREAD));
    fprintf(f, "    warnings: [");
    for (int i = 0; i < st->nwarnings; i++) {
        fputs(i ? ", " : "", f);
        prof_quoted(f, st->warnings[i]);
    }
    fprintf(f, "]\n");
    fprintf(f, "  method:\n");
    prof_str(o, 4, "data", r->data);
    prof_int(o, 4, "seed", (long)r->seed);
    prof_bool(o, 4, "quick", r->quick);
    prof_int(o, 4, "repetitions", r->reps);
    prof_int(o, 4, "threads", r->threads);
    prof_int(o, 4, "files_found", r->files_found);
    prof_int(o, 4, "files_used", r->files_used);
    prof_int(o, 4, "files_bad", r->files_bad);
    prof_int(o, 4, "files_not_jpeg", r->files_non_jpeg);
    prof_num(o, 4, "total_mb", r->total_mb);
    prof_num(o, 4, "mean_kb", r->mean_kb);
    prof_num(o, 4, "min_kb", r->min_kb);
    prof_num(o, 4, "max_kb", r->max_kb);
    prof_num(o, 4, "mean_width_px", r->mean_w);
    prof_num(o, 4, "mean_height_px", r->mean_h);
    for (int i = 0; calib_benches[i]; i++)
        if (calib_benches[i]->method)
            calib_benches[i]->method(calib_result_const(r, calib_benches[i]), o);
    prof_str(o, 4, "figures", "median of the repetitions, with min and max");
    prof_num(o, 4, "wall_s", r->wall_s);
}

int profile_emit(FILE *f, const calib_results *r) {
    prof_t o = {.f = f};
    profile_keys keys;
    fprintf(f, "# stallsim host profile: written by `stallsim calibrate` on %s at %s\n",
            r->hostname, r->date);
    fprintf(f, "profile_version: 1\n");
    fprintf(f, "scenario:\n");
    keys.n = 0;
    for (int i = 0; calib_benches[i]; i++)
        calib_benches[i]->keys(calib_result_const(r, calib_benches[i]), &keys);
    scenario_keys(f, &keys);
    measured_head(&o, r);
    for (int i = 0; calib_benches[i]; i++) {
        fprintf(f, "  %s:\n", calib_benches[i]->section);
        calib_benches[i]->measured(calib_result_const(r, calib_benches[i]), &o);
    }
    return ferror(f) ? -1 : 0;
}

/* libyaml must accept what we wrote before it replaces a good profile. */
static int yaml_parses(const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    yaml_parser_t p;
    yaml_event_t ev;
    int rc = -1, done = 0;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_file(&p, f);
    while (!done) {
        if (!yaml_parser_parse(&p, &ev)) {
            snprintf(err, errlen, "internal error: profile is not valid YAML: %s",
                     p.problem ? p.problem : "?");
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
        if (done) rc = 0;
    }
    yaml_parser_delete(&p);
    fclose(f);
    return rc;
}

int profile_write(const char *path, const calib_results *r, char *err, size_t errlen) {
    if (!path) {
        if (profile_emit(stdout, r) != 0 || fflush(stdout) != 0) {
            snprintf(err, errlen, "writing the profile to stdout: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    atomic_file_t af;
    if (atomic_open(&af, path, err, errlen) != 0) return -1;
    if (profile_emit(af.f, r) != 0 || fflush(af.f) != 0) {
        snprintf(err, errlen, "writing %s: %s (left unchanged)", path, strerror(errno));
        atomic_abort(&af);
        return -1;
    }
    if (yaml_parses(af.tmp, err, errlen) != 0) {
        atomic_abort(&af);
        return -1;
    }
    if (atomic_commit(&af, err, errlen) != 0) return -1;
    return 0;
}
