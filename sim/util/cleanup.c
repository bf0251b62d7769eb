/* cleanup: see cleanup.h. Everything the handler calls is a system call
 * (async-signal-safe): no malloc, no stdio, no opendir. */
#include "cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { SLOTS = 16, PATH_LEN = 4096, DEPTH = 8, PASSES = 100 };
enum { FREE, CLAIMED, ARMED };

static struct {
    atomic_int state;
    int tree;
    char path[PATH_LEN];
} slots[SLOTS];

static atomic_flag installed = ATOMIC_FLAG_INIT;
static atomic_flag cleaning = ATOMIC_FLAG_INIT;
static const int signals[] = {SIGINT, SIGTERM, SIGHUP};

/* The records getdents64 fills in (linux_dirent64). */
struct raw_dirent {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[];
};

static void remove_at(int dirfd, const char *name, int depth);

/* Removes what the folder open at fd holds (one pass; entries removed while
 * listing may be skipped, so callers repeat until the folder goes). */
static void empty_dir(int fd, int depth) {
    _Alignas(8) char buf[2048];
    if (lseek(fd, 0, SEEK_SET) < 0) return;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) return;
        for (long off = 0; off < n;) {
            struct raw_dirent *d = (struct raw_dirent *)(buf + off);
            off += d->reclen;
            const char *s = d->name;
            if (s[0] == '.' && (s[1] == 0 || (s[1] == '.' && s[2] == 0))) continue;
            remove_at(fd, s, depth);
        }
    }
}

/* Removes name in the folder dirfd: a file or link at once, a folder (at
 * most depth levels deep) with its content. */
static void remove_at(int dirfd, const char *name, int depth) {
    if (unlinkat(dirfd, name, 0) == 0 || errno != EISDIR || depth <= 0) return;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    /* Other threads may still be writing into it: empty it until it goes. */
    for (int pass = 0; pass < PASSES; pass++) {
        empty_dir(fd, depth - 1);
        if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || (errno != ENOTEMPTY && errno != EEXIST))
            break;
    }
    close(fd);
}

static void on_signal(int sig) {
    int saved = errno;
    /* One thread cleans; a second signal meanwhile (in another thread) waits for it to end the
     * process. */
    if (atomic_flag_test_and_set(&cleaning)) {
        errno = saved;
        return;
    }
    for (int i = 0; i < SLOTS; i++)
        if (atomic_load(&slots[i].state) == ARMED) {
            if (slots[i].tree)
                remove_at(AT_FDCWD, slots[i].path, DEPTH);
            else
                unlinkat(AT_FDCWD, slots[i].path, 0);
        }
    static struct sigaction dfl; /* zero: SIG_DFL, no flags, empty mask */
    sigaction(sig, &dfl, NULL);
    raise(sig); /* blocked until this handler returns, then fatal */
    errno = saved;
}

static void install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        sigaddset(&sa.sa_mask, signals[i]);
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction old;
        /* Ignored (nohup, a shell's background job) or someone else's handler: leave it. */
        if (sigaction(signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        sigaction(signals[i], &sa, NULL);
    }
}

int cleanup_add(const char *path, int tree) {
    if (strlen(path) >= PATH_LEN) return -1;
    for (int i = 0; i < SLOTS; i++) {
        int expect = FREE;
        if (!atomic_compare_exchange_strong(&slots[i].state, &expect, CLAIMED)) continue;
        memcpy(slots[i].path, path, strlen(path) + 1);
        slots[i].tree = tree;
        atomic_store(&slots[i].state, ARMED);
        if (!atomic_flag_test_and_set(&installed)) install();
        return i;
    }
    return -1;
}

void cleanup_drop(int id) {
    if (id >= 0 && id < SLOTS) atomic_store(&slots[id].state, FREE);
}
