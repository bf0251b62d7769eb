/* storage_hdd: a hard disk. One head serves one request at a time; what a
 * request costs is where it lies relative to where the head is:
 *
 * - positioning: a seek across the distance d between the head and the
 *   request, then the rotation until its first sector comes round. The seek
 *   curve is Ruemmler and Wilkes' ("An introduction to disk drive
 *   modeling", IEEE Computer 27(3), 1994): the arm accelerates for short
 *   seeks, so time grows as sqrt(d), plus the settle, and coasts on long
 *   ones; here in one piece through a datasheet's two figures, seek(d) =
 *   track + (full - track) x sqrt(d / capacity), d > 0 (the defaults, 1 ms
 *   and 15 ms, give 8.5 ms for a random seek over the whole disk by the
 *   average below: a 7200-rpm drive's usual datasheet figure). The
 *   rotational wait after the seek is uniform over a revolution of 60 / rpm
 *   s (its mean is half a revolution), drawn per request from the seed
 *   (splitmix64 of the seed and a count of draws: same scenario and seed,
 *   same output);
 * - transfer at the media rate, seq_mb_s (one rate for the whole surface:
 *   zoned recording's outer-to-inner fall of about 2:1 is left out; set the
 *   rate of the zone the data lies in);
 * - sequential reads pay no positioning: a read that starts where the last
 *   ended (or inside it: the engine lays item x at x times the mean size,
 *   so items of other sizes overlap or leave gaps) follows on; a read a
 *   short gap further on reads through the gap when that is quicker than a
 *   seek (gap / seq_mb_s). A record shard is one request: one positioning,
 *   then its bytes at the media rate;
 * - NCQ (SATA's Native Command Queuing, 32 tags; SAS's TCQ deeper): the
 *   drive holds up to ncq requests and serves next the one it reaches
 *   soonest, seek and rotation together (shortest positioning time first:
 *   Seltzer, Chen and Ousterhout, "Disk Scheduling Revisited", USENIX
 *   1990; Worthington, Ganger and Patt, "Scheduling Algorithms for Modern
 *   Disk Drives", SIGMETRICS 1994).
 *
 * The dataset lies at the start of the disk, D bytes of the capacity, so
 * random reads seek over f = D / capacity of the stroke (a dataset smaller
 * than the disk seeks shorter: short-stroking).
 *
 * The simulator. `read` must say when this read ends as it is issued, but
 * under SPTF a request issued later may be served first: exact SPTF needs a
 * lookahead the engine does not give. So the head serves the reads in
 * issue order (FIFO: a batch's reads end as the drive's work on them does,
 * which is what the loader waits for), and each service takes the
 * positioning SPTF would pick among the k requests queued: this read, whose
 * real offset and the head's real position give its own time (a sequential
 * read costs nothing and is always picked), and k - 1 others at uniform
 * random places of the dataset with uniform rotational phases, drawn from
 * the seed (the other queued reads of a shuffled epoch are just that). The
 * least of the k is the service's positioning and the head moves there.
 * k = min(ncq, the reads issued and not yet done when this one is issued,
 * itself included): the queue it joins (for a saturated drive, the case
 * where its rate matters, the queue it is served from). A reader whose
 * workers read synchronously (PyTorch's DataLoader: reads out of time
 * order) has the head as a calendar and k = the model's queue below.
 *
 * The model's closed form. With the head at x and k requests at uniform X_i,
 * each with a rotational wait U_i T (uniform, independent of the seek),
 * SPTF's positioning is min_i seek(|X_i - x|) + U_i T, so
 *   E_k = E_x integral of (1 - F(t | x))^k dt,
 *   F(t | x) = (1/T) integral over [t - T, t] of G(s | x) ds,
 *   G(s | x) = P(seek(|X - x|) <= s) = min(r, x) + min(r, 1 - x),
 *   r = ((s - track) / a)^2, a = (full - track) sqrt(f),
 * whose inner integral is a piecewise cubic (exact); the integrals over x
 * and t by Gauss-Legendre between the kinks (1e-6 relative). k = 1 is the
 * arrival-order drive: E_1 = track + (full - track) sqrt(f) x 8/15 + T/2
 * (E sqrt|X - Y| = 8/15 for X, Y uniform on [0, 1]). A request of b bytes
 * then takes E_k + b / seq_mb_s of the head, and the drive serves
 *   reads/s = 1 / (E_k + b / seq_mb_s)
 * with k = min(ncq, the reads the loader keeps in flight on one drive):
 * items/s for loose items, S times it for record shards of S items (b a
 * shard's bytes: one positioning a shard).
 * It averages over a uniform head; the simulator's head follows its picks,
 * and SPTF pulls it toward the middle of the data, where requests lie
 * nearer: the simulator is 0.4-1.2% faster for k = 2..64 (test_storage_hdd).
 * With k > 1 the model is marked approximate (hdd_model_exact).
 *
 * Left out: the drive's cache; zoned recording (above); and concurrent
 * streams interleaved in pieces. A read is served whole, in issue order, so
 * shards read by many streams at once (PyTorch's workers, the pool's
 * open_shards > 1) come one after another where Linux's readahead would
 * interleave them (each piece a seek, unless the drive's segment cache
 * holds the stream): the last stream's first items wait for the others'
 * whole shards, and the simulator is slower than the model's bandwidth
 * (25-50% for tests/data/hdd-imagenet.yaml in 1 GB shards under PyTorch,
 * 1 to 8 workers per GPU).
 *
 * Utilisation and the bottleneck's name: when positioning outweighs a mean
 * read's transfer the drive is seek-bound: the head is its one slot (the
 * slots' share is the head's busy share, seeks included) and the bandwidth
 * share counts the transfers alone, so a saturated drive is the producer's
 * reads-in-flight. Else the bandwidth share is the head's whole busy time
 * (iostat's %util) and the slots' share its positioning alone (hdd_slots):
 * storage-bandwidth. The run layer (binding.h) names it finally: a
 * seek-bound drive whose seeks halved would save most is storage-iops. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "calendar.h"
#include "diag.h"
#include "kinds.h"
#include "storage.h"

/* The hdd storage kind's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    int64_t rpm;
    double seek_full_ms;  /* full-stroke seek */
    double seek_track_ms; /* track-to-track seek with settling */
    double capacity_gb;   /* the bytes a full stroke crosses */
    double seq_mb_s;      /* media transfer rate */
    int64_t ncq;          /* requests the drive queues and reorders */
} hdd_opts_t;
SCN_KIND_OPTS_FITS(hdd_opts_t);

