/* sweep_out: the resumable CSV of a sweep and the metadata file beside it.
 *
 * Rows go to OUT.partial, one whole configuration at a time in grid order,
 * synced to disk at most once a second and at the end; the finished file is
 * then renamed to OUT, so OUT never exists half-written. OUT.meta.json
 * records the arguments' hash and "status": "running" or "complete".
 *
 * Rerun with the same arguments (same hash), an existing OUT.partial is
 * scanned: the header and then, configuration by configuration, exactly the
 * expected number of whole lines, each starting with that configuration's
 * "index,values," prefix. Whatever follows the last complete configuration (a
 * torn row, a configuration cut short by kill -9 or power loss) is truncated
 * away and the sweep continues with the next configuration. An OUT.partial
 * from other arguments is never touched: the caller gets EXIT_INPUT.
 *
 * OUT "-" is standard output: the header and the rows as they come, with no
 * partial file, no metadata and nothing to resume. */
#ifndef STALLSIM_SWEEP_OUT_H
#define STALLSIM_SWEEP_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "out.h"

/* Writes configuration c's row prefix ("c,v1,v2,") into buf. */
typedef void (*sweep_prefix_fn)(void *ctx, int64_t c, char *buf, size_t n);

typedef struct {
    const char *path;    /* the final CSV */
    const char *header;  /* the header line, newline included */
    uint64_t args_hash;  /* of everything that decides the rows */
    int64_t first, end;  /* the configurations this run writes: [first, end) */
    const int64_t *rows; /* rows of configuration c at rows[c - first] */
    sweep_prefix_fn prefix;
    void *ctx;
    /* The metadata file's members after "status" and "args_hash", through
     * the writer (out.h) inside the file's object. */
    void (*meta)(void *meta_ctx, out_json_t *j);
    void *meta_ctx;
} sweep_out_spec_t;

typedef struct {
    sweep_out_spec_t spec;
    char *partial, *meta_path;
    int fd;
    int stream; /* OUT is "-" */
    double last_sync;
} sweep_out_t;

/* Opens OUT.partial, fresh or resumed. *resume is the first configuration
 * still to run; *complete is 1 (and nothing is opened) when OUT is already
 * complete from the same arguments. Returns 0, EXIT_INPUT (a partial file of
 * other arguments) or EXIT_RUNTIME, after a message. */
int sweep_out_open(sweep_out_t *o, const sweep_out_spec_t *spec, int64_t *resume, int *complete);
/* Appends the rows of one configuration. Returns 0 or EXIT_RUNTIME. */
int sweep_out_write(sweep_out_t *o, const char *rows, size_t len);
/* Syncs, renames OUT.partial to OUT, marks the metadata complete. */
int sweep_out_finish(sweep_out_t *o);
/* Closes without finishing (the partial file stays for a rerun). */
void sweep_out_close(sweep_out_t *o);

#endif
