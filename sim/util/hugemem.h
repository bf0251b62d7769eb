/* hugemem: allocation of the simulator's large per-item arrays on huge
 * pages where the system offers them.
 *
 * Replay touches per-item arrays of N entries at random; with 4 KiB pages
 * every access past a few million items also misses the TLB, and under a
 * hypervisor a page walk is itself several DRAM reads. Arrays of at least
 * HUGEMEM_MIN bytes are aligned to 2 MiB and advised MADV_HUGEPAGE
 * (transparent huge pages in `madvise` mode); smaller ones, or systems
 * without the call, get plain malloc/calloc. Either way the memory is
 * released with free(). */
#ifndef STALLSIM_HUGEMEM_H
#define STALLSIM_HUGEMEM_H

#include <stddef.h>

#define HUGEMEM_MIN ((size_t)4 << 20)

/* n * size bytes, uninitialised; NULL without memory (or on overflow). */
void *hugemem_alloc(size_t n, size_t size);
/* n * size bytes, zeroed; NULL without memory (or on overflow). */
void *hugemem_calloc(size_t n, size_t size);

#endif
