/* cache_linux: the Linux page cache's two-list reclaim for file pages, as
 * mm/vmscan.c, mm/swap.c and mm/workingset.c have it without the
 * multi-generational LRU (CONFIG_LRU_GEN off; checked against the 6.18 kernel
 * of the development VM, whose behaviour tests/pagecache.sh measures in a
 * memory cgroup). An item stands for its file's pages, which a whole-file
 * read(2) touches together:
 * - a miss adds the file to the head of the inactive list, referenced (the
 *   read marks what it copied accessed);
 * - a hit on the inactive list with the referenced mark activates the file
 *   (moves it to the head of the active list): promotion on the second
 *   access; a hit on the active list only marks it;
 * - reclaim frees from the tail of the inactive list, whatever the mark
 *   (unmapped clean file pages are reclaimed even when referenced), after
 *   moving files from the active tail to the inactive head while the
 *   inactive list is low: inactive x ratio < active, ratio = sqrt(10 x GB of
 *   the lists) (1 below 1 GB); so a large cache is mostly active list;
 * - workingset detection: each eviction leaves a shadow, the non-resident age
 *   at that moment (the age counts bytes evicted and activated); a file that
 *   refaults within the active list's size of that age goes straight to the
 *   active list.
 * Pages and readahead (cache_init_pages: the engine's page caches; the
 * tier's and mrc's caches keep whole entries of their exact sizes): an entry
 * is held as chunks of the device's readahead window
 * (server.storage.read_ahead_kb) within [32, 128] KiB, its last rounded up
 * to whole pages, as the kernel reads through the page that holds a file's
 * last byte and never past it (mm/readahead.c, do_page_cache_ra). A
 * whole-entry read touches every chunk: a miss reads the chunks not
 * resident, so an entry partly reclaimed is partly read again. A sequential
 * reader (`stream`, a lane: the kernel's file_ra_state) reads ahead as
 * ondemand_readahead does: a miss reads a first window from it (4x or 2x
 * the read, up to the device's window), and entering the mark (the first
 * chunk of the latest window) reads the next, 4x then 2x the last, up to
 * the window: the reader runs one to two windows behind what was read.
 * Chunks read ahead enter the inactive list unreferenced (marked only when
 * the reader gets to them) and cost the device when read; where reclaim
 * takes them before use, the reader misses and they are read again: N
 * interleaved readers whose windows do not fit the cache re-read. Windows
 * are whole chunks (a 16 KiB first window is one chunk). The model has no
 * closed form for the two lists: it shows LRU's (Che) over whole pages,
 * marked approximate. */
#include <math.h>
#include <stdlib.h>

#include "cache.h"
#include "che.h"

#define NIL UINT32_MAX

enum { OUT = 0, INACTIVE = 1, ACTIVE = 2 };

typedef struct {
    uint32_t pos; /* queue position of the latest entry in its list (mod 2^32) */
    uint32_t size;
    uint8_t where, ref, shadowed;
    uint64_t shadow; /* non-resident age at eviction */
} item_t;

/* An access-order queue with lazy deletion (as cache_queue.h): an entry is
 * live iff it is its item's latest and the item is on this list. */
typedef struct {
    uint32_t *q;
    uint64_t mask, head, tail;
    uint64_t bytes;
} queue_t;

/* A sequential reader's readahead state (the kernel's file_ra_state): the
 * entry and chunk it is in, the chunk whose entry starts the next window
 * (the PG_readahead mark; NIL: none), the chunk after the last window and
 * that window's bytes. */
typedef struct {
    uint32_t x, k, mark, next;
    uint64_t win;
} lane_t;

typedef struct {
    item_t *it;      /* [chunks] (an entry each without pages) */
    uint32_t *first; /* [n + 1]: entry x's chunks are first[x] .. first[x + 1] - 1; NULL: none */
    lane_t *lane;    /* [lanes] */
    uint64_t gran;   /* a chunk's bytes: the window, within [32, 128] KiB */
    queue_t list[3]; /* [INACTIVE], [ACTIVE] */
    uint64_t age;
    int refaulted; /* a refault went active since the last reclaim */
    double credit; /* bytes of the active list due for deactivation */
} linux_t;

static int q_init(queue_t *q, uint32_t n) {
    uint64_t cap = 1;
    while (cap < 2 * (uint64_t)n + 2)
        cap <<= 1;
    q->mask = cap - 1;
    q->q = malloc(cap * sizeof *q->q);
    return q->q ? 0 : -1;
}

