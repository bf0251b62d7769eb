/* hugemem: see hugemem.h. */
#include "hugemem.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { HUGE_PAGE = 2 << 20 };

static void *huge(size_t bytes) {
    void *p = NULL;
    if (posix_memalign(&p, HUGE_PAGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    /* Advice only: where the kernel refuses, the pages stay small. */
    (void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
    return p;
}

void *hugemem_alloc(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    size_t bytes = n * size;
    return bytes >= HUGEMEM_MIN ? huge(bytes) : malloc(bytes ? bytes : 1);
}

void *hugemem_calloc(size_t n, size_t size) {
    if (size && n > SIZE_MAX / size) return NULL;
    size_t bytes = n * size;
    if (bytes < HUGEMEM_MIN) return calloc(n ? n : 1, size);
    void *p = huge(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}
