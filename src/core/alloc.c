/* SPDX-License-Identifier: MIT */
/* Allocation, one entry per size range (size_range_of, core.h, routes),
 * each read top-down as fast path, refill, slow refill: small_alloc (the
 * class's first page, core.h) → small_refill → small_refill_slow;
 * medium_alloc → medium_refill; arena_alloc (arena.c); huge_alloc (huge.c).
 * Both page ranges refill through refill_locked. alloc_sized routes any
 * size for malloc_slow and the diagnostic modes; api/malloc.c's fast path
 * routes by itself and calls the entries. */
#include "core.h"

#include <string.h>

static NOINLINE void *small_refill_slow(heap_t *heap, unsigned size_class);
static NOINLINE void *medium_refill(heap_t *heap, unsigned size_class, page_t *page, bool marked);
static inline page_t *refill_locked(heap_t *heap, unsigned size_class);
static void maybe_housekeeping(heap_t *heap);
static void start_purger_if_due(heap_t *heap);
static void start_purger_after_refill(heap_t *heap);

/* flatten: the entries of this file are inlined here, so that a refill
 * from malloc_slow costs no second call. */
__attribute__((flatten)) void *alloc_sized(heap_t *heap, size_t size, bool zero) {
  void *p;
  switch (size_range_of(size)) {
  case RANGE_SMALL:
    p = small_alloc(heap, size_class_of(size));
    break;
  case RANGE_MEDIUM:
    p = medium_alloc(heap, size_class_of(size));
    break;
  case RANGE_ARENA:
    return arena_alloc(heap, size, zero); /* clears only what does not read zero */
  default:
    background_wanted(); /* a huge block is memory the purger may be wanted for */
    return huge_alloc(size, 0, zero);
  }
  if (zero && p != NULL) memset(p, 0, size);
  return p;
}

/* ---- small: the first page, its own frees, a refill ------------------------------ */

/* The first page's `free` ran out, but blocks came back to it on the slow
 * paths since (local_free): take those, with the page's remote frees. A
 * class whose blocks are allocated and freed in turn on such a page ran the
 * whole refill at nearly every allocation. Housekeeping keeps its pace: it
 * counts refills, and skipping it here kept pages resident that it would
 * have purged. It goes first, as in small_refill_slow: it may retire pages,
 * this one included. */
void *small_refill(heap_t *heap, unsigned size_class) {
  if (guard_due(heap) && class_size[size_class] <= GUARD_MAX) {
    void *guarded = guard_alloc(heap, class_size[size_class]);
    if (guarded != NULL) return guarded;
  }
  page_t *first = heap->queues[size_class].first;
  if (first != NULL && first->local_free != NULL) {
    maybe_housekeeping(heap);
    first = heap->queues[size_class].first;
    if (first != NULL && page_collect(first)) {
      if (unlikely(guard_on)) guard_count(heap, first);
      return page_pop(first);
    }
  }
  return small_refill_slow(heap, size_class);
}

static void *small_refill_slow(heap_t *heap, unsigned size_class) {
  maybe_housekeeping(heap);
  brief_lock_acquire(&heap->pages_lock);
  page_t *page = refill_locked(heap, size_class);
  brief_lock_release(&heap->pages_lock);
  if (page == NULL) return out_of_memory();
  if (unlikely(guard_on)) guard_count(heap, page);
  void *block = page_pop(page);
  start_purger_after_refill(heap); /* only now, with the block taken */
  return block;
}

/* ---- medium: under the purger's exclusion, first page included ------------------- */

/* Medium blocks (8-64 KiB) are taken with the purger kept out of the heap's
 * queues, even from the first page of a class, so that the purger may
 * retire those pages too once their blocks have all come back
 * (page_release_idle): an idle thread's first pages of those classes are
 * 512 KiB each, and they held most of what a pool kept resident while it
 * waited. Small classes keep their lock-free first page. Out of the
 * purger's way by the fence (fence.c): plain stores, where pages_lock's
 * exchange would wait for every earlier store of the thread. */
void *medium_alloc(heap_t *heap, unsigned size_class) {
  bool marked = fence_owner_lock(heap);
  page_t *page = heap->queues[size_class].first;
  if (unlikely(page == NULL || page->free == NULL))
    return medium_refill(heap, size_class, page, marked);
  void *block = page_pop(page);
  fence_owner_unlock(heap, marked);
  start_purger_if_due(heap);
  return block;
}

/* The first page has no block on `free`; the purger is still kept out. Out
 * of line, so that medium_alloc's common case saves no registers. */
