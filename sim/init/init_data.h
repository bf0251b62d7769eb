/* init_data: what `stallsim init --data DIR` learns from a training set on
 * disk: how many files it holds and the mean and spread of their sizes,
 * from the real files (stat of each, nothing read).
 *
 *   init_data_t d;
 *   if (init_data_walk("/data/train", &d)) exit 2;   (the reason printed)
 *
 * Regular files count, and links to regular files; names starting with a
 * dot (files and folders) are skipped and counted apart, as are links to
 * folders (not followed: a link may loop). The figures do not depend on the
 * order the folders list their entries in (exact integer sums). */
#ifndef STALLSIM_INIT_DATA_H
#define STALLSIM_INIT_DATA_H

#include <stdint.h>

typedef struct {
    int64_t files;   /* counted */
    int64_t skipped; /* hidden names and links to folders */
    double mean_bytes;
    double cv; /* standard deviation of the sizes over their mean */
} init_data_t;

/* 0, or EXIT_INPUT after printing why ("stallsim init: --data DIR: ..."). */
int init_data_walk(const char *dir, init_data_t *d);

#endif
