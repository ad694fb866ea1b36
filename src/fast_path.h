/* The allocation and free fast paths, inlined into brisk_* and the malloc
 * overrides alike. Each is one load, one likely test, and a plain store;
 * everything else is a call to a named slow path. */
#ifndef BRISK_FAST_PATH_H
#define BRISK_FAST_PATH_H

#include "internal.h"

/* Takes the first free block of a page whose free list is not empty. */
static inline block_t *page_pop(page_t *page) {
  block_t *block = page->free;
  page->free = block->next;
  page->used++;
  block->cookie = 0; /* a live block never carries the free cookie */
  return block;
}

/* The page serving size on this thread's fast path, when it has a block. */
static inline page_t *fast_page(heap_t *heap, size_t size) {
  if (unlikely(size > DIRECT_MAX)) return NULL;
  page_t *page = heap->direct[(size + 7) >> 3];
  return likely(page->free != NULL) ? page : NULL;
}

static inline void *fast_malloc(size_t size) {
  page_t *page = fast_page(tl_heap, size);
  if (likely(page != NULL)) return page_pop(page);
  return malloc_slow(size, false);
}

/* Frees a block into a page of the calling thread's own heap. */
static inline void free_local(heap_t *heap, page_t *page, block_t *block) {
  if (unlikely(block->cookie == free_cookie(block))) double_free_detected(block);
  block->cookie = free_cookie(block);
  block->next = page->local_free;
  page->local_free = block;
  if (unlikely(--page->used == 0)) page_retire(heap, page);
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
    free_local(heap, page, (block_t *)p);
    return;
  }
  free_slow(segment, page, p);
}

#endif /* BRISK_FAST_PATH_H */
