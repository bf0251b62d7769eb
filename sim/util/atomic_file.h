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

/* Creates the temporary file. 0, or -1 with the reason in err. */
int atomic_open(atomic_file_t *af, const char *path, char *err, size_t errlen);
/* Flushes, syncs and renames over the target; frees af either way.
 * 0, or -1 with the reason in err (the temporary file removed). */
int atomic_commit(atomic_file_t *af, char *err, size_t errlen);
/* Removes the temporary file and frees af; the target is untouched. */
void atomic_abort(atomic_file_t *af);
/* Syncs the folder holding path, so a rename into it survives a crash
 * (best effort: some file systems refuse fsync on folders). */
void atomic_sync_dir(const char *path);

#endif
