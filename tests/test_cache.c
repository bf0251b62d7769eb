/* Cache policies on access sequences worked out by hand, and the permutation
 * generator. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <gsl/gsl_randist.h>

#include "kinds.h"
#include "schema.h"
#include "perm.h"
#include "rng.h"
#include "scenario.h"

static const uint32_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};

/* Replays `order` (n accesses); returns the number of misses. next[] gives each
 * access's next-use time for belady (NULL: never). */
static int misses(cache_t *c, const uint32_t *order, int n, const uint64_t *next) {
    int m = 0;
    for (int i = 0; i < n; i++)
        m += !c->ops->access(c, order[i], next ? next[i] : CACHE_NEVER);
    return m;
}

static void test_minio_small(void **state) {
    (void)state;
    /* 4 items, room for 2: the first two seen stay forever, so every later
     * epoch misses exactly the other 2, whatever the order. */
    cache_t c;
    assert_int_equal(cache_init(&c, cache_kind(cache_kind_find("minio")), 4, ones, 2), 0);
    const uint32_t e1[] = {2, 0, 3, 1}, e2[] = {1, 3, 0, 2}, e3[] = {0, 1, 2, 3};
    assert_int_equal(misses(&c, e1, 4, NULL), 4);
    assert_int_equal(misses(&c, e2, 4, NULL), 2);
    assert_int_equal(misses(&c, e3, 4, NULL), 2);
    assert_int_equal(c.used, 2);
    cache_destroy(&c);
}

static void test_lru_small(void **state) {
    (void)state;
    cache_t c;
    assert_int_equal(cache_init(&c, cache_kind(cache_kind_find("lru")), 4, ones, 2), 0);
    const uint32_t e1[] = {0, 1, 2, 3};
    /* After e1 the cache holds {3, 2} (3 most recent). Reversed order: 3 and 2
     * hit, then 1 evicts 3 and 0 evicts 2: 2 misses. */
    const uint32_t rev[] = {3, 2, 1, 0};
    assert_int_equal(misses(&c, e1, 4, NULL), 4);
    assert_int_equal(misses(&c, rev, 4, NULL), 2);
    /* Now {0, 1}; the order 2,3,0,1 evicts each item just before its reuse:
     * LRU thrashes, 4 misses. */
    const uint32_t thrash[] = {2, 3, 0, 1};
    assert_int_equal(misses(&c, thrash, 4, NULL), 4);
    cache_destroy(&c);
}

static void test_fifo_differs_from_lru(void **state) {
    (void)state;
    const uint32_t e1[] = {0, 1, 2, 3}, e2[] = {2, 0, 3, 1};
    /* Both hold {2, 3} after e1. LRU: 2 hits (and becomes most recent), 0
     * evicts 3, 3 evicts 2, 1 evicts 0: 3 misses. FIFO: 2 hits but stays
     * oldest, 0 evicts 2, 3 hits, 1 evicts 3: 2 misses. */
    cache_t lru, fifo;
    assert_int_equal(cache_init(&lru, cache_kind(cache_kind_find("lru")), 4, ones, 2), 0);
    assert_int_equal(cache_init(&fifo, cache_kind(cache_kind_find("fifo")), 4, ones, 2), 0);
    misses(&lru, e1, 4, NULL);
    misses(&fifo, e1, 4, NULL);
    assert_int_equal(misses(&lru, e2, 4, NULL), 3);
    assert_int_equal(misses(&fifo, e2, 4, NULL), 2);
    cache_destroy(&lru);
    cache_destroy(&fifo);
}