static const hdd_opts_t *hdd_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_STORAGE, s->server.storage.kind);
}

/* The drive's mechanics in seconds and bytes. */
typedef struct {
    double track, full, rev, rate, cap, span; /* span: the dataset's bytes, where reads land */
} geom_t;

typedef struct {
    geom_t g;
    double head, last;  /* where the last service ended and where it began */
    double free;        /* in issue order: when the head is next free */
    double wbw;         /* the write rate, bytes/s */
    uint64_t seed, nrq; /* the draws: the seed and a counter */
    int ncq, depth, unordered, seek_bound, at;
    calendar_t cal;
    double ring[]; /* in issue order: completion times of the last ncq reads */
} hdd_t;

static geom_t geom_of(const scenario_t *s) {
    geom_t g;
    g.track = hdd_opts(s)->seek_track_ms / 1e3;
    g.full = hdd_opts(s)->seek_full_ms / 1e3;
    g.rev = 60.0 / (double)hdd_opts(s)->rpm;
    g.rate = hdd_opts(s)->seq_mb_s * 1e6;
    g.cap = hdd_opts(s)->capacity_gb * 1e9;
    g.span = scenario_dataset_bytes(s);
    if (g.span > g.cap) g.span = g.cap; /* hdd_check refuses it; keep the model finite */
    return g;
}

/* Seek over d > 0 bytes. */
static double seek_s(const geom_t *g, double d) {
    return g->track + (g->full - g->track) * sqrt(d / g->cap);
}

/* The SPTF integral (see the header), in units of the dataset's span. */
typedef struct {
    double track, a, rev;
} sptf_t;

