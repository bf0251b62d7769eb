/* storage_ssd: a device whose per-request latency depends on the requests in
 * flight at it (an SSD, an NVMe drive, a throttled volume): the latency at
 * queue depths 1, 4, 16 and 32, as `stallsim calibrate` measures them, a
 * bandwidth all transfers share and an optional IOPS cap.
 *
 * Simulator: a request waits for one of queue_depth slots and for the IOPS
 * gate, as in storage_fixed.c (both on storage_queue.h). When the device
 * takes it, k requests are in flight there, itself included (the earlier
 * reads whose completion times, in the ring of the last queue_depth reads,
 * lie after it); it pays lat(k) and then moves its bytes at peak_mb_s on one
 * FIFO channel. lat(k) is piecewise linear in k between the four points and
 * flat beyond them (lat(k) = lat(32) for k > 32).
 *
 * Reads out of time order (storage_t.unordered: PyTorch's synchronous
 * workers) go through calendars, as in storage_fixed.c. A calendar cannot
 * count the reads in flight that the engine walks later (another worker's
 * batch, earlier in time), so there k is the device's synchronous readers
 * (ranks x workers on a server, every server's when shared), at most
 * queue_depth: the count in flight while the loader waits on storage. Each
 * read then pays lat(k).
 *
 * Model: items/s = min(peak / size, read_iops, Q / (lat(K) + size / peak)),
 * Q = queue_depth and K = Q (a storage-bound pool loader holds Q reads in
 * flight), or K = min(Q, synchronous readers). A request's service time is
 * lat(1) + size / peak uncontended, lat(K) + size / peak for synchronous
 * readers. Not the best rate over depths up to Q: the simulator holds Q
 * in flight once storage-bound, whatever the curve (the two agree wherever
 * q / (lat(q) + size / peak) does not fall as q rises). With a flat curve
 * this is the fixed kind, read for read, and exact; with a curve that
 * rises, the first reads of a burst see fewer in flight than the model's K
 * and go faster, so the model is marked approximate (ssd_model_exact).
 *
 * `calibrate` writes peak as the cold rate where the throughput levels off
 * and lat(q) for each measured depth q as the latency with which this
 * device, q reads in flight, moves the cold items/s measured at q
 * (sim/calibrate/storage_bench.c). */
#include <stdlib.h>

#include "diag.h"
#include "kinds.h"
#include "storage.h"
#include "storage_queue.h"

/* The ssd storage kind's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    double latency_qd1_ms; /* per-request latency, 1 request in flight */
    double latency_qd4_ms; /* ... 4 in flight, and so on */
    double latency_qd16_ms;
    double latency_qd32_ms;
    double peak_mb_s; /* the device's bandwidth, all transfers together */
} ssd_opts_t;
SCN_KIND_OPTS_FITS(ssd_opts_t);

static const ssd_opts_t *ssd_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_STORAGE, s->server.storage.kind);
}

enum { NPOINTS = 4 };

static const int depth[NPOINTS] = {1, 4, 16, 32};
static const char *const point_key[NPOINTS] = {
    "server.storage.latency_qd1_ms", "server.storage.latency_qd4_ms",
    "server.storage.latency_qd16_ms", "server.storage.latency_qd32_ms"};

typedef struct {
    double lat[NPOINTS]; /* seconds, at depth[] */
    double lat_sync;     /* unordered: lat at the synchronous readers */
    double wbw;          /* the write rate, bytes/s */
    storage_queue_t q;
    storage_queue_t wq; /* server.storage.write_apart: the writes' own (else unused) */
} ssd_t;

static void curve_s(const scenario_t *s, double lat[NPOINTS]) {
    lat[0] = ssd_opts(s)->latency_qd1_ms / 1e3;
    lat[1] = ssd_opts(s)->latency_qd4_ms / 1e3;
    lat[2] = ssd_opts(s)->latency_qd16_ms / 1e3;
    lat[3] = ssd_opts(s)->latency_qd32_ms / 1e3;
}

/* lat(k): piecewise linear between the points, flat beyond them. */
static double lat_at(const double lat[NPOINTS], int k) {
    if (k <= depth[0]) return lat[0];
    for (int i = 1; i < NPOINTS; i++) {
        if (k == depth[i]) return lat[i];
        if (k < depth[i])
            return lat[i - 1] + (lat[i] - lat[i - 1]) * (double)(k - depth[i - 1]) /
                                    (double)(depth[i] - depth[i - 1]);
    }
    return lat[NPOINTS - 1];
}

