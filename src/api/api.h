/* SPDX-License-Identifier: MIT */
/* The API layer's interface: what its files share, grouped under the file
 * that defines each function, in layer order (a file calls only files listed
 * above it, and the layers below). */
#ifndef BRISK_API_H
#define BRISK_API_H

#include "../diag/diag.h"

/* ---- init.c: process set-up ------------------------------------------------ */
/* Sets the process up, once; false when brisk cannot work (said on stderr). */
INTERNAL bool process_init(void);
/* The calling thread's first call: set up the process, then give it a heap. */
INTERNAL heap_t *heap_first_use(void);
/* process_init and what must happen before the program's code runs; the
 * platform's start-up hook, and brisk_binding_init. */
INTERNAL bool process_start(void);
/* The process ends: the diagnostic modes' reports (once). The platform's
 * end hook, and brisk_binding_done. */
INTERNAL void process_stop(void);
static inline heap_t *heap_for_this_thread(void) {
  heap_t *heap = heap_current();
  return likely(heap != &heap_empty) ? heap : heap_first_use();
}

/* ---- malloc.c: malloc, calloc, free and size queries ---------------------------- */
INTERNAL void *malloc_slow(size_t size, bool zero);
/* libbrisk-heapprof.so: an allocation that reached the thread's next sample
 * point on the fast path (fast_path.h). */
INTERNAL void *malloc_sampled(size_t size, bool zero);
/* Any size, though meant for those past DIRECT_MAX. */
INTERNAL void *malloc_past_direct(size_t size, bool zero);

/* ---- aligned.c ----------------------------------------------------------------- */
/* alignment: a power of two. */
INTERNAL void *aligned_malloc(size_t alignment, size_t size);

#endif /* BRISK_API_H */
