/* cleanup: temporary files and folders removed when SIGINT, SIGTERM or
 * SIGHUP ends the process.
 *
 * cleanup_add registers a path (a copy is kept) and, the first time, installs
 * a handler for those signals; a signal the process ignores (a background job
 * started by a shell ignores SIGINT) stays ignored. The handler removes every
 * registered path with async-signal-safe system calls only (openat,
 * getdents64, unlinkat: a folder and everything under it, symbolic links not
 * followed), restores the default action and raises the signal again, so the
 * process still ends as the signal says (exit status 128 + N in a shell).
 * Threads that keep writing into a folder while it is removed are raced by
 * retrying until the folder itself is gone.
 *
 * Use: id = cleanup_add(dir, 1); ... remove it as usual; cleanup_drop(id). */
#ifndef STALLSIM_CLEANUP_H
#define STALLSIM_CLEANUP_H

/* Registers path (tree: a folder, removed with its content; else a file).
 * Returns an id for cleanup_drop, or -1 when every slot is taken or the path
 * is too long (then nothing is removed on a signal). */
int cleanup_add(const char *path, int tree);
/* Forgets a registered path (id -1 is ignored). */
void cleanup_drop(int id);

#endif