/* Integral over [0, v] of min(w^2 / a^2, c) dw. */
static double h_part(const sptf_t *p, double v, double c) {
    double b = p->a * sqrt(c);
    if (v <= 0) return 0;
    if (v <= b) return v * v * v / (3 * p->a * p->a);
    return c * v - 2.0 / 3.0 * p->a * c * sqrt(c);
}

/* Integral of G(s | x) from -inf to t. */
static double h_cum(const sptf_t *p, double t, double x) {
    double v = t - p->track;
    if (v <= 0) return 0;
    if (p->a <= 0) return v; /* every place at the settle time */
    return h_part(p, v, x) + h_part(p, v, 1 - x);
}

/* P(one request's positioning <= t | head at x). */
static double f_pos(const sptf_t *p, double t, double x) {
    return (h_cum(p, t, x) - h_cum(p, t - p->rev, x)) / p->rev;
}

static const double gl_x[8] = {-0.9602898564975363, -0.7966664774136267, -0.5255324099163290,
                               -0.1834346424956498, 0.1834346424956498,  0.5255324099163290,
                               0.7966664774136267,  0.9602898564975363};
static const double gl_w[8] = {0.1012285362903763, 0.2223810344533745, 0.3137066458778873,
                               0.3626837833783620, 0.3626837833783620, 0.3137066458778873,
                               0.2223810344533745, 0.1012285362903763};

