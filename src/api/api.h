/* The API layer's interface: what its files share, grouped under the file
 * that defines each function, in layer order (a file calls only files listed
 * above it, and the layers below). */
#ifndef BRISK_API_H
#define BRISK_API_H

#include "../diag/diag.h"

/* ---- init.c: process set-up ------------------------------------------------ */
INTERNAL void process_init(void);
/* The calling thread's first call: set up the process, then give it a heap. */
INTERNAL heap_t *heap_first_use(void);
static inline heap_t *heap_for_this_thread(void) {
  heap_t *heap = heap_current();
  return likely(heap != &heap_empty) ? heap : heap_first_use();
}

/* ---- malloc.c: malloc, calloc, free and size queries ---------------------------- */
INTERNAL void *malloc_slow(size_t size, bool zero);

/* ---- aligned.c ----------------------------------------------------------------- */
/* alignment: a power of two. */
INTERNAL void *aligned_malloc(size_t alignment, size_t size);

#endif /* BRISK_API_H */
