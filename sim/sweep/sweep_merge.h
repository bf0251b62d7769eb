/* sweep_merge: `stallsim sweep --merge -o OUT.csv PART.csv...`, the shards
 * of one sweep (--shard I/N or auto, docs/scaling-out.md) as the one CSV
 * the unsharded sweep writes, byte for byte.
 *
 * Each part must be a finished shard (its PART.meta.json says complete) of
 * the same sweep (the metadata agree but for the command line, the shard
 * and its rows), every shard 1..N must be there once, and their
 * configurations must follow one another; the parts may be named in any
 * order. OUT is written atomically (- for stdout) and nothing is written on
 * any refusal (exit 2, naming the part and what is wrong). */
#ifndef STALLSIM_SWEEP_MERGE_H
#define STALLSIM_SWEEP_MERGE_H

/* argv[0] is "--merge". Returns an exit code. */
int sweep_merge_main(int argc, char **argv);

#endif