/* Integral over [lo, hi] of (1 - F(t | x))^k, in two Gauss-Legendre halves. */
static double gl_tail(const sptf_t *p, double lo, double hi, double x, int k) {
    double sum = 0, h = (hi - lo) / 2;
    for (int j = 0; j < 2; j++) {
        double mid = lo + h * (j + 0.5);
        for (int i = 0; i < 8; i++)
            sum += h / 2 * gl_w[i] * pow(1 - f_pos(p, mid + h / 2 * gl_x[i], x), k);
    }
    return sum;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* E_k: the expected positioning time of SPTF over k queued requests. */
static double sptf_compute(double track, double a, double rev, int k) {
    const sptf_t p = {track, a, rev};
    /* (1 - F)^k is negligible past F = 1 - 1e-13^(1/k): integrate up to there. */
    const double f_end = 1 - pow(1e-13, 1.0 / k);
    const int nx = 8; /* panels of x over [0, 1/2]; x and 1 - x give the same */
    double total = 0;
    for (int ix = 0; ix < nx; ix++) {
        double lo = 0.5 * ix / nx, hi = 0.5 * (ix + 1) / nx;
        for (int i = 0; i < 8; i++) {
            double x = (lo + hi) / 2 + (hi - lo) / 2 * gl_x[i];
            double top = track + a * sqrt(1 - x) + rev, l = track, h = top;
            for (int it = 0; it < 60; it++) {
                double m = (l + h) / 2;
                if (f_pos(&p, m, x) < f_end)
                    l = m;
                else
                    h = m;
            }
            double kink[7] = {track,
                              track + a * sqrt(x),
                              track + a * sqrt(1 - x),
                              track + rev,
                              track + rev + a * sqrt(x),
                              track + rev + a * sqrt(1 - x),
                              h};
            qsort(kink, 7, sizeof kink[0], cmp_double);
            double in = 0;
            for (int j = 0; j < 6 && kink[j] < h; j++) {
                double b = kink[j + 1] < h ? kink[j + 1] : h;
                if (b > kink[j]) in += gl_tail(&p, kink[j], b, x, k);
            }
            total += (hi - lo) / 2 * gl_w[i] * in * 2;
        }
    }
    return track + total; /* no request is reached before the settle time */
}

/* The model asks for the same figure many times: the last one per thread. */
static double sptf_mean_s(const geom_t *g, int k) {
    static _Thread_local double last[5] = {-1, -1, -1, -1, 0};
    double a = (g->full - g->track) * sqrt(g->span / g->cap);
    if (last[0] == g->track && last[1] == a && last[2] == g->rev && last[3] == k) return last[4];
    double e = sptf_compute(g->track, a, g->rev, k);
    last[0] = g->track, last[1] = a, last[2] = g->rev, last[3] = k, last[4] = e;
    return e;
}

/* Reads the loader keeps in flight on one drive: its synchronous readers
 * (PyTorch's workers, one read each), or the pool's window (a batch's
 * reads go out at once: its window of batches, or for record shards the
 * shards its lanes and its window have open, as the model counts them). */
static double reads_in_flight(const scenario_t *s) {
    const double S = scenario_items_per_read(s);
    double per = (double)loader_sync_readers(s);
    if (!per) {
        int per_rank; /* the loader's shard lanes: read at once, each a shard open */
        const double lanes = (double)scenario_loader(s)->shard_lanes(s, &per_rank);
        for (int i = 0; i < s->njobs; i++) {
            const job_t *j = &s->jobs[i];
            double gpus = (double)(j->gpus < s->server.gpus ? j->gpus : s->server.gpus);
            double window = (double)loader_staged_batches(s, j) * (double)j->batch_per_gpu * gpus;
            double reads = S > 1 ? lanes + window / S - 1 : window;
            per += (double)j->count * (reads < 1 ? 1 : reads);
        }
    }
    if (s->server.storage.shared) per *= (double)s->server.count;
    return per;
}

/* The model's queue: min(ncq, the reads in flight). */
static int queue_k(const scenario_t *s) {
    double r = reads_in_flight(s);
    int64_t ncq = hdd_opts(s)->ncq;
    /* A fraction of a read in flight: at times one more is. */
    return r >= (double)ncq ? (int)ncq : r < 1 ? 1 : (int)ceil(r);
}

static double pos_mean_s(const scenario_t *s) {
    geom_t g = geom_of(s);
    return sptf_mean_s(&g, queue_k(s));
}

/* A mean read's transfer time. */
static double xfer_req_s(const scenario_t *s) {
    return scenario_item_bytes_mean(s) * scenario_items_per_read(s) / (hdd_opts(s)->seq_mb_s * 1e6);
}

/* Whether positioning outweighs the transfer of a mean read. */
static int seek_bound(const scenario_t *s) {
    return pos_mean_s(s) > xfer_req_s(s);
}

/* A uniform in (0, 1) from the seed and the draw's number (splitmix64). */
static double unit(uint64_t seed, uint64_t i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + i + 0x2545F4914F6CDD1Dull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

static int hdd_init(storage_t *d, const scenario_t *s) {
    int ncq = (int)hdd_opts(s)->ncq;
    hdd_t *h = calloc(1, sizeof *h + (size_t)ncq * sizeof h->ring[0]);
    if (!h) return -1;
    d->state = h;
    h->g = geom_of(s);
    h->wbw = storage_write_bw(s, h->g.rate);
    h->seed = (uint64_t)s->seed;
    h->ncq = ncq;
    h->depth = queue_k(s);
    h->seek_bound = seek_bound(s);
    h->unordered = d->unordered;
    if (h->unordered) {
        double xfer = xfer_req_s(s), svc = sptf_mean_s(&h->g, h->depth) + xfer;
        /* Reads come out of order by up to a worker's batch, and a disk is
         * slow: with R workers on the head a batch of b items takes about
         * R x b x svc (a shard's read at least), so the buckets reach back
         * four times that, or CALENDAR_REACH_S. */
        double b = 1;
        for (int i = 0; i < s->njobs; i++)
            if ((double)s->jobs[i].batch_per_gpu > b) b = (double)s->jobs[i].batch_per_gpu;
        double per = b / scenario_items_per_read(s);
        double span = 4 * reads_in_flight(s) * (per > 1 ? per : 1) * svc;
        double dt = calendar_bucket_s(svc, xfer, span);
        if (calendar_init(&h->cal, dt, 1, CALENDAR_LOG2)) return -1;
    }
    return 0;
}

/* The positioning of the next service among k queued requests: this read at
 * `offset` and k - 1 drawn ones; moves the head to the one picked. */
static double position(hdd_t *h, double offset, double bytes, int k) {
    const geom_t *g = &h->g;
    double gap = offset - h->head, best;
    if (offset >= h->last && gap <= 0) {
        best = 0; /* follows on (or lies inside the last read: the layout's rounding) */
    } else {
        best = seek_s(g, fabs(gap)) + unit(h->seed, h->nrq++) * g->rev;
        if (gap > 0 && gap / g->rate < best) best = gap / g->rate; /* read through the gap */
    }
    double at = offset;
    /* No other request is reached before the settle time. (Drawing every
     * place and phase is quicker than skipping the ones that cannot win:
     * that branch is not predictable.) */
    for (int i = 1; i < k && best > g->track; i++) {
        double x = unit(h->seed, h->nrq++) * g->span;
        double t = seek_s(g, fabs(x - h->head)) + unit(h->seed, h->nrq++) * g->rev;
        if (t < best) best = t, at = x;
    }
    h->last = at;
    h->head = at + bytes;
    return best;
}

/* A request of `bytes` at `offset`, transferred at `rate` (bytes/s). */
static double hdd_io(hdd_t *h, double issue, double bytes, double offset, double rate,
                     io_acct_t *acct) {
    int k = h->depth;
    if (!h->unordered) {
        /* The reads still in the drive: completions in issue order do not decrease. */
        int busy = 0;
        for (int i = 0, j = h->at; i < h->ncq; i++) {
            j = j == 0 ? h->ncq - 1 : j - 1;
            if (h->ring[j] <= issue) break;
            busy++;
        }
        k = busy + 1 < h->ncq ? busy + 1 : h->ncq;
    }
    double pos = position(h, offset, bytes, k), xfer = bytes / rate;
    double svc = pos + xfer, end;
    if (h->unordered) {
        calendar_take(&h->cal, issue, svc, &end);
    } else {
        double start = issue > h->free ? issue : h->free;
        end = start + svc;
        h->free = end;
        h->ring[h->at] = end;
        h->at = h->at + 1 == h->ncq ? 0 : h->at + 1;
    }
    acct->xfer_busy += h->seek_bound ? xfer : svc;
    acct->slot_busy += svc;
    return end;
}

static double hdd_read(storage_t *d, double issue, double bytes, double offset, int client,
                       io_acct_t *acct) {
    (void)client;
    acct->reads++;
    return hdd_io(d->state, issue, bytes, offset, ((hdd_t *)d->state)->g.rate, acct);
}

/* A write positions the head as a read does (a checkpoint's file lies
 * where the burst's offsets put it), then moves its bytes at the write
 * rate. */
static double hdd_write(storage_t *d, double issue, double bytes, double offset, int client,
                        io_acct_t *acct) {
    (void)client;
    acct->writes++;
    return hdd_io(d->state, issue, bytes, offset, ((hdd_t *)d->state)->wbw, acct);
}

/* (an ordered disk's calendar is never set up: left alone) */
static void hdd_begin(storage_t *d, double at) {
    calendar_cap_before(&((hdd_t *)d->state)->cal, at);
}

static void hdd_destroy(storage_t *d) {
    hdd_t *h = d->state;
    if (h) calendar_destroy(&h->cal); /* never set up: zero, a no-op */
    free(d->state);
    d->state = NULL;
}

/* A request of `bytes`: the queue's expected positioning, then its transfer. */
static double hdd_service_s(const scenario_t *s, double bytes) {
    return pos_mean_s(s) + bytes / (hdd_opts(s)->seq_mb_s * 1e6);
}

static double hdd_items_s(const scenario_t *s, double bytes, int *latency_bound) {
    double pos = pos_mean_s(s), xfer = bytes / (hdd_opts(s)->seq_mb_s * 1e6);
    if (latency_bound) *latency_bound = pos > xfer;
    return 1 / (pos + xfer);
}

/* A write alone: the queue's expected positioning and its bytes at the
 * write rate. One head serves one request at a time, so its whole time is
 * the channel's too. */
static double hdd_write_s(const scenario_t *s, double bytes) {
    return pos_mean_s(s) + bytes / storage_write_bw(s, hdd_opts(s)->seq_mb_s * 1e6);
}

/* The bandwidth share: the transfers when seeks dominate, else the head's
 * whole time for reads of the mean request. */
static double hdd_xfer_s(const scenario_t *s, double bytes) {
    double rate = hdd_opts(s)->seq_mb_s * 1e6;
    if (seek_bound(s)) return bytes / rate;
    return bytes / rate * (1 + pos_mean_s(s) / xfer_req_s(s));
}

/* One head. When transfers outweigh positioning the head counts as
 * (positioning + transfer) / positioning slots of a mean read, so the slots'
 * share is the positioning share, below the bandwidth share, and the
 * bottleneck is named storage-bandwidth. */
static double hdd_slots(const scenario_t *s) {
    if (seek_bound(s)) return 1;
    double pos = pos_mean_s(s);
    return (pos + xfer_req_s(s)) / pos;
}

static double hdd_bytes(const scenario_t *s) {
    double b = sizeof(hdd_t) + 8 * (double)hdd_opts(s)->ncq;
    if (scenario_loader(s)->sync_reads) b += calendar_bytes(CALENDAR_LOG2);
    return b;
}

/* Exact with one request at a time (the arrival-order drive); SPTF's head
 * position and the queue's ramp are the simulator's alone. */
static int hdd_model_exact(const scenario_t *s) {
    return queue_k(s) == 1;
}

static int hdd_check(const scenario_t *s) {
    int bad = 0;
    double t = hdd_opts(s)->seek_track_ms, f = hdd_opts(s)->seek_full_ms;
    if (t > f) {
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "server.storage.seek_track_ms")],
                   "server.storage.seek_track_ms: the shortest seek is at most the full stroke "
                   "(server.storage.seek_full_ms = %g), got %g",
                   f, t);
        bad = 1;
    }
    double gb = scenario_dataset_bytes(s) / 1e9, cap = hdd_opts(s)->capacity_gb;
    if (gb > cap) {
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "server.storage.capacity_gb")],
                   "server.storage.capacity_gb: the dataset (%.4g GB) does not fit on a disk of "
                   "%g GB",
                   gb, cap);
        bad = 1;
    }
    return bad ? EXIT_INPUT : 0;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"server.storage.rpm", KT_INT, "rev/min", "7200", 1000, 30000, 0, NULL, KIND_FIELD(hdd_opts_t, rpm), "hdd: spindle speed; a read that does not follow on waits for its sector, half a revolution on average"},
    {"server.storage.seek_full_ms", KT_REAL, "ms", "15", 0, 1000, 0, NULL, KIND_FIELD(hdd_opts_t, seek_full_ms), "hdd: full-stroke seek, across the whole capacity (seek(d) = track + (full - track) x sqrt(d / capacity))"},
    {"server.storage.seek_track_ms", KT_REAL, "ms", "1", 0, 1000, 0, NULL, KIND_FIELD(hdd_opts_t, seek_track_ms), "hdd: track-to-track seek with settling, the least any seek takes"},
    {"server.storage.capacity_gb", KT_REAL, "GB", "4000", 0, SCHEMA_BIG, 1, NULL, KIND_FIELD(hdd_opts_t, capacity_gb), "hdd: the bytes a full-stroke seek crosses; the dataset lies at the start, so one smaller than the disk seeks shorter"},
    {"server.storage.seq_mb_s", KT_REAL, "MB/s", "200", 0, SCHEMA_BIG, 1, NULL, KIND_FIELD(hdd_opts_t, seq_mb_s), "hdd: sequential transfer rate off the platters (one rate for all zones)"},
    STORAGE_KEY_WRITE_MB_S, /* shared with fixed and ssd */
    {"server.storage.ncq", KT_INT, "requests", "32", 1, 256, 0, NULL, KIND_FIELD(hdd_opts_t, ncq), "hdd: requests the drive queues and reorders, shortest positioning first (SATA NCQ: 32; 1 = in arrival order)"},
};
/* clang-format on */

const storage_ops_t storage_hdd = {
    .name = "hdd",
    .help = "hard disk: distance-dependent seek, rotation, media rate, NCQ reordering",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .init = hdd_init,
    .read = hdd_read,
    .destroy = hdd_destroy,
    .epoch_begin = hdd_begin,
    .items_s = hdd_items_s,
    .xfer_s = hdd_xfer_s,
    .service_s = hdd_service_s,
    .slots = hdd_slots,
    .state_bytes = hdd_bytes,
    .check = hdd_check,
    .model_exact = hdd_model_exact,
    .position_dependent = 1,
    .write = hdd_write,
    .write_s = hdd_write_s,
    .write_channel_s = hdd_write_s,
};
