/* init_data: what `stallsim init --data DIR` learns from a training set on
 * disk: how many files it holds and the mean and spread of their sizes,
 * from the real files (stat of each, nothing read).
 *
 *   init_data_t d;
 *   if (init_data_walk("/data/train", &d)) exit 2;   (the reason printed)
 *
 * The items are the regular files (and links to them) that `measure` and
 * the probe would read: the images (jpg, jpeg, png, ...) where there are
 * any, else the files of the name extension most files have. Files of other
 * kinds (a label CSV, a README, the .tar the images came from) and empty
 * files are skipped, counted, and said on stderr; so are names starting
 * with a dot, links to folders (not followed: a link may loop) and entries
 * that cannot be stat'ed (dangling links, loops). A spread of sizes past
 * the scenario's bound names the largest item. The figures do not depend on
 * the order the folders list their entries in (exact integer sums). */
#ifndef STALLSIM_INIT_DATA_H
#define STALLSIM_INIT_DATA_H

#include <stdint.h>

#define INIT_DATA_MAX_CV 10.0 /* dataset.item_kb_cv's bound */

typedef struct {
    int64_t files;       /* counted: the items */
    int64_t skipped;     /* hidden names and links to folders */
    int64_t unreadable;  /* entries that cannot be stat'ed */
    int64_t empty;       /* empty files */
    int64_t other_files; /* files of other kinds than the items */
    double other_bytes;
    double mean_bytes;
    double cv; /* standard deviation of the sizes over their mean */
} init_data_t;

/* 0, or EXIT_INPUT after printing why ("stallsim init: --data DIR: ..."). */
int init_data_walk(const char *dir, init_data_t *d);

#endif