static void test_belady_small(void **state) {
    (void)state;
    /* Epochs [0,1,2,3] then [3,2,1,0]; access times 0..7. Next uses in e1:
     * 0->7, 1->6, 2->5, 3->4. At 2: evict 0 (furthest, 7); at 3: evict 1 (6).
     * e2: 3 and 2 hit, 1 and 0 miss. */
    cache_t c;
    assert_int_equal(cache_init(&c, cache_kind(cache_kind_find("belady")), 4, ones, 2), 0);
    const uint32_t order[] = {0, 1, 2, 3, 3, 2, 1, 0};
    const uint64_t next[] = {7, 6, 5, 4, CACHE_NEVER, CACHE_NEVER, CACHE_NEVER, CACHE_NEVER};
    assert_int_equal(misses(&c, order, 4, next), 4);
    assert_int_equal(misses(&c, order + 4, 4, next + 4), 2);
    cache_destroy(&c);
}

static void test_bytes_not_items(void **state) {
    (void)state;
    /* Capacity is bytes: a 3-byte item evicts both 1-byte items from a 3-byte
     * LRU; an item larger than the cache is never kept. */
    const uint32_t sizes[] = {1, 1, 3, 4};
    cache_t c;
    assert_int_equal(cache_init(&c, cache_kind(cache_kind_find("lru")), 4, sizes, 3), 0);
    const uint32_t a[] = {0, 1, 2, 0, 3, 3};
    assert_int_equal(misses(&c, a, 6, NULL), 6);
    assert_true(c.used <= 3);
    cache_destroy(&c);
    assert_int_equal(cache_init(&c, cache_kind(cache_kind_find("minio")), 4, sizes, 3), 0);
    const uint32_t b[] = {3, 2, 0, 1, 3, 2, 0, 1};
    /* MinIO: 4 does not fit, 3 bytes of item 2 fill it: later only 2 hits. */
    assert_int_equal(misses(&c, b, 8, NULL), 7);
    cache_destroy(&c);
}

static void test_linux_second_access(void **state) {
    (void)state;
    /* Room for 4 of 8 items. Item 0 read twice goes to the active list; a
     * scan of 7 items read once each then cycles through the inactive list
     * and leaves it: the kernel's scan resistance. LRU loses it. */
    const uint32_t seq[] = {0, 0, 1, 2, 3, 4, 5, 6, 7, 0};
    cache_t c;
    assert_int_equal(cache_init(&c, cache_kind(cache_kind_find("linux")), 8, ones, 4), 0);
    assert_int_equal(misses(&c, seq, 9, NULL), 8);
    assert_int_equal(misses(&c, seq + 9, 1, NULL), 0);
    assert_int_equal(c.used, 4);
    cache_destroy(&c);
    assert_int_equal(cache_init(&c, cache_kind(cache_kind_find("lru")), 8, ones, 4), 0);
    assert_int_equal(misses(&c, seq, 10, NULL), 9);
    cache_destroy(&c);
    /* Read once, a file stays on the inactive list: the same scan evicts it. */
    const uint32_t once[] = {0, 1, 2, 3, 4, 5, 6, 7, 0};
    assert_int_equal(cache_init(&c, cache_kind(cache_kind_find("linux")), 8, ones, 4), 0);
    assert_int_equal(misses(&c, once, 9, NULL), 9);
    cache_destroy(&c);
}

/* The page cache's sequential readers: lane r reads [off, off + len) of
 * entry x; the device's bytes (waited for and read ahead) added to *dev,
 * those waited for returned. */
static uint64_t stream(cache_t *c, uint32_t r, uint32_t x, uint64_t off, uint64_t len,
                       uint64_t *dev) {
    uint64_t ahead, wait = c->ops->stream(c, r, x, off, len, &ahead);
    *dev += wait + ahead;
    return wait;
}

enum { PAGE = 4096, WINDOW = 128 << 10 };

