/* watchdog: --max-seconds for a whole command, on the clock, and a line
 * every 10 s once it has run 30 s (it is alive, and for how long).
 *
 * A thread sleeps until the deadline and then ends the process, exit 1,
 * with nothing written: a single batch can take minutes and loading 10^9
 * items has no batches at all, so no callback inside the work can bound
 * it. A temporary output registered with watchdog_tmp is removed first.
 *
 *   double t0 = watchdog_now();          at the command's start
 *   ... parse the flags ...
 *   if (watchdog_start("compare", t0, max_s, 1)) return EXIT_RUNTIME;
 */
#ifndef STALLSIM_WATCHDOG_H
#define STALLSIM_WATCHDOG_H

/* CLOCK_MONOTONIC, in seconds. */
double watchdog_now(void);

/* The --max-seconds row (a double at `offset_`) of a command whose whole
 * run the watchdog bounds, for its options table (options.h). */
#define WATCHDOG_OPTION(offset_)                                                                   \
    {                                                                                              \
        .name = "--max-seconds", .type = OPT_REAL, .arg = "S", .offset = (offset_), .real_min = 0, \
        .real_min_open = 1, .unit = "seconds",                                                     \
        .help = "stop (exit 1, nothing written) once the command has run S seconds\n"              \
                "(default: no bound; a line every 10 s after 30 s says it is alive)"               \
    }
/* Starts the thread when max_s > 0 or heartbeat: the deadline t0 + max_s
 * (none when max_s <= 0), and with heartbeat "stallsim CMD: still working,
 * N s elapsed" on stderr every 10 s from 30 s on. 0, or EXIT_RUNTIME after
 * a message. */
int watchdog_start(const char *cmd, double t0, double max_s, int heartbeat);
/* The temporary file to remove before the stop (NULL: none). */
void watchdog_tmp(const char *tmp);

#endif
