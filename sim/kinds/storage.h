/* storage: what a storage kind is to stallsim. Each kind is one file
 * (storage_<name>.c) exporting one storage_ops_t that owns its schema rows,
 * its simulation of a read, its rates for the model and its state bytes for
 * the memory budget. kinds.c lists the kinds; `server.storage.kind` picks
 * one. The simulator keeps one storage_t per server (one for all when
 * server.storage.shared). */
#ifndef STALLSIM_STORAGE_H
#define STALLSIM_STORAGE_H

#include <stddef.h>

#include "scenario.h"
#include "schema.h"

/* What the reads of one stream cost a device, for its utilisations. */
typedef struct {
    double reads;     /* GETs served (an object's ranged parts each) */
    double heads;     /* HEADs served (object stores, server.storage.head) */
    double retries;   /* requests refused (503 SlowDown) and retried after a back-off */
    double writes;    /* write requests served (a checkpoint's files or PUT parts) */
    double xfer_busy; /* seconds the transfer channel moved this stream's bytes */
    double slot_busy; /* seconds this stream's requests held a request slot */
} io_acct_t;

typedef struct storage storage_t;

typedef struct {
    const char *name;
    const char *help;
    const key_def_t *keys; /* its own scenario rows, spliced in at server.storage */
    int nkeys;
    /* 1: a read is a request of its own (an object store's GET, priced and
     * ranged), not simply a file read: run's output lists the requests an
     * epoch makes, as it does for record shards. */
    int lists_requests;

    /* Simulator: init builds the state from the scenario (0, or -1 without
     * memory); read serves `bytes` at byte `offset` of the device (the
     * engine's layout: item x at x times the mean item size) issued at
     * `issue` and returns when the last byte arrives. Reads come in
     * non-decreasing issue order unless `unordered` is set. `client` is the
     * reading server (0 on a server's own device): a shared device's kind
     * may keep what belongs to each client apart (an object store's
     * connections are the servers' own, not the store's). */
    int (*init)(storage_t *d, const scenario_t *s);
    double (*read)(storage_t *d, double issue, double bytes, double offset, int client,
                   io_acct_t *acct);
    void (*destroy)(storage_t *d);
    /* Optional: a stream reading the device begins an epoch at `at`, so
     * no read of it comes earlier: the calendars of an unordered device
     * keep only their capacity from `at` on (an epoch's first reads took
     * the time before it, and a span's transfers came to more than the
     * span: semfuzz seed 5, a shared device 100.02 % busy). */
    void (*epoch_begin)(storage_t *d, double at);

    /* Model: items/s one device serves for items of mean size `bytes`, and
     * whether request latency (not bandwidth) bounds it. */
    double (*items_s)(const scenario_t *s, double bytes, int *latency_bound);
    /* Optional: items/s one server's own request slots serve at most on a
     * shared device whose slots are its clients' (an object store's
     * connections under a loader that reads ahead, not synchronously);
     * NULL: the device's slots are one pool. */
    double (*client_items_s)(const scenario_t *s, double bytes);
    /* Seconds the transfer channel is busy moving `bytes`, and seconds a
     * request of `bytes` holds a slot when uncontended. */
    double (*xfer_s)(const scenario_t *s, double bytes);
    double (*service_s)(const scenario_t *s, double bytes);
    /* Optional: seconds of transfer a device idle before may move ahead of
     * its rate (a rate limit's bucket, server.storage.burst_ms); NULL: none. */
    double (*bucket_s)(const scenario_t *s);
    /* Request slots of one device (the utilisation of request slots). */
    double (*slots)(const scenario_t *s);

    /* Memory budget: bytes of state of one device. */
    double (*state_bytes)(const scenario_t *s);
    /* Optional: the kind's own rules across keys (diag_error each, then
     * EXIT_INPUT), after the topology is built. */
    int (*check)(const scenario_t *s);
    /* Optional: requests one read of `bytes` makes (ranged GETs; default
     * 1). service_s is then the read's own time, its parts in parallel. */
    double (*requests)(const scenario_t *s, double bytes);
    /* Optional: 0 when the model's rate leaves out an effect the simulator
     * has (the output marks the model's figures `~`); NULL: always exact. */
    int (*model_exact)(const scenario_t *s);
    /* 1 when its request slots are client connections (an object store's:
     * a real reader opens one per slot, hundreds of them), 0 when they are a
     * device's queue (a real reader needs a few threads to keep it full). */
    int slots_are_connections;
    /* 1 when a request's time depends on where it reads (a drive's seeks
     * and rotation): a closed form at the mean positioning time is then
     * approximate for a few scattered requests (the start-up's). */
    int position_dependent;
    /* Optional: HEADs one read makes (a loader that stats a file before
     * reading it), and LIST requests a job makes at the start of epoch e
     * (0-based); NULL: none. */
    double (*heads)(const scenario_t *s);
    double (*lists)(const scenario_t *s, int epoch);
    /* Optional: CPU seconds the reader's own core spends on one read of
     * `bytes` (the kernel's syscall and copy for a file; TCP receive and the
     * HTTP client's work for a GET), a HEAD or ranged part each a request;
     * NULL: server.storage.cpu_us_per_read + cpu_us_per_mb x MB (kinds.h:
     * storage_cpu_s asks the kind). */
    double (*cpu_s)(const scenario_t *s, double bytes);
    /* Optional: one request of `bytes` with nothing before it and in one
     * part (the start-up phase's LIST pages, HEADs and index downloads;
     * bytes 0: a HEAD, or a stat on a file system); NULL: read. */
    double (*request)(storage_t *d, double issue, double bytes, double offset, int client,
                      io_acct_t *acct);
    /* Optional: seconds one such request takes uncontended (the model's);
     * NULL: service_s. */
    double (*request_s)(const scenario_t *s, double bytes);
    /* Optional: requests a second one device admits at most, any kind of
     * request (0: no cap); NULL: server.storage.read_iops. */
    double (*request_cap_s)(const scenario_t *s);
    /* Optional: seconds a channel every request shares is busy moving
     * `bytes` of such requests (0: none: each on a connection of its own);
     * NULL: xfer_s. */
    double (*channel_s)(const scenario_t *s, double bytes);
    /* Optional: the write path (a checkpoint's). write: one write request of
     * `bytes` to the object at `offset`, in issue order, with nothing before
     * it and in one part, as `request`; write_s, write_channel_s and
     * write_cap_s: the model's time alone, channel time and requests a
     * second at most, as request_s, channel_s and request_cap_s; each NULL:
     * the read path's op (a write costs the kind what a read does). */
    double (*write)(storage_t *d, double issue, double bytes, double offset, int client,
                    io_acct_t *acct);
    double (*write_s)(const scenario_t *s, double bytes);
    double (*write_channel_s)(const scenario_t *s, double bytes);
    double (*write_cap_s)(const scenario_t *s);
    /* Optional: the most bytes one write request carries (an object
     * store's multipart part: a larger file is its parts, each a request);
     * NULL or 0: a file is one request. */
    double (*write_part_bytes)(const scenario_t *s);
    /* 1: a file's parts are in flight together, up to queue_depth (a
     * disk's: the kernel's writeback submits a file's requests at once);
     * 0: each writer sends its parts one after another (an object store's
     * multipart upload, a thread a file). */
    int write_parts_together;
} storage_ops_t;