static void test_linux_pages_whole_reads(void **state) {
    (void)state;
    /* A whole-file read reads whole pages, never past the last one (the
     * kernel's readahead stops at the page holding the last byte): 5000
     * bytes are 2 pages; 300 KiB are two windows and 44 KiB. A file read
     * whole uses every page: none is read ahead of its use. */
    const uint32_t size[2] = {5000, 300 << 10};
    const cache_ops_t *lin = cache_kind(cache_kind_find("linux"));
    cache_t c;
    assert_true(lin->pages && lin->stream);
    assert_int_equal(cache_init_pages(&c, lin, 2, size, 1 << 30, PAGE, WINDOW, 1), 0);
    assert_false(lin->access(&c, 0, CACHE_NEVER));
    assert_int_equal(c.fetched, 2 * PAGE);
    assert_false(lin->access(&c, 1, CACHE_NEVER));
    assert_int_equal(c.fetched, 300 << 10);
    assert_int_equal(c.used, 2 * PAGE + (300 << 10));
    assert_true(lin->access(&c, 0, CACHE_NEVER));
    cache_destroy(&c);
}

static void test_linux_one_sequential_reader(void **state) {
    (void)state;
    /* One reader streaming 1,000,000 bytes in reads of 10,000 with room to
     * spare: it waits for its first window alone, every later one having
     * been read ahead as it entered the one before; the device reads the
     * file rounded up to whole pages, 245 x 4096. After its first read the
     * cache already holds the window read ahead: two windows. */
    const uint32_t size[1] = {1000000};
    const cache_ops_t *lin = cache_kind(cache_kind_find("linux"));
    cache_t c;
    assert_int_equal(cache_init_pages(&c, lin, 1, size, 1 << 30, PAGE, WINDOW, 1), 0);
    uint64_t dev = 0, wait = stream(&c, 0, 0, 0, 10000, &dev);
    assert_int_equal(wait, WINDOW);
    assert_int_equal(c.used, 2 * WINDOW);
    for (uint64_t off = 10000; off < 1000000; off += 10000)
        wait += stream(&c, 0, 0, off, 10000, &dev);
    assert_int_equal(wait, WINDOW);
    assert_int_equal(dev, 245 * PAGE);
    assert_int_equal(c.used, 245 * PAGE);
    /* Read again, all of it hits: nothing is read, nothing read ahead. */
    dev = 0;
    for (uint64_t off = 0; off < 1000000; off += 10000)
        wait += stream(&c, 0, 0, off, 10000, &dev);
    assert_int_equal(dev, 0);
    cache_destroy(&c);
}

static void test_linux_window_ramp(void **state) {
    (void)state;
    /* A 1 MiB window, read 128 KiB at a time (the chunks'): the kernel's
     * first window for the read is 256 KiB (get_init_ra_size: 2x a medium
     * read), read with it, its mark on the second 128 KiB; then 512 KiB
     * (get_next_ra_size: 2x) and 1 MiB on, each read as the reader enters
     * the one before. The reader waits for its first read alone. */
    const uint32_t size[1] = {8 << 20};
    const cache_ops_t *lin = cache_kind(cache_kind_find("linux"));
    cache_t c;
    assert_int_equal(cache_init_pages(&c, lin, 1, size, 1 << 30, PAGE, 1 << 20, 1), 0);
    uint64_t dev = 0, k = 128 << 10;
    assert_int_equal(stream(&c, 0, 0, 0, k, &dev), k);
    assert_int_equal(c.used, 2 * k);
    assert_int_equal(stream(&c, 0, 0, k, k, &dev), 0);
    assert_int_equal(c.used, 2 * k + (512 << 10));
    assert_int_equal(stream(&c, 0, 0, 2 * k, k, &dev), 0);
    assert_int_equal(c.used, 2 * k + (512 << 10) + (1 << 20));
    uint64_t wait = 0;
    for (uint64_t off = 3 * k; off < size[0]; off += k)
        wait += stream(&c, 0, 0, off, k, &dev);
    assert_int_equal(wait, 0);
    assert_int_equal(dev, size[0]);
    cache_destroy(&c);
}

/* N readers in lockstep, each streaming its own file of K windows one
 * window a read, over a cache of m windows: the device's bytes, and the
 * bytes the readers waited for in *wait. */
