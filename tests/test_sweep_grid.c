/* Sweep grids: value expansion (lists, ranges, canonical text), the order of
 * configurations, column names with units, and the errors of bad --vary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sweep_grid.h"

static const char *const variants[] = {"dali", "coordl"};

static void expect_values(const sweep_axis_t *ax, const char *const *want, int n) {
    assert_int_equal(ax->nvalues, n);
    for (int i = 0; i < n; i++)
        assert_string_equal(ax->values[i], want[i]);
}

static void test_lists_and_ranges(void **state) {
    (void)state;
    sweep_grid_t g;
    sweep_grid_init(&g);
    assert_int_equal(g.size, 1);
    assert_int_equal(sweep_grid_add(&g, "server.cpus=8,16,1e2", variants, 2), 0);
    const char *cpus[] = {"8", "16", "100"}; /* canonical: 1e2 -> 100 */
    expect_values(&g.axes[0], cpus, 3);
    /* 0:1:0.1 has 11 values, computed as a + i*step: 0.3 is 0.3, the end is 1. */
    assert_int_equal(sweep_grid_add(&g, "server.cache_gb=0:1:0.1", variants, 2), 0);
    const char *gb[] = {"0", "0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9", "1"};
    expect_values(&g.axes[1], gb, 11);
    /* Descending range, mixed with list items. */
    assert_int_equal(sweep_grid_add(&g, "jobs.0.count=1,8:2:-3", variants, 2), 0);
    const char *count[] = {"1", "8", "5", "2"};
    expect_values(&g.axes[2], count, 4);
    assert_int_equal(g.size, 3 * 11 * 4);
    sweep_grid_free(&g);
    assert_int_equal(g.naxes, 0);
}

static void test_order(void **state) {
    (void)state;
    sweep_grid_t g;
    sweep_grid_init(&g);
    assert_int_equal(sweep_grid_add(&g, "server.cpus=1,2", variants, 2), 0);
    assert_int_equal(sweep_grid_add(&g, "variant=coordl,dali", variants, 2), 0);
    assert_int_equal(sweep_grid_add(&g, "loader.cache=lru,minio,belady", variants, 2), 0);
    assert_int_equal(g.size, 12);
    /* The first axis changes slowest, the last fastest. */
    int idx[SWEEP_MAX_AXES], seen[2][2][3] = {{{0}}};
    for (int64_t c = 0; c < g.size; c++) {
        sweep_grid_point(&g, c, idx);
        assert_int_equal(idx[0], c / 6);
        assert_int_equal(idx[1], c / 3 % 2);
        assert_int_equal(idx[2], c % 3);
        seen[idx[0]][idx[1]][idx[2]]++;
    }
    for (int i = 0; i < 12; i++)
        assert_int_equal((&seen[0][0][0])[i], 1); /* every point once */
    assert_true(g.axes[1].is_variant);
    assert_string_equal(g.axes[1].column, "variant");
    sweep_grid_free(&g);
}

/* A column is named by the key as typed, units and all left to the key reference. */
static void test_columns(void **state) {
    (void)state;
    static const char *const names[] = {"variant"};
    const char *const axes[] = {"server.cpus=8,16", "jobs.0.count=1,2", "jobs.gpu_items_per_s=5",
                                "server.cache_gb=0:10:5"};
    sweep_grid_t g;
    sweep_grid_init(&g);
    for (int a = 0; a < 4; a++)
        assert_int_equal(sweep_grid_add(&g, axes[a], names, 1), 0);
    assert_string_equal(g.axes[0].column, "server.cpus");
    assert_string_equal(g.axes[1].column, "jobs.0.count");
    assert_string_equal(g.axes[2].column, "jobs.gpu_items_per_s");
    assert_string_equal(g.axes[3].column, "server.cache_gb");
    sweep_grid_free(&g);
}

