/* stability: see stability.h. */
#include "stability.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

static void warn(stability_t *s, const char *fmt, ...) {
    char buf[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "calibrate: warning: %s\n", buf);
    if (s->nwarnings < STABILITY_MAX_WARNINGS)
        snprintf(s->warnings[s->nwarnings++], sizeof s->warnings[0], "%s", buf);
}

/* All CPUs' jiffies: total, idle (+iowait) and steal. 0 on success. */
static int read_stat(unsigned long long *total, unsigned long long *idle,
                     unsigned long long *steal) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    unsigned long long v[10] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
    fclose(f);
    if (n < 8) return -1;
    /* user nice system idle iowait irq softirq steal [guest guest_nice, inside user] */
    *total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
    *idle = v[3] + v[4];
    *steal = v[7];
    return 0;
}

static double self_cpu_s(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru)) return 0;
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

void stability_begin(stability_t *s) {
    *s = (stability_t){0};
    long c = sysconf(_SC_NPROCESSORS_ONLN);
    s->cores = c > 0 ? (int)c : 1;
    s->host_known = read_stat(&s->total0, &s->idle0, &s->steal0) == 0;
    s->self0 = self_cpu_s();
    /* At the start: later it would count calibrate's own threads. */
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f || fscanf(f, "%lf", &s->load1) != 1) s->load1 = -1;
    if (f) fclose(f);
}

int stability_judge_host(stability_t *s, double load1, int cores, double other, double steal) {
    int bad = 0;
    if (load1 / cores > STABILITY_MAX_LOAD) {
        warn(s, "host busy: load average %.2f on %d cores; rerun on an idle host", load1, cores);
        bad = 1;
    }
    if (other > STABILITY_MAX_OTHER) {
        warn(s, "host busy: other processes took %.0f%% of the CPU time; figures may be slow",
             100 * other);
        bad = 1;
    }
    if (steal > STABILITY_MAX_STEAL) {
        warn(s, "the hypervisor stole %.0f%% of the CPU time; figures may be slow", 100 * steal);
        bad = 1;
    }
    return bad;
}

void stability_end(stability_t *s) {
    unsigned long long total, idle, steal;
    long hz = sysconf(_SC_CLK_TCK);
    if (s->host_known && read_stat(&total, &idle, &steal) == 0 && total > s->total0 && hz > 0) {
        double all = (double)(total - s->total0);
        double busy = all - (double)(idle - s->idle0) - (double)(steal - s->steal0);
        double mine = (self_cpu_s() - s->self0) * (double)hz;
        s->other_share = busy > mine ? (busy - mine) / all : 0;
        s->steal_share = (double)(steal - s->steal0) / all;
    } else {
        s->host_known = 0;
    }
    stability_judge_host(s, s->load1 > 0 ? s->load1 : 0, s->cores, s->other_share, s->steal_share);
}

double stability_figure(stability_t *s, const char *what, stat_summary f) {
    if (f.n < 2 || !(f.median > 0)) return 0;
    double spread = (f.max - f.min) / f.median;
    if (spread > STABILITY_MAX_SPREAD)
        warn(s, "%s varied by %.0f%% over %d repetitions (%.4g..%.4g): unstable", what,
             100 * spread, f.n, f.min, f.max);
    return spread;
}

int stability_beyond_cache(stability_t *s, const char *what, double total_mb, double llc_kb) {
    if (!(llc_kb > 0) || total_mb * 1e3 >= 4 * llc_kb) return 0;
    warn(s, "%s ran on %.0f MB of arrays, under 4x the %.0f KB last-level cache: partly cache",
         what, total_mb, llc_kb);
    return 1;
}
