/* SPDX-License-Identifier: MIT */
/* The allocation and free fast paths, inlined into brisk_* and the malloc
 * overrides alike. Each is one load, one likely test, and a plain store;
 * everything else is a call to a named slow path. */
#ifndef BRISK_FAST_PATH_H
#define BRISK_FAST_PATH_H

#include "api.h"

/* libbrisk-heapprof.so is built with BRISK_SAMPLING_FAST_PATH: every
 * allocation counts down the thread's bytes to its next heap-profile sample
 * here, as tcmalloc does, and the one that reaches it goes to
 * malloc_sampled. The default library has no count on its fast path: its
 * heap profile samples on malloc_slow (diag/heap_profile.c). */
#ifdef BRISK_SAMPLING_FAST_PATH
static inline bool sample_due(size_t size) {
  intptr_t left = (intptr_t)thread_word(THREAD_SAMPLE) - (intptr_t)size;
  thread_word_set(THREAD_SAMPLE, (uintptr_t)left);
  return left < 0;
}
#define SAMPLE_POINT(size, zero)                                                                   \
  do {                                                                                             \
    if (unlikely(sample_due(size))) return malloc_sampled(size, zero);                             \
  } while (0)
#else
#define SAMPLE_POINT(size, zero)                                                                   \
  do {                                                                                             \
  } while (0)
#endif

/* The page serving size on this thread's fast path, when it has a block. */
static inline page_t *fast_page(heap_t *heap, size_t size) {
  if (unlikely(size > DIRECT_MAX)) return NULL;
  page_t *page = heap->direct[(size + 7) >> 3];
  return likely(page->free != NULL) ? page : NULL;
}

static inline void *fast_malloc(size_t size) {
  SAMPLE_POINT(size, false);
  if (unlikely(size > DIRECT_MAX)) return malloc_past_direct(size, false);
  page_t *page = fast_page(heap_current(), size);
  if (likely(page != NULL)) return page_pop(page);
  return malloc_slow(size, false);
}

/* Pushes a block already checked (see free_local_push) onto a plain page of
 * the calling thread's own heap, straight onto the list that malloc pops, so
 * the next allocation of the class gets it back. Returns whether that was the
 * page's last block: the caller retires it.
 *
 * Not onto a second list taken in when `free` runs dry, as mimalloc does and
 * brisk did: a loop that allocates a few blocks of a class and frees them
 * (the fields of a line, a string copied and dropped) then emptied `free`
 * every round, and paid a mispredicted branch and a slow-path call each time
 * to take back the handful of blocks it had just freed (DESIGN.md, "Pages and
 * size classes"). */
static inline bool page_push_local(page_t *page, block_t *block) {
  block->cookie = free_cookie();
  block->next = page->free;
  page->free = block;
  brisk_assert(page->used > 0);
  return unlikely(page_used_drop(page));
}

/* page_push_local, once it is sure the pointer is a block brisk handed out
 * and did not get back. */
static inline READS_POINTER_HEADER bool free_local_push(page_t *page, block_t *block) {
  if (unlikely(!page_is_block_start(page, block, page->carved_limit) ||
               block->cookie == free_cookie()))
    free_invalid(page, block);
  return page_push_local(page, block);
}

static inline READS_POINTER_HEADER void free_local(heap_t *heap, page_t *page, block_t *block) {
  if (free_local_push(page, block)) page_retire(heap, page);
}

/* Pages that need care (huge, interior pointers, parked, diagnostics) are
 * not plain, so the test below sends them to free_slow. */
static inline READS_POINTER_HEADER void fast_free(void *p) {
  if (unlikely(p == NULL)) return;
  segment_t *segment = segment_of(p);
  page_t *page = page_of(segment, p);
  heap_t *heap = heap_current();
  if (likely(page_is_plain(page, heap))) {
    free_local(heap, page, (block_t *)p);
    return;
  }
  free_slow(heap, segment, page, p);
}

#endif /* BRISK_FAST_PATH_H */