static uint64_t lockstep(int N, int K, int m, uint64_t *wait) {
    uint32_t size[8];
    for (int i = 0; i < N; i++)
        size[i] = (uint32_t)K * WINDOW;
    const cache_ops_t *lin = cache_kind(cache_kind_find("linux"));
    cache_t c;
    assert_int_equal(
        cache_init_pages(&c, lin, (uint32_t)N, size, (uint64_t)m * WINDOW, PAGE, WINDOW, 8), 0);
    uint64_t dev = 0;
    *wait = 0;
    for (int k = 0; k < K; k++)
        for (int r = 0; r < N; r++)
            *wait += stream(&c, (uint32_t)r, (uint32_t)r, (uint64_t)k * WINDOW, WINDOW, &dev);
    cache_destroy(&c);
    return dev;
}

static void test_linux_interleaved_readers(void **state) {
    (void)state;
    /* Each reader enters its next window as the N - 1 others read theirs
     * ahead: a window read ahead waits in the inactive list behind 2 (N -
     * 1) others in the first round (each reader missed and read one ahead)
     * and N - 1 later. With room for 2N - 1 windows none is reclaimed
     * before use: each file is read once, each reader waits for its first
     * window only. With 2N - 2 the first round's windows read ahead are
     * all reclaimed, and every later one in turn: each window but the
     * first is read twice (ahead, then again when the reader gets to it),
     * 2K - 1 windows a file, and the readers wait for every window; but
     * for the last: nothing is read ahead past a file's end, so in the last
     * round each reader after the first finds its window still there (one
     * insert fewer behind it): N - 1 windows fewer. */
    const int N = 4, K = 8;
    uint64_t wait;
    assert_int_equal(lockstep(N, K, 2 * N - 1, &wait), (uint64_t)N * K * WINDOW);
    assert_int_equal(wait, (uint64_t)N * WINDOW);
    assert_int_equal(lockstep(N, K, 2 * N - 2, &wait),
                     (uint64_t)(N * (2 * K - 1) - (N - 1)) * WINDOW);
    assert_int_equal(wait, (uint64_t)(N * K - (N - 1)) * WINDOW);
    /* One reader alone never thrashes in two windows of cache. */
    assert_int_equal(lockstep(1, K, 2, &wait), (uint64_t)K * WINDOW);
}

static void test_registry_matches_schema(void **state) {
    (void)state;
    /* Every registered policy is complete (no NULL a caller would jump
     * through), and loader.cache's choices are the registry's, in order. */
    int n = 0;
    for (const cache_ops_t *c; (c = cache_kind(n)); n++) {
        assert_non_null(c->name), assert_non_null(c->help);
        assert_non_null(c->init), assert_non_null(c->access), assert_non_null(c->destroy);
        assert_non_null(c->hit_epoch), assert_non_null(c->state_bytes);
        assert_string_equal(kind_name(FAMILY_CACHE, n), c->name);
        assert_int_equal(cache_kind_find(c->name), n);
    }
    assert_true(n >= 5);
    assert_null(kind_name(FAMILY_CACHE, n));
    assert_int_equal(cache_kind_find("mru"), -1);
    char why[256];
    scenario_t s;
    const key_def_t *k =
        &schema_keys(SCOPE_SCENARIO, &n)[schema_find(SCOPE_SCENARIO, "loader.cache")];
    assert_int_equal(schema_store(k, &s, "belady", why, sizeof why), 0);
    assert_string_equal(scenario_cache(&s)->name, "belady");
}

static void test_perm_is_permutation(void **state) {
    (void)state;
    const uint32_t sizes[] = {1, 2, 4095, 4096, 4097, 100000};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; t++) {
        uint32_t n = sizes[t];
        perm_gen_t g;
        assert_int_equal(perm_gen_init(&g, n), 0);
        uint32_t *p = malloc(n * sizeof *p);
        char *seen = calloc(n, 1);
        perm_generate(&g, r, p);
        for (uint32_t i = 0; i < n; i++) {
            assert_true(p[i] < n);
            assert_int_equal(seen[p[i]], 0);
            seen[p[i]] = 1;
        }
        free(p), free(seen);
        perm_gen_free(&g);
    }
    gsl_rng_free(r);
}