/* Rows that more than one kind lists: one key, owned by each kind that
 * lists it (schema.c splices it once, kinds.c refuses it only under a kind
 * that lists none). A kind that shares one puts the macro in its `keys`. */
/* clang-format off */
#define STORAGE_KEY_READ_IOPS {"server.storage.read_iops", KT_REAL, "IOPS", "0", 0, SCHEMA_BIG, 0, NULL, SCN_FIELD(server.storage.read_iops), "read requests per second the device admits at most (0 = no limit: a cloud volume's or a throttled disk's IOPS cap, one item read = one request)"}
#define STORAGE_KEY_QUEUE_DEPTH {"server.storage.queue_depth", KT_INT, "requests", "32", 1, 1000000, 0, NULL, SCN_FIELD(server.storage.queue_depth), "storage requests in flight at most"}
#define STORAGE_KEY_WRITE_MB_S {"server.storage.write_mb_s", KT_REAL, "MB/s", "0", 0, SCHEMA_BIG, 0, NULL, SCN_FIELD(server.storage.write_mb_s), "write bandwidth of the device (a checkpoint's writes take it; per server, or for all when shared; 0 = the read rate). SSDs' data sheets give sequential writes below reads, and a write limit (a cgroup's io.max wbps, a cloud volume's) can differ from the read one"}
#define STORAGE_KEY_WRITE_REQUEST_KB {"server.storage.write_request_kb", KT_REAL, "KB", "1280", 4, SCHEMA_BIG, 0, NULL, SCN_FIELD(server.storage.write_request_kb), "fixed, ssd: the largest request a checkpoint's writes reach the device in: the kernel splits a file's writeback into requests of the device's max_sectors_kb (1280 KB by default, BLK_DEF_MAX_SECTORS), and the epoch's reads queue between them rather than behind the whole file (an hdd writes a file as one request: its head would seek between the reads and the file's requests, which stallsim leaves out)"}
#define STORAGE_KEY_WRITE_APART {"server.storage.write_apart", KT_BOOL, "", "false", 0, 0, 0, NULL, SCN_FIELD(server.storage.write_apart), "true: a checkpoint's writes have a queue and a channel of their own at write_mb_s, and neither slows the reads (a cgroup's io.max limits rbps and wbps apart: blk-throttle keeps a budget per direction); false: one device, its reads and writes in turn on one channel (a drive, a volume with one throughput cap)"}
/* clang-format on */

