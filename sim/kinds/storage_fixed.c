/* storage_fixed: a device or share with a fixed per-request latency, a read
 * bandwidth and a queue depth: a request waits for one of queue_depth slots,
 * pays the latency, then transfers at full bandwidth on one FIFO channel
 * (storage_queue.h).
 * It stands for a local SSD, a RAID array or an NFS share measured by
 * `stallsim calibrate`. */
#include <stdlib.h>

#include "kinds.h"
#include "storage.h"
#include "storage_queue.h"

typedef struct {
    double lat_s, wbw; /* wbw: the write rate, bytes/s */
    storage_queue_t q;
    storage_queue_t wq; /* server.storage.write_apart: the writes' own (else unused) */
} fixed_t;

static int fixed_init(storage_t *d, const scenario_t *s) {
    fixed_t *f = calloc(1, sizeof *f);
    if (!f) return -1;
    d->state = f;
    f->lat_s = s->server.storage.latency_ms / 1e3;
    f->wbw = storage_write_bw(s, s->server.storage.read_mb_s * 1e6);
    if (s->server.storage.write_apart && storage_queue_init(&f->wq, d, s, f->wbw, f->lat_s))
        return -1;
    const int rc = storage_queue_init(&f->q, d, s, s->server.storage.read_mb_s * 1e6, f->lat_s);
    f->q.burst_s = s->server.storage.burst_ms / 1e3;
    return rc;
}

/* A request moving its bytes in xfer seconds of q's channel. */
static double fixed_io(fixed_t *f, storage_queue_t *q, double issue, double xfer, io_acct_t *acct) {
    double start, end;
    if (q->unordered)
        end = storage_queue_unordered(q, issue, f->lat_s, xfer, &start);
    else
        end = storage_queue_transfer(q, storage_queue_admit(q, issue, &start) + f->lat_s, xfer);
    storage_queue_account(q, acct, start, end, xfer);
    return end;
}

static double fixed_read(storage_t *d, double issue, double bytes, double offset, int client,
                         io_acct_t *acct) {
    (void)client;
    (void)offset; /* its latency does not depend on where the bytes are */
    fixed_t *f = d->state;
    return fixed_io(f, &f->q, issue, bytes / f->q.bw, acct);
}

/* A write takes the read's queue, latency and channel, at the write rate;
 * or, limited apart, a queue and channel of its own. */
static double fixed_write(storage_t *d, double issue, double bytes, double offset, int client,
                          io_acct_t *acct) {
    (void)client, (void)offset;
    fixed_t *f = d->state;
    if (f->wq.ring) { /* apart: the reads' channel is not busy with it */
        io_acct_t own = {0};
        acct->writes++;
        return fixed_io(f, &f->wq, issue, bytes / f->wbw, &own);
    }
    const double end = fixed_io(f, &f->q, issue, bytes / f->wbw, acct);
    acct->reads--, acct->writes++;
    return end;
}

static void fixed_begin(storage_t *d, double at) {
    fixed_t *f = d->state;
    storage_queue_begin(&f->q, at);
    if (f->wq.ring) storage_queue_begin(&f->wq, at);
}

static void fixed_destroy(storage_t *d) {
    fixed_t *f = d->state;
    if (f) storage_queue_destroy(&f->q), storage_queue_destroy(&f->wq);
    free(d->state);
    d->state = NULL;
}

static double fixed_items_s(const scenario_t *s, double bytes, int *latency_bound) {
    return storage_queue_items_s(s, s->server.storage.read_mb_s * 1e6,
                                 s->server.storage.latency_ms / 1e3, bytes, latency_bound);
}

static double fixed_xfer_s(const scenario_t *s, double bytes) {
    return bytes / (s->server.storage.read_mb_s * 1e6);
}

/* A read alone waits its transfer less the bucket's time (a full bucket:
 * none of a read no larger than it). */
static double fixed_bucket_s(const scenario_t *s) {
    return s->server.storage.burst_ms / 1e3;
}

static double fixed_service_s(const scenario_t *s, double bytes) {
    const double wait = fixed_xfer_s(s, bytes) - fixed_bucket_s(s);
    return s->server.storage.latency_ms / 1e3 + (wait > 0 ? wait : 0);
}

static double fixed_write_chan_s(const scenario_t *s, double bytes) {
    return bytes / storage_write_bw(s, s->server.storage.read_mb_s * 1e6);
}

static double fixed_write_s(const scenario_t *s, double bytes) {
    return s->server.storage.latency_ms / 1e3 + fixed_write_chan_s(s, bytes);
}

/* clang-format off */
static const key_def_t keys[] = {
    {"server.storage.read_mb_s", KT_REAL, "MB/s", "525", 0, SCHEMA_BIG, 1, NULL, SCN_FIELD(server.storage.read_mb_s), "storage read bandwidth (per server, or for all when shared)"},
    {"server.storage.latency_ms", KT_REAL, "ms", "0.1", 0, 1e6, 0, NULL, SCN_FIELD(server.storage.latency_ms), "per-request storage latency before the transfer"},
    STORAGE_KEY_READ_IOPS, /* shared with ssd */
    STORAGE_KEY_QUEUE_DEPTH,
    STORAGE_KEY_WRITE_MB_S, /* shared with ssd and hdd */
    STORAGE_KEY_WRITE_REQUEST_KB,
    STORAGE_KEY_WRITE_APART, /* shared with ssd */
    {"server.storage.burst_ms", KT_REAL, "ms", "0", 0, 1e6, 0, NULL, SCN_FIELD(server.storage.burst_ms), "the bucket of a rate limit, in ms of read_mb_s: a read may use the rate's time left unused up to this long before it, so a reader that computed a while between reads (a DataLoader worker decoding) reads at once and only the average rate holds; a cgroup's io.max or blkio throttle budgets bytes over time this way (one reader, 10 ms of CPU between cold 114 KB reads under rbps 40 MB/s, ran at the CPU's pace: about 100 ms, its throtl_slice), and a cloud volume's throttle is a bucket too (0 = none: each read waits its transfer on the channel)"},
};
/* clang-format on */

const storage_ops_t storage_fixed = {
    .name = "fixed",
    .help = "fixed per-request latency, read bandwidth and queue depth",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .init = fixed_init,
    .read = fixed_read,
    .destroy = fixed_destroy,
    .epoch_begin = fixed_begin,
    .items_s = fixed_items_s,
    .xfer_s = fixed_xfer_s,
    .service_s = fixed_service_s,
    .bucket_s = fixed_bucket_s,
    .slots = storage_queue_slots,
    .state_bytes = storage_queue_bytes,
    .write = fixed_write,
    .write_s = fixed_write_s,
    .write_part_bytes = storage_write_request_bytes,
    .write_parts_together = 1,
    .write_channel_s = fixed_write_chan_s,
};
