/* cache_list: LRU and FIFO over bytes, one doubly linked recency list kept in
 * a dense array of (prev, next) indexed by item id; the sentinel at index n
 * links the most (next) and least (prev) recent. LRU moves a hit to the
 * front; FIFO leaves it, which is the whole difference between them. */
#include <stdlib.h>

#include "cache.h"

#define NIL UINT32_MAX

typedef struct {
    uint32_t prev, next; /* prev == NIL: not cached */
} node_t;

static int list_init(cache_t *c) {
    node_t *node = malloc(((size_t)c->n + 1) * sizeof *node);
    if (!node) return -1;
    for (uint32_t i = 0; i < c->n; i++) node[i].prev = node[i].next = NIL;
    node[c->n].prev = node[c->n].next = c->n;
    c->state = node;
    return 0;
}

static inline void unlink_node(node_t *node, uint32_t x) {
    node[node[x].prev].next = node[x].next;
    node[node[x].next].prev = node[x].prev;
}

static inline void push_front(node_t *node, uint32_t head, uint32_t x) {
    uint32_t first = node[head].next;
    node[x].prev = head;
    node[x].next = first;
    node[first].prev = x;
    node[head].next = x;
}

static inline int list_access(cache_t *c, uint32_t x, int refresh) {
    node_t *node = c->state;
    const uint32_t head = c->n;
    if (node[x].prev != NIL) {
        if (refresh) {
            unlink_node(node, x);
            push_front(node, head, x);
        }
        return 1;
    }
    push_front(node, head, x);
    c->used += c->size[x];
    while (c->used > c->capacity) {
        uint32_t victim = node[head].prev;
        unlink_node(node, victim);
        node[victim].prev = NIL;
        c->used -= c->size[victim];
    }
    return 0;
}

static int lru_access(cache_t *c, uint32_t x, uint64_t next_use) {
    (void)next_use;
    return list_access(c, x, 1);
}

static int fifo_access(cache_t *c, uint32_t x, uint64_t next_use) {
    (void)next_use;
    return list_access(c, x, 0);
}

static void list_prefetch(const cache_t *c, uint32_t x) {
    const node_t *node = c->state;
    __builtin_prefetch(&node[x], 1);
}

static void list_destroy(cache_t *c) {
    free(c->state);
}

const cache_ops_t cache_lru_ops = {"lru", 0, list_init, lru_access, list_prefetch, list_destroy,
                                   (int)sizeof(node_t)};
const cache_ops_t cache_fifo_ops = {"fifo", 0, list_init, fifo_access, list_prefetch, list_destroy,
                                    (int)sizeof(node_t)};