static void test_perm_uniform(void **state) {
    (void)state;
    /* Where item 0 and item n-1 land, over many permutations spanning several
     * buckets: chi-square over 10 position bins against uniform (9 dof;
     * 27.9 is the 0.999 quantile). */
    const uint32_t n = 10000;
    const int reps = 20000, bins = 10;
    int first[10] = {0}, last[10] = {0};
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 42);
    perm_gen_t g;
    assert_int_equal(perm_gen_init(&g, n), 0);
    assert_true(g.nbuckets > 1);
    uint32_t *p = malloc(n * sizeof *p);
    for (int k = 0; k < reps; k++) {
        perm_generate(&g, r, p);
        for (uint32_t i = 0; i < n; i++) {
            if (p[i] == 0) first[i * bins / n]++;
            if (p[i] == n - 1) last[i * bins / n]++;
        }
    }
    double c1 = 0, c2 = 0, e = (double)reps / bins;
    for (int b = 0; b < bins; b++) {
        c1 += (first[b] - e) * (first[b] - e) / e;
        c2 += (last[b] - e) * (last[b] - e) / e;
    }
    assert_true(c1 < 27.9);
    assert_true(c2 < 27.9);
    free(p);
    perm_gen_free(&g);
    gsl_rng_free(r);
}

/* rng.h's MT19937 against published values: seeded 5489 (init_genrand's
 * default), its first output is 3499211612 and its 10000th 4123659995 (the
 * value C++11's std::mt19937 is required to give). */
static void test_rng_reference(void **state) {
    (void)state;
    gsl_rng *r = gsl_rng_alloc(rng_mt19937);
    gsl_rng_set(r, 5489);
    assert_int_equal(rng_next(r), 3499211612u);
    for (int i = 2; i < 10000; i++)
        rng_next(r);
    assert_int_equal(rng_next(r), 4123659995u);
    gsl_rng_free(r);
}

/* Draw for draw the same as GSL's gsl_rng_mt19937 (what the simulator used
 * before: every output byte-identical), through rng_next and through GSL's
 * own calls (gsl_rng_get, gsl_rng_uniform, a ziggurat normal), from the
 * seeds the simulator gives it (0 is GSL's 4357; 64-bit seeds keep their
 * low 32 bits). */
static void test_rng_matches_gsl(void **state) {
    (void)state;
    const unsigned long seeds[] = {0, 1, 42, 4357, 5489, 0xffffffffUL, 0x123456789abcUL};
    gsl_rng *a = gsl_rng_alloc(rng_mt19937), *b = gsl_rng_alloc(gsl_rng_mt19937);
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        gsl_rng_set(a, seeds[k]);
        gsl_rng_set(b, seeds[k]);
        for (int i = 0; i < 3000; i++) {
            assert_int_equal(rng_next(a), gsl_rng_get(b));
            assert_int_equal(gsl_rng_get(a), gsl_rng_get(b));
            assert_true(gsl_rng_uniform(a) == gsl_rng_uniform(b));
            assert_true(gsl_ran_gaussian_ziggurat(a, 2.5) == gsl_ran_gaussian_ziggurat(b, 2.5));
        }
    }
    gsl_rng_free(a), gsl_rng_free(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minio_small),
        cmocka_unit_test(test_lru_small),
        cmocka_unit_test(test_fifo_differs_from_lru),
        cmocka_unit_test(test_belady_small),
        cmocka_unit_test(test_bytes_not_items),
        cmocka_unit_test(test_linux_second_access),
        cmocka_unit_test(test_linux_pages_whole_reads),
        cmocka_unit_test(test_linux_one_sequential_reader),
        cmocka_unit_test(test_linux_window_ramp),
        cmocka_unit_test(test_linux_interleaved_readers),
        cmocka_unit_test(test_registry_matches_schema),
        cmocka_unit_test(test_perm_is_permutation),
        cmocka_unit_test(test_perm_uniform),
        cmocka_unit_test(test_rng_reference),
        cmocka_unit_test(test_rng_matches_gsl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