static void q_compact(queue_t *q, item_t *it, int which) {
    uint64_t out = 0;
    for (uint64_t p = q->head; p < q->tail; p++) {
        uint32_t x = q->q[p & q->mask];
        if (it[x].where == which && it[x].pos == (uint32_t)p) {
            q->q[out & q->mask] = x;
            it[x].pos = (uint32_t)out;
            out++;
        }
    }
    q->head = 0;
    q->tail = out;
}

static void q_push(linux_t *l, int which, uint32_t x) {
    queue_t *q = &l->list[which];
    if (q->tail - q->head > q->mask) q_compact(q, l->it, which);
    q->q[q->tail & q->mask] = x;
    l->it[x].pos = (uint32_t)q->tail;
    l->it[x].where = (uint8_t)which;
    q->tail++;
    q->bytes += l->it[x].size;
}

/* The least recent live entry of a list (NIL when empty), removed. */
static uint32_t q_pop(linux_t *l, int which) {
    queue_t *q = &l->list[which];
    while (q->head < q->tail) {
        uint64_t p = q->head++;
        uint32_t x = q->q[p & q->mask];
        if (l->it[x].where == which && l->it[x].pos == (uint32_t)p) {
            q->bytes -= l->it[x].size;
            l->it[x].where = OUT;
            return x;
        }
    }
    return NIL;
}

/* Entry x's chunks under pages (the window, its last rounded up to whole
 * pages) into l->it from chunk k; returns the chunk after them. */
static uint32_t chunk_entry(linux_t *l, uint64_t bytes, uint32_t page, uint32_t k) {
    do {
        uint64_t b = bytes < l->gran ? bytes : l->gran;
        l->it[k++].size = (uint32_t)((b + page - 1) / page * page);
        bytes -= b;
    } while (bytes > 0);
    return k;
}

/* The chunks of a page cache: 0, or -1 without memory or past 2^32 chunks. */
static int chunk_init(cache_t *c, linux_t *l) {
    l->gran = cache_chunk_bytes(c->read_ahead);
    l->first = malloc(((size_t)c->n + 1) * sizeof *l->first);
    l->lane = malloc((c->lanes ? c->lanes : 1) * sizeof *l->lane);
    if (!l->first || !l->lane) return -1;
    uint64_t total = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        l->first[i] = (uint32_t)total;
        total += c->size[i] > l->gran ? (c->size[i] + l->gran - 1) / l->gran : 1;
        if (total >= NIL) return -1;
    }
    l->first[c->n] = (uint32_t)total;
    l->it = calloc(total ? total : 1, sizeof *l->it);
    if (!l->it) return -1;
    for (uint32_t i = 0; i < c->n; i++)
        chunk_entry(l, c->size[i], c->page, l->first[i]);
    for (uint32_t r = 0; r < c->lanes; r++)
        l->lane[r] = (lane_t){NIL, NIL, NIL, NIL, 0};
    c->fetched = 0;
    return q_init(&l->list[INACTIVE], (uint32_t)total) || q_init(&l->list[ACTIVE], (uint32_t)total)
               ? -1
               : 0;
}

static int linux_init(cache_t *c) {
    linux_t *l = calloc(1, sizeof *l);
    c->state = l;
    if (!l) return -1;
    if (c->page) return chunk_init(c, l);
    l->it = calloc(c->n ? c->n : 1, sizeof *l->it);
    if (!l->it || q_init(&l->list[INACTIVE], c->n) || q_init(&l->list[ACTIVE], c->n)) return -1;
    for (uint32_t i = 0; i < c->n; i++)
        l->it[i].size = c->size[i];
    return 0;
}

static int inactive_low(const linux_t *l) {
    double in = (double)l->list[INACTIVE].bytes, act = (double)l->list[ACTIVE].bytes;
    double gb = floor((in + act) / (1u << 30));
    double ratio = gb > 0 ? floor(sqrt(10 * gb)) : 1;
    return in * ratio < act;
}

static void activate(linux_t *l, uint32_t x) {
    l->list[INACTIVE].bytes -= l->it[x].size; /* its entry there goes stale */
    q_push(l, ACTIVE, x);
    l->it[x].ref = 0;
    l->age += l->it[x].size;
}

/* One reclaim pass. The active list is aged (its tail moved to the
 * inactive head) when the inactive list is low, or when a refault went
 * active since the last pass (the workingset is changing); then it is
 * scanned in proportion to the lists' sizes, as get_scan_count scans both
 * by size >> priority, so it may stay larger than the inactive one for a
 * while. */
