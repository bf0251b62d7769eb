/* kinds: the registry, the one list of every cache policy, storage kind,
 * loader kind and prep pipeline. A scenario stores each choice as an index into these lists;
 * the schema takes the choices' names and help from here, so adding a kind
 * is its own file plus one line in kinds.c. */
#ifndef STALLSIM_KINDS_H
#define STALLSIM_KINDS_H

#include "cache.h"
#include "loader.h"
#include "pipeline_kind.h"
#include "storage.h"
#include "tier.h"

/* The name of kind i of a family (NULL past the last), its one-line help,
 * and the scenario rows it owns (n = 0 when none): what the schema takes
 * its choices and rows from (registered into it before main). */
const char *kind_name(kind_family_t family, int i);
const char *kind_help(kind_family_t family, int i);
const key_def_t *kind_keys(kind_family_t family, int i, int *n);

/* The cache policy at index i of `loader.cache`'s choices, or NULL. */
const cache_ops_t *cache_kind(int i);
/* The index of the policy called name, or -1. */
int cache_kind_find(const char *name);
/* The policy of a built scenario. */
const cache_ops_t *scenario_cache(const scenario_t *s);
/* The names of the policies that need the future (needs_future) or not, in
 * the registry's order, joined by ", " and the last by `last` (" or "), into
 * buf: what a message lists, so a new policy is named where it may be used. */
void cache_kinds_list(char *buf, size_t n, int needs_future, const char *last);
/* Policy `kind`'s closed-form hit rate at position u in [0, 1) of epoch e
 * (its epoch's mean where it has no profile along the epoch, hit_at NULL),
 * or over the epoch when u < 0: what the model and the tier's model ask. */
double cache_hit_at(int kind, double f, double p, int k, int e, double u);

/* The checks that need the registry and the topology: every kind's own
 * check, and rules across kinds. 0, or EXIT_INPUT after the errors. Call
 * after topology_build. */
int kinds_check(const scenario_t *s, const topology_t *t);

/* 0 when the scenario key `name` belongs to a storage or loader kind the
 * scenario does not use (its value means nothing there), else 1. */
int kinds_key_used(const scenario_t *s, const char *name);

/* The loader kind of a built scenario. */
const loader_ops_t *scenario_loader(const scenario_t *s);
/* Batches job j's loader may have in flight: the loader kind's rule, else
 * scenario_staged_batches. */
int64_t loader_staged_batches(const scenario_t *s, const job_t *j);
/* Batches of m items (of an epoch of n) a shuffle buffer (loader.shuffle_buffer)
 * makes the output wait for: the pool's one buffer, ceil(B / m); a loader
 * whose workers stream their own shards (shard_lanes per rank) has one in
 * each worker, which moves no time (kinds.c says why): 0, as without one. */
int64_t loader_buffer_slices(const scenario_t *s, const job_t *j, int64_t n, int64_t m);
/* Items a worker's shuffle buffer (loader.shuffle_buffer: B, WebDataset's
 * shuffle(B, initial=100) in the worker) holds at its peak over a stream of
 * n items: it reads two items an output until it holds B, so it peaks at B
 * or, with the stream read out first, at (n + initial) / 2; 0 without. */
double loader_buffer_peak(const scenario_t *s, double n);
/* Reads one server's loader workers have in flight at most when each waits
 * on one read (loader_ops_t.sync_reads); 0 for a loader that issues a
 * batch's reads at once. */
int64_t loader_sync_readers(const scenario_t *s);
/* Of a server's `cores`, those that prepare when at most `busy` items and
 * processes run there at once (0: no bound): prep.scaling's curve and the
 * memory-bandwidth bound slow the cores in use, not the idle ones, so
 * cores past what the loader's window can fill neither add nor cost.
 * `cores` itself where the scenario shapes no curve. */
double loader_cores_in_use(const scenario_t *s, double cores, double busy);
/* The most of a server's cores a stream keeps busy at once: its window's
 * items there (`ahead` batches of `per_server` items) and, where they take
 * the loader's cores (jobs.N.train_cpu_ms, coordinated prep's hand-off),
 * the server's training processes. */
double loader_busy_max(const scenario_t *s, double ahead, double per_server);
/* Training processes (ranks) one server holds: every job's, at most its GPUs. */
int64_t loader_ranks_a_server(const scenario_t *s);
/* A measured oversubscription curve, "PER_CORE:EFFICIENCY, ..." (pytorch's
 * loader.oversub, threads' loader.threads_oversub): points rising from 1:1,
 * each efficiency in (0, 1]. loader_curve_parse returns the points (at most
 * LOADER_CURVE_MAX), 0 for "", or -1 with *bad at the point that is wrong;
 * loader_curve_at the efficiency at x per core: 1 up to 1 x, linear between
 * points, the last point past it (never extrapolated down). */
enum { LOADER_CURVE_MAX = 16 };
/* The mean of v, one of m's [steps] profiles (wait_s, floor_s), over the
 * epoch's items [i0, i1): each slice weighed by how much of it the span
 * covers, so a batch's waits and floors add up to the profile's however
 * the batches fall on the slices (the slice at a batch's middle alone
 * over- or under-counts a jagged profile, a sampled replay's: semfuzz, an
 * epoch 1.2 % under its store's GET/s cap). */
double loader_model_span(const loader_model_t *m, const double *v, double i0, double i1);
int loader_curve_parse(const char *str, double *k, double *e, int *bad);
double loader_curve_at(const char *str, double x);
/* The curve of scenario key `key` checked: 0, or 1 after an error naming
 * the point that is wrong and what rises per core (`per`: "worker
 * processes", "threads"). */
int loader_curve_check(const scenario_t *s, const char *key, const char *str, const char *per);
/* A knob's values worth trying, ascending from `from` (0 or 1) to at most
 * top: from, ..., 2, 3, 4, 6, 8, 12, 16, ...; at most max; how many. */
int loader_knob_ladder(int64_t *v, int max, int64_t from, double top);
/* The storage kind of a built scenario. */
const storage_ops_t *scenario_storage(const scenario_t *s);
/* The index of the storage kind called name, or -1. */
int storage_kind_find(const char *name);
/* The index of a storage kind of the list (its ops table). */
int storage_kind_index(const storage_ops_t *ops);
/* The reader's CPU seconds of one read of `bytes` from s's storage kind
 * (its cpu_s, or server.storage.cpu_us_per_read + cpu_us_per_mb x MB). */
double storage_cpu_s(const scenario_t *s, double bytes);
/* The same for a hit in the DRAM cache: a read() served from the page cache
 * (a policy that holds no memory of the loader's, over a kind that reads
 * files) pays its syscall and copy, server.cache_cpu_us_* (measured warm:
 * less than a read from the device, which adds the block layer's work and
 * the page's allocation); a hit in the loader's own memory (MinIO's:
 * holds_memory), or of an object store's, pays none. */
double storage_hit_cpu_s(const scenario_t *s, double bytes);
/* The same for a remote hit under partitioned caching: the request and the
 * TCP receive on the reader that asked (server.network.cpu_us_*; the
 * owner's send is not charged); 0 without partitioned caching. */
double remote_hit_cpu_s(const scenario_t *s, double bytes);
/* 1 when a read costs the reader CPU anywhere (storage, tier, a remote
 * hit): the engine
 * and the model skip the charge when 0. */
int storage_cpu_on(const scenario_t *s);

#endif