static double peak_bw(const scenario_t *s) {
    return ssd_opts(s)->peak_mb_s * 1e6;
}

/* Reads in flight at one device under a storage-bound loader: queue_depth,
 * or the synchronous readers when fewer (PyTorch's workers each wait on one
 * read; storage_object.c counts its connections the same way). */
static int depth_bound(const scenario_t *s) {
    int64_t q = s->server.storage.queue_depth;
    int64_t r = loader_sync_readers(s);
    if (r) {
        if (s->server.storage.shared) r *= s->server.count;
        if (r < q) q = r;
    }
    return (int)(q < 1 ? 1 : q);
}

/* The latency a request pays in the model: lat(1) uncontended, or the
 * synchronous readers' lat(K). */
static double service_lat_s(const scenario_t *s) {
    double lat[NPOINTS];
    curve_s(s, lat);
    return lat_at(lat, scenario_loader(s)->sync_reads ? depth_bound(s) : 1);
}

static int ssd_init(storage_t *d, const scenario_t *s) {
    ssd_t *f = calloc(1, sizeof *f);
    if (!f) return -1;
    d->state = f;
    curve_s(s, f->lat);
    f->lat_sync = lat_at(f->lat, depth_bound(s));
    f->wbw = storage_write_bw(s, peak_bw(s));
    if (s->server.storage.write_apart && storage_queue_init(&f->wq, d, s, f->wbw, f->lat_sync))
        return -1;
    return storage_queue_init(&f->q, d, s, peak_bw(s), f->lat_sync);
}

/* Earlier requests still in flight at time t: the ring from head on is in
 * completion order (one FIFO channel), and its head is done by t (a request
 * takes the slot of the head), so a binary search over the other qd - 1. */
