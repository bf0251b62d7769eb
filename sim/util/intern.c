/* intern: see intern.h. A linked list under a mutex: it holds a few names. */
#include "intern.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct node {
    struct node *next;
    char s[];
} node_t;

static node_t *head;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

const char *intern(const char *s) {
    pthread_mutex_lock(&lock);
    node_t *n = head;
    while (n && strcmp(n->s, s) != 0)
        n = n->next;
    if (!n) {
        size_t len = strlen(s) + 1;
        n = malloc(sizeof *n + len);
        if (n) {
            memcpy(n->s, s, len);
            n->next = head;
            head = n;
        }
    }
    pthread_mutex_unlock(&lock);
    return n ? n->s : NULL;
}