static void test_errors(void **state) {
    (void)state;
    static const char *const bad[] = {
        "server.cpus",             /* no = */
        "=1,2",                    /* no key */
        "server.cpus=",            /* no values */
        "server.cpus=2,,3",        /* empty item */
        "server.cpus=2,x",         /* not an integer */
        "server.cpus=0",           /* out of bounds */
        "server.cpu=2",            /* unknown key */
        "jobs.99.gpus=1",          /* job index out of range */
        "jobs.0.gpux=1",           /* unknown job key */
        "server.cache_gb=0:1:0",   /* zero step */
        "server.cache_gb=1:0:0.5", /* step away from the end */
        "server.cache_gb=0:1",     /* two parts */
        "server.cache_gb=0:a:1",   /* not a number */
        "server.cpus=1:3:0.5",     /* fractional step for an integer */
        "server.cpus=0:4:1",       /* range reaching out of bounds */
        "server.cache_gb=0:1e9:1", /* more than 10^7 values */
        "loader.cache=lru,mru",    /* not a choice */
        "variant=dali,foo",        /* not a variant */
        "name=a\"b",               /* would break the CSV */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sweep_grid_t g;
        sweep_grid_init(&g);
        assert_int_equal(sweep_grid_add(&g, "server.gpus=1,2", variants, 2), 0);
        assert_int_equal(sweep_grid_add(&g, bad[i], variants, 2), EXIT_INPUT);
        assert_int_equal(g.naxes, 1); /* a failed axis leaves the grid as it was */
        assert_int_equal(g.size, 2);
        sweep_grid_free(&g);
    }
    sweep_grid_t g;
    sweep_grid_init(&g);
    assert_int_equal(sweep_grid_add(&g, "server.cpus=1", variants, 2), 0);
    assert_int_equal(sweep_grid_add(&g, "server.cpus=2", variants, 2), EXIT_INPUT); /* twice */
    assert_int_equal(sweep_grid_add(&g, "variant=dali", NULL, 0), EXIT_INPUT); /* no variants */
    /* A grid past 10^8 configurations is refused, axis by axis. */
    assert_int_equal(sweep_grid_add(&g, "dataset.items=1:100000:1", variants, 2), 0);
    assert_int_equal(sweep_grid_add(&g, "seed=1:100000:1", variants, 2), EXIT_INPUT);
    sweep_grid_free(&g);
}

/* --tie: a tied axis moves with its leader and adds nothing to the grid;
 * unknown, unvaried, self and unequal-length ties are refused. */
static void test_ties(void **state) {
    (void)state;
    sweep_grid_t g;
    sweep_grid_init(&g);
    assert_int_equal(sweep_grid_add(&g, "server.cpus=1,2,3", variants, 2), 0);
    assert_int_equal(sweep_grid_add(&g, "server.cache_gb=10,20", variants, 2), 0);
    assert_int_equal(sweep_grid_add(&g, "server.storage.queue_depth=4,8,16", variants, 2), 0);
    assert_int_equal(sweep_grid_add(&g, "loader.num_workers=0,1,2", variants, 2), 0);
    assert_int_equal(g.size, 54);
    assert_int_equal(sweep_grid_tie(&g, "server.cpus=server.storage.queue_depth"), 0);
    /* A chain ties to the leader. */
    assert_int_equal(sweep_grid_tie(&g, "server.storage.queue_depth=loader.num_workers"), 0);
    assert_int_equal(g.size, 6);
    assert_int_equal(g.axes[3].tied_to, 0);
    int idx[SWEEP_MAX_AXES];
    for (int64_t c = 0; c < g.size; c++) {
        sweep_grid_point(&g, c, idx);
        assert_int_equal(idx[0], c / 2); /* the free axes keep their order */
        assert_int_equal(idx[1], c % 2);
        assert_int_equal(idx[2], idx[0]);
        assert_int_equal(idx[3], idx[0]);
    }
    const char *bad[] = {"server.cpus=server.cache_gb", /* 3 values and 2 */
                         "server.cpus=server.nope",     /* unknown */
                         "server.cpus=server.gpus",     /* not varied */
                         "server.cache_gb=server.cache_gb",
                         "server.cache_gb=loader.num_workers", /* tied already */
                         "server.cache_gb",
                         "=server.cpus"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(sweep_grid_tie(&g, bad[i]), EXIT_INPUT);
        assert_int_equal(g.size, 6); /* a refused tie leaves the grid as it was */
    }
    sweep_grid_free(&g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists_and_ranges),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_ties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