static int in_flight(const storage_queue_t *q, double t) {
    int lo = 1, hi = q->qd; /* the first position after head whose end is past t */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2, at = q->head + mid;
        if (at >= q->qd) at -= q->qd;
        if (q->ring[at] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return q->qd - lo;
}

/* A request moving its bytes in xfer seconds of the channel. */
static double ssd_io(ssd_t *f, storage_queue_t *q, double issue, double xfer, io_acct_t *acct) {
    double start, end;
    if (q->unordered) {
        end = storage_queue_unordered(q, issue, f->lat_sync, xfer, &start);
    } else {
        /* It reaches the device when the gate admits it. */
        double go = storage_queue_admit(q, issue, &start);
        end = storage_queue_transfer(q, go + lat_at(f->lat, 1 + in_flight(q, go)), xfer);
    }
    storage_queue_account(q, acct, start, end, xfer);
    return end;
}

static double ssd_read(storage_t *d, double issue, double bytes, double offset, int client,
                       io_acct_t *acct) {
    (void)client;
    (void)offset; /* its latency does not depend on where the bytes are */
    ssd_t *f = d->state;
    return ssd_io(f, &f->q, issue, bytes / f->q.bw, acct);
}

/* A write takes the read's queue, latency curve and channel, at the write
 * rate (the curve is calibrate's reads: a drive's write latency is left
 * as the read's); or, limited apart, a queue and channel of its own. */
static double ssd_write(storage_t *d, double issue, double bytes, double offset, int client,
                        io_acct_t *acct) {
    (void)client, (void)offset;
    ssd_t *f = d->state;
    if (f->wq.ring) { /* apart: the reads' channel is not busy with it */
        io_acct_t own = {0};
        acct->writes++;
        return ssd_io(f, &f->wq, issue, bytes / f->wbw, &own);
    }
    const double end = ssd_io(f, &f->q, issue, bytes / f->wbw, acct);
    acct->reads--, acct->writes++;
    return end;
}

static void ssd_begin(storage_t *d, double at) {
    ssd_t *f = d->state;
    storage_queue_begin(&f->q, at);
    if (f->wq.ring) storage_queue_begin(&f->wq, at);
}

static void ssd_destroy(storage_t *d) {
    ssd_t *f = d->state;
    if (f) storage_queue_destroy(&f->q), storage_queue_destroy(&f->wq);
    free(d->state);
    d->state = NULL;
}

/* The least of the bandwidth, read_iops and Q / (lat(K) + transfer) (see the
 * header). */
static double ssd_items_s(const scenario_t *s, double bytes, int *latency_bound) {
    double lat[NPOINTS];
    curve_s(s, lat);
    return storage_queue_items_s(s, peak_bw(s), lat_at(lat, depth_bound(s)), bytes, latency_bound);
}

static double ssd_xfer_s(const scenario_t *s, double bytes) {
    return bytes / peak_bw(s);
}

static double ssd_service_s(const scenario_t *s, double bytes) {
    return service_lat_s(s) + ssd_xfer_s(s, bytes);
}

static double ssd_write_chan_s(const scenario_t *s, double bytes) {
    return bytes / storage_write_bw(s, peak_bw(s));
}

static double ssd_write_s(const scenario_t *s, double bytes) {
    return service_lat_s(s) + ssd_write_chan_s(s, bytes);
}

/* A flat curve is the fixed kind, which the model has exactly. */
static int ssd_model_exact(const scenario_t *s) {
    double lat[NPOINTS];
    curve_s(s, lat);
    for (int i = 1; i < NPOINTS; i++)
        if (lat[i] != lat[0]) return 0;
    return 1;
}

/* The curve is all four points or none: one left at its default among
 * points given would put a kink of the default's making into it. */
static int ssd_check(const scenario_t *s) {
    int given[NPOINTS], n = 0;
    for (int i = 0; i < NPOINTS; i++)
        n += given[i] = s->origin[schema_find(SCOPE_SCENARIO, point_key[i])].file != NULL;
    if (n == 0 || n == NPOINTS) return 0;
    int set = 0;
    while (!given[set])
        set++;
    const src_pos_t at = s->origin[schema_find(SCOPE_SCENARIO, point_key[set])];
    for (int i = 0; i < NPOINTS; i++)
        if (!given[i])
            diag_error(at,
                       "%s: not given, while %s is: an ssd's latency curve needs all four "
                       "points (queue depths 1, 4, 16, 32; `stallsim calibrate` measures them), "
                       "or none (0.1 ms at every depth)",
                       point_key[i], point_key[set]);
    return EXIT_INPUT;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"server.storage.latency_qd1_ms", KT_REAL, "ms", "0.1", 0, 1e6, 0, NULL, KIND_FIELD(ssd_opts_t, latency_qd1_ms), "ssd: per-request latency before the transfer with 1 request in flight at the device (the curve is piecewise linear in the requests in flight between the four depths and flat beyond 32; give all four or none)"},
    {"server.storage.latency_qd4_ms", KT_REAL, "ms", "0.1", 0, 1e6, 0, NULL, KIND_FIELD(ssd_opts_t, latency_qd4_ms), "ssd: per-request latency with 4 requests in flight"},
    {"server.storage.latency_qd16_ms", KT_REAL, "ms", "0.1", 0, 1e6, 0, NULL, KIND_FIELD(ssd_opts_t, latency_qd16_ms), "ssd: per-request latency with 16 requests in flight"},
    {"server.storage.latency_qd32_ms", KT_REAL, "ms", "0.1", 0, 1e6, 0, NULL, KIND_FIELD(ssd_opts_t, latency_qd32_ms), "ssd: per-request latency with 32 or more requests in flight"},
    {"server.storage.peak_mb_s", KT_REAL, "MB/s", "525", 0, SCHEMA_BIG, 1, NULL, KIND_FIELD(ssd_opts_t, peak_mb_s), "ssd: the device's read bandwidth, which transfers take in turn (per server, or for all when shared; `stallsim calibrate` writes the cold rate where its throughput levels off)"},
    STORAGE_KEY_READ_IOPS, /* shared with fixed */
    STORAGE_KEY_QUEUE_DEPTH,
    STORAGE_KEY_WRITE_MB_S, /* shared with fixed and hdd */
    STORAGE_KEY_WRITE_REQUEST_KB,
    STORAGE_KEY_WRITE_APART, /* shared with fixed */
};
/* clang-format on */

const storage_ops_t storage_ssd = {
    .name = "ssd",
    .help = "latency against requests in flight (calibrate's curve), bandwidth and IOPS caps",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .init = ssd_init,
    .read = ssd_read,
    .destroy = ssd_destroy,
    .epoch_begin = ssd_begin,
    .items_s = ssd_items_s,
    .xfer_s = ssd_xfer_s,
    .service_s = ssd_service_s,
    .slots = storage_queue_slots,
    .state_bytes = storage_queue_bytes,
    .check = ssd_check,
    .model_exact = ssd_model_exact,
    .write = ssd_write,
    .write_s = ssd_write_s,
    .write_part_bytes = storage_write_request_bytes,
    .write_parts_together = 1,
    .write_channel_s = ssd_write_chan_s,
};