static void reclaim(cache_t *c, linux_t *l) {
    int age_active = l->refaulted || inactive_low(l);
    l->refaulted = 0;
    while (c->used > c->capacity) {
        uint32_t v = q_pop(l, INACTIVE);
        if (v == NIL) v = q_pop(l, ACTIVE);
        if (v == NIL) break;
        if (age_active && l->list[INACTIVE].bytes + l->it[v].size > 0)
            l->credit += (double)l->it[v].size * (double)l->list[ACTIVE].bytes /
                         (double)(l->list[INACTIVE].bytes + l->it[v].size);
        while (l->credit > 0) {
            uint32_t y = q_pop(l, ACTIVE);
            if (y == NIL) {
                l->credit = 0;
                break;
            }
            l->credit -= l->it[y].size;
            q_push(l, INACTIVE, y);
        }
        l->it[v].shadow = l->age;
        l->it[v].shadowed = 1;
        l->age += l->it[v].size;
        c->used -= l->it[v].size;
    }
}

/* x (an entry, or a chunk) brought in, referenced as a read marks it (ref
 * 1) or not, as readahead leaves it (0). A refault within the active
 * list's size of its eviction is part of the workingset and goes active at
 * once, read or read ahead (the kernel's workingset_refault on adding it). */
static void admit(cache_t *c, linux_t *l, uint32_t x, int ref) {
    item_t *t = &l->it[x];
    if (t->shadowed && l->age - t->shadow <= l->list[ACTIVE].bytes) {
        q_push(l, ACTIVE, x);
        t->ref = 0;
        l->age += t->size;
        l->refaulted = 1;
    } else {
        q_push(l, INACTIVE, x);
        t->ref = (uint8_t)ref;
    }
    c->used += t->size;
    if (c->used > c->capacity) reclaim(c, l);
}

/* A read of x: 1 on a hit (promotion on the second access), else admitted. */
static int touch(cache_t *c, linux_t *l, uint32_t x) {
    item_t *t = &l->it[x];
    if (t->where == ACTIVE) {
        t->ref = 1;
        return 1;
    }
    if (t->where == INACTIVE) {
        if (t->ref)
            activate(l, x);
        else
            t->ref = 1;
        return 1;
    }
    admit(c, l, x, 1);
    return 0;
}

static int linux_access(cache_t *c, uint32_t x, uint64_t next_use) {
    (void)next_use;
    linux_t *l = c->state;
    if (!l->first) return touch(c, l, x);
    uint64_t got = 0;
    for (uint32_t k = l->first[x]; k < l->first[x + 1]; k++)
        if (!touch(c, l, k)) got += l->it[k].size;
    c->fetched = got;
    return got == 0;
}

/* The kernel's first window for a read of len bytes (get_init_ra_size: 4x
 * the read rounded up to a power of two when small, 2x when medium, else
 * the whole window) and the next one after a window of win (get_next_ra_size:
 * 4x while small, then 2x, up to the whole window). */
static uint64_t init_win(uint64_t len, uint64_t max) {
    uint64_t p = CACHE_PAGE_BYTES;
    while (p < len)
        p <<= 1;
    return p <= max / 32 ? 4 * p : p <= max / 4 ? 2 * p : max;
}

static uint64_t next_win(uint64_t win, uint64_t max) {
    return win < max / 16 ? 4 * win : win <= max / 2 ? 2 * win : max;
}

/* The window of win bytes from chunk `from` of entry x read ahead: its
 * chunks not resident enter unreferenced; the first, if read, carries the
 * mark (the kernel marks no page it finds cached). */
static void read_window(cache_t *c, linux_t *l, lane_t *r, uint32_t x, uint32_t from, uint64_t win,
                        uint64_t *ahead) {
    const uint32_t end = l->first[x + 1];
    uint64_t n = (win + l->gran - 1) / l->gran, to = from + n < end ? from + n : end;
    r->mark = from < end && l->it[from].where == OUT ? from : NIL;
    r->next = (uint32_t)to, r->win = win;
    for (uint32_t j = from; j < to; j++)
        if (l->it[j].where == OUT) {
            admit(c, l, j, 0);
            *ahead += l->it[j].size;
        }
}

