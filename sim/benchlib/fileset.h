/* fileset: the JPEG files of an ImageFolder-style tree (DIR/class/x.jpg),
 * found recursively, in a sorted (deterministic) order.
 *
 * Use: file_list fl = {0}; fileset_scan(dir, &fl, err, n); ... fileset_free(&fl);
 * Files named *.jpg / *.jpeg (any case) are listed with their size; other
 * regular files are only counted (non_jpeg), so the caller can report them.
 * Symbolic links to directories are not followed (no loops).
 */
#ifndef STALLSIM_FILESET_H
#define STALLSIM_FILESET_H

#include <stddef.h>

/* Deeper than any real data set; the scan stops there rather than recurse forever. */
#define FILESET_MAX_DEPTH 64

typedef struct {
    char *path;
    long size;
} file_entry;

typedef struct {
    file_entry *v;
    int n, cap;
    int non_jpeg;   /* regular files skipped for their name */
    int unreadable; /* entries that could not be stat'ed or listed */
    int too_deep;   /* folders more than FILESET_MAX_DEPTH levels down, not searched */
} file_list;

int fileset_scan(const char *dir, file_list *out, char *err, size_t errlen);

/* Whether the listed files could be held in memory twice (measure and
 * calibrate hold each file, and may copy it once): 1, or 0 with their bytes
 * and the memory free now in *listed and *avail (for the message). */
int fileset_fits_twice(const file_list *fl, double *listed, double *avail);
void fileset_free(file_list *fl);

/* Keeps a seeded random subset of max files (all when there are no more),
 * in their sorted order; out of memory, the first max. */
void fileset_sample(file_list *fl, int max, unsigned long seed);

/* Removes dir and everything under it (symbolic links are removed, not
 * followed); what cannot be removed is left. */
void fileset_remove_tree(const char *dir);

/* Reads a whole file into *buf, growing it (realloc) when it holds fewer than
 * the file's bytes (*cap); -1 with errno on failure (EINVAL: not a regular
 * file, e.g. a FIFO, device or directory; never blocks on one). */
int fileset_read_into(const char *path, unsigned char **buf, size_t *cap, long *size);

/* Reads a whole file into a malloc'd buffer; -1 with errno on failure, as
 * fileset_read_into. */
int fileset_read(const char *path, unsigned char **buf, long *size);

#endif