/* A disk's write request: server.storage.write_request_kb (storage_ops_t.write_part_bytes). */
static inline double storage_write_request_bytes(const scenario_t *s) {
    return s->server.storage.write_request_kb * 1024;
}

/* Bytes/s a disk writes at: server.storage.write_mb_s, or its read rate. */
static inline double storage_write_bw(const scenario_t *s, double read_bw) {
    return s->server.storage.write_mb_s > 0 ? s->server.storage.write_mb_s * 1e6 : read_bw;
}

struct storage {
    const storage_ops_t *ops;
    /* Set before init: reads may arrive out of time order (a loader whose
     * workers read synchronously); else in non-decreasing issue order. */
    int unordered;
    void *state;
};

/* A read from a server's own device, its io counted for the wt servers it
 * stands for (a server-sampled run: the others' devices are not simulated).
 * Inline: the simulator's hot loop calls it at every miss. */
static inline double storage_read_wt(storage_t *d, double at, double bytes, double off,
                                     io_acct_t *acct, double wt) {
    if (wt == 1) return d->ops->read(d, at, bytes, off, 0, acct);
    io_acct_t one = {0};
    double end = d->ops->read(d, at, bytes, off, 0, &one);
    acct->reads += one.reads * wt, acct->xfer_busy += one.xfer_busy * wt;
    acct->slot_busy += one.slot_busy * wt;
    return end;
}

/* Whether a shared device keeps its slots apart by client: a kind whose
 * slots are its clients' (client_items_s) under a loader that reads ahead
 * (synchronous readers hold one request each, their own already). */
static inline int storage_clients_apart(const scenario_t *s, const storage_ops_t *ops,
                                        int sync_reads) {
    return s->server.storage.shared && ops->client_items_s && !sync_reads;
}

/* The request slots a stream on ns servers can use, over its `devices`:
 * every slot of them, but where the clients' are apart its own servers'
 * only. */
static inline double storage_slots_of(const scenario_t *s, const storage_ops_t *ops, int ns,
                                      double devices, int sync_reads) {
    if (storage_clients_apart(s, ops, sync_reads))
        return ops->slots(s) * ns / (double)s->server.count;
    return ops->slots(s) * devices;
}

#endif