static void *medium_refill(heap_t *heap, unsigned size_class, page_t *page, bool marked) {
  if (page == NULL || !page_collect(page)) page = refill_locked(heap, size_class);
  void *block = page != NULL ? page_pop(page) : NULL;
  fence_owner_unlock(heap, marked);
  if (block == NULL) return out_of_memory();
  /* Housekeeping keeps the pace it has on the small classes' slow path; it
   * takes pages_lock itself, and the page the block came from has a block
   * in use now, so it stays. */
  maybe_housekeeping(heap);
  start_purger_after_refill(heap);
  return block;
}

/* ---- the refill both page ranges share --------------------------------------------- */

/* A fresh page, from the heap's segments or the cache, else (after tidying
 * the abandoned heaps, whose empty segments may refill the cache) a new
 * segment. */
static page_t *fresh_page(heap_t *heap, unsigned size_class) {
  /* Blocks this thread freed into other heaps go home before it takes more
   * memory: their owners may be about to need them. */
  remote_post_flush(heap);
  page_t *page = page_fresh(heap, size_class, false);
  if (page != NULL) return page;
  collect_abandoned(false);
  heap->purger_check_due = true;
  return page_fresh(heap, size_class, true);
}

/* A page with a free block for size_class: one of its own with a block
 * free, else (a medium class) a free block of a class a little larger, else
 * one of its own with room to carve, else a fresh page. Small classes carve
 * at once: their blocks are a fraction of an OS page. */
static inline __attribute__((always_inline)) page_t *refill_locked(heap_t *heap,
                                                                   unsigned size_class) {
  heap->counters.page_refills++;
  heap->activity.class_refills[size_class]++;
  event_note(EVENT_REFILL);
  bool carve_first = class_size[size_class] <= SMALL_MAX;
  page_t *page = page_queue_find_free(heap, size_class, carve_first);
  if (page != NULL) return page;
  if (remote_collect(heap)) { /* full pages that were freed into came back */
    page = page_queue_find_free(heap, size_class, carve_first);
    if (page != NULL) return page;
  }
  if (!carve_first) {
    page = page_borrow_larger(heap, size_class);
    if (page == NULL) page = page_queue_find_free(heap, size_class, true);
    if (page != NULL) return page;
  }
  return fresh_page(heap, size_class);
}

/* Housekeeping rides on refills: every HOUSEKEEPING_REFILLS'th, at most
 * every half purge delay. */
static void maybe_housekeeping(heap_t *heap) {
  if (++heap->slow_calls % HOUSEKEEPING_REFILLS == 0 &&
      platform_clock_ms() >= heap->next_housekeeping_ms)
    collect_heap(heap, false);
}

/* Only now, with the block taken: starting the purger creates a thread,
 * and the C library allocates for it through this very allocator. A page
 * that a refill just set up has no block handed out yet, so a collection in
 * such a nested call would retire it, segment and all, under our feet. */
static void start_purger_if_due(heap_t *heap) {
  if (unlikely(heap->purger_check_due)) {
    heap->purger_check_due = false;
    background_wanted();
  }
}

/* The same after a refill, which also starts it for remote frees counted
 * in a heap that never refills (remote_post_counted): a thread that only
 * frees another thread's blocks leaves it to their owner. */
static void start_purger_after_refill(heap_t *heap) {
  if (unlikely(atomic_load_relaxed(&xremote_batching) == REMOTE_FREES_SEEN))
    heap->purger_check_due = true;
  start_purger_if_due(heap);
}

/* ---- aligned blocks ----------------------------------------------------------------- */

/* Routed by the size with room for the alignment: on a page the block is
 * over-allocated and its first word marks the aligned pointer inside it;
 * the arena and huge blocks align their own. */
void *alloc_aligned(heap_t *heap, size_t size, size_t alignment) {
  size_t padded = size + alignment - 1;
  switch (size_range_of(padded)) {
  case RANGE_HUGE:
    return huge_alloc(size, alignment, false);
  case RANGE_ARENA:
    return arena_alloc_aligned(heap, size, alignment);
  default:
    break;
  }
  uint8_t *block = alloc_sized(heap, padded, false);
  if (unlikely(guard_on) && block != NULL && segment_of(block)->kind == SEGMENT_GUARD) {
    guard_unsample(block); /* an aligned block marks its page: not a guarded one */
    block = alloc_sized(heap, padded, false);
  }
  if (block == NULL) return NULL;
  uint8_t *aligned = (uint8_t *)align_up((uintptr_t)block, alignment);
  if (aligned != block) {
    page_mark_aligned(heap, page_of(segment_of(block), block));
    *(uintptr_t *)block = aligned_mark(aligned); /* in the padding before the data */
  }
  return aligned;
}
