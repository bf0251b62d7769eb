/* test_memcheck: sim_memory_bytes against the simulator's real peak memory
 * (so it stays in step with sim.c and the kinds), and the refusal of a
 * scenario no machine can hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "budget.h"
#include "sim.h"
#include "testutil.h"

static const char base[] = "seed: 3\n"
                           "epochs: 3\n"
                           "dataset: {items: 3000000, item_kb: 1}\n"
                           "server: {cpus: 4, gpus: 1, cache_gb: 100}\n"
                           "jobs: [{gpus: 1, batch_per_gpu: 1024, gpu_items_per_s: 1e9}]\n";

#if !defined(__SANITIZE_ADDRESS__)
static long maxrss_bytes(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss * 1024L;
}

/* The run happens in a child: the peak (ru_maxrss) only ever rises, so each
 * policy needs a process of its own to show what it allocated. */
static long child_peak_growth(const scenario_t *s, const topology_t *t) {
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        run_metrics_t m;
        long used = -1;
        if (metrics_alloc(&m, t->ninst, (int)s->epochs) == 0) {
            long before = maxrss_bytes();
            if (sim_run(s, t, &m) == 0) used = maxrss_bytes() - before;
            metrics_free(&m);
        }
        _exit(write(fd[1], &used, sizeof used) == sizeof used ? 0 : 1);
    }
    close(fd[1]);
    long used = -1;
    assert_int_equal(read(fd[0], &used, sizeof used), sizeof used);
    close(fd[0]);
    int status;
    waitpid(pid, &status, 0);
    assert_true(used >= 0);
    return used;
}

#endif

/* sampled > 0: a server-sampled run of that many of 32 servers. */
static void check_policy_servers(const char *cache, int sampled) {
#if defined(__SANITIZE_ADDRESS__)
    (void)cache, (void)sampled;
    skip(); /* ASan's shadow memory and redzones make RSS no measure of the simulator */
#else
    char set[64];
    snprintf(set, sizeof set, "loader.cache=%s", cache);
    const char *one[] = {set, NULL};
    const char *many[] = {set, "server.count=32", "jobs.0.gpus=32", NULL};
    static scenario_t s;
    static topology_t t;
    assert_int_equal(tu_build(base, sampled ? many : one, &s, &t), 0);
    size_t all = sim_memory_bytes(&s, &t);
    s.sampling.servers_sampled = sampled;
    if (sampled) assert_true(sim_memory_bytes(&s, &t) < all / 3); /* 32 caches to 4 */
    size_t est = sim_memory_bytes(&s, &t);
    long used = child_peak_growth(&s, &t);
    printf("%s: estimate %.1f MB, peak grew %.1f MB\n", cache, est / 1e6, used / 1e6);
    /* Never under (the check must not let through what cannot run), and not
     * far over (it must not refuse what can). */
    assert_true((double)used <= 1.05 * (double)est + 2e6);
    /* Over many servers each cache's ring is touched only as far as its
     * share of the reads goes (as in an exact run over many servers). */
    if (!sampled) assert_true((double)used >= 0.8 * (double)est);
#endif
}

static void check_policy(const char *cache) {
    check_policy_servers(cache, 0);
}

/* A server-sampled run holds the caches of its sample only. */
static void test_servers_sampled(void **st) {
    (void)st;
    check_policy_servers("lru", 4);
}

static void test_lru(void **st) {
    (void)st;
    check_policy("lru");
}

static void test_belady(void **st) {
    (void)st;
    check_policy("belady");
}

static void test_refuses_what_cannot_fit(void **st) {
    (void)st;
    const char *sets[] = {"dataset.items=4e9", "server.count=4096", NULL};
    static scenario_t s;
    static topology_t t;
    assert_int_equal(tu_build(base, sets, &s, &t), 0);
    /* 4096 LRU caches of 4e9 items: 8 B meta + a 2^33-entry ring each, ~270 TB. */
    assert_true(sim_memory_bytes(&s, &t) > (size_t)250e12);
    assert_int_equal(sim_memory_check(&s, &t), EXIT_INPUT);
}

static void test_small_fits(void **st) {
    (void)st;
    const char *sets[] = {"dataset.items=1000", NULL};
    static scenario_t s;
    static topology_t t;
    assert_int_equal(tu_build(base, sets, &s, &t), 0);
    assert_true(sim_memory_bytes(&s, &t) < (size_t)1e6);
    assert_int_equal(sim_memory_check(&s, &t), 0);
}

/* A sweep holds one simulation per worker thread: sized to fit once but not
 * twice in what this machine has, it is refused for two threads. */
static void test_threads_multiply(void **st) {
    (void)st;
    static scenario_t s;
    static topology_t t;
    const char *probe[] = {"dataset.items=1e7", NULL};
    assert_int_equal(tu_build(base, probe, &s, &t), 0);
    double per_item = (double)sim_memory_bytes(&s, &t) / 1e7;
    double items = 0.6 * (double)sim_memory_available() / per_item;
    if (items > 4e9) skip(); /* more memory than the largest scenario needs */
    char set[64];
    snprintf(set, sizeof set, "dataset.items=%.0f", items);
    const char *sets[] = {set, NULL};
    assert_int_equal(tu_build(base, sets, &s, &t), 0);
    assert_int_equal(sim_memory_check_n(&s, &t, 1), 0);
    assert_int_equal(sim_memory_check_n(&s, &t, 2), EXIT_INPUT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lru),
        cmocka_unit_test(test_belady),
        cmocka_unit_test(test_servers_sampled),
        cmocka_unit_test(test_refuses_what_cannot_fit),
        cmocka_unit_test(test_small_fits),
        cmocka_unit_test(test_threads_multiply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
