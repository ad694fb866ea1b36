/* SPDX-License-Identifier: MIT */
/* malloc, calloc and free of the brisk_* API, and the size queries. */
#include "fast_path.h"

#include <errno.h>
#include <string.h>

void *malloc_slow(size_t size, bool zero) {
  heap_t *heap = heap_for_this_thread();
  if (unlikely(heap == NULL)) {
    errno = ENOMEM;
    return NULL;
  }
  if (unlikely(heap == &heap_reporting)) return report_alloc(size); /* zeroed: fresh pages */
  if (unlikely(diag_counting)) return diag_malloc(heap, size, 0, zero);
  if (size <= LARGE_MAX) {
    void *p = alloc_small(heap, size);
    if (zero && p != NULL) memset(p, 0, size);
    return p;
  }
  background_wanted();
  return huge_malloc(size, 0, zero);
}

/* A block past the direct sizes, with no more checks than the direct fast
 * path makes when its class already has a page: heap_empty and
 * heap_reporting have no pages, and a diagnostic mode must see every call,
 * so those go on to malloc_slow. (Through malloc_slow alone such a block
 * took about twice the instructions.) A small class pops its first page as
 * the direct path does; a medium one (up to MEDIUM_MAX) takes its block under
 * the heap's lock, first page included (alloc_locked); a larger one comes
 * from the heap's arena. */
static inline __attribute__((always_inline)) void *past_direct(size_t size, bool zero) {
  if (likely(size - (DIRECT_MAX + 1) < LARGE_MAX - DIRECT_MAX && !diag_counting)) {
    heap_t *heap = heap_current();
    if (size > SMALL_MAX) {
      if (unlikely(heap == &heap_empty || heap == &heap_reporting)) return malloc_slow(size, zero);
      if (size > MEDIUM_MAX) return span_malloc(heap, size, zero); /* clears what it must */
      void *p = alloc_locked(heap, size_class_of(size));
      if (zero && p != NULL) memset(p, 0, size);
      return p;
    }
    unsigned size_class = size_class_of(size);
    page_t *page = heap->queues[size_class].first;
    if (unlikely(page == NULL)) return malloc_slow(size, zero); /* or not a thread's own heap */
    void *p = page->free != NULL ? page_pop(page) : alloc_refilled(heap, size_class);
    if (zero && p != NULL) memset(p, 0, size);
    return p;
  }
  return malloc_slow(size, zero);
}

static NOINLINE void *calloc_past_direct(size_t size) {
  return past_direct(size, true);
}

/* malloc's case apart from calloc's, so that every call out of it is a tail
 * call and it saves no registers (12 instructions fewer on a medium block). */
void *malloc_past_direct(size_t size, bool zero) {
  if (unlikely(zero)) return calloc_past_direct(size);
  return past_direct(size, false);
}

void *brisk_malloc(size_t size) {
  return fast_malloc(size);
}

void *brisk_calloc(size_t count, size_t size) {
  size_t total;
  if (unlikely(__builtin_mul_overflow(count, size, &total))) {
    errno = ENOMEM;
    return NULL;
  }
  /* Past the direct sizes every block comes from the slow path anyway,
   * which knows when it is zero already (huge blocks: fresh mappings). */
  if (total > DIRECT_MAX) return malloc_past_direct(total, true);
  void *p = fast_malloc(total);
  if (likely(p != NULL)) memset(p, 0, total);
  return p;
}

READS_POINTER_HEADER void brisk_free(void *p) {
  fast_free(p);
}

READS_POINTER_HEADER void brisk_free_sized(void *p, size_t size) {
  (void)size;
  fast_free(p);
}

READS_POINTER_HEADER size_t brisk_usable_size(const void *p) {
  if (p == NULL) return 0;
  segment_t *segment = segment_of(p);
  if (unlikely(segment->kind == SEGMENT_REPORT)) return report_block_size(p);
  if (unlikely(diag_counting)) return diag_usable_size(p);
  if (segment->kind == SEGMENT_HUGE) return huge_usable_size(segment, p);
  if (segment->kind == SEGMENT_SPANS) return span_usable_size(segment, p);
  page_t *page = page_of(segment, p);
  const uint8_t *block = p;
  if (atomic_load_relaxed(&page->xflags) & PAGE_HAS_ALIGNED) block = page_block_start(page, p);
  return page->block_size - (size_t)((const uint8_t *)p - block);
}

int brisk_owns(const void *p) {
  if (p == NULL) return 0;
  const segment_t *segment = segment_of(p);
  if (!segment_map_contains(segment)) return 0;
  return (const uint8_t *)p < (const uint8_t *)segment + segment->size;
}
