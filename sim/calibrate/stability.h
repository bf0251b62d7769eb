/* stability: whether calibrate's figures can be trusted. Two runs minutes
 * apart on a busy host measured decode at 8.9 and 19.6 ms/MB with no word;
 * now each figure's spread over its repetitions is judged, and so is the
 * host's load while calibrate ran: the load average per core, the share of
 * CPU time other processes took, and the share the hypervisor stole.
 *
 *   stability_t s; stability_begin(&s);
 *   ... measure ...
 *   stability_end(&s);                     host load over the run
 *   stability_figure(&s, "decode ms/item", summary);  judges one figure
 *   s.warnings[0..nwarnings) says what is untrustworthy (also on stderr). */
#ifndef STALLSIM_STABILITY_H
#define STALLSIM_STABILITY_H

#include "stats.h"

/* A figure whose (max - min) / median exceeds this is flagged. */
#define STABILITY_MAX_SPREAD 0.25
/* Load average per online core, other processes' share of all CPU time, and
 * stolen time, above which the host was too busy for trustworthy figures. */
#define STABILITY_MAX_LOAD  1.0
#define STABILITY_MAX_OTHER 0.25
#define STABILITY_MAX_STEAL 0.05

enum { STABILITY_MAX_WARNINGS = 16 };

typedef struct {
    /* /proc/stat jiffies and our own CPU seconds at begin */
    unsigned long long total0, idle0, steal0;
    double self0;
    int cores;
    /* over the run */
    double load1;       /* 1-minute load average when calibrate started */
    double other_share; /* CPU time of other processes over all CPU time */
    double steal_share; /* stolen over all CPU time */
    int host_known;     /* /proc/stat could be read */
    int nwarnings;
    char warnings[STABILITY_MAX_WARNINGS][160];
} stability_t;

void stability_begin(stability_t *s);
void stability_end(stability_t *s);
/* Flags the figure when its spread is too wide; returns its spread. */
double stability_figure(stability_t *s, const char *what, stat_summary f);
/* Flags a memory-bandwidth figure measured on total_mb of arrays, under
 * four times the last-level cache (llc_kb; 0 = unknown, not judged): part
 * of it came from the cache. Returns 1 when flagged. */
int stability_beyond_cache(stability_t *s, const char *what, double total_mb, double llc_kb);
/* The rule alone, for tests: the warning for these readings, or 0 when none. */
int stability_judge_host(stability_t *s, double load1, int cores, double other, double steal);

#endif
