/* watchdog: see watchdog.h. */
#include "watchdog.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"

static struct {
    double t0, deadline, max_s; /* deadline 0: none */
    int heartbeat;
    char cmd[32];
    const char *volatile tmp; /* a temporary output, while it exists */
} dog;

double watchdog_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void watchdog_tmp(const char *tmp) {
    dog.tmp = tmp;
}

static void sleep_until(double t) {
    struct timespec at = {(time_t)t, (long)((t - floor(t)) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) != 0) {
    }
}

/* write(2) alone: the main thread may hold stdio's locks. */
static void say(const char *msg, int n) {
    if (n > 0 && write(STDERR_FILENO, msg, (size_t)n) < 0) return;
}

static void *watchdog_main(void *arg) {
    (void)arg;
    char msg[320];
    for (double beat = dog.t0 + 30;;) {
        double wake = dog.heartbeat ? beat : dog.deadline;
        if (dog.deadline > 0 && (wake > dog.deadline || !dog.heartbeat)) wake = dog.deadline;
        sleep_until(wake);
        if (dog.deadline > 0 && watchdog_now() >= dog.deadline) break;
        say(msg,
            snprintf(msg, sizeof msg, "stallsim %s: still working, %.0f s elapsed%s\n", dog.cmd,
                     watchdog_now() - dog.t0, dog.max_s > 0 ? "" : " (--max-seconds bounds it)"));
        beat += 10;
    }
    const char *tmp = dog.tmp;
    if (tmp) unlink(tmp);
    say(msg, snprintf(msg, sizeof msg,
                      "stallsim %s: stopped at --max-seconds %g (the whole command: loading, "
                      "checks and the simulation); nothing was written (fewer epochs or items, "
                      "or --model-only, answer sooner)\n",
                      dog.cmd, dog.max_s));
    _exit(EXIT_RUNTIME);
    return NULL;
}

int watchdog_start(const char *cmd, double t0, double max_s, int heartbeat) {
    if (max_s <= 0 && !heartbeat) return 0;
    dog.t0 = t0;
    dog.deadline = max_s > 0 ? t0 + max_s : 0;
    dog.max_s = max_s;
    dog.heartbeat = heartbeat;
    snprintf(dog.cmd, sizeof dog.cmd, "%s", cmd);
    pthread_t th;
    if (pthread_create(&th, NULL, watchdog_main, NULL) != 0) {
        fprintf(stderr, "stallsim %s: cannot start the --max-seconds watchdog\n", cmd);
        return EXIT_RUNTIME;
    }
    pthread_detach(th);
    return 0;
}
