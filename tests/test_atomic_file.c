/* test_atomic_file: the target is either the old file or the whole new one:
 * commit, abort, a missing folder, a folder as target, a write that fails
 * part way (RLIMIT_FSIZE stands in for a full disk) and SIGTERM before the
 * commit leave no temporary file and no truncated target; SIGTERM also
 * removes a registered folder tree (cleanup.h), and an ignored SIGINT stays
 * ignored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cleanup.h"

static char dir[] = "/tmp/atomic-test-XXXXXX";
static char target[128];

static int setup(void **st) {
    (void)st;
    if (!mkdtemp(dir)) return -1;
    snprintf(target, sizeof target, "%s/out.csv", dir);
    return 0;
}

static int teardown(void **st) {
    (void)st;
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (unlink(p) != 0) rmdir(p);
        }
    if (d) closedir(d);
    return rmdir(dir);
}

static int entries(void) {
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d)))
        n += e->d_name[0] != '.';
    if (d) closedir(d);
    return n;
}

static void slurp(char *buf, size_t n) {
    FILE *f = fopen(target, "r");
    assert_non_null(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = 0;
    fclose(f);
}

static void put(const char *text) {
    char err[256];
    atomic_file_t af;
    assert_int_equal(atomic_open(&af, target, err, sizeof err), 0);
    fputs(text, af.f);
    assert_int_equal(atomic_commit(&af, err, sizeof err), 0);
}

static void test_commit_replaces_whole(void **st) {
    (void)st;
    char buf[64];
    put("old\n");
    put("new\n");
    slurp(buf, sizeof buf);
    assert_string_equal(buf, "new\n");
    assert_int_equal(entries(), 1); /* no temporary left */
    struct stat s;
    assert_int_equal(stat(target, &s), 0);
    assert_true((s.st_mode & 0444) == 0444); /* readable, not mkstemp's 0600 */
}

static void test_abort_leaves_target(void **st) {
    (void)st;
    char err[256], buf[64];
    put("kept\n");
    atomic_file_t af;
    assert_int_equal(atomic_open(&af, target, err, sizeof err), 0);
    fputs("half", af.f);
    atomic_abort(&af);
    slurp(buf, sizeof buf);
    assert_string_equal(buf, "kept\n");
    assert_int_equal(entries(), 1);
}

/* atomic_commit_new places the file only where none has its name: the old
 * file stays whole, and no temporary is left either way. */
static void test_commit_new_never_replaces(void **st) {
    (void)st;
    char err[256], buf[64];
    atomic_file_t af;
    unlink(target);
    assert_int_equal(atomic_open(&af, target, err, sizeof err), 0);
    fputs("first\n", af.f);
    assert_int_equal(atomic_commit_new(&af, err, sizeof err), 0);
    assert_int_equal(atomic_open(&af, target, err, sizeof err), 0);
    fputs("second\n", af.f);
    assert_int_equal(atomic_commit_new(&af, err, sizeof err), 1);
    assert_non_null(strstr(err, "exists"));
    slurp(buf, sizeof buf);
    assert_string_equal(buf, "first\n");
    assert_int_equal(entries(), 1);
}

static void test_bad_paths(void **st) {
    (void)st;
    char err[256];
    atomic_file_t af;
    assert_int_equal(atomic_open(&af, "/nonexistent-dir/out.csv", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent-dir/out.csv"));
    assert_non_null(strstr(err, "No such file or directory"));
    assert_int_equal(atomic_open(&af, dir, err, sizeof err), -1);
    assert_non_null(strstr(err, "is a directory"));
}

/* A file-size limit makes the writes fail part way, as a full disk does. */
static void test_failed_write_keeps_old(void **st) {
    (void)st;
    char buf[64];
    put("before\n");
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {4096, 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        char err[256];
        atomic_file_t af;
        if (atomic_open(&af, target, err, sizeof err)) _exit(3);
        for (int i = 0; i < 10000; i++)
            fprintf(af.f, "row %d,%d\n", i, i * i);
        int rc = atomic_commit(&af, err, sizeof err);
        fprintf(stderr, "commit under a 4 KB file limit: %s\n", rc ? err : "succeeded");
        _exit(rc ? (strstr(err, "File too large") ? 0 : 4) : 5);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    slurp(buf, sizeof buf);
    assert_string_equal(buf, "before\n");
    assert_int_equal(entries(), 1);
}

/* SIGTERM between open and commit: the process ends by the signal, the
 * temporary file and a registered tree (files three levels deep) are gone,
 * the old target is whole. */
static void test_signal_removes_temporary(void **st) {
    (void)st;
    char buf[64], tree[256], keep[256], kept[300];
    put("kept\n");
    snprintf(tree, sizeof tree, "%s/tree", dir);
    snprintf(keep, sizeof keep, "%s/keep", dir);
    snprintf(kept, sizeof kept, "%s/x", keep);
    assert_int_equal(mkdir(keep, 0777), 0);
    FILE *k = fopen(kept, "w");
    assert_non_null(k);
    fclose(k);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        char err[256], p[512];
        atomic_file_t af;
        if (atomic_open(&af, target, err, sizeof err)) _exit(3);
        fputs("half", af.f);
        fflush(af.f);
        snprintf(p, sizeof p, "%s/a", tree);
        if (mkdir(tree, 0777) || mkdir(p, 0777)) _exit(4);
        snprintf(p, sizeof p, "%s/a/b", tree);
        if (mkdir(p, 0777)) _exit(4);
        for (int i = 0; i < 50; i++) {
            snprintf(p, sizeof p, "%s/%s/f%d", tree, i % 2 ? "a" : "a/b", i);
            FILE *f = fopen(p, "w");
            if (!f) _exit(5);
            fclose(f);
        }
        /* A link to a folder outside: the link goes, what it points to stays. */
        snprintf(p, sizeof p, "%s/link", tree);
        if (symlink(keep, p)) _exit(6);
        if (cleanup_add(tree, 1) < 0) _exit(7);
        raise(SIGTERM);
        _exit(8); /* not reached */
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGTERM);
    slurp(buf, sizeof buf);
    assert_string_equal(buf, "kept\n");
    assert_int_equal(entries(), 2); /* out.csv and keep: no temporary, no tree */
    assert_int_equal(access(kept, F_OK), 0);
    assert_int_equal(unlink(kept), 0);
    assert_int_equal(rmdir(keep), 0);
}

/* A signal the process ignores (a shell's background job and SIGINT) stays
 * ignored: the run goes on and commits. */
static void test_ignored_signal_stays_ignored(void **st) {
    (void)st;
    char buf[64];
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGINT, SIG_IGN);
        char err[256];
        atomic_file_t af;
        if (atomic_open(&af, target, err, sizeof err)) _exit(3);
        raise(SIGINT);
        fputs("done\n", af.f);
        _exit(atomic_commit(&af, err, sizeof err) ? 4 : 0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    slurp(buf, sizeof buf);
    assert_string_equal(buf, "done\n");
    assert_int_equal(entries(), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_commit_replaces_whole),
        cmocka_unit_test(test_abort_leaves_target),
        cmocka_unit_test(test_commit_new_never_replaces),
        cmocka_unit_test(test_bad_paths),
        cmocka_unit_test(test_failed_write_keeps_old),
        cmocka_unit_test(test_signal_removes_temporary),
        cmocka_unit_test(test_ignored_signal_stays_ignored),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
