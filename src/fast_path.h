/* The allocation and free fast paths, inlined into brisk_* and the malloc
 * overrides alike. Each is one load, one likely test, and a plain store;
 * everything else is a call to a named slow path. */
#ifndef BRISK_FAST_PATH_H
#define BRISK_FAST_PATH_H

#include "internal.h"

static inline void *fast_malloc(size_t size) {
  if (likely(size <= DIRECT_MAX)) {
    page_t *page = tl_heap->direct[(size + 7) >> 3];
    block_t *block = page->free;
    if (likely(block != NULL)) {
      page->free = block->next;
      page->used++;
      block->cookie = 0;
      return block;
    }
  }
  return malloc_slow(size, false);
}

/* A page's owner_tag equals the heap of the only thread that may free into it
 * with plain stores; pages that need care (huge, interior pointers) carry
 * NULL, so the test below sends them to free_slow. */
static inline void fast_free(void *p) {
  if (unlikely(p == NULL)) return;
  segment_t *segment = segment_of(p);
  page_t *page = page_of(segment, p);
  heap_t *heap = tl_heap;
  if (likely(atomic_load_relaxed(&page->xowner_tag) == heap)) {
    block_t *block = (block_t *)p;
    if (unlikely(block->cookie == free_cookie(block))) double_free_detected(p);
    block->cookie = free_cookie(block);
    block->next = page->local_free;
    page->local_free = block;
    if (unlikely(--page->used == 0)) page_retire(heap, page);
    return;
  }
  free_slow(segment, page, p);
}

#endif /* BRISK_FAST_PATH_H */