/* Lane r enters chunk k of entry x reading len bytes: 0 on a hit, else the
 * bytes it waits for. Entering the marked chunk reads the next window
 * ahead, ramped up. A miss starts afresh, as the kernel's initial readahead
 * on a sequential miss: its first window from k, read with it, and the mark
 * after what the read asked for; a first window no larger than the read
 * has the next one read at once (the kernel merges the two). */
static uint64_t enter(cache_t *c, linux_t *l, lane_t *r, uint32_t x, uint32_t k, uint64_t len,
                      uint64_t *ahead) {
    const uint64_t W = c->read_ahead, g = l->gran;
    const int marked = r->mark == k;
    const uint64_t wait = touch(c, l, k) ? 0 : l->it[k].size;
    r->x = x, r->k = k;
    if (!W || (!marked && !wait)) return wait;
    if (!wait) {
        read_window(c, l, r, x, r->next, next_win(r->win, W), ahead);
        return 0;
    }
    const uint64_t win = init_win(len, W), asked = (len + g - 1) / g;
    read_window(c, l, r, x, k + 1, win > g ? win - g : 0, ahead);
    r->win = win;
    if (win <= asked * g)
        read_window(c, l, r, x, r->next, next_win(win, W), ahead);
    else
        r->mark = k + (uint32_t)asked;
    return wait;
}

static uint64_t linux_stream(cache_t *c, uint32_t lane, uint32_t x, uint64_t off, uint64_t len,
                             uint64_t *ahead) {
    linux_t *l = c->state;
    uint64_t wait = 0;
    *ahead = 0;
    if (!len) return 0;
    /* (a cache of whole entries, cache_init's: the entry read whole) */
    c->reach = c->size[x];
    if (!l->first) return touch(c, l, x) ? 0 : l->it[x].size;
    lane_t *r = &l->lane[lane < c->lanes ? lane : 0];
    if (r->x != x) *r = (lane_t){x, NIL, NIL, NIL, 0}; /* a new file: its own state */
    const uint32_t end = l->first[x + 1] - 1;
    uint64_t k0 = l->first[x] + off / l->gran, k1 = l->first[x] + (off + len - 1) / l->gran;
    if (k1 > end) k1 = end;
    for (uint64_t k = k0 < end ? k0 : end; k <= k1; k++) {
        /* The chunk it is in was touched on entry: its pages are read again
         * only where reclaim took them meanwhile. */
        if (r->x == x && r->k == k && l->it[k].where != OUT) continue;
        wait += enter(c, l, r, x, (uint32_t)k, len, ahead);
    }
    const uint32_t to = r->next != NIL && r->next > r->k ? r->next : r->k + 1;
    const uint64_t reach = (uint64_t)(to - l->first[x]) * l->gran;
    c->reach = reach < c->size[x] ? reach : c->size[x];
    return wait;
}

static void linux_prefetch(const cache_t *c, uint32_t x, int stage) {
    const linux_t *l = c->state;
    if (!l->first) {
        if (stage == 0) __builtin_prefetch(&l->it[x], 1);
    } else if (stage == 0) {
        __builtin_prefetch(&l->first[x]);
    } else {
        __builtin_prefetch(&l->it[l->first[x]], 1);
    }
}

static void linux_destroy(cache_t *c) {
    linux_t *l = c->state;
    if (!l) return;
    free(l->it), free(l->first), free(l->lane);
    free(l->list[INACTIVE].q), free(l->list[ACTIVE].q), free(l);
    c->state = NULL;
}

static double linux_epoch(double f, double p, int k, int e, int *exact) {
    *exact = 0;
    return che_lru_epoch(f, p, k, e);
}

static double linux_bytes(double n) {
    double cap = 1;
    while (cap < 2 * n + 2)
        cap *= 2;
    return (double)sizeof(item_t) * n + 2 * 4 * cap;
}

/* The page cache holds what the processes leave of the memory limit (a
 * memory cgroup charges both, and reclaims file pages first), at most the
 * cache's own size. */
static double linux_room(double bytes, double limit, double held) {
    const double left = limit - held;
    return left < 0 ? 0 : left < bytes ? left : bytes;
}

const cache_ops_t cache_linux = {
    .name = "linux",
    .help = "the Linux page cache: inactive and active lists, promotion on a second access, "
            "refault activation",
    .init = linux_init,
    .access = linux_access,
    .prefetch = linux_prefetch,
    .destroy = linux_destroy,
    .hit_epoch = linux_epoch,
    .hit_at = NULL,
    .state_bytes = linux_bytes,
    .room = linux_room,
    .pages = 1,
    .stream = linux_stream,
};
