/* atomic_file: output files that readers see whole or not at all.
 *
 * The data go to a temporary file beside the target (same folder, so the
 * final rename cannot cross file systems), are flushed and fsync'ed, and
 * renamed over the target; the folder is then fsync'ed so the rename
 * survives a crash. On any failure the temporary file is removed, the target
 * is left as it was, and err says what failed (a full disk, a missing or
 * unwritable folder). SIGINT, SIGTERM or SIGHUP removes the temporary file
 * (cleanup.h); a process killed otherwise (kill -9, a crash) leaves at most a
 * stray `TARGET.tmp.XXXXXX`, never a truncated TARGET.
 *
 * A target that is a symbolic link is written through: the file the link
 * leads to is replaced, the link stays a link (as root, `-o /dev/stdout`
 * once turned /dev/stdout into a regular file). A link that leads nowhere,
 * or to a device, FIFO or folder, is refused: a rename cannot write into
 * those. atomic_target() says all this before any work is done.
 *
 * Use:
 *   atomic_file_t af;
 *   if (atomic_open(&af, path, err, sizeof err)) { report err; exit 1; }
 *   fprintf(af.f, ...);                              write through af.f
 *   if (atomic_commit(&af, err, sizeof err)) { report err; exit 1; }
 *   (or atomic_abort(&af) to give up; the target is untouched) */
#ifndef STALLSIM_ATOMIC_FILE_H
#define STALLSIM_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *f;   /* write the content here */
    char *tmp; /* the temporary file's path (readable after fflush(f)) */
    char *path;
    int cleanup; /* its cleanup.h slot: removed on SIGINT/SIGTERM/SIGHUP until committed */
} atomic_file_t;

/* Where an output named path will be written, checked before any work:
 * path itself, or the file a symbolic link at path leads to; its folder must
 * exist and be writable. Refuses a folder, a device, FIFO or socket, and a
 * link that leads nowhere or to one of those. Returns the path to write
 * (malloc'ed), or NULL with the reason in err. */
char *atomic_target(const char *path, char *err, size_t errlen);
/* 1 when path is "-" or a symbolic link to this process's stdout
 * (/dev/stdout, /proc/self/fd/1, a link to the file stdout was opened on): its writer then writes to stdout,
 * as for "-", and what else goes to stdout must not mix with it. */
int atomic_is_stdout(const char *path);
/* Creates the temporary file (beside atomic_target(path)). 0, or -1 with the reason in err. */
int atomic_open(atomic_file_t *af, const char *path, char *err, size_t errlen);
/* Flushes, syncs and renames over the target; frees af either way.
 * 0, or -1 with the reason in err (the temporary file removed). */
int atomic_commit(atomic_file_t *af, char *err, size_t errlen);
/* The same, but only where no file has the target's name: 1 (the reason
 * in err, nothing changed) when one has (`stallsim init` without --force). */
int atomic_commit_new(atomic_file_t *af, char *err, size_t errlen);
/* Removes the temporary file and frees af; the target is untouched. */
void atomic_abort(atomic_file_t *af);
/* Syncs the folder holding path, so a rename into it survives a crash
 * (best effort: some file systems refuse fsync on folders). */
void atomic_sync_dir(const char *path);

#endif
